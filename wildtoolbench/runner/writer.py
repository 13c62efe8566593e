"""The single writer of a ``wtb eval`` run and the pool that runs the session workers beside it (issue 15).

Session workers of :func:`wildtoolbench.runner.batch.arun_eval` hand finished sessions to one
:class:`SessionWriter`, which appends them in batches (one fsync per file) and only then reports
them; :func:`run_workers` runs the workers and the writer together and settles failures and
cancellation. The files are :mod:`wildtoolbench.runner.store`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from wildtoolbench.runner.invoke import SessionOutcome
from wildtoolbench.runner.store import ResultFile


class SessionWriter:
    """The run's single writer of ``result.jsonl`` and ``errors.jsonl`` (the batch writer of issue 15).

    Session workers hand each finished :class:`SessionOutcome` over with :meth:`put` and take their
    next session at once; they never wait on the disk. :meth:`run` takes everything queued, appends it
    in one thread call (one ``write`` per file and ONE fsync per file for the whole batch,
    :meth:`ResultFile.append_many`) and only then reports each outcome, in the order they were handed
    over (``report``: summary counts, progress bar, ``on_record``). So a session counts as done only
    once its line is fsync'd, as with one fsync per record; a crash loses at most the outcomes not yet
    written (their sessions run again on resume) and leaves at most a torn last line (cut by
    :meth:`ResultFile.scan`).
    """

    def __init__(
        self,
        results: ResultFile,
        errors: ResultFile,
        report: Callable[[SessionOutcome], None],
        trial_results: ResultFile | None = None,
    ):
        self._results, self._errors, self._report = results, errors, report
        self._trial_results = trial_results  # trials 2, 3, ... (records with "trial", docs/trials.md §5)
        self._queue: asyncio.Queue[SessionOutcome | None] = asyncio.Queue()

    def put(self, outcome: SessionOutcome) -> None:
        """Queue a finished session for writing (never blocks)."""
        self._queue.put_nowait(outcome)

    def close(self) -> None:
        """No more outcomes: :meth:`run` returns once everything queued before is written and reported."""
        self._queue.put_nowait(None)

    def _append(self, batch: list[SessionOutcome]) -> None:
        records = [o.record for o in batch if o.record is not None]
        later = [r for r in records if "trial" in r]
        self._results.append_many([r for r in records if "trial" not in r])
        if later:
            assert self._trial_results is not None
            self._trial_results.append_many(later)
        self._errors.append_many([o.error or {"id": o.session_id} for o in batch if o.record is None])

    async def run(self) -> None:
        """Write and report batches until :meth:`close`; raises what a write or ``report`` raised.

        When cancelled during a write, it waits for that thread call to finish (its lines are complete
        and fsync'd) before the cancellation goes on, so the run's lock is never released while a
        write is under way; the records of that batch are then on disk but not reported.
        """
        closed = False
        while not closed:
            batch: list[SessionOutcome] = []
            item = await self._queue.get()
            while True:
                if item is None:
                    closed = True
                else:
                    batch.append(item)
                if self._queue.empty():
                    break
                item = self._queue.get_nowait()
            if not batch:
                continue
            writing = asyncio.ensure_future(asyncio.to_thread(self._append, batch))
            try:
                await asyncio.shield(writing)
            except asyncio.CancelledError:
                await asyncio.wait({writing})  # the thread cannot be stopped: let it end its write + fsync
                raise
            for outcome in batch:
                self._report(outcome)


async def run_workers(workers: list[Coroutine[Any, Any, None]], writer: SessionWriter) -> None:
    """Run the session workers and the writer together until every outcome is written and reported.

    A worker's exception stops the other workers, lets the writer drain what was handed over, then
    propagates; a writer's exception (a failed write, a failing ``on_record``) stops the workers and
    propagates. Cancellation (Ctrl-C, SIGTERM) stops all of them, the writer after its current write.
    """
    tasks = [asyncio.ensure_future(w) for w in workers]
    writing = asyncio.ensure_future(writer.run())
    try:
        pending: set[asyncio.Future[Any]] = set(tasks)
        failed: asyncio.Future[Any] | None = None
        while pending and failed is None and not writing.done():
            done, pending = await asyncio.wait({*pending, writing}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(writing)
            failed = next((t for t in done if t is not writing and (t.cancelled() or t.exception())), None)
        if writing.done():  # the writer only ends before close() by failing
            writing.result()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        writer.close()
        await writing  # drains: every outcome handed over is written and reported
        if failed is not None:
            failed.result()  # re-raises the worker's exception
    finally:
        for task in (*tasks, writing):
            task.cancel()
        await asyncio.wait([*tasks, writing])
        for task in tasks:  # retrieved, so that none is logged as "never retrieved"
            if not task.cancelled():
                task.exception()
