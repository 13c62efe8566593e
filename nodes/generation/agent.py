"""Agent role (docs/generation.md): writes what the assistant says: the question for an accepted
``ask_user_for_required_parameters`` node, or the final reply for ``prepare_to_answer`` (a summary of
the tool results, or a direct chat reply). The text becomes the node's gold observation."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from bench.generation import RULE_CHECK
from bench.generation_checks import plain_text
from graphs.generation_context import Context
from graphs.generation_state import State
from nodes.generation._common import (
    actions_lines,
    ask_model,
    conversation_lines,
    current_task,
    entry_id,
    fail,
    labels,
    replace_current,
    section,
)
from prompts import fragments, render

AGENT_MAX_TOKENS = 200
"""Token cap of the assistant's question or reply on the local model (a few sentences; a small model
otherwise rambles for minutes)."""


def agent_request(state: State) -> tuple[str, str]:
    """System and human messages of the agent for the last node of the current task (docs/generation.md)."""
    names = labels(state)
    task = state.tasks[-1]
    node = task["nodes"][-1]
    if state.awaiting == "question":
        missing = ", ".join(node["arguments"].get("missing_required_parameters") or [])
        system = render(
            "agent_question.md",
            state.language,
            env_info=state.env_info,
            tool_name=node["arguments"].get("tool_name", ""),
            missing=missing,
        )
    else:
        style = fragments(state.language)["reply_style"][node["arguments"].get("answer_type", "tool")]
        system = render("agent_reply.md", state.language, env_info=state.env_info, reply_style=style)
    human = "\n".join(
        [
            section(names["conversation"], conversation_lines(state, include_current=False), names["none"]),
            section(names["current_request"], task["user_message"], names["none"]),
            section(names["actions"], actions_lines(task["nodes"]), names["none"]),
        ]
    )
    return system, human


async def agent(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the question or the final reply into the last node's observation (docs/generation.md).

    An empty output is retried up to ``max_retries`` times, then the session fails. After a final
    reply of the last layer the session is done.

    Returns:
        State update: ``tasks``, ``awaiting`` (``"reply"`` after a question, else ``""``), maybe
        ``status = "done"``, transcript entries and captured calls.
    """
    if state.status != "running":
        return {}
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    kind = "question" if state.awaiting == "question" else "reply"
    system, human = agent_request(state)
    task_index = len(state.tasks) - 1
    calls, entries, text = [], [], ""
    for attempt in range(max(1, context.max_retries)):
        raw, record = await ask_model("agent", state, runtime, system, human, max_tokens=AGENT_MAX_TOKENS)
        calls.append(record)
        text = plain_text(raw)
        entries.append(
            {
                "id": entry_id(state, len(entries)),
                "role": "agent",
                "task": task_index,
                "kind": kind,
                "attempt": attempt + 1,
                "content": text,
            }
        )
        if text:
            break
        entries.append(
            {
                "id": entry_id(state, len(entries)),
                "role": RULE_CHECK,
                "task": task_index,
                "target": entries[-1]["id"],
                "verdict": "reject",
                "reason": "empty assistant message",
                "source": "rules",
            }
        )
    update: dict[str, Any] = {"transcript": entries, "calls": calls}
    if not text:
        return {**update, **fail(f"agent gave no {kind} {context.max_retries} times (task {task_index})")}
    task = current_task(state)
    task["nodes"][-1]["observation"] = text
    update.update(tasks=replace_current(state, task), awaiting="reply" if kind == "question" else "")
    if kind == "reply" and len(state.tasks) >= len(state.layer_types):
        update["status"] = "done"
    return update


def route_after_agent(state: State) -> Literal["user's turn", "done"]:
    """After the agent: the user's turn (answer the question, or open the next layer's task), or the
    end when the last layer's reply is written (or the session failed; docs/generation.md)."""
    return "user's turn" if state.status == "running" else "done"
