"""``--timeout`` is a deadline on the whole request, connect to last byte (issue 24 finding 3, docs/settings.md §5).

A "drip" server on loopback answers every request with its status line and headers at once, then one
byte of body per second: each read comes well within any client read timeout, so only a deadline on
the whole request ends it. Before the fix such a request was held for as long as the body lasted
(173 s under ``--timeout 3`` in the report) and the reply was scored.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from wildtoolbench.models.transport import (
    DeadlineExceeded,
    ModelRequestError,
    RetryPolicy,
    request_with_retries,
    usage_scope,
)

REPO = Path(__file__).resolve().parents[2]


class DripServer:
    """Loopback HTTP server: headers at once (``Content-Length`` 100000), then one body byte per ``interval`` s."""

    def __init__(self, interval: float = 1.0):
        self.interval = interval
        self.requests = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._stop = threading.Event()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def __enter__(self) -> DripServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            try:
                request = conn.recv(65536)
                if request.startswith(b"POST"):
                    with self._lock:
                        self.requests += 1
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                while not self._stop.wait(self.interval):
                    conn.sendall(b" ")
            except OSError:
                return


def test_drip_server_under_timeout_3_is_an_infrastructure_error(tmp_path):
    env = dict(os.environ, OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.pop("OPENAI_BASE_URL", None)
    with DripServer() as server:
        command = [sys.executable, "-m", "wildtoolbench", "eval", "--model", "openai:drip", "--base-url", server.base_url]
        command += ["--timeout", "3", "--max-attempts", "2", "--backoff", "0", "--ids", "0", "--out", str(tmp_path)]
        command += ["--no-progress", "--no-trace"]
        # the guard only: without the deadline this run takes 100000 s
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        requests = server.requests
    assert done.returncode == 3, done.stderr
    assert requests == 2  # both tries reached the server and were cut by the deadline
    (error,) = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert error["id"] == "wild_tool_bench_0" and error["attempts"] == 2
    assert error["errors"] == ["timeout: DeadlineExceeded: no complete reply within the 3 s deadline (--timeout)"] * 2
    assert (tmp_path / "result.jsonl").read_text() == ""  # nothing scored for that session
    assert not (tmp_path / "metric.json").exists()
    assert "infrastructure errors in 1 sessions" in done.stderr


def _run(coro):
    return asyncio.run(coro)


def test_a_try_past_its_deadline_is_cancelled_and_retried_as_a_timeout():
    calls: list[int] = []
    cancelled: list[int] = []

    async def slow() -> str:
        calls.append(1)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(1)
            raise
        return "never"

    async def main() -> ModelRequestError:
        with usage_scope() as usage:
            with pytest.raises(ModelRequestError) as caught:
                await request_with_retries(slow, RetryPolicy(max_attempts=3, backoff=0, deadline=0.05))
        assert usage.attempts == 3 and usage.failed == 1
        return caught.value

    error = _run(main())
    assert len(calls) == 3 and len(cancelled) == 3
    assert error.transient and error.attempts == 3
    assert isinstance(error.__cause__, DeadlineExceeded)
    assert error.errors == ["timeout: DeadlineExceeded: no complete reply within the 0.05 s deadline (--timeout)"] * 3


def test_a_reply_within_the_deadline_and_the_clients_own_timeout_are_kept():
    async def quick() -> str:
        return "reply"

    assert _run(request_with_retries(quick, RetryPolicy(deadline=5))) == "reply"

    async def own_timeout() -> str:
        raise TimeoutError("the client's own")

    async def main() -> ModelRequestError:
        with pytest.raises(ModelRequestError) as caught:
            await request_with_retries(own_timeout, RetryPolicy(max_attempts=1, deadline=5))
        return caught.value

    error = _run(main())
    assert not isinstance(error.__cause__, DeadlineExceeded)  # not mistaken for the deadline
    assert error.errors == ["timeout: TimeoutError: the client's own"]


@pytest.mark.parametrize("deadline", [0, -1, float("nan"), float("inf")])
def test_a_deadline_is_a_finite_positive_number(deadline):
    with pytest.raises(ValueError, match="deadline must be a finite number of seconds > 0"):
        RetryPolicy(deadline=deadline)


def test_the_cancelled_caller_cancels_the_try():
    cancelled: list[int] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(1)
            raise

    async def main() -> None:
        task = asyncio.ensure_future(request_with_retries(slow, RetryPolicy(deadline=60)))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)

    _run(main())
    assert cancelled == [1]  # the try did not outlive its caller
