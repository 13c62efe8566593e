"""The batch layer of ``wtb eval``: many sessions through the evaluation graph, checkpointed per session.

It owns concurrency, the result store, resume and the progress bar; one session is
:mod:`wtb.runner.invoke`, the files are :mod:`wtb.runner.store`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from filelock import FileLock, Timeout

from bench.io import atomic_write_text, dumps_line, write_json_atomic
from graphs.evaluation_context import EvaluationContext
from wtb.runner.accounting import SUMMARY_FILE, Prices, RunSummary, summary_json
from wtb.runner.identity import (
    _check_run_identity,
    mixing_modes_message,
    run_settings,
    scoring_mode,
)
from wtb.runner.invoke import SessionInvoker, recorded_model_name, run_session
from wtb.runner.progress import _Progress
from wtb.runner.selection import session_sort_key
from wtb.runner.store import (
    ERRORS_FILE,
    LOCK_FILE,
    RESULT_FILE,
    ResultFile,
    _latest_errors,
    _task_counts,
)

if TYPE_CHECKING:  # imported by a run on the local graph only (not by `wtb eval --server`)
    from langgraph.pregel import Pregel


async def arun_eval(
    sessions: Sequence[Mapping[str, Any]],
    context: EvaluationContext,
    out_dir: str | os.PathLike[str],
    *,
    concurrency: int = 4,
    overwrite: bool = False,
    progress: bool = True,
    graph: Pregel | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    prices: Prices | None = None,
    settings: Mapping[str, Any] | None = None,
    invoke: SessionInvoker | None = None,
) -> RunSummary:
    """Evaluate ``sessions`` with ``context``'s model into ``out_dir/result.jsonl``.

    Args:
        sessions: dataset lines to evaluate (see :func:`select_sessions`).
        context: an ``EvaluationContext`` (model spec and settings, retry policy, step limit).
        out_dir: output directory (created).
        concurrency: sessions in flight at once (>= 1).
        overwrite: delete an existing ``result.jsonl`` / ``errors.jsonl`` first instead of resuming.
        progress: show the progress bar (on stderr).
        graph: the compiled evaluation graph (default ``graphs.evaluation.graph``).
        on_record: called with each new record after it is written.
        prices: USD per million input / output tokens; adds ``cost_usd`` to the accounting.
        settings: run settings of the caller (e.g. ``{"tasks": 4}``), recorded with the context's
            resolved settings and the concurrency in ``run.json`` and ``summary.json``.
        invoke: how one session is run (:class:`~wtb.runner.invoke.SessionInvoker`); default
            :func:`~wtb.runner.invoke.run_session` on ``graph`` in this process. ``wtb eval --server``
            passes :class:`wtb.remote.RemoteEvaluation` (a run of the deployed graph per session).

    Returns:
        A :class:`RunSummary`, also written to ``out_dir/summary.json``.

    Raises:
        ValueError: ``concurrency < 1``; a malformed existing result file; an
            existing result file written for another model, or for another dataset
            file or another version of it (``run.json``; use ``--overwrite`` or
            another directory).
        RuntimeError: another run holds the directory's lock.
    """
    if concurrency < 1:
        raise ValueError(f"--concurrency must be >= 1, got {concurrency}")
    if invoke is None:
        if graph is None:
            from graphs.evaluation import graph as default_graph

            graph = default_graph
        invoke = functools.partial(run_session, graph)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RuntimeError(
            f"another `wtb eval` is already writing to {out} (lock {out / LOCK_FILE} is held); "
            "wait for it to finish or use another --out"
        ) from None
    try:
        recorded = run_settings(context, {"concurrency": concurrency, **dict(settings or {})})
        return await _run_locked(
            sessions, context, out, concurrency, overwrite, progress, invoke, on_record, prices, recorded
        )
    finally:
        lock.release()


async def _run_locked(
    sessions: Sequence[Mapping[str, Any]],
    context: EvaluationContext,
    out: Path,
    concurrency: int,
    overwrite: bool,
    progress: bool,
    invoke: SessionInvoker,
    on_record: Callable[[dict[str, Any]], None] | None,
    prices: Prices | None,
    settings: Mapping[str, Any],
) -> RunSummary:
    started = time.perf_counter()
    results = ResultFile(out / RESULT_FILE)
    errors = ResultFile(out / ERRORS_FILE)
    if overwrite:
        for path in (results.path, errors.path):
            if path.exists():
                path.unlink()
    done = results.scan()
    with contextlib.suppress(ValueError):  # errors.jsonl is a log: a bad line there never blocks a run
        errors.scan()  # cuts a torn last line
    model_name = recorded_model_name(context)
    others = sorted({str(r.model_name) for r in done.values() if r.model_name not in (None, model_name)})
    if others:
        raise ValueError(
            f"{results.path} holds results of model {', '.join(map(str, others))}, not {model_name!r}; "
            "use --overwrite or another --out directory"
        )
    modes = sorted({r.scoring for r in done.values() if r.scoring != scoring_mode(context)})
    if modes:
        raise ValueError(mixing_modes_message(results.path, ", ".join(modes), scoring_mode(context)))
    _check_run_identity(out, context, model_name, bool(done) or errors.path.exists(), settings)

    summary = RunSummary(result_path=results.path, selected=len(sessions), summary_path=out / SUMMARY_FILE)
    todo = [s for s in sessions if s["id"] not in done]
    summary.skipped = len(sessions) - len(todo)
    for session in sessions:
        info = done.get(session["id"])
        if info is not None:
            summary.tasks += info.tasks
            summary.tasks_correct += info.correct
            if info.inference_error:
                summary.inference_errors.append(info.id)

    queue: asyncio.Queue[Mapping[str, Any]] = asyncio.Queue()
    for session in todo:
        queue.put_nowait(session)

    # Appends (write + fsync) run in a thread so a slow disk never stalls the sessions in flight;
    # the lock keeps one append at a time, in the order the index records them.
    writing = asyncio.Lock()

    async def write(file: ResultFile, line: Mapping[str, Any]) -> None:
        async with writing:
            await asyncio.to_thread(file.append, line)

    with _Progress(progress, len(sessions), summary.skipped, summary.tasks, summary.tasks_correct, model_name) as bar:

        async def worker() -> None:
            while True:
                try:
                    session = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                outcome = await invoke(session, context, prices=prices)
                summary.add_usage(outcome.session_id, outcome.usage)
                if outcome.record is None:
                    await write(errors, outcome.error or {"id": outcome.session_id})
                    summary.infrastructure_errors.append(outcome.error or {"id": outcome.session_id})
                    bar.advance(0, 0)
                    continue
                record = outcome.record
                await write(results, record)
                tasks, correct = _task_counts(record)
                summary.evaluated += 1
                summary.tasks += tasks
                summary.tasks_correct += correct
                if isinstance(record.get("result"), str):
                    summary.inference_errors.append(record["id"])
                bar.advance(tasks, correct)
                if on_record is not None:
                    on_record(record)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(todo)) or 1)))

    records = results.finalize()
    remaining = _latest_errors(errors.path, {r.id for r in records})
    if errors.path.exists() or remaining:
        atomic_write_text(errors.path, "".join(dumps_line(e) + "\n" for e in remaining))
    summary.inference_errors.sort(key=session_sort_key)
    summary.infrastructure_errors.sort(key=lambda e: session_sort_key(e["id"]))
    summary.retried_requests.sort(key=lambda e: session_sort_key(e["id"]))
    summary.wall_time = time.perf_counter() - started
    if prices is not None:
        summary.cost_usd = prices.cost(summary.input_tokens, summary.output_tokens)
    write_json_atomic(summary.summary_path, summary_json(summary, model_name, records, sessions, prices, settings))
    return summary


def run_eval(*args: Any, **kwargs: Any) -> RunSummary:
    """Synchronous wrapper of :func:`arun_eval` (runs its own event loop)."""
    return asyncio.run(arun_eval(*args, **kwargs))
