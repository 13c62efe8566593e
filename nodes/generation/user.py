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

import random
from collections.abc import Sequence
from string import Template
from typing import Any

from langgraph.runtime import Runtime

from bench.audit_context import CallContext, as_text, leaves
from bench.generation import RULE_CHECK, random_env_info, should_answer_vaguely
from bench.generation_checks import extract_json, plain_text
from bench.generation_quality import described, placeholder_problem, voice_problems
from bench.terms import ASK_USER
from graphs.generation_context import Context
from graphs.generation_state import State
from nodes.generation._common import (
    ask_model,
    conversation_lines,
    conversation_texts,
    current_task,
    dumps,
    entry_id,
    fail,
    labels,
    replace_current,
    section,
)
from nodes.generation.role_schemas import grammar_safe_schema
from prompts import fragments, render

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


def user_schema(functions: Sequence[dict[str, Any]], missing: str = "") -> dict[str, Any]:
    """JSON schema of the user's task message (docs/generation.md §4): ``{"details", "message"}``.

    ``details`` holds, per focus function, the parameters the message must state (the required ones,
    else the first two; ``missing`` left out), typed as the tool's schema says; several focus
    functions give one such object per function (``request_1``, ``request_2``). No focus function:
    ``details`` is an empty object.
    """
    parts = []
    for function in functions:
        properties = (function.get("parameters") or {}).get("properties") or {}
        names = _detail_names(function, missing)
        parts.append(
            {
                "type": "object",
                "properties": {n: _detail_schema(properties.get(n)) for n in names},
                "required": names,
                "additionalProperties": False,
            }
        )
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
    return {
        "type": "object",
        "properties": {"details": details, "message": {"type": "string", "maxLength": 300}},
        "required": ["details", "message"],
        "additionalProperties": False,
    }


def goal_text(state: State, functions: Sequence[dict[str, Any]], missing: str, layer: int = 0) -> str:
    """The prompt's description of what the user wants: the focus functions' descriptions (not their
    names) and the parameters the message must give, or the chat goal (docs/generation.md §4)."""
    goals = fragments(state.language)["goals"]
    if not functions:
        return Template(goals["chat"]).substitute(kind=task_kind(state, layer))
    description = "; ".join(str(f.get("description") or "").strip().rstrip(".") for f in functions)
    parameters = [name for function in functions for name in _detail_names(function, missing)]
    text = Template(goals["one" if len(functions) == 1 else "many"]).substitute(
        description=description, parameters=", ".join(dict.fromkeys(parameters)) or "-"
    )
    return text


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


def message_problems(
    state: State,
    text: str,
    details: Any,
    *,
    kind: str,
    missing: str = "",
    earlier: Sequence[str] = (),
    functions: Sequence[dict[str, Any]] = (),
) -> list[str]:
    """Rule problems of one user message (docs/generation.md §10): empty; the assistant's voice or a
    meta-question (:func:`bench.generation_quality.voice_problems`); a detail value that is a placeholder
    or copies a description of the focus ``functions`` (:func:`bench.generation_quality.placeholder_problem`);
    a detail value the message (with the ``earlier`` conversation) does not state; the ``missing``
    parameter given after all."""
    if not text:
        return ["empty user message (or one too long and cut off): write one or two short sentences"]
    problems = [f"the message {why}" for why in voice_problems(text, state.language, opening=kind != "answer")]
    if details is not None:
        context = CallContext([*earlier, text])
        descriptions = described(functions)
        unstated = []
        for path, value in leaves(details):
            placeholder = placeholder_problem(value, descriptions)
            if isinstance(value, str) and not value.strip():
                problems.append(f"details {path} is empty: give a concrete value")
            elif placeholder:
                problems.append(f"details {path} = {as_text(value)[:60]} {placeholder}")
            elif not context.knows(value):
                unstated.append(dumps(value.strip() if isinstance(value, str) else value))
        if unstated:
            problems.append(f"the message does not state {', '.join(unstated)}: write it so that it names them")
        if missing and isinstance(details, dict) and details.get(missing) not in (None, ""):
            problems.append(f"leave out {missing}: the assistant must ask for it")
    return problems


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
    conversation = section(names["conversation"], conversation_lines(state), names["none"])
    schema: dict[str, Any] | None = None
    missing, functions = "", []
    if state.awaiting == "reply":
        task = current_task(state)
        asks = [n for n in task["nodes"] if n["name"] == ASK_USER]
        answered = sum(1 for n in asks if n.get("user_input"))
        vague = should_answer_vaguely(state.seed, len(state.tasks) - 1, answered, context.vague_answer_rate)
        style = fragments(state.language)["answer_style"]["vague" if vague else "clear"]
        system = render("user_answer.md", state.language, answer_style=style)
        human = conversation
        kind, layer, strategy = "answer", len(state.tasks) - 1, ""
    elif not state.tasks:
        vague, layer, strategy, kind = False, 0, "", "open"
        functions, missing = focus_tools(state, 0)
        schema = user_schema(functions, missing)
        system = render("user_open.md", state.language, env_info=env_info, task_kind=task_kind(state, 0))
        # What the user wants comes last, then the closing cue: small models follow the last thing they
        # read (the example of the system prompt otherwise).
        human = goal_text(state, functions, missing, 0) + "\n\n" + names["open_cue"]
    else:
        vague, layer, kind = False, len(state.tasks), "next"
        strategy = state.strategies[layer] if layer < len(state.strategies) and state.strategies[layer] else "partial"
        functions, missing = focus_tools(state, layer)
        schema = user_schema(functions, missing)
        system = render(
            "user_next.md",
            state.language,
            env_info=env_info,
            task_kind=task_kind(state, layer),
            strategy=fragments(state.language)["strategies"][strategy],
        )
        human = conversation + "\n" + goal_text(state, functions, missing, layer) + "\n\n" + names["next_cue"]

    earlier = conversation_texts(state) if kind == "next" else []
    calls, entries, text, problems = [], [], "", []
    for attempt in range(max(1, context.max_retries)):
        request = human
        if problems:
            request = f"{human}\n\n{names['user_feedback']}: {'; '.join(problems)}"
        raw, record = await ask_model(
            "user", state, runtime, system, request, json_schema=schema, max_tokens=USER_MAX_TOKENS
        )
        calls.append(record)
        text, details = read_message(raw) if schema is not None else (plain_text(raw), None)
        entries.append(
            {
                "id": entry_id(state, len(entries)),
                "role": "user",
                "task": layer,
                "kind": kind,
                "attempt": attempt + 1,
                "content": text,
                "details": details,
                "vague": vague,
                "strategy": strategy,
            }
        )
        problems = message_problems(
            state, text, details, kind=kind, missing=missing, earlier=earlier, functions=functions
        )
        if not problems:
            break
        entries.append(
            {
                "id": entry_id(state, len(entries)),
                "role": RULE_CHECK,
                "task": layer,
                "target": entries[-1]["id"],
                "verdict": "reject",
                "reason": "; ".join(problems),
                "reasons": problems,
                "source": "rules",
            }
        )
    update.update(transcript=entries, calls=calls)
    if problems:
        return {
            **update,
            **fail(f"user message rejected {len(calls)} times (task {layer}, {kind}): {'; '.join(problems)}"),
        }
    if kind == "answer":
        task = current_task(state)
        task["nodes"][-1]["user_input"] = text
        return {**update, "tasks": replace_current(state, task), "awaiting": ""}
    variant = state.mt_variants[layer] if layer < len(state.mt_variants) else ""
    new_task = {
        "layer_type": state.layer_types[layer],
        "variant": variant,
        "strategy": strategy,
        "user_message": text,
        "nodes": [],
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
