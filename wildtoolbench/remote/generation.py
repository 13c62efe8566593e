"""``wtb generate --server URL``: each planned session is a run of the ``generation`` graph on a LangGraph Server.

:class:`RemoteGeneration` is the ``invoke`` hook of :func:`wildtoolbench.runner.generation.run_batch`: the local
process keeps the plans, the per-session files, ``outcome.json`` (resume), ``sessions.jsonl``,
``failures.jsonl`` and ``manifest.json``. The run's final state comes back as its output and is judged
as locally (:func:`wildtoolbench.runner.generation.outcome_from_state`).

Failures, as for ``wtb eval --server`` (:mod:`wildtoolbench.remote.evaluation`): a model request the provider
refused (``ModelRequestError``, HTTP 400/413/422) fails the session for the models' output (kept on
resume); anything else that ends a run without its final state (the server unreachable, an HTTP error,
a run that ended in error, was cancelled or timed out) is an infrastructure failure, generated again on
resume. The partial transcript of such a run stays on the server (its thread), not in the local files.
Roles added with ``--roles`` cannot be used: the deployed graph has the roles it was deployed with.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.generation import SessionPlan
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.registry import model_roles, role_model
from wildtoolbench.remote.client import ServerFailure
from wildtoolbench.remote.invoker import REJECTED_REQUEST, RemoteGraphInvoker, run_batch_on_server
from wildtoolbench.runner.generation import (
    GenerationOutcome,
    GenerationSummary,
    outcome_from_state,
    run_batch,
    run_config,
)
from wildtoolbench.tracing import redact_text

GRAPH_ID = "generation"


def generation_context_payload(context: Context) -> dict[str, Any]:
    """The generation graph's context sent with each run: every field, each role's model and base URL resolved
    on the client (so the server's ``WTB_<ROLE>_MODEL`` and ``WTB_*`` variables change nothing)."""
    values = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
    roles = model_roles()
    values["models"] = {role: role_model(context, role) for role in roles}
    values["base_urls"] = {role: url for role in roles if (url := context.role_base_url(role))}
    return values


def state_usage(state: dict[str, Any], wall_time: float) -> dict[str, Any]:
    """The accounting of a session generated on a server: ``requests`` = ``attempts`` = the model calls captured
    in its state (``calls``); tokens and retries are not visible to the client (0 and ``[]``)."""
    calls = len(state.get("calls") or [])
    return {
        "requests": calls,
        "attempts": calls,
        "failed_requests": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "retried_requests": [],
        "wall_time": round(wall_time, 6),
    }


class RemoteGeneration(RemoteGraphInvoker):
    """The ``invoke`` hook of :func:`~wildtoolbench.runner.generation.run_batch` for a server: ``await invoke(plan, context)``.

    Threads and runs carry the session's trace metadata (every role's model, language, type path,
    tool line, settings, project version) plus ``wtb_batch_id``; the run is named ``wtb generate <key>``.
    The constructor's arguments are :class:`~wildtoolbench.remote.invoker.RemoteGraphInvoker`'s.
    """

    GRAPH_ID = GRAPH_ID

    async def __call__(self, plan: SessionPlan, context: Context) -> GenerationOutcome:
        """Generate ``plan``'s session on the server; never raises for a session-level or server failure
        (``asyncio.CancelledError`` propagates)."""
        started = time.perf_counter()
        config = run_config(plan, context)
        state = plan.as_state()
        try:
            reply = await self.run_graph(state, generation_context_payload(context), config)
        except ServerFailure as exc:
            reason = f"LangGraph server {self.url}: {exc}" + (f" (thread {exc.thread_id})" if exc.thread_id else "")
            return GenerationOutcome(
                plan,
                "failed",
                redact_text(reason),
                state,
                infrastructure=True,
                usage=state_usage({}, time.perf_counter() - started),
            )
        if reply.error is not None:
            name, message = reply.error.get("error", ""), reply.error.get("message", "")
            rejected = name == "ModelRequestError" and bool(REJECTED_REQUEST.match(message))
            reason = (
                message if name == "ModelRequestError" else f"LangGraph server: the run failed with {name}: {message}"
            )
            if not rejected:
                reason += f" (thread {reply.thread_id})"
            return GenerationOutcome(
                plan,
                "failed",
                redact_text(reason),
                state,
                infrastructure=not rejected,
                usage=state_usage({}, time.perf_counter() - started),
            )
        last = dict(reply.output or {})
        if last.get("status") not in ("done", "failed"):  # no final state (e.g. a run cut short on the server)
            reason = f"LangGraph server: the run ended without a final state (status {last.get('status')!r}; thread {reply.thread_id})"
            return GenerationOutcome(
                plan,
                "failed",
                reason,
                state,
                infrastructure=True,
                usage=state_usage(last, time.perf_counter() - started),
            )
        outcome = outcome_from_state(plan, {**state, **last})
        outcome.usage = state_usage(last, time.perf_counter() - started)
        outcome.seconds = round(time.perf_counter() - started, 3)  # the session's wall time, seen from here
        return outcome


async def run_batch_remote(
    plans: Sequence[SessionPlan],
    context: Context,
    out_dir: str | Path,
    *,
    server: str,
    concurrency: int = 4,
    no_trace: bool = False,
    settings: dict[str, Any] | None = None,
    **kwargs: Any,
) -> GenerationSummary:
    """:func:`wildtoolbench.runner.generation.run_batch` with every session generated on the LangGraph Server at ``server``.

    Args:
        plans / context / out_dir / concurrency: as in :func:`~wildtoolbench.runner.generation.run_batch`.
        server: the server's base URL (API key as for ``wtb eval --server``).
        no_trace: do not ask the server to trace into the client's ``$LANGSMITH_PROJECT``.
        settings: recorded in ``manifest.json`` with ``"server"`` (the URL, redacted).
        kwargs: ``on_done``, ``overwrite``.

    Returns:
        The :class:`~wildtoolbench.runner.generation.GenerationSummary`.

    Raises:
        As :func:`~wildtoolbench.runner.generation.run_batch`.
    """
    return await run_batch_on_server(
        RemoteGeneration,
        run_batch,
        plans,
        context,
        out_dir,
        server=server,
        concurrency=concurrency,
        no_trace=no_trace,
        settings=settings,
        **kwargs,
    )


__all__ = ["GRAPH_ID", "RemoteGeneration", "generation_context_payload", "run_batch_remote", "state_usage"]
