"""Offline LangSmith tracing (issue 14 part 4): ``LANGSMITH_TRACING=true`` with an endpoint that cannot be
reached gives one warning line and no slowdown. Only loopback addresses are used: a closed port, a
listening socket, and a connect that never answers (simulated)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from wildtoolbench.bench.demo_data import CANDIDATES_PATH
from wildtoolbench.tracing import client as tracing_client
from wildtoolbench.tracing import endpoint_unreachable, langsmith_endpoint, tracing_scope

REPO = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_endpoint_from_the_environment():
    assert langsmith_endpoint({}) == "https://api.smith.langchain.com"
    assert langsmith_endpoint({"LANGCHAIN_ENDPOINT": "http://a:1"}) == "http://a:1"
    assert langsmith_endpoint({"LANGSMITH_ENDPOINT": "http://b:2", "LANGCHAIN_ENDPOINT": "http://a:1"}) == "http://b:2"


def test_reachability_check_is_quick_and_says_why(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert endpoint_unreachable(f"http://127.0.0.1:{_closed_port()}") == "connection refused"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert endpoint_unreachable(f"http://127.0.0.1:{server.getsockname()[1]}/api") is None
    assert endpoint_unreachable("not a url") == "not a URL: 'not a url'"

    release = threading.Event()

    def silent(address, timeout=None):  # a firewall that drops packets: nothing comes back
        release.wait(30)  # until the test ends: a caller that waited for the attempt would get "TimeoutError"
        raise TimeoutError

    monkeypatch.setattr(socket, "create_connection", silent)
    try:
        assert endpoint_unreachable("https://api.smith.langchain.com", timeout=0.2) == "no answer within 0.2 s"
    finally:
        release.set()


def test_tracing_scope_turns_tracing_off_with_one_warning(monkeypatch, capsys):
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_0123456789abcdef0123456789abcdef_0123456789")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    built = []
    monkeypatch.setattr(tracing_client, "make_client", lambda *a, **k: built.append(1))
    from langsmith import run_helpers

    with tracing_scope() as client:
        assert client is None
        assert run_helpers.get_tracing_context()["enabled"] is False
    assert built == []  # no client, so no upload thread and no retries
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: LangSmith tracing is off for this run: http://127.0.0.1:")
    assert "connection refused" in lines[0]


def _eval(out: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_"))}
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "eval",
            "--model",
            f"replay:{CANDIDATES_PATH}#demo-model",
            "--out",
            str(out),
            "--no-progress",
        ],
        cwd=REPO,
        env=dict(base, PYTHONPATH=str(REPO), **env),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return result, time.perf_counter() - started


@pytest.mark.slow
def test_an_offline_traced_run_warns_once_and_is_not_slower(tmp_path):
    plain, plain_time = _eval(tmp_path / "plain", LANGSMITH_TRACING="false")
    assert plain.returncode == 0, plain.stderr
    offline, offline_time = _eval(
        tmp_path / "offline",
        LANGSMITH_TRACING="true",
        LANGSMITH_API_KEY="lsv2_pt_0123456789abcdef0123456789abcdef_0123456789",
        LANGSMITH_ENDPOINT=f"http://127.0.0.1:{_closed_port()}",
    )
    assert offline.returncode == 0, offline.stderr
    warnings = [line for line in offline.stderr.splitlines() if "LangSmith" in line or "langsmith" in line.lower()]
    assert len(warnings) == 1 and warnings[0].startswith("warning: LangSmith tracing is off for this run"), (
        offline.stderr
    )
    assert "Failed to" not in offline.stderr and "Traceback" not in offline.stderr
    assert offline.stderr.count("\n") == plain.stderr.count("\n") + 1
    # The same results, and nothing sent to the endpoint: before the check, uploads were retried against the
    # closed port ("Failed to ..." on stderr, ~20 s more) and flushed at exit.
    assert (tmp_path / "offline" / "metric.json").read_text() == (tmp_path / "plain" / "metric.json").read_text()
