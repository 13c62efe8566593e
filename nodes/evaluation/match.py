"""Match the candidate's response against the step's gold candidates and feed the outcome back (docs/evaluation.md §3)."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from wildtoolbench.bench import harness as inference
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.strategy import scoring_strategy
from wildtoolbench.models.messages import openai_messages, to_langchain
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.evaluation.finish import end_task
from wildtoolbench.nodes.evaluation.state import EvaluationState
from wildtoolbench.nodes.tracing import annotate_evaluation_node


async def match_response(
    state: EvaluationState, runtime: Runtime[EvaluationContext]
) -> Command[Literal["call_candidate", "build_prompt", "finish_session"]]:
    """Judge the last response against the gold answer list of the side that runs, log the step, and route (docs/evaluation.md §3).

    Writes ``step_<s>`` into the task result; a matched call step prunes the
    task's paths. When the task goes on, appends the candidate's reply and the
    gold tool observations (or the gold user reply) to ``messages``
    (docs/evaluation.md §3.3, §3.5), moves to step ``s + 1`` and goes back to
    ``call_candidate``. When the task ends (correct or not) its result is
    stored and the session goes on with the next task's ``build_prompt``, or
    ends with ``finish_session`` after the last task (:func:`wildtoolbench.nodes.evaluation.finish.end_task`);
    ``finish_session`` also comes next when the reference harness itself would
    crash (quirk 11). A task that would continue after ``context.max_steps``
    requests (never fewer than the task's gold node count + 1,
    :func:`wildtoolbench.bench.harness.effective_step_limit`) ends as an error with the
    task-level ``error_reason`` of :func:`wildtoolbench.bench.harness.step_limit_reason`. In
    a mode with the inference fixes (``state["scoring"]``, fixed or semantic) the step is judged by the
    rules of docs/fixed-mode.md §2-§5.
    """
    task_idx, step = state["task_idx"], state["step"]
    scoring = scoring_strategy(state.get("scoring"))
    answer_list = state["session"][fields_for(state.get("language", "en")).answer_list][task_idx]
    tracker = inference.tracker_after(answer_list, state.get("prunes", []), scoring=scoring)
    response = state["response"] or {}
    try:
        outcome = inference.match_step(
            tracker, answer_list, step, response, scoring=scoring, tools=state.get("tools", ())
        )
    except inference.InferenceError as exc:
        return Command(goto="finish_session", update={"error": str(exc), "error_detail": exc.detail})

    task_result = dict(state["task_result"])
    task_result["inference_log"] = {
        **task_result["inference_log"],
        f"step_{step}": inference.step_log(openai_messages(state["messages"]), state["tools"], response, outcome),
    }
    annotate_evaluation_node(state, step_label=outcome.label)
    if outcome.task_end:
        inference.close_task_result(task_result, outcome.task_correct, step, tracker.min_length)
        return end_task(state, task_result)
    configured = runtime.context.max_steps if runtime is not None and runtime.context is not None else None
    max_steps = inference.effective_step_limit(configured, len(answer_list))
    if max_steps is not None and step + 1 >= max_steps:
        inference.close_task_result(task_result, False, step, tracker.min_length)
        task_result["error_reason"] = inference.step_limit_reason(max_steps)
        return end_task(state, task_result)
    prunes = list(state.get("prunes", []))
    if outcome.prune is not None:
        prunes.append((step, outcome.prune))
    return Command(
        goto="call_candidate",
        update={
            "task_result": task_result,
            "prunes": prunes,
            "messages": [to_langchain(m) for m in outcome.messages],
            "step": step + 1,
        },
    )
