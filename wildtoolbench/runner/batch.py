"""The batch layer of ``wtb eval``: many sessions through the evaluation graph, checkpointed per session.

It owns concurrency, the result store, resume and the progress bar; one session is
:mod:`wildtoolbench.runner.invoke`, the files are :mod:`wildtoolbench.runner.store`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from wildtoolbench.common.files import atomic_write_text, dumps_line, write_json_atomic
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner.accounting import Prices, RunSummary, summary_json
from wildtoolbench.runner.identity import (
    _check_run_identity,
    check_models_seen,
    mixing_modes_message,
    run_settings,
    scoring_mode,
)
from wildtoolbench.runner.invoke import (
    SessionInvoker,
    SessionOutcome,
    recorded_model_name,
    run_session,
)
from wildtoolbench.runner.progress import EVALUATION, TASK_LISTENER, ProgressBar
from wildtoolbench.runner.selection import session_ids, session_sort_key
from wildtoolbench.runner.store import (
    ERRORS_FILE,
    LOCK_FILE,
    RESULT_FILE,
    SUMMARY_FILE,
    TRIALS_RESULT_FILE,
    RecordInfo,
    ResultFile,
    _latest_errors,
    _task_counts,
    refuse_symlinks,
    remove_leftover_temp_files,
)
from wildtoolbench.runner.writer import SessionWriter, run_workers
from wildtoolbench.scoring.outputs import remove_scores

if TYPE_CHECKING:  # imported by a run on the local graph only (not by `wtb eval --server`)
    from langgraph.pregel import Pregel

    from wildtoolbench.models.cache import RequestCache


# Long for its docstring (the batch contract, 50 lines): the code is under 50 lines.
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
    workers: int = 1,
    trials: int | Mapping[str, int] = 1,
    cache: RequestCache | None = None,
) -> RunSummary:
    """Evaluate ``sessions`` with ``context``'s model into ``out_dir/result.jsonl``.

    Args:
        sessions: dataset lines to evaluate (see :func:`select_sessions`): a sequence of session
            dicts, or a :class:`~wildtoolbench.runner.selection.DatasetSessions` (:func:`open_dataset`), whose
            sessions stay on disk and are parsed one at a time as workers take them.
        context: an ``EvaluationContext`` (model spec and settings, retry policy, step limit).
        out_dir: output directory (created).
        concurrency: sessions in flight at once (>= 1).
        overwrite: delete an existing ``result.jsonl`` / ``errors.jsonl`` and the score outputs first
            instead of resuming (docs/cli.md §3.1).
        progress: show the progress bar (on stderr).
        graph: the compiled evaluation graph (default ``wildtoolbench.graphs.evaluation.graph``).
        on_record: called with each new record once it is written and fsync'd, in the order the
            sessions finished.
        prices: USD per million input / output tokens; adds ``cost_usd`` to the accounting.
        settings: run settings of the caller (e.g. ``{"tasks": 4}``), recorded with the context's
            resolved settings and the concurrency in ``run.json`` and ``summary.json``.
        invoke: how one session is run (:class:`~wildtoolbench.runner.invoke.SessionInvoker`); default
            :func:`~wildtoolbench.runner.invoke.run_session` on ``graph`` in this process. ``wtb eval --server``
            passes :class:`wildtoolbench.remote.RemoteEvaluation` (a run of the deployed graph per session).
        workers: processes that run the sessions (docs/settings.md §2.1): 1 runs them in this process;
            more starts that many worker processes (:class:`wildtoolbench.runner.processes.ProcessInvoker`, the
            default graph only) while the result file, resume and progress stay here.
        trials: trials per session (``--trials K``, docs/trials.md §1): every session is evaluated K times
            (trial 1 into ``result.jsonl``, trials 2..K into ``result.trials.jsonl``, each record with
            ``"trial"``), each session-trial resumed on its own; or ``{session id: trials}`` (the stopping
            rule of ``--until-decided``; sessions left out get 1). ``concurrency`` counts session-trials.
        cache: the request cache (``--cache DIR``, :class:`wildtoolbench.models.cache.RequestCache`, docs/trials.md §8).
            With ``workers > 1`` or an invoker of its own it becomes an
            :class:`~wildtoolbench.runner.shared_cache.IndexedCache` of the same folder: every worker process
            opens the folder, and a server invoker carries each session-trial's entries to the server and
            stores what it paid for (docs/trials.md §8.1).

    Sessions run ``concurrency`` at a time; a worker hands each finished session to the run's single
    writer and takes the next one at once. The writer appends everything handed over meanwhile with
    one fsync per file and only then counts the sessions as done (summary, progress bar,
    ``on_record``); see :class:`~wildtoolbench.runner.writer.SessionWriter`.

    Returns:
        A :class:`RunSummary`, also written to ``out_dir/summary.json``.

    Raises:
        ValueError: ``concurrency < 1``; a trial count below 1; a malformed existing result file; an
            existing result file written for another model, or for another dataset
            file or another version of it (``run.json``; use ``--overwrite`` or
            another directory); a run file in ``out_dir`` that is a symbolic link (docs/cli.md §3.3).
        RuntimeError: another run holds the directory's lock.

    Temporary files a killed run left in ``out_dir`` are removed first (docs/cli.md §3.2); a run that
    ends with no record removes the score outputs (docs/cli.md §3.1).
    """
    if concurrency < 1:
        raise ValueError(f"--concurrency must be >= 1, got {concurrency}")
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    wanted = _wanted_trials(sessions, trials)
    if cache is not None and (workers > 1 or invoke is not None):
        cache = shared_cache(cache, context)  # read by worker processes, carried to a server (docs/trials.md §8.1)
    if workers > 1 and (invoke is not None or graph is not None):
        raise ValueError(
            "--workers > 1 runs the default evaluation graph in worker processes; it takes no graph or invoker"
        )
    invoke = _local_invoker(invoke, graph)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    refuse_symlinks(out)  # before the lock: its file would be opened through a link too
    lock = _lock_folder(out)
    try:
        recorded = run_settings(context, {"concurrency": concurrency, **dict(settings or {})})
        run = functools.partial(
            _run_locked,
            sessions,
            context,
            out,
            concurrency,
            overwrite,
            progress,
            on_record=on_record,
            prices=prices,
            settings=recorded,
            wanted=wanted,
            cache=cache,
        )
        if workers > 1:
            from langsmith.run_helpers import get_tracing_context

            from wildtoolbench.runner.processes import ProcessInvoker

            no_trace = get_tracing_context().get("enabled") is False  # a --no-trace scope around this run
            async with ProcessInvoker(
                workers, context, concurrency=concurrency, no_trace=no_trace, prices=prices, cache=cache
            ) as pool:
                return await run(invoke=pool)
        from wildtoolbench.models.cache import cache_scope

        with cache_scope(cache):
            return await run(invoke=invoke)
    finally:
        lock.release()


def _local_invoker(invoke: SessionInvoker | None, graph: Pregel | None) -> SessionInvoker:
    """``invoke``, or :func:`~wildtoolbench.runner.invoke.run_session` on ``graph`` (default: the evaluation graph)."""
    if invoke is not None:
        return invoke
    if graph is None:
        from wildtoolbench.graphs.evaluation import graph as default_graph

        graph = default_graph
    return functools.partial(run_session, graph)


def _lock_folder(out: Path) -> FileLock:
    """The held lock of the run folder ``out``; raises RuntimeError when another run holds it."""
    lock = FileLock(str(out / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RuntimeError(
            f"another `wtb eval` is already writing to {out} (lock {out / LOCK_FILE} is held); "
            "wait for it to finish or use another --out"
        ) from None
    return lock


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
    wanted: Mapping[str, int] | None = None,
    cache: RequestCache | None = None,
) -> RunSummary:
    started = time.perf_counter()
    results, trial_results, errors = _open_result_files(out, overwrite)
    done = results.scan()
    done_trials = trial_results.scan()
    with contextlib.suppress(ValueError):  # errors.jsonl is a log: a bad line there never blocks a run
        errors.scan()  # cuts a torn last line
    model_name = recorded_model_name(context)
    _check_resumable(out, context, model_name, results, errors, done, done_trials, settings)

    ids = session_ids(sessions)
    wanted = wanted if wanted is not None else dict.fromkeys(ids, 1)
    most = max((wanted.get(i, 1) for i in ids), default=1)
    summary = RunSummary(result_path=results.path, selected=len(ids), summary_path=out / SUMMARY_FILE, trials=most)
    summary.session_trials = sum(wanted.get(i, 1) for i in ids)

    def finished(session_id: str, trial: int) -> RecordInfo | None:
        return done.get(session_id) if trial == 1 else done_trials.get((session_id, trial))

    todo = _plan_todo(ids, wanted, most, finished, summary)
    queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)

    per_session = int((settings or {}).get("tasks") or 4)  # tasks per session (wtb eval passes its --tasks)
    tasks_seen: dict[str, int] = {}  # tasks reported finished, per session in flight
    with ProgressBar(
        EVALUATION,
        total=summary.session_trials,
        done=summary.skipped,
        label=model_name,
        enabled=progress,
        tasks=summary.tasks,
        right_tool_names=summary.tasks_right_tool_names,
        tasks_done=summary.skipped * per_session,
        tasks_total=summary.session_trials * per_session,
    ) as bar:

        def task_finished(session_id: str, count: int) -> None:
            tasks_seen[session_id] = tasks_seen.get(session_id, 0) + count
            bar.task_done(count)

        report = _reporter(summary, bar, tasks_seen, per_session, on_record)
        writer = SessionWriter(results, errors, report, trial_results)

        async def worker() -> None:
            from wildtoolbench.models.cache import trial_scope

            while True:
                try:
                    index, trial = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                if most > 1:  # a run of trials: every request knows its trial (cache key, wtb_trial metadata)
                    with trial_scope(trial):
                        outcome = await invoke(sessions[index], context, prices=prices)
                else:
                    outcome = await invoke(sessions[index], context, prices=prices)
                if outcome.record is not None:
                    check_models_seen(outcome.record, out)  # a resumed graph: candidate whose model changed
                writer.put(tagged(outcome, trial))  # the writer appends and reports it; this worker goes on

        from wildtoolbench.models.transport import (
            http_clients,  # the run's HTTP connection pools: sized to it, closed with it
        )

        listening = TASK_LISTENER.set(task_finished if bar.enabled else None)  # the workers' tasks inherit it
        try:
            async with http_clients(concurrency):
                await run_workers([worker() for _ in range(min(concurrency, len(todo)) or 1)], writer)
        finally:
            TASK_LISTENER.reset(listening)

    records, trial_records = _finish(out, results, trial_results, errors, summary, prices, started)
    content = summary_json(summary, model_name, [*records, *trial_records], ids, prices, settings)
    if most > 1 or trial_records:
        content["trials"] = {"trials": most, "session_trials": summary.session_trials}
    if cache is not None:
        content["cache"] = cache.counts()
    write_json_atomic(summary.summary_path, content)
    return summary


def _open_result_files(out: Path, overwrite: bool) -> tuple[ResultFile, ResultFile, ResultFile]:
    """``result.jsonl``, ``result.trials.jsonl`` and ``errors.jsonl`` of ``out``, after removing a killed run's
    temporary files; with ``overwrite`` the three files and the score outputs are deleted (docs/cli.md §3.1)."""
    remove_leftover_temp_files(out)  # of a killed run; the lock is held, so no writer is running
    results = ResultFile(out / RESULT_FILE)
    trial_results = ResultFile(out / TRIALS_RESULT_FILE, trials=True)
    errors = ResultFile(out / ERRORS_FILE)
    if overwrite:
        for path in (results.path, trial_results.path, errors.path):
            if path.exists():
                path.unlink()
        remove_scores(out)  # the previous run's metrics never stand beside this run's results
    return results, trial_results, errors


def _check_resumable(
    out: Path,
    context: EvaluationContext,
    model_name: str,
    results: ResultFile,
    errors: ResultFile,
    done: Mapping[str, RecordInfo],
    done_trials: Mapping[tuple[str, int], RecordInfo],
    settings: Mapping[str, Any],
) -> None:
    """Raise ValueError when the records already in ``out`` are of another model, scoring mode or run (``run.json``)."""
    others = sorted(
        {str(r.model_name) for r in (*done.values(), *done_trials.values()) if r.model_name not in (None, model_name)}
    )
    if others:
        raise ValueError(
            f"{results.path} holds results of model {', '.join(map(str, others))}, not {model_name!r}; "
            "use --overwrite or another --out directory"
        )
    modes = sorted({r.scoring for r in done.values() if r.scoring != scoring_mode(context)})
    if modes:
        raise ValueError(mixing_modes_message(results.path, ", ".join(modes), scoring_mode(context)))
    _check_run_identity(out, context, model_name, bool(done) or errors.path.exists(), settings)


def _plan_todo(
    ids: Sequence[str],
    wanted: Mapping[str, int],
    most: int,
    finished: Callable[[str, int], RecordInfo | None],
    summary: RunSummary,
) -> list[tuple[int, int]]:
    """The ``(session index, trial)`` pairs still to run; counts the finished ones into ``summary``."""
    # trial by trial, so that a stopped run holds whole early trials (docs/trials.md §1)
    todo = [
        (index, trial)
        for trial in range(1, most + 1)
        for index, session_id in enumerate(ids)
        if trial <= wanted.get(session_id, 1) and finished(session_id, trial) is None
    ]
    summary.skipped = summary.session_trials - len(todo)
    for trial in range(1, most + 1):
        for session_id in ids:
            info = finished(session_id, trial) if trial <= wanted.get(session_id, 1) else None
            if info is not None:
                summary.tasks += info.tasks
                summary.tasks_right_tool_names += info.correct
                if info.inference_error and info.id not in summary.inference_errors:
                    summary.inference_errors.append(info.id)
    return todo


def _reporter(
    summary: RunSummary,
    bar: ProgressBar,
    tasks_seen: dict[str, int],
    per_session: int,
    on_record: Callable[[dict[str, Any]], None] | None,
) -> Callable[[SessionOutcome], None]:
    """What the writer calls with each outcome once it is fsync'd: summary counts, progress bar, ``on_record``."""

    def report(outcome: SessionOutcome) -> None:
        summary.add_usage(outcome.session_id, outcome.usage)
        rest = per_session - tasks_seen.pop(outcome.session_id, 0)
        if rest > 0:
            bar.task_done(rest)
        seconds = float(outcome.usage.get("wall_time", 0.0) or 0.0)
        if outcome.record is None:
            error = outcome.error or {"id": outcome.session_id}
            summary.infrastructure_errors.append(error)
            bar.advance(line=progress_line(outcome.session_id, None, seconds, error.get("error")))
            return
        record = outcome.record
        tasks, correct = _task_counts(record)
        summary.evaluated += 1
        summary.tasks += tasks
        summary.tasks_right_tool_names += correct
        failed = record.get("result") if isinstance(record.get("result"), str) else None
        if failed is not None and record["id"] not in summary.inference_errors:
            summary.inference_errors.append(record["id"])
        bar.advance(
            line=progress_line(outcome.session_id, (correct, tasks), seconds, failed),
            tasks=tasks,
            right_tool_names=correct,
        )
        if on_record is not None:
            on_record(record)

    return report


def _finish(
    out: Path,
    results: ResultFile,
    trial_results: ResultFile,
    errors: ResultFile,
    summary: RunSummary,
    prices: Prices | None,
    started: float,
) -> tuple[list[RecordInfo], list[RecordInfo]]:
    """Finalize the result files and ``errors.jsonl`` and complete ``summary``; returns the records of
    ``result.jsonl`` and of ``result.trials.jsonl``."""
    records = results.finalize()
    trial_records = trial_results.finalize() if trial_results.path.exists() else []
    if not records:  # nothing to score: no metric of an earlier run may stay (docs/cli.md §3.1)
        remove_scores(out)
    kept = {r.id for r in records} | {(r.id, r.trial) for r in trial_records}
    remaining = _latest_errors(errors.path, kept)
    if errors.path.exists() or remaining:
        atomic_write_text(errors.path, "".join(dumps_line(e) + "\n" for e in remaining))
    summary.inference_errors.sort(key=session_sort_key)
    summary.infrastructure_errors.sort(key=lambda e: session_sort_key(e["id"]))
    summary.retried_requests.sort(key=lambda e: session_sort_key(e["id"]))
    summary.wall_time = time.perf_counter() - started
    if prices is not None:
        summary.cost_usd = prices.cost(summary.input_tokens, summary.output_tokens)
    return records, trial_records


def shared_cache(cache: RequestCache, context: EvaluationContext) -> RequestCache:
    """``cache`` as an :class:`~wildtoolbench.runner.shared_cache.IndexedCache` of ``context``'s candidate (itself
    when it is one already): the cache worker processes and server runs use (docs/trials.md §8.1)."""
    from wildtoolbench.runner.shared_cache import IndexedCache

    if isinstance(cache, IndexedCache):
        return cache
    return IndexedCache(cache.root, context.candidate, trust=True)  # the folder passed the caller's checks


def _wanted_trials(sessions: Sequence[Mapping[str, Any]], trials: int | Mapping[str, int]) -> dict[str, int]:
    """``{session id: trials}`` of the run (docs/trials.md §1); raises ValueError for a count below 1."""
    ids = session_ids(sessions)
    if isinstance(trials, Mapping):
        wanted = {i: int(trials.get(i, 1)) for i in ids}
    else:
        wanted = dict.fromkeys(ids, int(trials))
    low = [i for i, n in wanted.items() if n < 1]
    if low:
        raise ValueError(f"--trials must be >= 1, got {wanted[low[0]]} for {low[0]}")
    return wanted


def tagged(outcome: SessionOutcome, trial: int) -> SessionOutcome:
    """``outcome`` of trial ``trial``: from trial 2 on, its record (or ``errors.jsonl`` entry) carries
    ``"trial": trial`` (docs/trials.md §5); trial 1 is left as a single run writes it."""
    if trial == 1:
        return outcome
    record = None if outcome.record is None else {**outcome.record, "trial": trial}
    error = None if outcome.error is None else {**outcome.error, "trial": trial}
    return SessionOutcome(outcome.session_id, record, error, outcome.usage)


def progress_line(session_id: str, right: tuple[int, int] | None, seconds: float, failure: str | None = None) -> str:
    """What the line-per-session progress prints for a finished session (docs/settings.md §7.7).

    Args:
        session_id: the session.
        right: ``(tasks whose tool names were right, tasks)`` of its record; ``None`` for an
            infrastructure error (no record).
        seconds: the session's wall time.
        failure: the record's ``Error during inference: ...`` text, or the infrastructure error.

    Returns:
        e.g. ``"wild_tool_bench_3: name check 3/4 tasks (unscored), 12.4s"``,
        ``"wild_tool_bench_4: Error during inference: 5, 0.8s"`` or ``"wild_tool_bench_5: infrastructure
        error (kept in errors.jsonl, run again): model request failed after 5 attempts: ..., 17.0s"``.
    """
    if right is None:
        return f"{session_id}: infrastructure error (kept in errors.jsonl, run again): {failure or 'unknown'}, {seconds:.1f}s"
    if failure is not None:
        return f"{session_id}: {failure}, {seconds:.1f}s"
    return f"{session_id}: name check {right[0]}/{right[1]} tasks (unscored), {seconds:.1f}s"


def run_eval(*args: Any, **kwargs: Any) -> RunSummary:
    """Synchronous wrapper of :func:`arun_eval` (runs its own event loop, :func:`wildtoolbench.runner.loop.run`)."""
    from wildtoolbench.runner.loop import run

    return run(arun_eval(*args, **kwargs))
