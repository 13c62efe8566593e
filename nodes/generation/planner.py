"""Planner role (docs/generation.md): decides the assistant's next step for the current task as a structured
:class:`~wildtoolbench.nodes.generation.state.PlannerDecision` (thought, plan, actions with dependencies).

The decision is not applied here: it waits in ``pending`` for the checker. Malformed output (no JSON,
arguments not an object, no action) is kept as a parse error, which the checker rejects.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from wildtoolbench.bench.audit_context import env_date
from wildtoolbench.bench.generation_values import given_by_name, known_values
from wildtoolbench.nodes.generation._common import (
    actions_lines,
    ask_model,
    conversation_lines,
    entry_id,
    fail,
    labels,
    section,
    tools_block,
)
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.role_schemas import KnownValues, planner_schema
from wildtoolbench.nodes.generation.state import PlannerDecision, State
from wildtoolbench.prompts import fragments, render


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


def known_for(state: State) -> KnownValues:
    """What the planner's grammar lets a call use now (docs/generation.md §2): the values the user gave
    (their details, by parameter name), every earlier call's arguments and tool result, and the
    environment's date; the current clarification task's left-out parameter counts only once the user
    gave it in this task (a value said in an earlier task does not spare the question)."""
    pieces: list[Any] = [d for task in state.tasks for d in task.get("given") or []]
    for task in state.tasks:
        for node in task.get("nodes", []):
            pieces.append(node.get("arguments") or {})
            if isinstance(node.get("observation"), (dict, list)):
                pieces.append(node["observation"])
    by_name = given_by_name(d for task in state.tasks for d in task.get("given") or [])
    missing = state.tasks[-1].get("missing") if state.tasks else ""
    current = given_by_name(state.tasks[-1].get("given") or []) if state.tasks else {}
    return KnownValues(
        known_values(pieces, today=env_date(state.env_info)),
        by_name,
        [missing] if missing else [],
        current,
    )


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
    schema = planner_schema(
        state.tools,
        task["layer_type"],
        task["nodes"],
        banned=state.banned,
        focus=task.get("focus") or (),
        known=known_for(state),
    )
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
