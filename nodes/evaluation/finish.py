"""Close a task and the session: the docs/evaluation.md §5 record."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from bench import harness as inference
from bench.schema import fields_for
from graphs.evaluation_context import EvaluationContext
from graphs.evaluation_state import EvaluationState
from models.candidates import describe_candidate
from nodes.tracing import annotate_evaluation_node


async def finish_task(state: EvaluationState) -> Command[Literal["build_prompt", "finish_session"]]:
    """Store the finished task's result; start the next task or end the session (docs/evaluation.md §5)."""
    annotate_evaluation_node(state, with_step=False, task_label=state["task_result"].get("action_name_label"))
    results = [*state.get("results", []), state["task_result"]]
    next_task = state["task_idx"] + 1
    if next_task < len(state["session"][fields_for(state.get("language", "en")).tasks]):
        return Command(goto="build_prompt", update={"results": results, "task_idx": next_task})
    return Command(goto="finish_session", update={"results": results, "task_idx": next_task})


async def finish_session(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Build the session's docs/evaluation.md §5 line: per-task results, or ``"Error during inference: ..."``.

    An error record also carries ``error_detail`` (a readable cause; the
    reference's own message is often empty). A fixed-mode record says
    ``"scoring": "fixed"`` (docs/fixed-mode.md §1); a run of the Chinese side says
    ``"language": "zh"`` (docs/evaluation.md §5.5). Every record carries the
    ``candidate`` object (which kind of candidate ran, docs/evaluation.md §5.5).
    """
    scoring = state.get("scoring", "reference")
    if state.get("error") is not None:
        record = inference.error_record(state["session_id"], state["model_name"], state["error"], scoring=scoring)
        if state.get("error_detail"):
            record["error_detail"] = state["error_detail"]
    else:
        record = inference.session_record(state["session_id"], state["model_name"], state.get("results", []), scoring=scoring)
    record = inference.with_language(record, state.get("language", "en"))
    record["candidate"] = state.get("candidate") or describe_candidate(runtime.context.model)
    return {"record": record}
