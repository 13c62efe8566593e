"""Rule checks on generation role outputs (docs/generation.md): JSON extraction, argument schema, decision rules.

The checker role runs these rules before asking its model: a decision or a tool result that breaks
one of them is rejected with the returned reasons, and the role that produced it retries. Rules never
raise on bad model output; they return reasons.

Pure module: no LangGraph import, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.args import float_to_number, schema_error
from wildtoolbench.bench.audit_context import CallContext, as_text, leaves
from wildtoolbench.bench.generation_quality import (
    COPIED_RESULT_CHARS,
    copies_definition,
    date_misplaced,
    described,
    schema_offers,
    shared_value_errors,
    shared_value_groups,
)
from wildtoolbench.bench.rules import Problem
from wildtoolbench.bench.rules.derived import DerivedContext
from wildtoolbench.bench.rules_values import standard_value_rule
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS

# Most real calls one planner decision (one step) may carry; keeps gold DAGs small enough to enumerate.
MAX_CALLS_PER_STEP = 6

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def extract_json(text: str) -> Any:
    """The first JSON value found in a model's text output.

    Tries, in order: the whole text; each fenced code block (```json ... ```); the first position
    where a ``{`` or ``[`` starts a decodable JSON value. ``<think>...</think>`` blocks are ignored.

    Args:
        text: raw model output (may hold prose around the JSON).

    Returns:
        The decoded value (object, array, ...).

    Raises:
        ValueError: no JSON value could be decoded (message says so, with a short excerpt).
    """
    if not isinstance(text, str):
        raise ValueError(f"expected text, got {type(text).__name__}")
    body = _THINK.sub("", text).strip()
    decoder = json.JSONDecoder()
    candidates = [body] + [match.group(2).strip() for match in _FENCE.finditer(body)]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    for start, char in enumerate(body):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(body, start)
            except json.JSONDecodeError:
                continue
            return value
    excerpt = body[:80].replace("\n", " ")
    raise ValueError(f"no JSON value found in the output (starts with {excerpt!r})")


def plain_text(text: str) -> str:
    """A free-text role output cleaned for use as a message: think blocks, one code fence and
    wrapping quotes removed, and a ``{"message": ...}``-style JSON object unwrapped. May return ``""``."""
    body = _THINK.sub("", text or "").strip()
    fence = _FENCE.fullmatch(body)
    if fence:
        body = fence.group(2).strip()
    if body.startswith("{") and body.endswith("}"):
        try:
            value = json.loads(body)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            for key in ("message", "content", "reply", "question", "text", "answer"):
                if isinstance(value.get(key), str):
                    body = value[key].strip()
                    break
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "\"'":
        body = body[1:-1].strip()
    return body


def tools_by_name(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Map function name -> function spec (``{"name", "description", "parameters"}``) for an
    OpenAI-style tool list (entries ``{"type": "function", "function": {...}}`` or bare functions)."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str):
            out[name] = dict(function)
    return out


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "float": (int, float),  # read as "number", as the evaluator does after its float->number rewrite
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _value_errors(value: Any, schema: Mapping[str, Any], where: str) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    if "anyOf" in schema and isinstance(schema["anyOf"], list):
        branches = [_value_errors(value, branch, where) for branch in schema["anyOf"]]
        if any(not errs for errs in branches):
            return []
        return branches[0] if branches else []
    kind = schema.get("type", "string")
    errors: list[str] = []
    if isinstance(kind, str) and kind in _PY_TYPES:
        allowed = _PY_TYPES[kind]
        ok = isinstance(value, allowed)
        if kind in ("integer", "number", "float") and isinstance(value, bool):
            ok = False  # stricter than the scorer: generated gold never uses true/false for numbers
        if not ok:
            return [f"{where}: expected {kind}, got {type(value).__name__}"]
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict) and kind == "object":
        errors += _object_errors(value, schema, where)
    if isinstance(value, list) and kind == "array" and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            errors += _value_errors(item, schema["items"], f"{where}[{i}]")
    return errors


def _object_errors(value: Mapping[str, Any], schema: Mapping[str, Any], where: str) -> list[str]:
    properties = schema.get("properties") or {}
    errors: list[str] = []
    prefix = f"{where}." if where else ""
    for key in schema.get("required") or []:
        if key not in value:
            errors.append(f"missing required parameter {prefix}{key}")
    for key, item in value.items():
        if key in properties:
            errors += _value_errors(item, properties[key], f"{prefix}{key}")
        elif schema.get("additionalProperties") is not True:
            errors.append(f"parameter {prefix}{key} is not defined by the tool")
    return errors


def schema_errors(arguments: Any, parameters: Mapping[str, Any] | None) -> list[str]:
    """Problems of ``arguments`` against a tool's JSON-schema ``parameters`` (empty list = valid).

    Follows the evaluator's schema rules (docs/arguments.md) so that generated gold arguments pass its check:
    ``float`` read as number, a property without ``type`` must be a string, an object without
    ``properties`` accepts no key unless ``additionalProperties`` is true, ``enum`` membership,
    ``anyOf``, nested objects and array items. Stricter in one way: booleans are not numbers.

    Args:
        arguments: the planner's argument object.
        parameters: the tool's ``parameters`` schema (``None`` = takes no arguments).

    Returns:
        Human-readable reasons, one per problem, e.g. ``"missing required parameter city"``.
    """
    if not isinstance(arguments, dict):
        return [Problem(f"arguments must be a JSON object, got {type(arguments).__name__}", "structure.arguments_object")]
    problems = _object_errors(arguments, parameters or {"type": "object", "properties": {}}, "")
    return [Problem(problem, "decision.schema") for problem in problems]


def scorer_schema_error(arguments: dict[str, Any], parameters: Mapping[str, Any] | None) -> str | None:
    """The evaluator's own schema verdict on gold ``arguments`` (``wildtoolbench.bench.args.schema_error`` on the
    float->number root schema it builds), or ``None`` when the scorer would accept them. Generated gold
    arguments must pass it, or an oracle replay could not score 100% (docs/arguments.md)."""
    parameters = float_to_number(dict(parameters or {}))
    properties = parameters.get("properties")
    root = {
        "type": "object",
        "required": list(parameters.get("required") or []),
        "properties": dict(properties) if isinstance(properties, Mapping) else {},
    }
    return schema_error(arguments, root)


def shared_value_bans(decision: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """``[tool, parameter]`` pairs to leave out of the planner's next try after one value was given to
    several parameters of a call (:func:`wildtoolbench.bench.generation_quality.shared_value_errors`; docs/generation.md §2).

    Of each group of parameters sharing a value, the optional ones go (all but the first when none is
    required); a group of required parameters only is left to the rules (nothing to drop).

    Returns:
        The pairs, in action order, without repeats.
    """
    bans: list[list[str]] = []
    for action in decision.get("actions") or []:
        name = action.get("name") if isinstance(action, Mapping) else None
        arguments = action.get("arguments") if isinstance(action, Mapping) else None
        if name not in tools or not isinstance(arguments, Mapping):
            continue
        required = set((tools[name].get("parameters") or {}).get("required") or [])
        for keys in shared_value_groups(arguments):
            optional = [k for k in keys if k not in required]
            drop = optional if len(optional) < len(keys) else optional[1:]
            bans += [[name, k] for k in drop if [name, k] not in bans]
    return bans


def decision_errors(
    decision: Mapping[str, Any],
    *,
    tools: Mapping[str, Mapping[str, Any]],
    layer_type: str,
    nodes: Sequence[Mapping[str, Any]],
) -> list[str]:
    """Rule problems of one planner decision for the current task (empty list = passes the rules; docs/generation.md).

    Args:
        decision: ``{"thought", "plan", "actions": [{"name", "arguments", "depends_on"}]}``.
        tools: function name -> spec (see :func:`tools_by_name`).
        layer_type: the task's layer type, ``ST`` / ``MT`` / ``CQ`` / ``CC``.
        nodes: the task's accepted nodes so far, each ``{"name", "arguments", "step", ...}``;
            ``depends_on`` indices refer to positions in this list.

    Returns:
        Reasons, e.g. ``"unknown tool getWether"``; the checker joins them into its rejection.
    """
    actions = decision.get("actions") or []
    if not actions:
        return [Problem("the decision has no action", "structure.no_action")]
    errors: list[Problem] = []
    asks = [a for a in actions if a.get("name") == ASK_USER]
    answers = [a for a in actions if a.get("name") == PREPARE_TO_ANSWER]
    calls = [a for a in actions if a.get("name") not in PSEUDO_TOOLS]
    if (asks or answers) and len(actions) > 1:
        errors.append(Problem(f"{ASK_USER} and {PREPARE_TO_ANSWER} must be the only action of their step", "structure.not_alone"))
    if len(calls) > MAX_CALLS_PER_STEP:
        errors.append(Problem(f"at most {MAX_CALLS_PER_STEP} tool calls per step", "structure.too_many_calls"))
    done_calls = [n for n in nodes if n.get("name") not in PSEUDO_TOOLS]
    done_asks = [n for n in nodes if n.get("name") == ASK_USER]
    for i, action in enumerate(actions):
        name = action.get("name")
        label = f"action {i} ({name})"
        arguments = action.get("arguments")
        if not isinstance(arguments, dict):
            errors.append(Problem(f"{label}: arguments must be a JSON object", "structure.arguments_object"))
            continue
        for dep in action.get("depends_on") or []:
            if not isinstance(dep, int) or isinstance(dep, bool) or not 0 <= dep < len(nodes):
                errors.append(
                    Problem(
                        f"{label}: depends_on {dep!r} is not the index of an earlier action (0..{len(nodes) - 1})",
                        "structure.depends_on",
                    )
                )
        if name == ASK_USER:
            tool_name = arguments.get("tool_name")
            missing = arguments.get("missing_required_parameters")
            if tool_name not in tools:
                errors.append(Problem(f"{label}: tool_name {tool_name!r} is not in the tool list", "decision.question_tool"))
            elif not isinstance(missing, list) or not missing or not all(isinstance(m, str) for m in missing):
                errors.append(
                    Problem(
                        f"{label}: missing_required_parameters must be a non-empty list of parameter names",
                        "decision.question_parameters",
                    )
                )
            else:
                known = (tools[tool_name].get("parameters") or {}).get("properties") or {}
                unknown = [m for m in missing if m not in known]
                twice = sorted({m for m in missing if missing.count(m) > 1})
                if unknown:
                    errors.append(Problem(f"{label}: {unknown} are not parameters of {tool_name}", "decision.question_parameters"))
                if twice:
                    errors.append(
                        Problem(
                            f"{label}: missing_required_parameters lists {twice} more than once",
                            "decision.question_repeats",
                        )
                    )
        elif name == PREPARE_TO_ANSWER:
            answer_type = arguments.get("answer_type")
            if answer_type not in ("tool", "chat"):
                errors.append(Problem(f"{label}: answer_type must be 'tool' or 'chat'", "decision.answer_type"))
            elif set(arguments) != {"answer_type"}:  # the dataset allows nothing else (docs/dataset.md)
                extra = ", ".join(sorted(str(k) for k in arguments if k != "answer_type"))
                errors.append(
                    Problem(
                        f"{label}: answer_type must be the only argument of the answer (remove {extra})",
                        "decision.answer_arguments",
                    )
                )
            elif answer_type == "tool" and not done_calls:
                errors.append(Problem(f"{label}: answer_type 'tool' needs at least one tool result first", "decision.answer_type"))
            elif answer_type == "chat" and done_calls:
                errors.append(Problem(f"{label}: tools were called, so answer_type must be 'tool'", "decision.answer_type"))
        elif name not in tools:
            errors.append(Problem(f"unknown tool {name!r} (not in the tool list)", "structure.unknown_tool"))
        else:
            problems = schema_errors(arguments, tools[name].get("parameters"))
            if not problems:
                scorer_error = scorer_schema_error(arguments, tools[name].get("parameters"))
                problems = [Problem(scorer_error, "decision.scorer_schema")] if scorer_error else []
            problems += shared_value_errors(arguments)
            errors += [e.prefixed(f"{label}: ") for e in problems]
    # What the task's layer type allows (docs/generation.md: ST, MT, CQ, CC).
    total_calls = len(done_calls) + len(calls)
    if layer_type == "CC" and (calls or asks):
        errors.append(Problem("this task is casual chat: answer directly with prepare_to_answer (answer_type chat)", "decision.task_type"))
    if layer_type == "CC" and answers and (answers[0].get("arguments") or {}).get("answer_type") != "chat":
        errors.append(Problem("this task is casual chat: answer_type must be 'chat'", "decision.task_type"))
    if layer_type in ("ST", "MT") and asks:
        errors.append(Problem("this task gives every required value: call the tools instead of asking", "decision.task_type"))
    if layer_type == "ST" and total_calls > 1:
        errors.append(Problem("this task needs exactly one tool call", "decision.task_type"))
    if answers and layer_type == "ST" and len(done_calls) != 1:
        errors.append(Problem("answer only after the single tool call of this task", "decision.task_type"))
    if answers and layer_type == "MT" and len(done_calls) < 2:
        errors.append(Problem("this task needs several tool calls before the answer", "decision.task_type"))
    if answers and layer_type == "CQ" and (not done_asks or not done_calls):
        errors.append(Problem("this task lacks a required value: ask the user, then call the tool, before answering", "decision.task_type"))
    return errors


def _call_key(call: Mapping[str, Any]) -> str:
    return json.dumps([call.get("name"), call.get("arguments") or {}], sort_keys=True, ensure_ascii=False)


def results_errors(
    results: Any,
    calls: Sequence[Mapping[str, Any]],
    earlier: Sequence[Mapping[str, Any]] = (),
    functions: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Rule problems of simulated tool results for one step's calls (empty list = passes; docs/generation.md §2).

    Args:
        results: parsed tool output, expected a list with one observation per call.
        calls: the step's call nodes, each ``{"name", "arguments"}``.
        earlier: the session's earlier call nodes with their ``observation``.
        functions: the tool list by name (:func:`tools_by_name`); when given, a result that pastes its
            tool's definition (:func:`copies_definition`) is a problem too.

    Returns:
        Reasons: wrong count, an empty observation (``None``, ``""``, ``{}`` or ``[]``), a result that
        is a copy of the result of a different call (earlier in the session or in this step, at least
        :data:`COPIED_RESULT_CHARS` long: a small model pastes the last result it saw; the same call
        may return the same result), a result that pastes the tool's description.
    """
    if not isinstance(results, list):
        return [Problem("tool output must be a list with one result per call", "structure.result_count")]
    if len(results) != len(calls):
        return [Problem(f"expected {len(calls)} results (one per call), got {len(results)}", "structure.result_count")]
    errors = []
    seen: dict[str, Mapping[str, Any]] = {}
    for node in earlier:
        if node.get("name") not in PSEUDO_TOOLS and node.get("observation") is not None:
            seen.setdefault(json.dumps(node["observation"], sort_keys=True, ensure_ascii=False, default=str), node)
    for i, (result, call) in enumerate(zip(results, calls)):
        if result is None or result == "" or result == {} or result == []:
            errors.append(Problem(f"result {i} for {call.get('name')} is empty", "result.empty", index=i))
            continue
        function = (functions or {}).get(str(call.get("name")))
        if function and copies_definition(result, function):
            errors.append(
                Problem(
                    f"result {i} for {call.get('name')} copies the tool's description: write the data "
                    f"{call.get('name')} returns for these arguments",
                    "result.copies_definition",
                    index=i,
                )
            )
            continue
        text = json.dumps(result, sort_keys=True, ensure_ascii=False, default=str)
        other = seen.get(text) if len(text) >= COPIED_RESULT_CHARS else None
        if other is not None and _call_key(other) != _call_key(call):
            errors.append(
                Problem(
                    f"result {i} for {call.get('name')} copies the result of {other.get('name')}: write what "
                    f"{call.get('name')} returns for these arguments",
                    "result.copies_other",
                    index=i,
                )
            )
        seen.setdefault(text, call)
    return errors


def canonical_actions(decision: Mapping[str, Any]) -> str:
    """A decision's actions as canonical JSON text (names, arguments, dependencies; keys sorted): two
    decisions with the same text propose the same step (docs/generation.md §2)."""
    actions = [
        {"name": a.get("name"), "arguments": a.get("arguments") or {}, "depends_on": sorted(a.get("depends_on") or [])}
        for a in decision.get("actions") or []
        if isinstance(a, Mapping)
    ]
    return json.dumps(actions, sort_keys=True, ensure_ascii=False)


def repetition_errors(
    decision: Mapping[str, Any], *, nodes: Sequence[Mapping[str, Any]], rejected: Sequence[str] = ()
) -> list[str]:
    """A decision that repeats itself (docs/generation.md §2): the same actions as a decision already
    rejected at this step (``rejected``: their :func:`canonical_actions` texts), or a call with the
    same name and arguments as a call already made in this task (``nodes``: its accepted nodes) or
    earlier in the same decision.

    Returns:
        Reasons saying what to change, e.g. ``"action 0 (getWordDefinitions): the same call was made
        already (action 0) and its result is shown; use that result: call another tool or answer"``.
    """
    errors: list[str] = []
    if canonical_actions(decision) in set(rejected):
        errors.append(
            Problem(
                "this is the same decision that was rejected before; change the tool or the arguments",
                "decision.repeats_rejected",
            )
        )
    done = {
        json.dumps([n.get("name"), n.get("arguments") or {}], sort_keys=True, ensure_ascii=False): i
        for i, n in enumerate(nodes)
        if n.get("name") not in PSEUDO_TOOLS
    }
    in_decision: dict[str, int] = {}
    for i, action in enumerate(decision.get("actions") or []):
        if not isinstance(action, Mapping) or action.get("name") in PSEUDO_TOOLS:
            continue
        key = json.dumps([action.get("name"), action.get("arguments") or {}], sort_keys=True, ensure_ascii=False)
        if key in done:
            errors.append(
                Problem(
                    f"action {i} ({action.get('name')}): the same call was made already (action {done[key]}) and "
                    "its result is shown; do not call it again: use that result (call another tool, or answer)",
                    "decision.repeated_call",
                )
            )
        elif key in in_decision:
            errors.append(
                Problem(
                    f"action {i} ({action.get('name')}): the same call was made already (action {in_decision[key]} "
                    "of this step); make each call once",
                    "decision.repeated_in_step",
                )
            )
        in_decision.setdefault(key, i)
    return errors


def context_errors(
    decision: Mapping[str, Any],
    *,
    tools: Mapping[str, Mapping[str, Any]],
    texts: Sequence[str],
    today: Any = None,
    can_ask: bool = False,
    profile: str = "small",
) -> list[Problem]:
    """Argument values of a decision's calls that nobody said (docs/generation.md §2): every scalar
    value must appear in ``texts`` (what the conversation holds so far: the environment string, the
    user's messages and answers, the assistant's words, earlier calls and results) by the matching
    rules of docs/audit.md §5.2, or be a value the tool's schema offers (``enum``, ``default``).

    Args:
        decision: the planner decision.
        tools: function name -> spec.
        texts: the conversation's texts.
        today: the environment's date (``wildtoolbench.bench.audit_context.env_date``), for relative dates.
        can_ask: the task may ask the user (the reason then says to ask for a missing value).

    Returns:
        One reason per unknown value, e.g. ``"action 0 (getWordDefinitions): word = \\"example\\" appears
        nowhere in the conversation; use the value the user gave"``; an optional parameter's reason
        says to leave it out.
    """
    errors: list[str] = []
    for i, action in enumerate(decision.get("actions") or []):
        name = action.get("name") if isinstance(action, Mapping) else None
        if name in PSEUDO_TOOLS or name not in tools or not isinstance(action.get("arguments"), dict):
            continue
        properties = (tools[name].get("parameters") or {}).get("properties") or {}
        for key, value in action["arguments"].items():
            schema = properties.get(key) if isinstance(properties, Mapping) else None
            if date_misplaced(key, schema, value):
                errors.append(
                    Problem(
                        f"action {i} ({name}): {key} = {value} is a date, but {key} is no date; use the value the "
                        "user gave",
                        "value.date_misplaced",
                        value=value,
                    )
                )
    found = unknown_values(decision, tools=tools, texts=texts, today=today, profile=profile)
    for i, name, path, value, required, rule in found:
        top = path.split(".", 1)[0].split("[", 1)[0]
        if not required:
            fix = f"leave out the optional parameter {top} or use a value the user gave"
        elif can_ask:
            fix = f"ask the user for {top} with {ASK_USER}"
        else:
            fix = "use the value the user gave"
        what = {
            "value.not_in_context": "appears nowhere in the conversation",
            "value.placeholder": "is a placeholder, not a value from the conversation",
            "value.invented": "is an id, number or date that nothing in the conversation says or implies",
        }[rule]
        errors.append(Problem(f"action {i} ({name}): {path} = {as_text(value)[:60]} {what}; {fix}", rule, value=value, path=path))
    return errors


def unknown_values(
    decision: Mapping[str, Any],
    *,
    tools: Mapping[str, Mapping[str, Any]],
    texts: Sequence[str],
    today: Any = None,
    profile: str = "small",
) -> list[tuple[int, str, str, Any, bool, str]]:
    """The argument values of a decision's calls that break the value rule of ``profile`` (the rule of
    :func:`context_errors`; docs/generation.md §11.2): under ``small`` every value nobody said
    (``value.not_in_context``), under ``standard`` a placeholder or an id, number or date that the
    conversation neither says nor derives (``wildtoolbench.bench.rules_values``), under ``off`` none.

    Returns:
        ``(action index, tool name, path, value, required, rule id)`` per such scalar value; ``required``
        says whether its top-level parameter is a required one.
    """
    out: list[tuple[int, str, str, Any, bool, str]] = []
    if profile not in ("small", "standard"):
        return out
    for i, action in enumerate(decision.get("actions") or []):
        name = action.get("name") if isinstance(action, Mapping) else None
        if name in PSEUDO_TOOLS or name not in tools or not isinstance(action.get("arguments"), dict):
            continue
        parameters = tools[name].get("parameters") or {}
        required = set(parameters.get("required") or []) if isinstance(parameters, Mapping) else set()
        if profile == "standard":
            context: CallContext = DerivedContext(texts, today=today, allowed=schema_offers(parameters))
            descriptions = described([tools[name]])
        else:
            context = CallContext(texts, today=today, allowed=schema_offers(parameters))
        for path, value in leaves(action["arguments"]):
            top = path.split(".", 1)[0].split("[", 1)[0]
            if profile == "standard":
                rule = standard_value_rule(value, context.knows(value), descriptions, path)
                if rule:
                    out.append((i, str(name), path, value, top in required, rule))
            elif (isinstance(value, str) and not value.strip()) or not context.knows(value):
                out.append((i, str(name), path, value, top in required, "value.not_in_context"))
    return out
