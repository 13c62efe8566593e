"""Batch layer of session generation (docs/generation.md; ``wtb generate``): runs the generation graph once per planned session,
with bounded concurrency, and writes every output atomically.

One session's failure (rejected three times, a model error, an exhausted script) is recorded in
``failures.jsonl`` with its reason; it never stops the other sessions.

Output layout under ``out_dir``::

    sessions/<key>/raw_transcript.json   every role message, checker verdicts and rejected attempts
    sessions/<key>/transcript.json       streamlined: checker messages and rejected attempts removed
    sessions/<key>/requests/<role>.jsonl captured request/response pairs of each role
    sessions/<key>/session.json          the session in the dataset schema (successful sessions)
    sessions/<key>/replay.json           oracle replay candidate along the gold paths
    sessions/<key>/outcome.json          status, reason, usage, plan and (if done) the session: the
                                         resume point (a finished session is not generated again)
    transcripts/<key>.jsonl              the live transcript, appended as the session runs: every role
                                         entry and a summary of every model call (role, seconds,
                                         tokens), each with ``t`` = seconds since the session started;
                                         an interrupted or slow session shows how far it got
    sessions.jsonl                       all successful sessions, ids wild_tool_bench_<line>
    replay.jsonl                         their oracle replay candidates (candidates.jsonl format)
    failures.jsonl                       {"key", "plan", "reason", "rules", "dir"} per failed session
    quality_dropped.jsonl                {"key", "reasons", "session"} per session the quality check dropped
    manifest.json                        settings, counts, the per-role yield table
                                         (``wildtoolbench.bench.generation_yield``), the quality check of every
                                         session (``wildtoolbench.bench.rules_session``), id <-> key of every session
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel

from wildtoolbench.bench.generation import SessionPlan, assemble_session, session_problems, streamline
from wildtoolbench.bench.generation_yield import session_yield
from wildtoolbench.bench.rules_session import quality_summary
from wildtoolbench.common.files import write_json_atomic, write_jsonl_atomic
from wildtoolbench.nodes.generation._common import rule_profile
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.registry import judging_roles, model_defaults, model_roles, role_model_spec
from wildtoolbench.runner.generation_files import (
    FinishedSession,
    finished_session,
    write_run_files,
)
from wildtoolbench.runner.generation_outcome import (
    GenerationOutcome,
    load_finished_outcome,
    write_outcome,
)
from wildtoolbench.runner.live_transcript import LiveTranscript
from wildtoolbench.tracing import (
    context_settings,
    project_version,
    redact,
    redact_text,
    session_run_config,
)


async def generate_session(
    plan: SessionPlan, context: Context, graph: Pregel | None = None, *, live: Path | None = None
) -> GenerationOutcome:
    """Run the generation graph for one planned session; never raises for a session-level failure (docs/generation.md).

    Args:
        plan: the session plan (its ``as_state()`` is the graph input).
        context: role models and limits.
        graph: a compiled generation graph (default ``wildtoolbench.graphs.generation.graph``).
        live: the session's live transcript file (``transcripts/<key>.jsonl``; docs/generation.md §7):
            emptied at the start, then every new transcript entry and a summary of every model call
            are appended as the graph produces them (:class:`LiveTranscript`); ``None`` = none.

    Returns:
        A :class:`GenerationOutcome`; ``status`` is ``done`` (``session`` holds the dataset-schema
        session with a provisional id) or ``failed`` (``reason`` says why). ``state`` holds the last
        state values seen, so transcripts survive a failure.
    """
    from wildtoolbench.models.transport import usage_scope

    writer = LiveTranscript(live) if live is not None else None
    started = time.monotonic()
    with usage_scope() as usage:
        outcome = await _generate_session(plan, context, graph, writer)
    outcome.usage = usage.as_dict()
    outcome.seconds = round(time.monotonic() - started, 3)
    outcome.yields = session_yield(
        list(outcome.state.get("transcript") or []), list(outcome.state.get("calls") or []), judging_roles()
    )
    if writer is not None:
        writer.close(outcome.status, outcome.reason)
    return outcome


def run_config(plan: SessionPlan, context: Context) -> dict[str, Any]:
    """The run config of one session's generation run: run name, tags and metadata (traces, server threads).

    Returns:
        ``{"run_name", "metadata", "tags"}`` (``wildtoolbench.tracing.session_run_config``): every role's model,
        the language, the type path, the tool-list line and the context's settings (redacted).
    """
    return session_run_config(
        kind="generate",
        session_id=plan.key,
        dataset=None,
        model={role: role_model_spec(context, role, plan.user_model_index) for role in model_roles()},
        language=plan.language,
        settings={**context_settings(context), "type_path": list(plan.type_path), "tool_line": plan.tool_line},
        tags=["-".join(plan.type_path)],
    )


async def _generate_session(
    plan: SessionPlan, context: Context, graph: Pregel | None, writer: LiveTranscript | None = None
) -> GenerationOutcome:
    from wildtoolbench.models.transport import ModelRequestError

    if graph is None:
        from wildtoolbench.graphs.generation import graph as default_graph

        graph = default_graph
    last: dict[str, Any] = plan.as_state()
    try:
        config = run_config(plan, context)
        async for values in graph.astream(plan.as_state(), context=context, stream_mode="values", config=config):
            last = values
            if writer is not None:
                writer.update(values)
    except ModelRequestError as exc:  # a model request failed for good: this session only
        cause = exc.__cause__ if not exc.transient and exc.__cause__ is not None else exc
        reason = str(exc) if cause is exc else f"{type(cause).__name__}: {cause}"
        # infrastructure (generated again on resume) unless the provider refused the request's content
        return GenerationOutcome(plan, "failed", redact_text(reason), last, infrastructure=not exc.rejected)
    except Exception as exc:  # any other error ends this session only
        return GenerationOutcome(plan, "failed", redact_text(f"{type(exc).__name__}: {exc}"), last)
    return outcome_from_state(plan, last)


def outcome_from_state(plan: SessionPlan, last: dict[str, Any]) -> GenerationOutcome:
    """The outcome of a generation run that ended normally, from its final state values (docs/generation.md).

    Args:
        plan: the session plan.
        last: the run's final state values (a local run's last ``values`` chunk, or a server run's output).

    Returns:
        ``done`` with the dataset-schema session (provisional id) when the graph finished and the tasks
        pass the checks; else ``failed`` with the graph's failure reason or the problems found.
    """
    status = last.get("status", "running")
    if status != "done":
        reason = last.get("failure_reason") or f"session stopped with status {status!r}"
        return GenerationOutcome(plan, "failed", reason, last, rules=list(last.get("failure_rules") or []))
    problems = session_problems(last.get("tasks", []))
    if problems:
        return GenerationOutcome(plan, "failed", "; ".join(problems), last)
    session = assemble_session(
        f"wild_tool_bench_{plan.index}", env_info=last["env_info"], tools=last["tools"], tasks=last["tasks"]
    )
    return GenerationOutcome(plan, "done", "", last, session)


def write_session_files(out_dir: Path, outcome: GenerationOutcome) -> Path:
    """Write one session's transcripts and captured requests under ``out_dir/sessions/<key>``; returns the folder (docs/generation.md)."""
    folder = out_dir / "sessions" / outcome.plan.key
    transcript = list(outcome.state.get("transcript", []))
    write_json_atomic(folder / "raw_transcript.json", transcript)
    write_json_atomic(folder / "transcript.json", streamline(transcript, judging_roles()))
    calls = list(outcome.state.get("calls", []))
    registered = model_roles()
    roles = [*registered, *sorted({str(c.get("role")) for c in calls} - set(registered))]  # then unregistered ones
    for role in roles:
        write_jsonl_atomic(folder / "requests" / f"{role}.jsonl", [c for c in calls if c.get("role") == role])
    return folder


@dataclass
class GenerationSummary:
    """Counts and file paths of a generation run."""

    out_dir: str
    succeeded: int
    failed: int
    sessions_file: str
    failures_file: str
    replay_file: str
    requests: int = 0
    attempts: int = 0
    reused: int = 0
    """Sessions kept from an earlier, interrupted run of the same command (resume)."""
    retried_requests: list[dict[str, Any]] = field(default_factory=list)
    """``{"key", "role", "task", "attempts", "errors", "waited", "ok"}`` per request that needed retries."""
    infrastructure_failures: int = 0
    """Of the ``failed`` sessions, those whose model request failed for good (generated again by the
    same command; ``wtb generate`` exits 3 then, docs/cli.md §2)."""
    yields: dict[str, Any] = field(default_factory=dict)
    """The run's yield table per role (``wildtoolbench.bench.generation_yield``; docs/generation.md §7.1)."""
    quality: dict[str, Any] = field(default_factory=dict)
    """The quality check's totals over the successful sessions (``wildtoolbench.bench.rules_session.quality_summary``),
    with the ``policy`` (``drop``/``flag``) and the number of sessions ``dropped`` for failing it."""
    tokens: int = 0
    """Input plus output tokens of every model request of the run."""
    seconds: float = 0.0
    """Wall-clock seconds of the sessions generated (each session's own time, summed)."""


async def run_batch(
    plans: Sequence[SessionPlan],
    context: Context,
    out_dir: str | Path,
    *,
    concurrency: int = 4,
    settings: dict[str, Any] | None = None,
    graph: Pregel | None = None,
    on_done: Callable[[GenerationOutcome], None] | None = None,
    overwrite: bool = False,
    invoke: Callable[[SessionPlan, Context], Awaitable[GenerationOutcome]] | None = None,
    quality_policy: str = "flag",
) -> GenerationSummary:
    """Generate every planned session and write the outputs (layout in the module docstring; docs/generation.md).

    Args:
        plans: sessions to generate (see ``wildtoolbench.bench.generation.plan_sessions``).
        context: role models and limits, shared by every session.
        out_dir: output folder (created).
        concurrency: sessions running at once (>= 1).
        settings: run settings recorded in ``manifest.json``.
        graph: compiled generation graph (default ``wildtoolbench.graphs.generation.graph``).
        on_done: called with each outcome as soon as its session ends (progress display), and at
            once for each session kept from an earlier run (``outcome.reused``).
        overwrite: generate every session again instead of resuming: by default a session whose
            ``outcome.json`` says done, or failed because of the models' output, is kept as recorded
            (infrastructure failures are generated again).
        invoke: how one session is generated, ``await invoke(plan, context) -> GenerationOutcome``
            (never raising for a session-level failure); default :func:`generate_session` on ``graph`` in
            this process. ``wtb generate --server`` passes :class:`wildtoolbench.remote.RemoteGeneration`.

    Raises:
        ValueError: ``out_dir`` holds another run's sessions under the same keys (see
            :func:`load_finished_outcome`).

    Returns:
        A :class:`GenerationSummary`. Successful sessions get ids ``wild_tool_bench_<N>`` by their line in
        ``sessions.jsonl`` (plan order); ``session.json`` / ``replay.json`` in their folders match.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    gate = asyncio.Semaphore(max(1, concurrency))
    profile = rule_profile(context)
    kept: dict[str, tuple[GenerationOutcome, FinishedSession]] = {}
    for plan in [] if overwrite else plans:
        if (recorded := load_finished_outcome(out, plan)) is not None:
            kept[plan.key] = (recorded, finished_session(recorded, profile))
            recorded.session, recorded.yields = None, {}  # on disk: read again when the run files are written

    async def one(plan: SessionPlan) -> FinishedSession:
        if plan.key in kept:
            recorded, record = kept[plan.key]
            if on_done is not None:
                on_done(recorded)
            return record
        async with gate:
            outcome = await (
                invoke(plan, context)
                if invoke is not None
                else generate_session(plan, context, graph, live=out / "transcripts" / f"{plan.key}.jsonl")
            )
        if not outcome.yields and outcome.state.get("transcript"):  # a server's run: counted here
            outcome.yields = session_yield(
                list(outcome.state.get("transcript") or []), list(outcome.state.get("calls") or []), judging_roles()
            )
        if not outcome.written:  # a worker process wrote them (wtb generate --workers)
            write_session_files(out, outcome)
            write_outcome(out, outcome)
        if on_done is not None:
            on_done(outcome)
        # on disk now: a run of 1,000 sessions keeps neither transcripts nor sessions in memory (docs/generation.md §12.1)
        return finished_session(outcome, profile)

    finished = await asyncio.gather(*(one(plan) for plan in plans))
    return _write_run_files(out, context, settings, finished, len(kept), quality_policy)


def _write_run_files(
    out: Path,
    context: Context,
    settings: dict[str, Any] | None,
    finished: Sequence[FinishedSession],
    reused: int,
    quality_policy: str,
) -> GenerationSummary:
    """Write the run's files (``sessions.jsonl``, ``replay.jsonl``, ``failures.jsonl``,
    ``quality_dropped.jsonl``, streamed from the sessions' ``outcome.json`` by
    :func:`wildtoolbench.runner.generation_files.write_run_files`; then ``manifest.json``) and return the run's
    summary; ``reused`` sessions were kept from an earlier run (docs/generation.md §7, §12.1)."""
    profile = rule_profile(context)
    files = write_run_files(out, finished, quality_policy)
    retried = [{"key": f.plan.key, **r} for f in finished for r in f.usage.get("retried_requests", [])]
    usage = {
        key: sum(int(f.usage.get(key, 0)) for f in finished)
        for key in ("requests", "attempts", "failed_requests", "input_tokens", "output_tokens")
    }
    quality = {**quality_summary(files.qualities), "policy": quality_policy, "dropped": files.dropped}
    seconds = round(sum(f.seconds for f in finished), 3)
    write_json_atomic(
        out / "manifest.json",
        redact(  # settings, errors an endpoint echoed, paths: no credentials (docs/settings.md §8)
            {
                "settings": settings or {},
                "context": _context_record(context, profile),
                "succeeded": files.succeeded,
                "failed": files.failed,
                "usage": usage,
                "seconds": seconds,
                "yield": files.yields,
                "quality": quality,
                "retried_requests": retried,
                "sessions": files.index,
            }
        ),
    )
    return GenerationSummary(
        str(out),
        files.succeeded,
        files.failed,
        str(out / "sessions.jsonl"),
        str(out / "failures.jsonl"),
        str(out / "replay.jsonl"),
        usage["requests"],
        usage["attempts"],
        reused,
        retried,
        files.infrastructure,
        files.yields,
        quality,
        usage["input_tokens"] + usage["output_tokens"],
        seconds,
    )


def _context_record(context: Context, profile: str) -> dict[str, Any]:
    """Every role's resolved model and base URL, the checker's judges, the rule profile and the project
    version, for ``manifest.json``; no credentials in base URLs (redacted)."""
    return redact(
        {
            **context.resolved(model_defaults()),
            "checker_model_judges": context.checker_model_judges(role_model_spec(context, "checker")),
            "rule_profile": profile,
            "project_version": project_version(),
        }
    )
