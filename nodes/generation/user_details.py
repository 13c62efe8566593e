"""User role, what a task's message is about (docs/generation.md §4): the focus tools of a task, the
details the user plans to give (values drawn from the session's seed or said before), and the output
grammars of a message and of an answer (``{"details": {...}, "message": ...}``).

Split out of ``user.py``; the role's node is :func:`wildtoolbench.nodes.generation.user.user`.
"""

from __future__ import annotations

import datetime as _dt
import random
from collections.abc import Sequence
from typing import Any

from wildtoolbench.bench.audit_context import env_date
from wildtoolbench.bench.generation_checks import tools_by_name
from wildtoolbench.bench.generation_values import (
    given_by_name,
    ordered_ranges,
    planned_value,
)
from wildtoolbench.bench.terms import ASK_USER
from wildtoolbench.nodes.generation.role_schemas import grammar_safe_schema
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.text_patterns import message_pattern
from wildtoolbench.prompts import fragments

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


def detail_names(function: dict[str, Any], missing: str = "") -> list[str]:
    """The parameters of ``function`` a message gives as details (docs/generation.md §4): the required ones
    but ``missing`` (the parameter a clarification task leaves out), else the first optional one."""
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    names = [r for r in parameters.get("required") or [] if r in properties and r != missing]
    return names or [n for n in properties if n != missing][:1]


def detail_schema(schema: Any) -> dict[str, Any]:
    """The grammar of one detail value (docs/generation.md §4): the parameter's schema as the local
    runtime's grammar takes it, a free string capped at 60 characters."""
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

    One dict per focus function: each detail parameter (:func:`detail_names`: the required ones
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
        for name in detail_names(function, missing):
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
        names = detail_names(function, missing)
        plan = plans[index] if index < len(plans) else {}
        shapes = {}
        for name in names:
            if plan.get(name) is not None:
                shapes[name] = {"const": plan[name]}
                if (index, name) not in implicit:
                    fixed.append(plan[name])
            else:
                shapes[name] = detail_schema(properties.get(name))
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
