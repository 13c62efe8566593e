"""State of the evaluation graph: one session, its tasks in order (docs/evaluation.md §3, §5)."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic (Studio schemas) needs it before Python 3.12


class EvaluationInput(TypedDict, total=False):
    """Graph input: the session itself, or its id (looked up in ``EvaluationContext.dataset``)."""

    session: dict[str, Any]
    """A dataset line (docs/dataset.md)."""
    session_id: str
    """``wild_tool_bench_<N>``, when ``session`` is not given."""


class EvaluationOutput(TypedDict):
    """Graph output: the session's docs/evaluation.md §5 result line."""

    record: dict[str, Any]
    """``{"id", "model_name", "result": [per task] | "Error during inference: ..."}``."""


class EvaluationState(TypedDict, total=False):
    """Working state of one session.

    ``messages`` is the conversation of the current request (LangChain
    messages whose OpenAI dict form is kept losslessly, see
    ``models.messages``); it is replaced at the start of every task because the
    history is gold, never the model's own earlier output (docs/evaluation.md §2).
    """

    session: dict[str, Any]
    session_id: str
    model_name: str
    scoring: str
    """``reference`` or ``fixed`` (from ``EvaluationContext.scoring``; docs/fixed-mode.md §1)."""
    language: str
    """The side of the session that runs: ``en`` (``english_*`` fields) or ``zh`` (``EvaluationContext.language``)."""
    tools: list[dict[str, Any]]
    """The session's tools of that side (``english_tools`` for ``en``) with float -> number, bound to the candidate and recorded per step."""

    task_idx: int
    """Index of the current task (0-3)."""
    step: int
    """Index of the current step within the task."""
    prunes: list[tuple[int, list[int]]]
    """``(step, node indices)`` matched so far in the current task; replayed onto a fresh PathTracker."""
    requests: int
    """Model requests made so far in the session (the replay queue position)."""

    messages: Annotated[list[AnyMessage], add_messages]
    response: dict[str, Any] | None
    """The candidate's last raw response ``{"content", "tool_calls", "reasoning_content"}``."""

    task_result: dict[str, Any]
    """The current task's docs/evaluation.md §5 result, being built step by step."""
    results: list[dict[str, Any]]
    """Finished tasks' docs/evaluation.md §5 results, in task order."""
    error: str | None
    """Session-level inference failure (quirk 11): the text after ``"Error during inference: "``."""
    error_detail: str | None
    """Human-readable cause of ``error`` (the reference's own message is often empty)."""
    record: dict[str, Any]
    """The finished docs/evaluation.md §5 line (set by ``finish_session``)."""
    candidate: dict[str, Any]
    """Which kind of candidate runs (``models.candidates.describe_candidate``); copied into the record."""
