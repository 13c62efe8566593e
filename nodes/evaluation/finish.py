"""Close a task and the session: the docs/evaluation.md §5 record."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from wildtoolbench.bench import harness as inference
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.strategy import scoring_strategy
from wildtoolbench.models.agent_loop import release
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.evaluation.state import EvaluationState
from wildtoolbench.nodes.tracing import annotate_current_run


def end_task(state: EvaluationState, task_result: dict[str, Any]) -> Command[Literal["build_prompt", "finish_session"]]:
    """Store a finished task's result; go on with the next task or end the session (docs/evaluation.md §5, §7).

    Called by ``match_response`` when a task ends: ``task_result`` (closed,
    :func:`wildtoolbench.bench.harness.close_task_result`) is appended to ``results`` and
    ``task_idx`` moves on; the next super-step is ``build_prompt`` while the
    session has tasks left, else ``finish_session``. The running node's trace
    run gets the task's ``task_label``.
    """
    annotate_current_run({"task_label": task_result.get("action_name_label")})
    release(state.get("agent_run"))  # an agent candidate's run stops where the task ends (docs/evaluation.md §8.1)
    next_task = state["task_idx"] + 1
    update = {"task_result": task_result, "results": [*state.get("results", []), task_result], "task_idx": next_task}
    if next_task < len(state["session"][fields_for(state.get("language", "en")).tasks]):
        return Command(goto="build_prompt", update=update)
    return Command(goto="finish_session", update=update)


async def finish_session(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Build the session's docs/evaluation.md §5 line: per-task results, or ``"Error during inference: ..."``.

    An error record also carries ``error_detail`` (a readable cause; the
    reference's own message is often empty). A record of another mode than reference names it
    (``"scoring": "fixed"``, docs/fixed-mode.md §1); a run of the Chinese side says
    ``"language": "zh"`` (docs/evaluation.md §5.5). Every record carries the
    ``candidate`` object (which kind of candidate ran, docs/evaluation.md §5.5).
    """
    scoring = scoring_strategy(state.get("scoring"))
    release(state.get("agent_run"))
    if state.get("error") is not None:
        record = inference.error_record(state["session_id"], state["model_name"], state["error"], scoring=scoring)
        if state.get("error_detail"):
            record["error_detail"] = state["error_detail"]
    else:
        record = inference.session_record(
            state["session_id"], state["model_name"], state.get("results", []), scoring=scoring
        )
    record = inference.with_language(record, state.get("language", "en"))
    record["candidate"] = state.get("candidate") or runtime.context.candidate.describe()
    return {"record": record}
