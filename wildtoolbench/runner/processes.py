"""Sessions run in worker processes (``wtb eval --workers N``, docs/settings.md §2.1).

One Python process runs the harness on one core: against a fast endpoint a run is bound by the
harness's own CPU per model request (``python -m benchmarks.perf``). :class:`ProcessInvoker` is a
:class:`~wildtoolbench.runner.invoke.SessionInvoker` that hands each session to one of ``workers`` child
processes (``python -m wildtoolbench.runner.processes``), each running the evaluation graph on its own
event loop with :func:`~wildtoolbench.runner.invoke.run_session`, and resolves to the session's outcome.
Everything else stays in the calling process: the batch runner's concurrency (sessions in flight
over all workers), the result file and its single writer, resume, progress and the summary.

Protocol (JSON Lines over the child's stdin / stdout): first ``{"context": {...}, "no_trace": bool,
"prices": [in, out] | null, "concurrency": n}``, then one ``{"n": k, "session": {...}}`` per
session; the child answers ``{"n": k, "session_id", "record", "error", "usage"}`` (the
:class:`~wildtoolbench.runner.invoke.SessionOutcome`) as each session ends, in any order, and exits at the
end of its stdin. A child that dies leaves its sessions in flight as infrastructure errors
(``errors.jsonl``: the next run retries them) and takes no more sessions; the run goes on with
the others. Each child also writes ``{"heartbeat": true}`` every ``heartbeat`` seconds from a
thread of its own (so a busy event loop still beats); a child silent for ``stall_after`` seconds
(stopped by SIGSTOP, hung, swapped out) is killed and its sessions in flight are run again by
the other children, each at most once more (docs/settings.md §2.1). Ctrl-C reaches the calling process only (the children ignore SIGINT and stop when
their stdin closes). A request rate limit (``rps``) is shared out: each child gets ``rps / workers``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner.child_pool import Child, ChildPool, open_stdin, protocol_stdout
from wildtoolbench.runner.invoke import SessionOutcome

HEARTBEAT_SECONDS = 1.0
"""How often a worker process says it is alive (docs/settings.md §2.1)."""
STALL_SECONDS = 30.0
"""A worker process silent for this long is taken for stopped: killed, its sessions run elsewhere."""
_REQUEUE = object()
"""The result of a session whose worker stalled: run it on another worker."""


def _lost(context: EvaluationContext, session_id: str, reason: str) -> SessionOutcome:
    """An infrastructure error for a session that no worker process ran to its end (the next run retries it):
    the ``errors.jsonl`` entry of :func:`~wildtoolbench.runner.invoke.run_session`, with ``reason`` as its error."""
    from wildtoolbench.runner.invoke import recorded_model_name

    error = {
        "id": session_id,
        "model_name": recorded_model_name(context),
        "error": reason,
        "attempts": 0,
        "errors": [reason],
        "where": {},
        "usage": {},
    }
    return SessionOutcome(session_id, None, error, {})


def _answer(n: int, outcome: SessionOutcome, cache: Mapping[str, int] | None = None) -> bytes:
    """The protocol line of a child for the outcome of its request ``n`` (with its cache counts since its
    last answer, ``cache``, when the run has a cache)."""
    answer: dict[str, Any] = {
        "n": n,
        "session_id": outcome.session_id,
        "record": outcome.record,
        "error": outcome.error,
        "usage": outcome.usage,
    }
    if cache is not None:
        answer["cache"] = dict(cache)
    return json.dumps(answer, ensure_ascii=False).encode() + b"\n"


class ProcessInvoker(ChildPool):
    """Run sessions in ``workers`` child processes (see the module doc); use as an async context manager.

    Args:
        workers: child processes (>= 1).
        context: the run's evaluation context (every session runs with it).
        concurrency: sessions in flight over all children (each child's HTTP pool is sized for it).
        no_trace: turn LangSmith tracing off in the children (``--no-trace``); otherwise each child
            traces as the environment says.
        prices: USD per million input / output tokens (``cost_usd`` in the accounting), or ``None``.
        heartbeat: seconds between a child's heartbeats (default :data:`HEARTBEAT_SECONDS`).
        stall_after: seconds of silence after which a child is killed as stalled and its sessions in
            flight go to the other children (> ``heartbeat``; default :data:`STALL_SECONDS`).

    Raises:
        ValueError: ``workers < 1``, or ``stall_after`` not above ``heartbeat``.
    """

    module = "wildtoolbench.runner.processes"

    def __init__(
        self,
        workers: int,
        context: EvaluationContext,
        *,
        concurrency: int,
        no_trace: bool = False,
        prices: Any = None,
        heartbeat: float | None = None,
        stall_after: float | None = None,
        cache: Any = None,
    ):
        super().__init__(workers)
        heartbeat = HEARTBEAT_SECONDS if heartbeat is None else heartbeat
        stall_after = STALL_SECONDS if stall_after is None else stall_after
        if not 0 < heartbeat < stall_after:
            raise ValueError(f"a worker's stall time ({stall_after} s) must exceed its heartbeat ({heartbeat} s)")
        self.heartbeat = heartbeat
        self.stall_after = stall_after
        self.context = context
        self.concurrency = concurrency
        self.no_trace = no_trace
        self.prices = prices
        self.cache = cache  # an IndexedCache: its folder is opened by every child, their counts added to it

    def argv(self) -> list[str]:
        """The child's heartbeat period in seconds."""
        return [str(self.heartbeat)]

    def header(self) -> dict[str, Any]:
        """The run's context (``rps`` shared out), ``no_trace``, prices, each child's concurrency and cache."""
        fields = dataclasses.asdict(self.context)
        if fields.get("rps"):  # the rate limit is the run's: each process keeps its share
            fields["rps"] = fields["rps"] / self.workers
        return {
            "context": fields,
            "no_trace": self.no_trace,
            "prices": None if self.prices is None else [self.prices.input_per_million, self.prices.output_per_million],
            "concurrency": max(1, -(-self.concurrency // self.workers)),
            "cache": None if self.cache is None else str(self.cache.root),
            "cache_trust": bool(getattr(self.cache, "trust", False)),
        }

    def started(self, child: Child) -> None:
        """Start ``child``'s heartbeat watchdog (:meth:`_watch`)."""
        child.watchdog = asyncio.create_task(self._watch(child))

    async def _watch(self, child: Child) -> None:
        """Kill ``child`` once it has been silent for :attr:`stall_after` seconds (its reader then
        hands its sessions back for another child)."""
        while child.alive:
            silent = time.monotonic() - child.last_heard
            if silent >= self.stall_after:
                await asyncio.sleep(0)  # lines that arrived while this loop was busy are read first
                silent = time.monotonic() - child.last_heard
            if silent >= self.stall_after:
                child.stalled = True
                child.exit_reason = f"the worker process stopped answering (no heartbeat for {silent:.0f} s)"
                child.process.kill()  # SIGKILL ends a stopped process too
                return
            await asyncio.sleep(min(self.heartbeat, self.stall_after - silent))

    def dispatch(self, child: Child, answer: dict[str, Any]) -> None:
        """Skip a heartbeat; add the child's cache counts to the run's; resolve the answered session."""
        if answer.get("heartbeat"):
            return
        if self.cache is not None and isinstance(answer.get("cache"), dict):
            self.cache.add_counts(answer["cache"])  # the child's counts since its last answer
        super().dispatch(child, answer)

    def result(self, answer: dict[str, Any], key: Any) -> SessionOutcome:
        """The :class:`SessionOutcome` of an answer line. Raises KeyError for a missing field."""
        return SessionOutcome(answer["session_id"], answer["record"], answer["error"], answer["usage"])

    def lost(self, child: Child, key: Any, reason: str) -> Any:
        """Run again elsewhere when ``child`` stalled; otherwise the session ``key``'s infrastructure error."""
        return _REQUEUE if child.stalled else _lost(self.context, key, reason)

    async def __call__(
        self, session: Mapping[str, Any], context: EvaluationContext, *, prices: Any = None
    ) -> SessionOutcome:
        """Run ``session`` in the child with the fewest sessions in flight; resolves to its outcome.

        ``context`` and ``prices`` must be the ones given to the constructor (the children got them at start).
        A session whose child stalled is sent to another child once; when that one stalls too, or no
        child is left, the session is an infrastructure error (the next run retries it).
        """
        from wildtoolbench.models.cache import current_trial

        line = json.dumps(session, ensure_ascii=False)  # once, however often it is sent
        trial = current_trial()  # a run of trials: the child runs the session as this trial (docs/trials.md §1)
        extra = b"" if trial is None else b', "trial": %d' % trial
        for attempt in range(2):
            child = self.least_busy()
            if child is None:
                reason = "every worker process has exited" if attempt == 0 else self._last_reason
                return _lost(self.context, session["id"], reason)
            outcome = await self.send(
                child, session["id"], lambda n: b'{"n": %d%s, "session": ' % (n, extra) + line.encode() + b"}\n"
            )
            if outcome is not _REQUEUE:
                return outcome
        return _lost(self.context, session["id"], self._last_reason)


# --------------------------------------------------------------------------- the child


class _Protocol:
    """The child's protocol output: whole lines, from the event loop (answers) and the heartbeat thread."""

    def __init__(self, out: Any) -> None:
        self._out = out
        self._lock = threading.Lock()

    def send(self, line: bytes) -> None:
        with self._lock:
            self._out.write(line)
            self._out.flush()

    def beat(self, every: float) -> None:
        """Send a heartbeat every ``every`` seconds until the parent is gone (run in a daemon thread)."""
        while True:
            time.sleep(every)
            try:
                self.send(b'{"heartbeat": true}\n')
            except (OSError, ValueError):
                return


async def _child_main(protocol: _Protocol) -> None:
    from wildtoolbench.graphs.evaluation import graph
    from wildtoolbench.models.transport import http_clients
    from wildtoolbench.runner.accounting import Prices
    from wildtoolbench.runner.invoke import run_session

    reader, header = await open_stdin()
    context = EvaluationContext(**header["context"])
    prices = Prices(*header["prices"]) if header["prices"] else None
    tasks: set[asyncio.Task[None]] = set()
    cache = None
    if header.get("cache"):  # the run's cache folder, shared with the other processes (docs/trials.md §8.1)
        from wildtoolbench.runner.shared_cache import IndexedCache

        cache = IndexedCache(header["cache"], context.candidate, trust=bool(header.get("cache_trust")))
    reported: dict[str, int] = {}

    def cache_delta() -> dict[str, int] | None:
        if cache is None:
            return None
        now = {k: v for k, v in cache.counts().items() if isinstance(v, int)}
        delta = {k: v - reported.get(k, 0) for k, v in now.items()}
        reported.update(now)
        return delta

    async def one(n: int, session: dict[str, Any], trial: int | None) -> None:
        from wildtoolbench.models.cache import cache_scope, trial_scope

        try:
            with cache_scope(cache), trial_scope(trial) if trial is not None else contextlib.nullcontext():
                line = _answer(n, await run_session(graph, session, context, prices=prices), cache_delta())
        except Exception as exc:  # noqa: BLE001 - reported as this session's infrastructure error, the worker goes on
            lost = _lost(context, session.get("id"), f"worker process: {type(exc).__name__}: {exc}")
            line = _answer(n, lost, cache_delta())
        protocol.send(line)

    from wildtoolbench.tracing import tracing_scope

    with tracing_scope(no_trace=header["no_trace"]):
        async with http_clients(header["concurrency"]):
            while True:
                line = await reader.readline()
                if not line:
                    break
                request = json.loads(line)
                task = asyncio.create_task(one(request["n"], request["session"], request.get("trial")))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    """Entry point of a worker process (``python -m wildtoolbench.runner.processes [HEARTBEAT_SECONDS]``; started by
    :class:`ProcessInvoker`)."""
    protocol = _Protocol(protocol_stdout())  # Ctrl-C ignored; any other stdout output goes to stderr
    every = float(sys.argv[1]) if len(sys.argv) > 1 else HEARTBEAT_SECONDS
    threading.Thread(target=protocol.beat, args=(every,), daemon=True).start()  # beats while the harness imports
    from wildtoolbench.runner.loop import run

    run(_child_main(protocol))


if __name__ == "__main__":
    main()
