"""One session through the evaluation graph: the graph run's config, the result record, and its usage.

:func:`evaluate_session` turns one graph run into one docs/evaluation.md §5 record and never raises for
a failing model; an infrastructure error (``ModelRequestError`` after its retries) is reported as such.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from wildtoolbench.bench.harness import error_record, with_language
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner.accounting import Prices
from wildtoolbench.runner.identity import scoring_mode
from wildtoolbench.tracing import context_settings, redact_record, session_run_config

if TYPE_CHECKING:  # imported by a run on the local graph only (not by `wtb eval --server`)
    from langgraph.pregel import Pregel


def recorded_model_name(context: EvaluationContext) -> str:
    """The ``model_name`` that records of ``context`` carry: its candidate's name (``context.candidate.name``).

    Raises:
        models.ConfigurationError: a malformed spec or an unknown provider.
    """
    return context.candidate.name


@dataclass
class SessionOutcome:
    """One session run by :func:`run_session`.

    Attributes:
        session_id: the session.
        record: the docs/evaluation.md §5 line with its ``"usage"`` key, or ``None`` after an infrastructure error.
        error: the ``errors.jsonl`` entry after an infrastructure error, else ``None``.
        usage: the session's accounting (see the module doc).
    """

    session_id: str
    record: dict[str, Any] | None
    error: dict[str, Any] | None
    usage: dict[str, Any]


class SessionInvoker(Protocol):
    """How the batch layer runs one session: ``await invoke(session, context, prices=prices)``.

    Implementations: :func:`run_session` bound to a local graph (the default) and
    :class:`wildtoolbench.remote.RemoteEvaluation` (a run of the graph deployed on a LangGraph Server).
    Either returns a :class:`SessionOutcome` (a record, or an ``errors.jsonl`` entry for an
    infrastructure error) and never raises for a failing model, endpoint or server;
    ``asyncio.CancelledError`` and ``KeyboardInterrupt`` propagate.
    """

    def __call__(
        self, session: Mapping[str, Any], context: EvaluationContext, *, prices: Prices | None = None
    ) -> Awaitable[SessionOutcome]:
        """Run ``session`` with ``context``; resolves to its :class:`SessionOutcome`."""
        ...


def _graph_config(session: Mapping[str, Any], context: EvaluationContext) -> dict[str, Any]:
    return session_run_config(
        kind="eval",
        session_id=session["id"],
        dataset=context.dataset or None,
        model=context.model,
        language=context.language or "en",
        settings=context_settings(context, exclude=("model", "dataset", "language")),
    )


async def _run_graph(
    graph: Pregel, graph_input: dict[str, Any], context: EvaluationContext, config: dict[str, Any]
) -> Any:
    """The graph's output for ``graph_input``: what ``graph.ainvoke`` returns, for less work per super-step.

    ``ainvoke`` also streams every node's updates (to collect interrupts, which this graph never
    raises); streaming the output values alone and keeping the last saves that on every super-step.
    A graph compiled with a checkpointer is saved only when the run ends (``durability="exit"``):
    a session that stops midway runs again from its start (the result file is the batch's
    checkpoint). Without a checkpointer no durability is passed (LangGraph would warn). Anything
    but a LangGraph ``Pregel`` is called with ``ainvoke``. When the batch runner listens
    (``wildtoolbench.runner.progress.TASK_LISTENER``), each step of the state's ``task_idx`` is reported as
    finished tasks.
    """
    from langgraph.pregel import Pregel

    if not isinstance(graph, Pregel):
        return await graph.ainvoke(graph_input, context=context, config=config)
    checkpointer = getattr(graph, "checkpointer", None)
    durability: dict[str, Any] = {"durability": "exit"} if checkpointer not in (None, False, True) else {}
    from wildtoolbench.runner.progress import TASK_LISTENER

    listener = TASK_LISTENER.get()
    session_id = str((graph_input.get("session") or {}).get("id", ""))
    finished = 0
    output = None
    async for chunk in graph.astream(graph_input, config, context=context, stream_mode="values", **durability):
        output = chunk
        index = chunk.get("task_idx") if listener is not None and isinstance(chunk, dict) else None
        if isinstance(index, int) and index > finished:  # the graph moved on to the next task
            listener(session_id, index - finished)  # type: ignore[misc]
            finished = index
    return output


async def run_session(
    graph: Pregel, session: Mapping[str, Any], context: EvaluationContext, *, prices: Prices | None = None
) -> SessionOutcome:
    """Run one session through the evaluation graph, with per-session accounting.

    Args:
        graph: the compiled evaluation graph (``wildtoolbench.graphs.evaluation.graph``).
        session: a dataset line.
        context: an ``EvaluationContext``.
        prices: when given, ``usage`` gets ``cost_usd``.

    Returns:
        A :class:`SessionOutcome`: a record (``{"id", "model_name", "result", "usage"}``),
        where a graph exception other than a failed model request gives
        ``result = "Error during inference: <message>"`` and ``error_detail`` (so does a model
        request the provider refused with HTTP 400/413/422, ``ModelRequestError.rejected``);
        or, when a model request failed for good otherwise (``ModelRequestError``), no
        record and an ``errors.jsonl`` entry ``{"id", "model_name", "error",
        "attempts", "errors", "where", "usage"}``. Never raises for a failing
        model or endpoint; ``asyncio.CancelledError`` and ``KeyboardInterrupt`` propagate.
    """
    from wildtoolbench.models.transport import ModelRequestError, usage_scope

    started = time.perf_counter()
    record: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    with usage_scope() as counted:
        try:
            output = await _run_graph(graph, {"session": dict(session)}, context, _graph_config(session, context))
            record = dict(output["record"])
        except ModelRequestError as exc:
            if (
                exc.rejected
            ):  # the provider refused this request's content: the model's limit, scored (docs/evaluation.md §5)
                record = error_record(
                    session["id"], recorded_model_name(context), str(exc), scoring=scoring_mode(context)
                )
                record["error_detail"] = f"{type(exc).__name__}: {exc}"
            else:  # infrastructure: nothing to score, run again on resume
                error = {
                    "id": session["id"],
                    "model_name": recorded_model_name(context),
                    "error": str(exc),
                    "attempts": exc.attempts,
                    "errors": exc.errors,
                    "where": exc.where,
                }
        except Exception as exc:  # noqa: BLE001 - any other failure of one session is recorded, the run goes on
            record = error_record(session["id"], recorded_model_name(context), str(exc), scoring=scoring_mode(context))
            record["error_detail"] = f"{type(exc).__name__}: {exc}"
    usage = counted.as_dict()
    usage["wall_time"] = round(time.perf_counter() - started, 6)
    if prices is not None:
        internal = usage.get("agent_internal") or {}  # an agent's internal requests are paid too (§8.9)
        usage["cost_usd"] = prices.cost(
            usage["input_tokens"] + internal.get("input_tokens", 0),
            usage["output_tokens"] + internal.get("output_tokens", 0),
        )
    if record is not None:
        record = with_language(record, context.language or "en")
        if "candidate" not in record:  # records made here, not by the graph (docs/evaluation.md §5.5)
            record["candidate"] = context.candidate.describe()
        record["usage"] = usage
        record = redact_record(record)
    else:
        error = redact_record({**error, "usage": usage})
    return SessionOutcome(session["id"], record, error, usage)


async def evaluate_session(graph: Pregel, session: Mapping[str, Any], context: EvaluationContext) -> dict[str, Any]:
    """Run one session through the evaluation graph; return its docs/evaluation.md §5 record (with ``"usage"``).

    See :func:`run_session`; used where a record is always needed (LangSmith experiments).

    Raises:
        wildtoolbench.models.transport.ModelRequestError: a model request failed for
            good (an infrastructure error: there is nothing to score).
    """
    from wildtoolbench.models.transport import ModelRequestError

    outcome = await run_session(graph, session, context)
    if outcome.record is None:
        error = outcome.error or {}
        raise ModelRequestError(error.get("attempts", 0), error.get("errors", []), True, error.get("where", {}))
    return outcome.record
