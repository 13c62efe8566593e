"""User role (docs/generation.md): opens the first task, answers the assistant's questions (about one answer in
four vague, which forces another question), and proposes each next task with an implicit-intent
strategy (coreferential reference, partial information, long-range dependency).

A task's message is written around focus tools drawn from the session's seed (:func:`focus_tools`):
the user model sees what they do (not their names) and answers ``{"details": {...}, "message": ...}``
(grammar-constrained on the local model, :func:`user_schema`): the concrete values first, then the
message that states them. Rule checks (docs/generation.md §10) reject a message in the assistant's
voice, a meta-question about the assistant or its tools, and details the message does not state;
the message is written again with the reason, at most ``max_retries`` tries.
"""

from __future__ import annotations

import datetime as _dt
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from string import Template
from typing import Any

from langgraph.runtime import Runtime

from wildtoolbench.bench.audit_context import CallContext, as_text, env_date, has_cjk, leaves
from wildtoolbench.bench.generation import random_env_info, should_answer_vaguely
from wildtoolbench.bench.generation_checks import extract_json, plain_text, tools_by_name
from wildtoolbench.bench.generation_quality import described, echo_problem, placeholder_problem, voice_problems
from wildtoolbench.bench.generation_values import (
    fallback_value,
    given_by_name,
    name_words,
    ordered_ranges,
    planned_value,
    request_phrase,
)
from wildtoolbench.bench.rules import Problem, hints
from wildtoolbench.bench.rules.broken import broken_text
from wildtoolbench.bench.terms import ASK_USER
from wildtoolbench.nodes.generation._common import (
    ask_model,
    assistant_replies,
    conversation_lines,
    conversation_texts,
    current_task,
    dumps,
    entry_id,
    fail,
    labels,
    replace_current,
    role_has_grammar,
    rule_profile,
    section,
)
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.retry import TextRequest, profile_check, rule_verdict, write_text
from wildtoolbench.nodes.generation.role_schemas import grammar_safe_schema, message_pattern, stated
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.prompts import fragments, render

USER_MAX_TOKENS = 200
"""Token cap of a user message (its JSON details included) on the local model."""


def task_kind(state: State, layer: int) -> str:
    """Description of the task the user must write for ``layer`` (type, and MT variant; docs/generation.md)."""
    layer_type = state.layer_types[layer]
    variant = state.mt_variants[layer] if layer < len(state.mt_variants) else ""
    key = f"MT.{variant or 'plain'}" if layer_type == "MT" else layer_type
    return fragments(state.language)["task_kinds"][key]


def focus_tools(state: State, layer: int) -> tuple[list[dict[str, Any]], str]:
    """The tools the user's message for ``layer`` is about, and the parameter to leave out (docs/generation.md §4).

    Drawn from the session's seed: ``ST`` and ``CQ`` one tool (``CQ``: one with a required
    parameter, which is left out), ``MT`` two different tools (one, twice, when the list has only
    one), ``CC`` none. Returns ``(functions, missing)``, ``missing`` ``""`` unless ``CQ``.
    """
    layer_type = state.layer_types[layer]
    functions = [t.get("function", t) for t in state.tools]
    if layer_type == "CC" or not functions:
        return [], ""
    rng = random.Random(f"focus:{state.seed}:{layer}")
    if layer_type == "CQ":
        with_required = [f for f in functions if (f.get("parameters") or {}).get("required")] or functions
        chosen = rng.choice(with_required)
        required = list((chosen.get("parameters") or {}).get("required") or [])
        return [chosen], rng.choice(required) if required else ""
    if layer_type == "MT":
        return (rng.sample(functions, 2) if len(functions) > 1 else [functions[0], functions[0]]), ""
    return [rng.choice(functions)], ""


def _detail_names(function: dict[str, Any], missing: str = "") -> list[str]:
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    names = [r for r in parameters.get("required") or [] if r in properties and r != missing]
    return names or [n for n in properties if n != missing][:1]


def _detail_schema(schema: Any) -> dict[str, Any]:
    out = grammar_safe_schema(schema) or {"type": "string"}
    if out.get("type") == "string" and "enum" not in out:
        out["maxLength"] = 60  # a value, not a paragraph
    return out


def session_today(state: State) -> _dt.date:
    """The session's environment date (docs/generation.md §5), or 2024-01-01 when it has none."""
    return env_date(state.env_info) or _dt.date(2024, 1, 1)


def session_given(state: State) -> dict[str, list[Any]]:
    """The values the user gave so far in the session, by parameter name (:func:`wildtoolbench.bench.generation_values.given_by_name`)."""
    return given_by_name(details for task in state.tasks for details in task.get("given") or [])


def planned_details(
    state: State,
    functions: Sequence[dict[str, Any]],
    missing: str = "",
    layer: int = 0,
    today: _dt.date | None = None,
) -> tuple[list[dict[str, Any]], set[tuple[int, str]]]:
    """The values the user's message for ``layer`` gives, chosen by the generator (docs/generation.md §4.4).

    One dict per focus function: each detail parameter (:func:`_detail_names`: the required ones
    but ``missing``, else the first) mapped to a value. In a later task, a parameter the user gave a
    value for before keeps that value and is *implicit*: the message refers back to it instead of
    stating it (the task's implicit-intent strategy, §4.1). Otherwise
    :func:`wildtoolbench.bench.generation_values.planned_value`, ``None`` where the model chooses. Drawn from the
    session's seed and ``layer``.

    Returns:
        ``(plans, implicit)``: ``implicit`` holds ``(function index, parameter)`` pairs.
    """
    rng = random.Random(f"values:{state.seed}:{layer}")
    today = today or session_today(state)
    earlier = session_given(state) if layer > 0 else {}
    out, implicit = [], set()
    for index, function in enumerate(functions):
        properties = (function.get("parameters") or {}).get("properties") or {}
        plan = {}
        for name in _detail_names(function, missing):
            if earlier.get(name):
                plan[name] = earlier[name][-1]
                implicit.add((index, name))
            else:
                plan[name] = planned_value(name, properties.get(name), rng=rng, today=today, language=state.language)
        out.append(ordered_ranges(plan))
    return out, implicit


def asked_details(state: State, task: dict[str, Any], today: _dt.date | None = None) -> dict[str, Any]:
    """The values a clear answer to the task's last question gives (docs/generation.md §4.4): each parameter
    the question asks for mapped to :func:`wildtoolbench.bench.generation_values.planned_value` (``None``: the model
    chooses), drawn from the session's seed, the task and the question's place."""
    asks = [n for n in task["nodes"] if n["name"] == ASK_USER]
    arguments = asks[-1].get("arguments") or {} if asks else {}
    function = tools_by_name(state.tools).get(arguments.get("tool_name"), {})
    properties = (function.get("parameters") or {}).get("properties") or {}
    asked = arguments.get("missing_required_parameters") or []
    rng = random.Random(f"answer:{state.seed}:{len(state.tasks) - 1}:{len(asks)}")
    today = today or session_today(state)
    return {
        str(name): planned_value(str(name), properties.get(name), rng=rng, today=today, language=state.language)
        for name in asked
        if isinstance(name, str) and name in properties
    }


def user_schema(
    functions: Sequence[dict[str, Any]],
    missing: str = "",
    planned: Sequence[dict[str, Any]] | None = None,
    openers: Sequence[str] = (),
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    language: str = "en",
) -> dict[str, Any]:
    """JSON schema of the user's task message (docs/generation.md §4.3): ``{"details", "message"}``.

    ``details`` holds, per focus function, the parameters the message must state (the required ones,
    else the first; ``missing`` left out), typed as the tool's schema says, or fixed (``const``) to
    the value ``planned`` gives for it (:func:`planned_details`); several focus functions give one
    such object per function (``request_1``, ``request_2``). No focus function: ``details`` is an
    empty object. ``message`` follows :func:`message_pattern`: it opens with one of ``openers`` and
    states every planned value but the ``implicit`` ones (``(function index, parameter)``: said
    before, referred to), with neither it is any text up to 300 characters.
    """
    parts = []
    plans = list(planned or [])
    fixed: list[Any] = []
    for index, function in enumerate(functions):
        properties = (function.get("parameters") or {}).get("properties") or {}
        names = _detail_names(function, missing)
        plan = plans[index] if index < len(plans) else {}
        shapes = {}
        for name in names:
            if plan.get(name) is not None:
                shapes[name] = {"const": plan[name]}
                if (index, name) not in implicit:
                    fixed.append(plan[name])
            else:
                shapes[name] = _detail_schema(properties.get(name))
        parts.append({"type": "object", "properties": shapes, "required": names, "additionalProperties": False})
    if not parts:
        details: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    elif len(parts) == 1:
        details = parts[0]
    else:
        keys = [f"request_{i + 1}" for i in range(len(parts))]
        details = {
            "type": "object",
            "properties": dict(zip(keys, parts)),
            "required": keys,
            "additionalProperties": False,
        }
    if openers or fixed:
        message: dict[str, Any] = {"type": "string", "pattern": message_pattern(openers, fixed, language)}
    else:
        message = {"type": "string", "maxLength": 300}
    return {
        "type": "object",
        "properties": {"details": details, "message": message},
        "required": ["details", "message"],
        "additionalProperties": False,
    }


def answer_schema(
    asked: dict[str, Any], *, vague: bool, openers: Sequence[str] = (), language: str = "en"
) -> dict[str, Any]:
    """JSON schema of the user's answer to a question (docs/generation.md §4.2, §4.4): ``{"details", "message"}``
    with ``details`` the asked parameters (fixed to the planned values of :func:`asked_details`, else any
    short value) and a message (:func:`message_pattern`) that opens with one of ``openers`` and states
    the fixed values; a vague answer has no details and states nothing in particular."""
    shapes = {}
    if not vague:
        shapes = {n: ({"const": v} if v is not None else {"type": "string", "maxLength": 60}) for n, v in asked.items()}
    fixed = [v for v in asked.values() if v is not None] if not vague else []
    return {
        "type": "object",
        "properties": {
            "details": {
                "type": "object",
                "properties": shapes,
                "required": list(shapes),
                "additionalProperties": False,
            },
            "message": {"type": "string", "pattern": message_pattern(openers, fixed, language)},
        },
        "required": ["details", "message"],
        "additionalProperties": False,
    }


def _values_text(
    state: State,
    functions: Sequence[dict[str, Any]],
    plans: Sequence[dict[str, Any]],
    missing: str,
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """``city = Paris, date = 2024-05-08, query = (a real one you choose)`` for the prompt; a value said
    before is marked as one to refer back to."""
    items = []
    for index, function in enumerate(functions):
        plan = plans[index] if index < len(plans) else {}
        for name in _detail_names(function, missing):
            items.append(_value_item(state, name, plan.get(name), said=(index, name) in implicit))
    return ", ".join(dict.fromkeys(items)) or "-"


def _value_item(state: State, name: str, value: Any, *, said: bool = False) -> str:
    """One value as the prompt lists it: ``city = Paris``, ``query = (a real one you choose)``, or marked as
    said before."""
    names = fragments(state.language)["labels"]
    if value is None:
        return f"{name} = {names['you_choose']}"
    mark = f" {names['said_before']}" if said else ""
    return f"{name} = {' / '.join(stated(value)) or dumps(value)}{mark}"


def goal_text(
    state: State,
    functions: Sequence[dict[str, Any]],
    missing: str,
    layer: int = 0,
    planned: Sequence[dict[str, Any]] | None = None,
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """The prompt's description of what the user wants: the focus functions' descriptions (not their
    names) and the values the message must give (``planned``, else the parameters' names), or the chat
    goal (docs/generation.md §4.3)."""
    goals = fragments(state.language)["goals"]
    if not functions:
        return Template(goals["chat"]).substitute(kind=task_kind(state, layer))
    description = "; ".join(str(f.get("description") or "").strip().rstrip(".") for f in functions)
    if planned is None:
        planned, implicit = planned_details(state, functions, missing, layer)
    return Template(goals["one" if len(functions) == 1 else "many"]).substitute(
        description=description, parameters=_values_text(state, functions, planned, missing, implicit)
    )


def _param_words(name: str, schema: Any, language: str) -> str:
    """How a request names a parameter: its name's words (``teamId`` -> ``team ID``); on the Chinese side the
    first clause of its description when it has one."""
    if language == "zh" and isinstance(schema, dict) and has_cjk(str(schema.get("description") or "")):
        return re.split(r"[，,。；;（(]", str(schema["description"]).strip(), maxsplit=1)[0] or name
    upper = {"id": "ID", "url": "URL", "ip": "IP", "api": "API", "isbn": "ISBN", "iata": "IATA"}
    return " ".join(upper.get(w, w) for w in name_words(name)) or name


def _listed(value: Any, language: str) -> str:
    """A value as a draft writes it: a list's items joined ("malware, trojan"; 、 on the Chinese side)."""
    if isinstance(value, dict):
        joiner = "，" if language == "zh" else ", "
        return joiner.join(f"{k} {_listed(v, language)}" for k, v in value.items() if stated(v)) or dumps(value)
    return ("、" if language == "zh" else ", ").join(stated(value)) or dumps(value)


def draft_request(
    state: State,
    functions: Sequence[dict[str, Any]],
    plans: Sequence[dict[str, Any]],
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """A plain draft of the user's request (docs/generation.md §4.3): what each focus tool does, as a request
    (:func:`wildtoolbench.bench.generation_values.request_phrase`), then each planned value but the implicit ones
    ("The city is Paris."). The user model rewrites it in its own words; the draft itself is sent only when
    every try of the model was rejected (:func:`draft_message`)."""
    draft = fragments(state.language)["draft"]
    phrases = [request_phrase(str(f.get("description") or f.get("name") or ""), state.language) for f in functions]
    text = Template(draft["ask"]).substitute(
        task=Template(draft["and"]).substitute(first=phrases[0], second=phrases[1]) if len(phrases) > 1 else phrases[0]
    )
    values = []
    for index, function in enumerate(functions):
        properties = (function.get("parameters") or {}).get("properties") or {}
        plan = plans[index] if index < len(plans) else {}
        for name, value in plan.items():
            if value is None or (index, name) in implicit:
                continue
            values.append(
                Template(draft["value"]).substitute(
                    name=_param_words(name, properties.get(name), state.language),
                    value=_listed(value, state.language),
                )
            )
    return (
        " ".join([text, *dict.fromkeys(values)]) if state.language != "zh" else "".join([text, *dict.fromkeys(values)])
    )


def draft_message(
    state: State,
    functions: Sequence[dict[str, Any]],
    plans: Sequence[dict[str, Any]],
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    missing: str = "",
) -> tuple[str, Any]:
    """The draft sent as the user's message when every try of the model was rejected
    (docs/generation.md §4.3): :func:`draft_request` with the ``details`` the message grammar asks for
    (one object per focus function, ``request_1``, ... for several); ``("", None)`` when a value the
    message must state is not planned yet (the session then fails)."""
    parts = []
    for index, function in enumerate(functions):
        plan = plans[index] if index < len(plans) else {}
        names = _detail_names(function, missing)
        if any(plan.get(name) is None for name in names):
            return "", None
        parts.append({name: plan[name] for name in names})
    details: Any = parts[0] if len(parts) == 1 else {f"request_{i + 1}": part for i, part in enumerate(parts)}
    return draft_request(state, functions, plans, implicit), details


def answer_draft(state: State, ask: dict[str, Any], asked: dict[str, Any]) -> str:
    """The draft of a clear answer (docs/generation.md §4.4): each asked value as "The team ID is 99924."."""
    function = tools_by_name(state.tools).get((ask.get("arguments") or {}).get("tool_name"), {})
    properties = (function.get("parameters") or {}).get("properties") or {}
    draft = fragments(state.language)["draft"]
    parts = [
        Template(draft["value"]).substitute(
            name=_param_words(name, properties.get(name), state.language),
            value=_listed(value, state.language),
        )
        for name, value in asked.items()
        if value is not None
    ]
    return ("" if state.language == "zh" else " ").join(parts)


def chat_draft(state: State, layer: int) -> str:
    """The draft of a casual-chat message (docs/generation.md §4.3): one of the language's chat drafts, drawn
    from the session's seed and ``layer``; each starts with one of the chat openers."""
    drafts = fragments(state.language)["chat_drafts"]
    return random.Random(f"chat:{state.seed}:{layer}").choice(drafts)


def values_schema(unknown: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """JSON schema of the user model's choice of the values no rule chooses (docs/generation.md §4.4): one short
    value per parameter name, typed as its schema says."""
    properties = {}
    for name, schema in unknown:
        shape = _detail_schema(schema)
        if shape.get("type") == "string" and "enum" not in shape:
            shape["maxLength"] = 40
        properties[name] = shape
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def mend_object(
    value: dict[str, Any],
    schema: Any,
    descriptions: Sequence[str],
    *,
    rng: random.Random,
    language: str,
    where: str,
) -> tuple[dict[str, Any], list[str]]:
    """``value`` (an object the values request chose) with every text leaf that is empty, a placeholder
    or a copy of a description replaced by :func:`wildtoolbench.bench.generation_values.fallback_value` for its key
    (``{"fieldName": "value"}``: "value" is a placeholder; docs/generation.md §4.4).

    Returns:
        ``(mended copy, reasons)``: one reason per replaced leaf, e.g. ``"data.fieldName = value is a
        placeholder, not a real value: choose a real one"``; no reasons when nothing was replaced.
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    out: dict[str, Any] = {}
    reasons: list[str] = []
    for key, leaf in value.items():
        path = f"{where}.{key}"
        sub = properties.get(key) if isinstance(properties.get(key), dict) else {"type": "string"}
        if isinstance(leaf, dict):
            out[key], inner = mend_object(leaf, sub, descriptions, rng=rng, language=language, where=path)
            reasons += inner
            continue
        why = ""
        if isinstance(leaf, str):
            why = "is empty" if not leaf.strip() else placeholder_problem(leaf, descriptions)
        if why:
            reasons.append(
                Problem(f"{path} is empty", "value.empty")
                if not leaf.strip()
                else why.prefixed(f"{path} = {as_text(leaf)[:40]} ")
            )
            stand_in = fallback_value(str(key), sub, rng=rng, language=language)
            out[key] = leaf if stand_in is None else stand_in
        else:
            out[key] = leaf
    return out, reasons


async def choose_values(
    state: State,
    runtime: Runtime[Context],
    functions: Sequence[dict[str, Any]],
    plans: list[dict[str, Any]],
    layer: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Fill the values of ``plans`` that no rule chose (``None``) with the user model's choice (docs/generation.md §4.4).

    Only for a user model with grammar support (a model without one chooses them in its message's
    details, as before). One request (grammar-constrained to :func:`values_schema`) names one value per such parameter; a
    value that is empty, a placeholder or a copy of a description is replaced by
    :func:`wildtoolbench.bench.generation_values.fallback_value` (recorded as a rule rejection of that choice).

    Returns:
        ``(plans, transcript entries, call records)``; ``plans`` filled where a value was found.
    """
    unknown: dict[str, Any] = {}
    for index, function in enumerate(functions):
        properties = (function.get("parameters") or {}).get("properties") or {}
        for name, value in plans[index].items():
            if value is None:
                unknown.setdefault(name, properties.get(name))
    if not unknown or not role_has_grammar("user", state, runtime):
        return plans, [], []  # a model without a grammar chooses them in its message's details
    names = labels(state)
    system = render("user_values.md", state.language)
    wanted = "\n".join(
        f"- {name}: {str((schema or {}).get('description') or '').strip() or '-'}" for name, schema in unknown.items()
    )
    human = (
        f"{names['what_for']}: "
        + "; ".join(request_phrase(str(f.get("description") or ""), state.language) for f in functions)
        + f"\n{names['values_wanted']}:\n{wanted}"
    )
    raw, record = await ask_model(
        "user", state, runtime, system, human, json_schema=values_schema(list(unknown.items())), max_tokens=120
    )
    try:
        chosen = extract_json(raw)
    except ValueError:
        chosen = None
    chosen = chosen if isinstance(chosen, dict) else {}
    entry = {
        "id": entry_id(state),
        "role": "user",
        "task": layer,
        "kind": "values",
        "attempt": 1,
        "content": raw,
        "details": chosen,
    }
    entries = [entry]
    descriptions = described(functions)
    rng = random.Random(f"stand-in:{state.seed}:{layer}")
    problems, filled = [], {}
    for name, schema in unknown.items():
        value = chosen.get(name)
        why = ""
        if value is None or (isinstance(value, str) and not value.strip()):
            why = Problem(f"{name} is empty", "value.empty")
        elif isinstance(value, dict):
            value, mended = mend_object(value, schema, descriptions, rng=rng, language=state.language, where=name)
            problems.extend(mended)  # the object stands, with a stand-in for each placeholder inside it
        else:
            why = next(
                (
                    p.prefixed(f"{name} = {as_text(v)[:40]} ")
                    for v in ([value] if not isinstance(value, list) else value)
                    for p in [placeholder_problem(v, descriptions)]
                    if p
                ),
                "",
            )
        if why:
            problems.append(why)
            value = fallback_value(name, schema, rng=rng, language=state.language)
        filled[name] = value
    if problems:
        entries.append(rule_verdict(state, entries, layer, entry["id"], problems, " (a stand-in value is used)"))
    out = [{n: (filled.get(n) if v is None else v) for n, v in plan.items()} for plan in plans]
    return out, entries, [record]


def read_message(raw: str) -> tuple[str, Any]:
    """The user's message and details from the model's text: ``{"details", "message"}`` JSON, or plain
    text (details ``None``). Returns ``(message, details)``; the message may be ``""``."""
    try:
        value = extract_json(raw)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return value["message"].strip(), value.get("details")
    if raw.lstrip().startswith('{"'):  # JSON cut off at the token cap: no message
        return "", None
    return plain_text(raw), None


def retry_hint(state: State, problems: Sequence[str]) -> str:
    """What the retry of a rejected message is told (docs/generation.md §4.3): one short instruction per kind
    of problem (the voice, unstated values, an empty message, a placeholder, the value to leave out), in
    the session's language. The exact reasons stay in the transcript: a small model copies whatever text it
    is shown, so the retry gets the fix, not the quoted phrase."""
    texts = fragments(state.language)["retry_hints"]
    return "; ".join(texts[k] for k in dict.fromkeys(hints(problems, "user", "voice")))


def message_problems(
    state: State,
    text: str,
    details: Any,
    *,
    kind: str,
    missing: str = "",
    earlier: Sequence[str] = (),
    functions: Sequence[dict[str, Any]] = (),
    assistant: Sequence[str] = (),
    env_info: str = "",
) -> list[str]:
    """Rule problems of one user message (docs/generation.md §10): empty; the assistant's voice or a
    meta-question (:func:`wildtoolbench.bench.generation_quality.voice_problems`); a detail value that is a placeholder
    or copies a description of the focus ``functions`` (:func:`wildtoolbench.bench.generation_quality.placeholder_problem`);
    a detail value the message (with the ``earlier`` conversation) does not state; the ``missing``
    parameter given after all; six words in a row copied from the ``assistant``'s replies
    (:func:`wildtoolbench.bench.generation_quality.echo_problem`); the date and time of ``env_info`` (else the
    state's environment line)."""
    if not text:
        return [
            Problem("empty user message (or one too long and cut off): write one or two short sentences", "structure.empty_text")
        ]
    env_line = env_info or state.env_info
    problems = [why.prefixed("the message ") for why in voice_problems(text, state.language, opening=True, env_info=env_line)]
    copied = echo_problem(text, assistant)
    if copied:
        problems.append(Problem(f'the message repeats "{copied}" of the assistant\'s reply', "voice.echo"))
    hint = echo_problem(text, fragments(state.language)["retry_hints"].values(), words=4)
    if hint:  # a retry's fix copied into the message ("Do not repeat the assistant's words: ...")
        problems.append(
            Problem(
                f'the message copies "{hint}" of its instructions: it repeats the instructions instead of asking '
                "for something",
                "voice.copies_hint",
            )
        )
    if details is not None:
        context = CallContext([*earlier, text])
        descriptions = described(functions)
        unstated = []
        for path, value in leaves(details):
            placeholder = placeholder_problem(value, descriptions)
            if isinstance(value, str) and not value.strip():
                problems.append(Problem(f"details {path} is empty: give a concrete value", "value.empty"))
            elif placeholder:
                problems.append(placeholder.prefixed(f"details {path} = {as_text(value)[:60]} "))
            elif not context.knows(value):
                unstated.append(dumps(value.strip() if isinstance(value, str) else value))
        if unstated:
            problems.append(
                Problem(
                    f"the message does not state {', '.join(unstated)}: write it so that it names them", "value.unstated"
                )
            )
        if missing and isinstance(details, dict) and details.get(missing) not in (None, ""):
            problems.append(Problem(f"leave out {missing}: the assistant must ask for it", "value.gives_missing"))
    names = [n for f in functions for n in ((f.get("parameters") or {}).get("properties") or {})]
    return problems + [why.prefixed("the message ") for why in broken_text(text, names)]


@dataclass
class _Turn:
    """What one user turn is written from (:func:`user`): its kind, task, prompt, grammar, the values
    request's transcript entries and calls, and the draft used when every try is rejected."""

    kind: str
    layer: int
    system: str
    human: str
    schema: dict[str, Any] | None
    fallback: Callable[[], tuple[str, Any] | None]
    entries: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    vague: bool = False
    strategy: str = ""
    missing: str = ""
    functions: list[dict[str, Any]] = field(default_factory=list)


async def _answer_turn(
    state: State, runtime: Runtime[Context], context: Context, today: _dt.date, conversation: str
) -> _Turn:
    """The user's answer to the assistant's last question (clear or vague; docs/generation.md §4.2)."""
    names, openers = labels(state), fragments(state.language)["openers"]
    value_entries: list[dict[str, Any]] = []
    value_calls: list[dict[str, Any]] = []
    task = current_task(state)
    asks = [n for n in task["nodes"] if n["name"] == ASK_USER]
    answered = sum(1 for n in asks if n.get("user_input"))
    vague = should_answer_vaguely(state.seed, len(state.tasks) - 1, answered, context.vague_answer_rate)
    style = fragments(state.language)["answer_style"]["vague" if vague else "clear"]
    asked = {} if vague else asked_details(state, task, today)
    if any(v is None for v in asked.values()):
        asked_tool = tools_by_name(state.tools).get((asks[-1].get("arguments") or {}).get("tool_name"), {})
        filled, value_entries, value_calls = await choose_values(
            state, runtime, [asked_tool], [asked], len(state.tasks) - 1
        )
        asked = filled[0]
    schema = answer_schema(asked, vague=vague, openers=openers["answer"], language=state.language)
    system = render("user_answer.md", state.language, answer_style=style)
    human = conversation
    if asked:
        values = ", ".join(_value_item(state, n, v) for n, v in asked.items())
        human += "\n" + Template(fragments(state.language)["goals"]["answer"]).substitute(parameters=values)
        human += f"\n{names['draft']}: {answer_draft(state, asks[-1], asked)}"

    def fallback() -> tuple[str, Any] | None:
        if not vague and any(v is not None for v in asked.values()):
            return answer_draft(state, asks[-1], asked), asked  # "The team ID is 99924."
        return None

    return _Turn("answer", len(state.tasks) - 1, system, human, schema, fallback, value_entries, value_calls, vague)


async def _task_turn(state: State, runtime: Runtime[Context], env_info: str, today: _dt.date, conversation: str) -> _Turn:
    """The message that opens the next layer's task around its focus tools (docs/generation.md §4.1, §4.3)."""
    names, openers = labels(state), fragments(state.language)["openers"]
    opening = not state.tasks
    layer = len(state.tasks)
    kind = "open" if opening else "next"
    strategy = ""
    if not opening:
        strategy = state.strategies[layer] if layer < len(state.strategies) and state.strategies[layer] else "partial"
    functions, missing = focus_tools(state, layer)
    planned, implicit = planned_details(state, functions, missing, layer, today)
    planned, value_entries, value_calls = await choose_values(state, runtime, functions, planned, layer)
    openers_kind = "chat" if not functions else ("request" if opening else "next")
    schema = user_schema(functions, missing, planned, openers[openers_kind], implicit, state.language)
    template_values = {"env_info": env_info, "task_kind": task_kind(state, layer)}
    if not opening:
        template_values["strategy"] = fragments(state.language)["strategies"][strategy]
    system = render("user_open.md" if opening else "user_next.md", state.language, **template_values)
    if functions:
        goal = f"{names['draft']}: {draft_request(state, functions, planned, implicit)}"
        if any(v is None for plan in planned for v in plan.values()):  # values the model still chooses
            goal += "\n" + goal_text(state, functions, missing, layer, planned, implicit)
    else:
        goal = f"{names['draft']}: {chat_draft(state, layer)}"
    # What the user wants comes last, then the closing cue: small models follow the last thing they
    # read (the example of the system prompt otherwise).
    cue = names["open_cue" if opening else "next_cue"]
    human = f"{goal}\n\n{cue}" if opening else f"{conversation}\n{goal}\n\n{cue}"

    def fallback() -> tuple[str, Any] | None:
        return draft_message(state, functions, planned, implicit, missing) if functions else None

    return _Turn(kind, layer, system, human, schema, fallback, value_entries, value_calls, False, strategy, missing,
                 functions)  # fmt: skip


async def user(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the user's next message (docs/generation.md).

    Mode by state: no task yet -> open task 1 (layer 0); ``awaiting == "reply"`` -> answer the
    question of the last ask node (fills its ``user_input``); otherwise -> open the next layer's task.
    A message that breaks a rule (:func:`message_problems`) is written again with the reason, up to
    ``max_retries`` tries in total, then the session fails.

    Returns:
        State update: ``tasks`` (new task or filled answer), ``awaiting``, ``transcript``, ``calls``
        (and ``env_info`` when the input had none).
    """
    if state.status != "running":
        return {}
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    update: dict[str, Any] = {}
    env_info = state.env_info
    if not env_info:
        env_info = random_env_info(random.Random(state.seed), 2024)
        update["env_info"] = env_info
    names = labels(state)
    today = env_date(env_info) or _dt.date(2024, 1, 1)
    conversation = section(names["conversation"], conversation_lines(state), names["none"])
    if state.awaiting == "reply":
        turn = await _answer_turn(state, runtime, context, today, conversation)
    else:
        turn = await _task_turn(state, runtime, env_info, today, conversation)
    kind, layer, strategy, vague = turn.kind, turn.layer, turn.strategy, turn.vague
    missing, functions = turn.missing, turn.functions
    earlier = conversation_texts(state) if kind == "next" else []
    check = profile_check(
        partial(
            message_problems,
            state,
            kind=kind,
            missing=missing,
            earlier=earlier,
            functions=functions,
            assistant=assistant_replies(state),
            env_info=env_info,
        ),
        rule_profile(context, state),
        "user",
    )

    request = TextRequest(
        role="user",
        task=layer,
        kind=kind,
        system=turn.system,
        human=turn.human,
        feedback_label=names["user_feedback"],
        read=read_message,
        check=check,
        hint=partial(retry_hint, state),
        env_info=env_info,
        json_schema=turn.schema,
        max_tokens=USER_MAX_TOKENS,
        extra=lambda details: {"details": details, "vague": vague, "strategy": strategy},
        fallback=turn.fallback,
        entries=list(turn.entries),
    )
    written = await write_text(request, state, runtime, context)
    text, details, problems = written.text, written.details, written.problems
    update.update(transcript=written.entries, calls=[*turn.calls, *written.calls])
    if problems:
        return {
            **update,
            **fail(f"user message rejected {written.tries} times (task {layer}, {kind}): " + "; ".join(problems)),
        }
    given = details if isinstance(details, dict) else {}
    if kind == "answer":
        task = current_task(state)
        task["nodes"][-1]["user_input"] = text
        if given:
            task["given"] = [*task.get("given", []), given]
        return {**update, "tasks": replace_current(state, task), "awaiting": ""}
    variant = state.mt_variants[layer] if layer < len(state.mt_variants) else ""
    new_task = {
        "layer_type": state.layer_types[layer],
        "variant": variant,
        "strategy": strategy,
        "user_message": text,
        "nodes": [],
        "focus": [f.get("name") for f in functions if isinstance(f.get("name"), str)],
        "missing": missing,
        "given": [given] if given else [],
    }
    return {
        **update,
        "tasks": [*state.tasks, new_task],
        "awaiting": "",
        "attempts": 0,
        "feedback": "",
        "rejected": [],
        "banned": [],
        "model_vetoed": False,
    }
