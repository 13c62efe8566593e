"""User role (docs/generation.md): opens the first task, answers the assistant's questions (about one answer in
four vague, which forces another question), and proposes each next task with an implicit-intent
strategy (coreferential reference, partial information, long-range dependency)."""

from __future__ import annotations

import random
from typing import Any

from langgraph.runtime import Runtime

from bench.generation import RULE_CHECK, random_env_info, should_answer_vaguely
from bench.generation_checks import plain_text
from bench.terms import ASK_USER
from graphs.generation_context import Context
from graphs.generation_state import State
from nodes.generation._common import (
    ask_model,
    conversation_lines,
    current_task,
    entry_id,
    fail,
    labels,
    replace_current,
    section,
    tools_block,
)
from prompts import fragments, render


def task_kind(state: State, layer: int) -> str:
    """Description of the task the user must write for ``layer`` (type, and MT variant; docs/generation.md)."""
    layer_type = state.layer_types[layer]
    variant = state.mt_variants[layer] if layer < len(state.mt_variants) else ""
    key = f"MT.{variant or 'plain'}" if layer_type == "MT" else layer_type
    return fragments(state.language)["task_kinds"][key]


async def user(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the user's next message (docs/generation.md).

    Mode by state: no task yet -> open task 1 (layer 0); ``awaiting == "reply"`` -> answer the
    question of the last ask node (fills its ``user_input``); otherwise -> open the next layer's task.
    An empty output is retried up to ``max_retries`` times, then the session fails.

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
        system = render("user_open.md", state.language, env_info=env_info, task_kind=task_kind(state, 0))
        # The closing cue matters for small models, which otherwise continue the last thing they read
        # (the tool list) instead of writing a request.
        human = section(names["tools"], tools_block(state.tools, full=False), names["none"]) + "\n" + names["open_cue"]
    else:
        vague, layer, kind = False, len(state.tasks), "next"
        strategy = state.strategies[layer] if layer < len(state.strategies) and state.strategies[layer] else "partial"
        system = render(
            "user_next.md",
            state.language,
            env_info=env_info,
            task_kind=task_kind(state, layer),
            strategy=fragments(state.language)["strategies"][strategy],
        )
        human = (
            section(names["tools"], tools_block(state.tools, full=False), names["none"])
            + "\n"
            + conversation
            + "\n"
            + names["next_cue"]
        )

    calls, entries, text = [], [], ""
    for attempt in range(max(1, context.max_retries)):
        raw, record = await ask_model("user", state, runtime, system, human)
        calls.append(record)
        text = plain_text(raw)
        entries.append(
            {
                "id": entry_id(state, len(entries)),
                "role": "user",
                "task": layer,
                "kind": kind,
                "attempt": attempt + 1,
                "content": text,
                "vague": vague,
                "strategy": strategy,
            }
        )
        if text:
            break
        entries.append(
            {
                "id": entry_id(state, len(entries)),
                "role": RULE_CHECK,
                "task": layer,
                "target": entries[-1]["id"],
                "verdict": "reject",
                "reason": "empty user message",
                "source": "rules",
            }
        )
    update.update(transcript=entries, calls=calls)
    if not text:
        return {**update, **fail(f"user gave no message {context.max_retries} times (task {layer}, {kind})")}
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
    return {**update, "tasks": [*state.tasks, new_task], "awaiting": "", "attempts": 0, "feedback": ""}
