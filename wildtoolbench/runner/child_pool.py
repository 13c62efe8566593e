"""One pool of worker child processes speaking JSON Lines (``wtb eval --workers N``, docs/settings.md §2.1;
``wtb generate --workers N``, docs/generation.md §12).

:class:`ChildPool` is the part both worker pools share: it starts ``workers`` children with
``python -m MODULE ARGV...``, writes each one the run's header line, reads every child's answers in a task of
its own, hands each request to the child with the fewest requests in flight, and, when a child exits or
answers badly, resolves that child's requests in flight with a stand-in result (what a lost request means is
the subclass's). On exit it closes every child's stdin, waits 10 s for it and then kills it.

The subclasses say what differs through hooks: :attr:`ChildPool.module`, :meth:`ChildPool.argv`,
:meth:`ChildPool.header`, :meth:`ChildPool.started` (e.g. a heartbeat watchdog task),
:meth:`ChildPool.dispatch` / :meth:`ChildPool.result` (what an answer line is) and :meth:`ChildPool.lost`.
The child side shares :func:`protocol_stdout` and :func:`open_stdin`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, BinaryIO, ClassVar

from typing_extensions import Self

LINE_LIMIT = 1 << 30
"""Longest protocol line (a request or its answer) in bytes."""


@dataclasses.dataclass
class Child:
    """One worker child process and its requests in flight (``n`` -> (future, key of the request))."""

    process: asyncio.subprocess.Process
    pending: dict[int, tuple[asyncio.Future[Any], Any]] = dataclasses.field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    alive: bool = True
    exit_reason: str = ""
    last_heard: float = dataclasses.field(default_factory=time.monotonic)
    stalled: bool = False
    watchdog: asyncio.Task[None] | None = None


class ChildPool:
    """``workers`` worker child processes (module doc); use as an async context manager.

    Args:
        workers: child processes (>= 1).

    Raises:
        ValueError: ``workers < 1``.
    """

    module: ClassVar[str] = ""
    """The module each child runs (``python -m module``)."""
    bad_reply: ClassVar[tuple[type[BaseException], ...]] = (ValueError, KeyError)
    """Errors that make an answer line a bad reply: the child is killed, its requests in flight lost."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self.children: list[Child] = []
        self._next = 0
        self._last_reason = ""

    # ----------------------------------------------------------------- hooks

    def argv(self) -> list[str]:
        """The arguments after ``python -m module`` (none by default)."""
        return []

    def header(self) -> dict[str, Any]:
        """The first line every child reads (a JSON object). Raises NotImplementedError here."""
        raise NotImplementedError

    def started(self, child: Child) -> None:
        """Called once ``child`` is started and its reader runs (nothing by default)."""

    def dispatch(self, child: Child, answer: dict[str, Any]) -> None:
        """Handle one answer line of ``child``: by default resolve its request ``answer["n"]`` with
        :meth:`result`. Raises KeyError for an unknown ``n`` and what :meth:`result` raises."""
        future, key = child.pending.pop(answer["n"])
        result = self.result(answer, key)
        if not future.done():
            future.set_result(result)

    def result(self, answer: dict[str, Any], key: Any) -> Any:
        """The result of the request ``key`` from its answer line. Raises NotImplementedError here."""
        raise NotImplementedError

    def lost(self, child: Child, key: Any, reason: str) -> Any:
        """The result of the request ``key`` that ``child`` never answered (it exited for ``reason``).
        Raises NotImplementedError here."""
        raise NotImplementedError

    # ----------------------------------------------------------------- the pool

    async def __aenter__(self) -> Self:
        line = json.dumps(self.header(), ensure_ascii=False).encode() + b"\n"
        try:
            for _ in range(self.workers):
                process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    self.module,
                    *self.argv(),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    limit=LINE_LIMIT,
                )
                child = Child(process)
                self.children.append(child)
                assert process.stdin is not None
                process.stdin.write(line)
                child.reader = asyncio.create_task(self._read(child))
                self.started(child)
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

    async def _read(self, child: Child) -> None:
        """Read ``child``'s answers until it exits; then resolve its requests in flight with :meth:`lost`."""
        stdout = child.process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                child.last_heard = time.monotonic()
                self.dispatch(child, json.loads(line))
        except self.bad_reply as exc:
            child.exit_reason = f"bad reply from the worker process: {exc}"
            child.process.kill()  # no longer read: it could block writing its next answer
        finally:
            child.alive = False
            code = await child.process.wait()
            reason = child.exit_reason or f"the worker process exited (status {code})"
            for future, key in child.pending.values():
                if not future.done():
                    future.set_result(self.lost(child, key, reason))
            child.pending.clear()
            self._last_reason = reason

    def least_busy(self) -> Child | None:
        """The live child with the fewest requests in flight, or ``None`` when every child has exited."""
        alive = [c for c in self.children if c.alive]
        return min(alive, key=lambda c: len(c.pending)) if alive else None

    async def send(self, child: Child, key: Any, request: Callable[[int], bytes]) -> Any:
        """Send ``child`` the request line ``request(n)`` (``n``: a fresh request number) and wait for its
        result (:meth:`result`, or :meth:`lost` when the child goes). ``key`` names the request for both."""
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        child.pending[self._next] = (future, key)
        assert child.process.stdin is not None
        child.process.stdin.write(request(self._next))
        try:
            await child.process.stdin.drain()
        except (ConnectionError, RuntimeError):
            pass  # the reader resolves the future when the child is gone
        return await future


# --------------------------------------------------------------------------- the child side


def protocol_stdout() -> BinaryIO:
    """Make this process a worker child: ignore Ctrl-C (the parent's: it closes our stdin) and send anything
    else written to stdout (prints, child processes) to stderr. Returns the protocol stream (the original
    stdout, binary)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


async def open_stdin() -> tuple[asyncio.StreamReader, dict[str, Any]]:
    """The child's stdin as a stream reader (lines up to :data:`LINE_LIMIT`) and its header line, read.
    Raises ValueError (``json.JSONDecodeError``) for a header that is not JSON."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    return reader, json.loads(await reader.readline())
