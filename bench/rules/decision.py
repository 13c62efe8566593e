"""Decision rules: what a planner decision may hold for the task's type (docs/generation.md §2, §11).

The family's catalog entries and the checks that apply them: the catalog is the one home of the
rules (the checker and the roles call these functions; nothing else defines a rule).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.args import float_to_number, schema_error
from wildtoolbench.bench.rules.catalog import SMALL_STANDARD, Problem, Rule
from wildtoolbench.bench.rules.value import shared_value_errors
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS

_DOC = "docs/generation.md §2"
_CHECKS = "rules.decision.decision_errors"
_REPEAT = "rules.decision.repetition_errors"

DECISION_RULES = (
    Rule("decision.schema", "decision", ("planner", "session"), SMALL_STANDARD,
         "arguments that break the tool's parameter schema (docs/arguments.md)", "rules.decision.schema_errors",
         _DOC),
    Rule("decision.scorer_schema", "decision", ("planner",), SMALL_STANDARD,
         "arguments the evaluator's own schema check refuses", "rules.decision.scorer_schema_error", _DOC),
    Rule("decision.question_tool", "decision", ("planner",), SMALL_STANDARD,
         "a question about a tool that is not in the tool list", _CHECKS, _DOC),
    Rule("decision.question_parameters", "decision", ("planner",), SMALL_STANDARD,
         "a question whose missing_required_parameters is empty or names no parameter of the tool", _CHECKS, _DOC),
    Rule("decision.question_repeats", "decision", ("planner",), SMALL_STANDARD,
         "a question that asks for one parameter twice", _CHECKS, _DOC),
    Rule("decision.answer_type", "decision", ("planner",), SMALL_STANDARD,
         "an answer_type that is not 'tool' or 'chat', or does not fit the calls made", _CHECKS, _DOC),
    Rule("decision.answer_arguments", "decision", ("planner",), SMALL_STANDARD,
         "an answer with arguments besides answer_type", _CHECKS, _DOC),
    Rule("decision.task_type", "decision", ("planner",), SMALL_STANDARD,
         "a step the task's type does not allow (ST one call, MT several, CQ ask first, CC chat)", _CHECKS,
         "docs/generation.md §3"),
    Rule("decision.repeated_call", "decision", ("planner", "session"), SMALL_STANDARD,
         "a call with the same name and arguments as one made already in the task", _REPEAT, _DOC),
    Rule("decision.repeated_in_step", "decision", ("planner",), SMALL_STANDARD,
         "the same call twice in one step", _REPEAT, _DOC),
    Rule("decision.repeats_rejected", "decision", ("planner",), SMALL_STANDARD,
         "the same decision as one rejected at this step", _REPEAT, _DOC),
)  # fmt: skip


# Most real calls one planner decision (one step) may carry; keeps gold DAGs small enough to enumerate.
MAX_CALLS_PER_STEP = 6


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
        tools: function name -> spec (see :func:`wildtoolbench.bench.generation_checks.tools_by_name`).
        layer_type: the task's layer type, ``ST`` / ``MT`` / ``CQ`` / ``CC``.
        nodes: the task's accepted nodes so far, each ``{"name", "arguments", "step", ...}``;
            ``depends_on`` indices refer to positions in this list.

    Returns:
        Problems (``structure.*`` and ``decision.*`` rule ids), in this order: the step's shape, each
        action's own problems, then what the task's layer type allows; the checker joins them.
    """
    actions = decision.get("actions") or []
    if not actions:
        return [Problem("the decision has no action", "structure.no_action")]
    asks = [a for a in actions if a.get("name") == ASK_USER]
    answers = [a for a in actions if a.get("name") == PREPARE_TO_ANSWER]
    calls = [a for a in actions if a.get("name") not in PSEUDO_TOOLS]
    errors: list[Problem] = []
    if (asks or answers) and len(actions) > 1:
        errors.append(
            Problem(f"{ASK_USER} and {PREPARE_TO_ANSWER} must be the only action of their step", "structure.not_alone")
        )
    if len(calls) > MAX_CALLS_PER_STEP:
        errors.append(Problem(f"at most {MAX_CALLS_PER_STEP} tool calls per step", "structure.too_many_calls"))
    done_calls = [n for n in nodes if n.get("name") not in PSEUDO_TOOLS]
    done_asks = [n for n in nodes if n.get("name") == ASK_USER]
    for i, action in enumerate(actions):
        errors += _action_errors(i, action, tools, nodes, bool(done_calls))
    errors += _task_type_errors(layer_type, len(calls), bool(asks), answers, len(done_calls), bool(done_asks))
    return errors


def _action_errors(
    i: int, action: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]], nodes: Sequence[Any], called: bool
) -> list[Problem]:
    """One action's problems: its arguments object, its dependencies, then the question's, the answer's or
    the call's own rules (``called``: the task has tool results already)."""
    name = action.get("name")
    label = f"action {i} ({name})"
    arguments = action.get("arguments")
    if not isinstance(arguments, dict):
        return [Problem(f"{label}: arguments must be a JSON object", "structure.arguments_object")]
    errors = [
        Problem(
            f"{label}: depends_on {dep!r} is not the index of an earlier action (0..{len(nodes) - 1})",
            "structure.depends_on",
        )
        for dep in action.get("depends_on") or []
        if not isinstance(dep, int) or isinstance(dep, bool) or not 0 <= dep < len(nodes)
    ]
    if name == ASK_USER:
        return errors + _question_errors(label, arguments, tools)
    if name == PREPARE_TO_ANSWER:
        return errors + _answer_errors(label, arguments, called)
    if name not in tools:
        return errors + [Problem(f"unknown tool {name!r} (not in the tool list)", "structure.unknown_tool")]
    problems = schema_errors(arguments, tools[name].get("parameters"))
    if not problems:
        scorer_error = scorer_schema_error(arguments, tools[name].get("parameters"))
        problems = [Problem(scorer_error, "decision.scorer_schema")] if scorer_error else []
    problems += shared_value_errors(arguments)
    return errors + [e.prefixed(f"{label}: ") for e in problems]


def _question_errors(label: str, arguments: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """A question's problems: its tool, and the parameters it asks for (named, known, each once)."""
    tool_name = arguments.get("tool_name")
    missing = arguments.get("missing_required_parameters")
    if tool_name not in tools:
        return [Problem(f"{label}: tool_name {tool_name!r} is not in the tool list", "decision.question_tool")]
    if not isinstance(missing, list) or not missing or not all(isinstance(m, str) for m in missing):
        return [
            Problem(
                f"{label}: missing_required_parameters must be a non-empty list of parameter names",
                "decision.question_parameters",
            )
        ]
    errors = []
    known = (tools[tool_name].get("parameters") or {}).get("properties") or {}
    unknown = [m for m in missing if m not in known]
    twice = sorted({m for m in missing if missing.count(m) > 1})
    if unknown:
        errors.append(Problem(f"{label}: {unknown} are not parameters of {tool_name}", "decision.question_parameters"))
    if twice:
        errors.append(
            Problem(f"{label}: missing_required_parameters lists {twice} more than once", "decision.question_repeats")
        )
    return errors


def _answer_errors(label: str, arguments: Mapping[str, Any], called: bool) -> list[Problem]:
    """The answer's problems: its ``answer_type`` (``tool`` after tool results, else ``chat``) as its only argument."""
    answer_type = arguments.get("answer_type")
    if answer_type not in ("tool", "chat"):
        return [Problem(f"{label}: answer_type must be 'tool' or 'chat'", "decision.answer_type")]
    if set(arguments) != {"answer_type"}:  # the dataset allows nothing else (docs/dataset.md)
        extra = ", ".join(sorted(str(k) for k in arguments if k != "answer_type"))
        return [
            Problem(
                f"{label}: answer_type must be the only argument of the answer (remove {extra})",
                "decision.answer_arguments",
            )
        ]
    if answer_type == "tool" and not called:
        return [Problem(f"{label}: answer_type 'tool' needs at least one tool result first", "decision.answer_type")]
    if answer_type == "chat" and called:
        return [Problem(f"{label}: tools were called, so answer_type must be 'tool'", "decision.answer_type")]
    return []


def _task_type_errors(
    layer_type: str, calls: int, asks: bool, answers: Sequence[Mapping[str, Any]], done_calls: int, done_asks: bool
) -> list[Problem]:
    """What the task's layer type allows (docs/generation.md: ST one call, MT several, CQ ask first, CC chat),
    given this step's ``calls`` / ``asks`` / ``answers`` and the task's calls and questions so far."""
    rule = "decision.task_type"
    errors = []
    if layer_type == "CC" and (calls or asks):
        errors.append(Problem("this task is casual chat: answer directly with prepare_to_answer (answer_type chat)", rule))
    if layer_type == "CC" and answers and (answers[0].get("arguments") or {}).get("answer_type") != "chat":
        errors.append(Problem("this task is casual chat: answer_type must be 'chat'", rule))
    if layer_type in ("ST", "MT") and asks:
        errors.append(Problem("this task gives every required value: call the tools instead of asking", rule))
    if layer_type == "ST" and done_calls + calls > 1:
        errors.append(Problem("this task needs exactly one tool call", rule))
    if answers and layer_type == "ST" and done_calls != 1:
        errors.append(Problem("answer only after the single tool call of this task", rule))
    if answers and layer_type == "MT" and done_calls < 2:
        errors.append(Problem("this task needs several tool calls before the answer", rule))
    if answers and layer_type == "CQ" and (not done_asks or not done_calls):
        errors.append(
            Problem("this task lacks a required value: ask the user, then call the tool, before answering", rule)
        )
    return errors


def call_key(call: Mapping[str, Any]) -> str:
    """One call (name and arguments) as a canonical JSON text: two calls are the same call when their keys
    are equal (``decision.repeated_call``, ``result.copies_other``; docs/generation.md §2)."""
    return json.dumps([call.get("name"), call.get("arguments") or {}], sort_keys=True, ensure_ascii=False)


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
