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
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from typing_extensions import Self

from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner.invoke import SessionOutcome

_LINE_LIMIT = 1 << 30
"""Longest protocol line (a session or its record) in bytes."""

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


@dataclasses.dataclass
class _Child:
    process: asyncio.subprocess.Process
    pending: dict[int, tuple[asyncio.Future[SessionOutcome], str]] = dataclasses.field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    alive: bool = True
    exit_reason: str = ""
    last_heard: float = dataclasses.field(default_factory=time.monotonic)
    stalled: bool = False
    watchdog: asyncio.Task[None] | None = None


class ProcessInvoker:
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
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        heartbeat = HEARTBEAT_SECONDS if heartbeat is None else heartbeat
        stall_after = STALL_SECONDS if stall_after is None else stall_after
        if not 0 < heartbeat < stall_after:
            raise ValueError(f"a worker's stall time ({stall_after} s) must exceed its heartbeat ({heartbeat} s)")
        self.heartbeat = heartbeat
        self.stall_after = stall_after
        self.workers = workers
        self.context = context
        self.concurrency = concurrency
        self.no_trace = no_trace
        self.prices = prices
        self.cache = cache  # an IndexedCache: its folder is opened by every child, their counts added to it
        self.children: list[_Child] = []
        self._next = 0
        self._last_reason = ""

    async def __aenter__(self) -> Self:
        fields = dataclasses.asdict(self.context)
        if fields.get("rps"):  # the rate limit is the run's: each process keeps its share
            fields["rps"] = fields["rps"] / self.workers
        header = {
            "context": fields,
            "no_trace": self.no_trace,
            "prices": None if self.prices is None else [self.prices.input_per_million, self.prices.output_per_million],
            "concurrency": max(1, -(-self.concurrency // self.workers)),
            "cache": None if self.cache is None else str(self.cache.root),
            "cache_trust": bool(getattr(self.cache, "trust", False)),
        }
        line = json.dumps(header, ensure_ascii=False).encode() + b"\n"
        try:
            for _ in range(self.workers):
                process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "wildtoolbench.runner.processes",
                    str(self.heartbeat),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    limit=_LINE_LIMIT,
                )
                child = _Child(process)
                self.children.append(child)
                assert process.stdin is not None
                process.stdin.write(line)
                child.reader = asyncio.create_task(self._read(child))
                child.watchdog = asyncio.create_task(self._watch(child))
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every child's stdin and wait for the children to exit (killed after 10 s)."""
        for child in self.children:
            stdin = child.process.stdin
            if stdin is not None and not stdin.is_closing():
                stdin.close()
        for child in self.children:
            try:
                await asyncio.wait_for(child.process.wait(), 10)
            except asyncio.TimeoutError:
                child.process.kill()
                await child.process.wait()
            for task in (child.watchdog, child.reader):
                if task is not None:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)

    async def _watch(self, child: _Child) -> None:
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

    async def _read(self, child: _Child) -> None:
        stdout = child.process.stdout
        assert stdout is not None
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                child.last_heard = time.monotonic()
                answer = json.loads(line)
                if answer.get("heartbeat"):
                    continue
                if self.cache is not None and isinstance(answer.get("cache"), dict):
                    self.cache.add_counts(answer["cache"])  # the child's counts since its last answer
                future, _ = child.pending.pop(answer["n"])
                if not future.done():
                    future.set_result(
                        SessionOutcome(answer["session_id"], answer["record"], answer["error"], answer["usage"])
                    )
        except (ValueError, KeyError) as exc:
            child.exit_reason = f"bad reply from the worker process: {exc}"
            child.process.kill()  # no longer read: it could block writing its next answer
        finally:
            child.alive = False
            code = await child.process.wait()
            reason = child.exit_reason or f"the worker process exited (status {code})"
            for future, session_id in child.pending.values():
                if not future.done():
                    future.set_result(_REQUEUE if child.stalled else _lost(self.context, session_id, reason))
            child.pending.clear()
            self._last_reason = reason

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
            alive = [c for c in self.children if c.alive]
            if not alive:
                reason = "every worker process has exited" if attempt == 0 else self._last_reason
                return _lost(self.context, session["id"], reason)
            child = min(alive, key=lambda c: len(c.pending))
            self._next += 1
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            child.pending[self._next] = (future, session["id"])
            assert child.process.stdin is not None
            child.process.stdin.write(b'{"n": %d%s, "session": ' % (self._next, extra) + line.encode() + b"}\n")
            try:
                await child.process.stdin.drain()
            except (ConnectionError, RuntimeError):
                pass  # the reader resolves the future when the child is gone
            outcome = await future
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

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    header = json.loads(await reader.readline())
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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it closes our stdin
    protocol = _Protocol(os.fdopen(os.dup(1), "wb"))
    os.dup2(2, 1)  # anything else written to stdout (prints, child processes) goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    every = float(sys.argv[1]) if len(sys.argv) > 1 else HEARTBEAT_SECONDS
    threading.Thread(target=protocol.beat, args=(every,), daemon=True).start()  # beats while the harness imports
    from wildtoolbench.runner.loop import run

    run(_child_main(protocol))


if __name__ == "__main__":
    main()
