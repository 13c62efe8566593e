"""State of the evaluation graph: one session, its tasks in order (docs/evaluation.md §3, §5)."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage, BaseMessage, BaseMessageChunk, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from typing_extensions import NotRequired, TypedDict  # pydantic (Studio schemas) needs it before Python 3.12

from wildtoolbench.nodes.evaluation.carried_cache import add_served, merge_paid


def append_messages(left: list[AnyMessage] | None, right: Any) -> list[AnyMessage]:
    """Reducer of ``EvaluationState.messages`` (docs/evaluation.md §7): ``right`` appended to ``left``,
    or, when ``right`` starts with ``RemoveMessage(id=REMOVE_ALL_MESSAGES)``, the rest of ``right`` alone.

    The same result as LangGraph's ``add_messages`` for what the evaluation nodes write (lists of new
    messages without ids), without its per-message work: no ids are assigned (nothing looks a
    message up by id) and nothing is merged. Any other update (a single message, dicts, messages
    with ids, a removal by id, e.g. a state edited in Studio) goes through ``add_messages``.

    Returns:
        A new list (the given lists are not changed).
    """
    if isinstance(right, list) and (left is None or isinstance(left, list)):
        reset = bool(right) and isinstance(right[0], RemoveMessage) and right[0].id == REMOVE_ALL_MESSAGES
        new = right[1:] if reset else right
        if all(
            isinstance(m, BaseMessage) and m.id is None and not isinstance(m, (RemoveMessage, BaseMessageChunk))
            for m in new
        ):
            return new if reset else [*(left or ()), *new]
    return add_messages(left if left is not None else [], right)


class EvaluationInput(TypedDict, total=False):
    """Graph input: the session itself, or its id (looked up in ``EvaluationContext.dataset``)."""

    session: dict[str, Any]
    """A dataset line (docs/dataset.md)."""
    session_id: str
    """``wild_tool_bench_<N>``, when ``session`` is not given."""
    trial: int
    """The trial index of this evaluation (``wtb eval --trials`` on a server, docs/trials.md §1); absent: none."""
    replies: dict[str, Any]
    """Cache entries the client carries for this session-trial (``{key: entry}``, docs/trials.md §8.1); present
    (even empty) when the client runs with ``--cache``: the replies paid for come back in ``paid``."""


class EvaluationOutput(TypedDict):
    """Graph output: the session's docs/evaluation.md §5 result line (always there), and with a carried
    cache (``EvaluationInput.replies``) the replies paid for and those served (docs/trials.md §8.1)."""

    record: dict[str, Any]
    """``{"id", "model_name", "result": [per task] | "Error during inference: ..."}``."""
    paid: NotRequired[dict[str, Any]]
    """``{key: cache entry}`` of the replies this run paid for."""
    served: NotRequired[list[list[int]]]
    """``[input tokens, output tokens]`` of each reply served from ``replies``."""


class EvaluationState(TypedDict, total=False):
    """Working state of one session.

    ``messages`` is the conversation of the current request (LangChain
    messages whose OpenAI dict form is kept losslessly, see
    ``wildtoolbench.models.messages``); it is replaced at the start of every task because the
    history is gold, never the model's own earlier output (docs/evaluation.md §2).
    Its reducer is :func:`append_messages` (the nodes' messages carry no ids).
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
    agent_run: str
    """Key of the live run of an agent candidate (``wildtoolbench.models.agent_loop``), kept across the steps of a task."""

    messages: Annotated[list[AnyMessage], append_messages]
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
    trial: int
    """The trial index given in the input (a server run of ``wtb eval --trials``), else absent."""
    replies: dict[str, Any]
    """The cache entries carried in by the client (``EvaluationInput.replies``)."""
    paid: Annotated[dict[str, Any], merge_paid]
    """Replies paid for while a carried cache is on (``{key: entry}``, sent back to the client)."""
    served: Annotated[list[list[int]], add_served]
    """Token counts of the replies served from the carried cache."""
    candidate: dict[str, Any]
    """Which kind of candidate runs (``wildtoolbench.models.candidate.describe_candidate``); copied into the record."""
