"""``wtb eval --server URL``: each session is a run of the ``evaluation`` graph deployed on a LangGraph Server.

:class:`RemoteEvaluation` is the batch layer's :class:`~wildtoolbench.runner.invoke.SessionInvoker` for a server:
the local process keeps everything else of :func:`wildtoolbench.runner.arun_eval` (concurrency, the single
writer of ``result.jsonl``, resume, the lock, ``run.json``, ``errors.jsonl``, ``summary.json``).

What a server run gives back, and what the client makes of it:

- the run's output ``{"record": ...}``: the session's record, as a local run writes it; its ``usage``
  is counted from the record (see :func:`record_usage`) and its wall time is measured by the client;
- a run that failed with ``ModelRequestError`` whose message shows that the provider refused the
  request's content (HTTP 400/413/422, not retried), or with a graph candidate's
  ``CandidateOutputError``: an ``"Error during inference: ..."`` record, as locally
  (``ModelRequestError.rejected``, docs/evaluation.md §5; :func:`refused_record`);
- any other failure (the server unreachable, an HTTP error, a connection cut and not recovered, a run
  that ended in error, was cancelled or timed out, an output without a record): an infrastructure
  error, in ``errors.jsonl`` and run again on resume, never scored. Unlike a local run, a graph
  exception of another class is not scored either: the server reports only the exception's class
  (and the message for some classes), and cannot be told apart from the server's own failures.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.harness import error_record, with_language
from wildtoolbench.models.cache import current_cache, current_trial
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.remote.client import RunReply, ServerFailure
from wildtoolbench.remote.invoker import REJECTED_REQUEST, RemoteGraphInvoker, langsmith_project, run_batch_on_server
from wildtoolbench.runner.accounting import Prices, RunSummary
from wildtoolbench.runner.batch import arun_eval
from wildtoolbench.runner.identity import scoring_mode
from wildtoolbench.runner.invoke import SessionOutcome, recorded_model_name
from wildtoolbench.tracing import context_settings, redact_record, session_run_config

GRAPH_ID = "evaluation"

_ATTEMPTS = re.compile(r"^model request failed after (\d+) attempts?\b")


def context_payload(context: Any) -> dict[str, Any]:
    """The graph context sent with each run: every field of ``context`` as resolved on the client, but ``dataset``.

    The client's explicit values, ``WTB_*`` variables and defaults have been applied already
    (docs/settings.md), so the server's own ``WTB_*`` variables change nothing. Base URLs are used
    by the server as they are: they must be reachable from it, and accepted by its deployment
    (``WTB_SERVER_BASE_URLS``; model specs and files likewise, docs/settings.md §8). The dataset is
    left out: each run carries its session, and the server is asked to open no dataset file.
    """
    return {f.name: getattr(context, f.name) for f in dataclasses.fields(context) if f.name != "dataset"}


def record_usage(record: Mapping[str, Any]) -> dict[str, Any]:
    """The accounting of a record made on a server, counted from the record itself.

    The server's retry loop is not visible to the client: ``requests`` is the number of model replies
    in the record (one ``latency`` entry each), ``attempts`` equals it, ``failed_requests`` is 0,
    ``retried_requests`` is empty, and tokens are the sums of the steps' provider-reported counts.
    For a session without retries this equals what a local run counts.

    Returns:
        ``{"requests", "attempts", "failed_requests", "input_tokens", "output_tokens", "retried_requests"}``.
    """
    requests = input_tokens = output_tokens = 0
    result = record.get("result")
    for task in result if isinstance(result, list) else []:
        if not isinstance(task, Mapping):
            continue
        requests += len(task.get("latency") or [])
        input_tokens += sum(int(n or 0) for n in task.get("input_token_count") or [])
        output_tokens += sum(int(n or 0) for n in task.get("output_token_count") or [])
    return {
        "requests": requests,
        "attempts": requests,
        "failed_requests": 0,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "retried_requests": [],
    }


def run_input(session: Mapping[str, Any], trial: int | None, cache: Any) -> dict[str, Any]:
    """The graph input of one session-trial on the server: the session, its trial index inside a run of
    trials (docs/trials.md §1), and with a cache the entries the client holds for it (``replies``, present
    even when empty: it asks the server to send back what it pays for; docs/trials.md §8.1)."""
    payload: dict[str, Any] = {"session": dict(session)}
    if trial is not None:
        payload["trial"] = trial
    if cache is not None:
        entries = getattr(cache, "entries_for", None)
        payload["replies"] = entries(session["id"], trial or 1) if entries is not None else {}
    return payload


class PaidSink:
    """The replies a server run pays for, stored in the client's cache as they are streamed back (docs/trials.md
    §8.1): after every candidate step the run's output values carry ``paid`` (every reply paid so far), and
    :meth:`take` stores the entries it has not stored yet. So a session-trial in flight when the client or the
    server is killed has its paid replies in the cache already, and its resume pays none of them again.

    Args:
        cache: the client's :class:`wildtoolbench.runner.shared_cache.IndexedCache` (anything with
            ``store_entries``; without it nothing is stored).
        session_id / trial: the session-trial of the run (an entry of another one is skipped by the cache).
    """

    def __init__(self, cache: Any, session_id: str, trial: int):
        self.cache, self.session_id, self.trial = cache, session_id, trial
        self.seen: set[str] = set()
        self.stored = 0

    def take(self, values: Mapping[str, Any]) -> None:
        """Store the entries of ``values["paid"]`` not taken before (untrusted: :meth:`IndexedCache.store_entries`)."""
        paid = values.get("paid") if isinstance(values, Mapping) else None
        if not isinstance(paid, Mapping) or not hasattr(self.cache, "store_entries"):
            return
        new = {k: v for k, v in paid.items() if isinstance(k, str) and k not in self.seen}
        if new:
            self.seen.update(new)
            self.stored += self.cache.store_entries(new, self.session_id, self.trial)


def keep_paid(
    usage: dict[str, Any],
    cache: Any,
    output: Mapping[str, Any],
    session_id: str,
    trial: int,
    sink: PaidSink | None = None,
) -> None:
    """After a server run with a carried cache: store the replies it paid for (``output["paid"]``) in the
    client's cache (those ``sink`` stored while the run streamed are not stored twice), count its hits and
    misses, and take the replies it served (``output["served"]``) out of ``usage`` (they cost nothing:
    ``cache_hits``, as a local run counts them; docs/trials.md §8)."""
    served = output.get("served")
    served = [s for s in served if _pair(s)] if isinstance(served, list) else []
    if served:
        usage["requests"] = max(0, usage["requests"] - len(served))
        usage["attempts"] = max(0, usage["attempts"] - len(served))
        usage["input_tokens"] = max(0, usage["input_tokens"] - sum(s[0] for s in served))
        usage["output_tokens"] = max(0, usage["output_tokens"] - sum(s[1] for s in served))
        usage["cache_hits"] = len(served)
    sink = sink or PaidSink(cache, session_id, trial)
    sink.take(output)
    if hasattr(cache, "count_remote"):
        cache.count_remote(len(served), sink.stored)


def _pair(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    )


def is_refused(error_class: str, message: str) -> bool:
    """Whether a server run's error is a refused request, scored like locally (``ModelRequestError.rejected``):
    a ``ModelRequestError`` not retried with HTTP 400/413/422, or a graph candidate's ``CandidateOutputError``."""
    if error_class == "CandidateOutputError":
        return True
    return error_class == "ModelRequestError" and bool(REJECTED_REQUEST.match(message))


def refused_record(session_id: str, context: EvaluationContext, error_class: str, message: str) -> dict[str, Any]:
    """The scored record of a session whose model request was refused on the server: the record
    :func:`wildtoolbench.runner.run_session` makes for ``ModelRequestError.rejected`` (``"Error during inference: <message>"``,
    ``error_detail``, the scoring mode, the ``candidate`` object; docs/evaluation.md §5)."""
    record = error_record(session_id, recorded_model_name(context), message, scoring=scoring_mode(context))
    record = with_language(record, getattr(context, "language", None) or "en")
    record["error_detail"] = f"{error_class}: {message}"
    record["candidate"] = context.candidate.describe()
    return record


class RemoteEvaluation(RemoteGraphInvoker):
    """A :class:`~wildtoolbench.runner.invoke.SessionInvoker`: one run of the deployed ``evaluation`` graph per session.

    Each run goes to a new thread whose metadata, like the run's, is the session's trace metadata
    (``dataset``, ``session_id``, ``model``, ``language``, ``project_version``, ``settings``) plus
    ``wtb_batch_id`` (the same for every session of one command); the run is named
    ``wtb eval <session id>`` and tagged ``wildtoolbench``, ``wtb-eval``, as a local run's trace.
    The constructor's arguments are :class:`~wildtoolbench.remote.invoker.RemoteGraphInvoker`'s (``threads=False``:
    threadless runs, ``--no-server-threads``).
    """

    GRAPH_ID = GRAPH_ID

    async def __call__(
        self, session: Mapping[str, Any], context: EvaluationContext, *, prices: Prices | None = None
    ) -> SessionOutcome:
        """Run ``session`` on the server; returns its :class:`~wildtoolbench.runner.invoke.SessionOutcome` (module doc).

        Never raises for a failing model, server or connection; ``asyncio.CancelledError`` propagates
        (the server then cancels the run).
        """
        started = time.perf_counter()
        session_id = session["id"]
        model_name = recorded_model_name(context)
        config = session_run_config(
            kind="eval",
            session_id=session_id,
            dataset=context.dataset or None,
            model=context.model,
            language=context.language or "en",
            settings=context_settings(context, exclude=("model", "dataset", "language")),
        )
        record: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        trial, cache = current_trial(), current_cache()
        sink = PaidSink(cache, session_id, trial or 1) if cache is not None else None
        try:
            reply = await self.run_graph(
                run_input(session, trial, cache),
                context_payload(context),
                config,
                on_values=sink.take if sink is not None else None,
            )
        except ServerFailure as exc:
            error = self._error(session_id, model_name, f"LangGraph server: {exc}", 0, exc.thread_id, exc.run_id)
        else:
            record, error = self._outcome(session_id, context, model_name, reply)
        usage = record_usage(record) if record is not None else record_usage({})
        if cache is not None and error is None:
            output = reply.output or {}
            keep_paid(usage, cache, output, session_id, trial or 1, sink)
        usage["wall_time"] = round(time.perf_counter() - started, 6)
        if prices is not None:
            usage["cost_usd"] = prices.cost(usage["input_tokens"], usage["output_tokens"])
        if record is not None:
            return SessionOutcome(session_id, redact_record({**record, "usage": usage}), None, usage)
        return SessionOutcome(session_id, None, redact_record({**(error or {}), "usage": usage}), usage)

    def _outcome(
        self, session_id: str, context: EvaluationContext, model_name: str, reply: RunReply
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        if reply.error is not None:
            name, message = reply.error.get("error", ""), reply.error.get("message", "")
            if is_refused(name, message):  # the provider (or a graph candidate's output) refused: scored
                return refused_record(session_id, context, name, message), None
            if name == "ModelRequestError":
                attempts = _ATTEMPTS.match(message)
                return None, self._error(
                    session_id,
                    model_name,
                    message,
                    int(attempts.group(1)) if attempts else 1,
                    reply.thread_id,
                    reply.run_id,
                )
            text = f"LangGraph server: the run failed with {name}: {message}"
            return None, self._error(session_id, model_name, text, 0, reply.thread_id, reply.run_id)
        record = (reply.output or {}).get("record")
        if not isinstance(record, Mapping) or record.get("id") != session_id:
            text = (
                f"LangGraph server: the run's output has no record of {session_id} (keys: {sorted(reply.output or {})})"
            )
            return None, self._error(session_id, model_name, text, 0, reply.thread_id, reply.run_id)
        record = dict(record)
        if "candidate" not in record:  # as wildtoolbench.runner.run_session does for a record without it
            record["candidate"] = context.candidate.describe()
        return record, None

    def _error(
        self, session_id: str, model_name: str, text: str, attempts: int, thread_id: str | None, run_id: str | None
    ) -> dict[str, Any]:
        where = {"server": self.url, "thread_id": thread_id or None, "run_id": run_id}
        return {
            "id": session_id,
            "model_name": model_name,
            "error": text,
            "attempts": attempts,
            "errors": [text],
            "where": where,
        }


async def arun_eval_remote(
    sessions: Sequence[Mapping[str, Any]],
    context: EvaluationContext,
    out_dir: str | os.PathLike[str],
    *,
    server: str,
    concurrency: int = 4,
    no_trace: bool = False,
    settings: Mapping[str, Any] | None = None,
    threads: bool = True,
    **kwargs: Any,
) -> RunSummary:
    """:func:`wildtoolbench.runner.arun_eval` with every session run on the LangGraph Server at ``server``.

    Args:
        sessions / context / out_dir / concurrency: as in :func:`~wildtoolbench.runner.arun_eval`
            (``concurrency``: runs in flight on the server).
        server: the server's base URL; its API key comes from ``$LANGGRAPH_API_KEY`` or
            ``$LANGSMITH_API_KEY`` (:func:`wildtoolbench.remote.client.api_key_from_env`), never written anywhere.
        no_trace: do not ask the server to trace into the client's ``$LANGSMITH_PROJECT``.
        settings: recorded in ``run.json`` / ``summary.json`` with ``"server"`` (the URL, redacted).
        threads: ``False``: threadless runs (``--no-server-threads``, :class:`RemoteEvaluation`).
        kwargs: the other keyword arguments of :func:`~wildtoolbench.runner.arun_eval` (``overwrite``,
            ``progress``, ``prices``, ``on_record``).

    Returns:
        The :class:`~wildtoolbench.runner.RunSummary`.

    Raises:
        As :func:`~wildtoolbench.runner.arun_eval`; models.ConfigurationError for a malformed URL. Server
        failures are per-session infrastructure errors, not exceptions.
    """
    return await run_batch_on_server(
        RemoteEvaluation,
        arun_eval,
        sessions,
        context,
        out_dir,
        server=server,
        concurrency=concurrency,
        no_trace=no_trace,
        settings=settings,
        threads=threads,
        **kwargs,
    )


def run_eval_remote(*args: Any, **kwargs: Any) -> RunSummary:
    """Synchronous wrapper of :func:`arun_eval_remote` (runs its own event loop, :func:`wildtoolbench.runner.loop.run`)."""
    from wildtoolbench.runner.loop import run

    return run(arun_eval_remote(*args, **kwargs))


__all__ = [
    "GRAPH_ID",
    "PaidSink",
    "RemoteEvaluation",
    "arun_eval_remote",
    "context_payload",
    "is_refused",
    "refused_record",
    "langsmith_project",
    "record_usage",
    "run_eval_remote",
]
