"""The result record of a session (docs/evaluation.md §5): step logs, per-task results, the session line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.harness.errors import ERROR_PREFIX
from wildtoolbench.bench.harness.outcome import StepOutcome
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.bench.text_calls import text_tool_calls


def step_log(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    response: Mapping[str, Any],
    outcome: StepOutcome,
) -> dict[str, Any]:
    """The ``step_<s>`` entry of a task's ``inference_log`` (docs/evaluation.md §5).

    Args:
        messages: the request's messages (OpenAI dicts; the list and the dicts are
            copied shallowly, nested values are shared: treat them as immutable).
        tools: the request's tools (after float -> number).
        response: the raw response (``content``, ``tool_calls``, ``reasoning_content``).
        outcome: :func:`match_step`'s verdict on it.

    Returns:
        ``{"inference_input": {"messages", "tools"}, "inference_output": {"reasoning_content",
        "content", "tool_calls", "current_action_name_label", "error_reason"?},
        "inference_answer"?}``. ``inference_output`` also gets ``"diagnostics"`` when
        the outcome or :func:`response_diagnostics` has notes (scoring ignores them).
    """
    output: dict[str, Any] = {
        "reasoning_content": response.get("reasoning_content"),
        "content": response.get("content"),
        "tool_calls": response.get("tool_calls"),
        "current_action_name_label": outcome.label,
    }
    if outcome.error_reason is not None:
        output["error_reason"] = outcome.error_reason
    diagnostics = outcome.diagnostics + response_diagnostics(response)
    if diagnostics:
        output["diagnostics"] = diagnostics
    entry: dict[str, Any] = {
        "inference_input": {"messages": [dict(m) for m in messages], "tools": tools},
        "inference_output": output,
    }
    if outcome.inference_answer is not None:
        entry["inference_answer"] = outcome.inference_answer
    return entry


def response_diagnostics(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Notes about a response that the reference scoring does not see (an extra key of the docs/evaluation.md §5 step log, never scored).

    Currently one kind: ``{"kind": "text_tool_call", "format", "names", "message"}``
    when ``tool_calls`` is empty but the text content holds a tool call
    (:func:`text_tool_calls`); reference mode scores such a reply as text, and
    the note makes a server whose tool-call parser is off visible.
    """
    if response.get("tool_calls"):
        return []
    found = text_tool_calls(response.get("content"))
    if found is None:
        return []
    message = (
        f"the reply has no tool_calls but its text holds a tool call ({found['format']}: "
        f"{', '.join(found['names'])}); scored as a text reply. Check the server's tool-call parser "
        "(e.g. vLLM --enable-auto-tool-choice --tool-call-parser) or the chat template."
    )
    return [{"kind": "text_tool_call", **found, "message": message}]


def effective_step_limit(max_steps: int | None, node_count: int) -> int | None:
    """Model requests allowed in one task: the configured limit, raised to ``node_count + 1``.

    The published step loop is bounded by the task's gold node count (a request at step
    ``s >= node_count`` ends the task by its own rules, docs/evaluation.md §3), so a safety limit
    below ``node_count + 1`` could change a score the published evaluation gives; it never does here.

    Args:
        max_steps: the configured limit (``--max-steps``), or ``None`` for none.
        node_count: number of nodes in the task's gold answer list.

    Returns:
        ``max(max_steps, node_count + 1)``, or ``None`` when ``max_steps`` is ``None``.
    """
    return None if max_steps is None else max(max_steps, node_count + 1)


def step_limit_reason(max_steps: int) -> str:
    """The task-level ``error_reason`` of a task stopped by the step limit (``--max-steps``; a guard on the docs/evaluation.md §3 step loop)."""
    return f"step limit reached: {max_steps} model requests in this task without an end (--max-steps {max_steps})"


def new_task_result(task_idx: int, begin_message: Mapping[str, Any]) -> dict[str, Any]:
    """An empty per-task result (docs/evaluation.md §5) with label ``error`` until the task ends correct.

    ``begin_message`` is the task's user message (the last prompt message).
    """
    return {
        "action_name_label": "error",
        "is_optimal": False,
        "inference_log": {"task_idx": task_idx, "begin_of_current_task": dict(begin_message)},
        "latency": [],
        "input_token_count": [],
        "output_token_count": [],
    }


def is_optimal(task_correct: bool, last_step: int, min_length: int) -> bool:
    """docs/evaluation.md §3 / quirk 7: correct and the final step index equals ``min_length - 1``."""
    return task_correct and last_step == min_length - 1


def close_task_result(result: dict[str, Any], task_correct: bool, last_step: int, min_length: int) -> dict[str, Any]:
    """Set ``action_name_label`` and ``is_optimal`` of a finished task result (returns it; docs/evaluation.md §3, §5)."""
    result["action_name_label"] = "correct" if task_correct else "error"
    result["is_optimal"] = is_optimal(task_correct, last_step, min_length)
    return result


def session_record(
    session_id: str,
    model_name: str,
    results: list[dict[str, Any]],
    *,
    scoring: ScoringStrategy | str | None = None,
) -> dict[str, Any]:
    """The docs/evaluation.md §5 line of a session that ran: ``{"id", "model_name", "result": [per task]}``.

    Outside reference mode the line also says which: ``{"id", "model_name", "scoring": "fixed", "result"}``
    (the strategy's ``record_tag``, docs/fixed-mode.md §1); reference lines have no ``scoring`` key.
    """
    return {"id": session_id, "model_name": model_name, **scoring_strategy(scoring).record_tag(), "result": results}


def error_record(
    session_id: str, model_name: str, message: str, *, scoring: ScoringStrategy | str | None = None
) -> dict[str, Any]:
    """The docs/evaluation.md §5 line of a session whose inference crashed: ``result = "Error during inference: <message>"``.

    Outside reference mode it names the mode as :func:`session_record` does (docs/fixed-mode.md §1).
    """
    tag = scoring_strategy(scoring).record_tag()
    return {"id": session_id, "model_name": model_name, **tag, "result": ERROR_PREFIX + message}


def with_language(record: Mapping[str, Any], language: str) -> dict[str, Any]:
    """The session line of a run of the ``language`` side (docs/evaluation.md §5.5): ``record`` itself
    for ``en`` (the published shape, no new key), else a copy with ``"language": language`` after
    ``model_name``, so that scoring can tell which side's tools check the arguments."""
    if language == "en":
        return dict(record)
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key != "language":
            out[key] = value
        if key == "model_name":
            out["language"] = language
    out.setdefault("language", language)
    return out
