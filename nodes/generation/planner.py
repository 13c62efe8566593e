"""Planner role (docs/generation.md): decides the assistant's next step for the current task as a structured
:class:`~graphs.generation_state.PlannerDecision` (thought, plan, actions with dependencies).

The decision is not applied here: it waits in ``pending`` for the checker. Malformed output (no JSON,
arguments not an object, no action) is kept as a parse error, which the checker rejects.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graphs.generation_context import Context
from graphs.generation_state import PlannerDecision, State
from nodes.generation._common import (
    actions_lines,
    ask_model,
    conversation_lines,
    entry_id,
    fail,
    labels,
    section,
    tools_block,
)
from nodes.generation.role_schemas import planner_schema
from prompts import fragments, render


def planner_request(state: State) -> tuple[str, str]:
    """System and human messages of the planner for the current step of the current task (docs/generation.md)."""
    names = labels(state)
    task = state.tasks[-1]
    rule = fragments(state.language)["planner_rules"][task["layer_type"]]
    system = render("planner.md", state.language, env_info=state.env_info, task_rule=rule)
    parts = [
        section(names["tools"], tools_block(state.tools, compact=True), names["none"]),
        section(names["conversation"], conversation_lines(state, include_current=False), names["none"]),
        section(names["current_request"], task["user_message"], names["none"]),
        section(names["actions"], actions_lines(task["nodes"]), names["none"]),
    ]
    if state.feedback:
        parts.append(f"{names['feedback']}: {state.feedback}\n")
    return system, "\n".join(parts)


def next_step(task: dict[str, Any]) -> int:
    """Index of the planner step about to be decided in ``task`` (0 for a fresh task)."""
    return max((n["step"] for n in task["nodes"]), default=-1) + 1


async def planner(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the planner model for the next step's decision and leave it in ``pending`` for the checker (docs/generation.md).

    Returns:
        State update with ``pending = {"kind": "decision", "id", "step", "decision" | None, "error" | None}``,
        a transcript entry and the captured call; or a failure when the task already used
        ``max_steps`` steps.
    """
    if state.status != "running":
        return {}
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    task = state.tasks[-1]
    step = next_step(task)
    if step >= context.max_steps:
        return fail(f"task {len(state.tasks) - 1} did not finish within {context.max_steps} planner steps")
    system, human = planner_request(state)
    schema = planner_schema(state.tools, task["layer_type"], task["nodes"], banned=state.banned)
    text, record = await ask_model("planner", state, runtime, system, human, json_schema=schema)
    decision, error = PlannerDecision.parse(text)
    dumped = decision.model_dump() if decision is not None else None
    eid = entry_id(state)
    entry = {
        "id": eid,
        "role": "planner",
        "task": len(state.tasks) - 1,
        "step": step,
        "attempt": state.attempts + 1,
        "content": text,
        "decision": dumped,
        "error": error,
    }
    pending = {"kind": "decision", "id": eid, "step": step, "decision": dumped, "error": error}
    return {"pending": pending, "transcript": [entry], "calls": [record]}
