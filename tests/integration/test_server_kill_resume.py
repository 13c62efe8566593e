"""Issue 42: a session-trial in flight when the client is killed does not pay again on a server.

A server run streams its output values after every step, so every reply it pays for reaches the client's
``--cache`` folder while the run goes on (docs/trials.md §8.1). The test holds the loopback endpoint after a
fixed number of answered requests (every later request hangs, unanswered), waits until the client's cache
holds every answered reply, kills the client (SIGKILL), lifts the hold and runs the same command again: the
endpoint answers exactly as many requests as an uninterrupted one-process run, and the files are the same.
The same run with ``--no-server-threads`` gives the same metric and leaves no thread on the server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.counting_stub import CountingServer
from tests.support.langgraph_dev import ROOT, LangGraphDev
from wildtoolbench.runner import load_dataset

TRIALS = "2"
HOLD_AFTER = 150  # requests answered before the endpoint holds the rest (the run pays 418 in all)


class HoldingServer(CountingServer):
    """A :class:`CountingServer` that, once :attr:`hold_after` requests were answered, lets every later request
    hang unanswered (nothing is paid for it) until :attr:`hold_after` is set back to ``None``."""

    hold_after: int | None = None

    def answered_count(self) -> int:
        """Requests answered (a new reply or one given again for a request seen before)."""
        with self._lock:
            return sum(1 for a in self.attempts if a[2] == "ok") + len(self.repeats)

    def plan(self, body: Any) -> tuple[str, Any]:
        if self.hold_after is not None and self.answered_count() >= self.hold_after:
            return "hang", 3600.0
        return super().plan(body)


def _oracle_script(reference_dir: Path) -> dict[str, list]:
    lines = (reference_dir / "candidates.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return {r["session_id"]: r["responses"] for r in rows if r["candidate"] == "oracle"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "OPENAI_"))}
    env.update(OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


def _command(reference_dir: Path, out: Path, base_url: str, *extra: str) -> list[str]:
    return [
        *(sys.executable, "-m", "wildtoolbench.cli", "eval", "--no-progress", "--no-trace", "--no-preflight"),
        *("--dataset", str(reference_dir / "sessions.jsonl"), "--out", str(out), "--trials", TRIALS),
        *("--model", "openai:stub-0", "--base-url", base_url, "--concurrency", "4", *extra),
    ]


def _recorded_requests(out: Path) -> int:
    """Model requests in the records of ``out`` (one ``latency`` entry per request), every trial's file."""
    total = 0
    for name in ("result.jsonl", "result.trials.jsonl"):
        path = out / name
        for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else ():
            total += sum(len(task["latency"]) for task in json.loads(line)["result"])
    return total


def _thread_count(url: str) -> int:
    """Threads the server holds (``POST /threads/search``)."""
    import httpx

    found = httpx.post(f"{url}/threads/search", json={"limit": 1000}, timeout=30).json()
    assert isinstance(found, list), found
    return len(found)


def _entries(cache: Path) -> int:
    return len(list(cache.glob("??/*.json")))


@pytest.mark.slow
def test_a_killed_client_pays_no_request_twice_on_a_server(reference_dir, tmp_path):
    if importlib.util.find_spec("langgraph_api") is None:
        pytest.skip("langgraph-cli[inmem] is not installed (it is in the test extra)")
    sessions, script = load_dataset(reference_dir / "sessions.jsonl"), _oracle_script(reference_dir)
    with CountingServer(sessions, script) as stub:  # the uninterrupted run, in one process, no cache
        one = tmp_path / "one"
        done = subprocess.run(_command(reference_dir, one, stub.base_url), cwd=ROOT, env=_env(), capture_output=True)
        assert done.returncode == 0, done.stderr
        paid = len(stub.outcomes("ok")) + len(stub.repeats)
    assert paid == 2 * 209  # the 24 fixture sessions' oracle makes 209 requests per trial

    out, cache = tmp_path / "server", tmp_path / "cache"
    with HoldingServer(sessions, script) as stub:
        env = {"WTB_SERVER_MODELS": "openai:stub-*", "WTB_SERVER_BASE_URLS": stub.base_url, "OPENAI_API_KEY": "k"}
        with LangGraphDev(tmp_path / "dev-logs", jobs=4, env=env) as dev:
            dev.start()
            command = _command(reference_dir, out, stub.base_url, "--cache", str(cache), "--server", dev.url)
            stub.hold_after = HOLD_AFTER
            process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + 180  # a bound on waiting, not a timing assertion
            while time.monotonic() < deadline and process.poll() is None:
                if stub.answered_count() >= HOLD_AFTER and _entries(cache) >= stub.answered_count():
                    break
                time.sleep(0.05)
            assert process.poll() is None, "the run ended before the kill"
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            answered = stub.answered_count()
            assert answered == HOLD_AFTER and _entries(cache) == answered  # every paid reply reached the cache
            recorded = _recorded_requests(out)  # the requests of the session-trials that have a record
            assert recorded < HOLD_AFTER  # session-trials were in flight (held) at the kill, with replies paid
            stub.hold_after = None
            done = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, timeout=600)
            assert done.returncode == 0, done.stderr
            assert stub.answered_count() == paid  # not one request paid twice

            threads = _thread_count(dev.url)
            assert threads >= 24  # a session-trial's thread stays on the server, with its metadata
            bare = tmp_path / "threadless"
            command = _command(reference_dir, bare, stub.base_url, "--cache", str(tmp_path / "c2"), "--server", dev.url)
            done = subprocess.run([*command, "--no-server-threads"], cwd=ROOT, env=_env(), capture_output=True)
            assert done.returncode == 0, done.stderr
            assert _thread_count(dev.url) == threads  # threadless runs: the server deleted each run's thread
    for name in ("metric.json", "trials.json"):
        assert (bare / name).read_text(encoding="utf-8") == (one / name).read_text(encoding="utf-8"), name
    for name in ("metric.json", "trials.json", "trials_summary.json"):
        assert (out / name).read_text(encoding="utf-8") == (one / name).read_text(encoding="utf-8"), name
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summary["cache"]["hits"], summary["cache"]["writes"]) == (HOLD_AFTER - recorded, paid - HOLD_AFTER)
