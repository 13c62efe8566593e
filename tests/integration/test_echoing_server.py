"""An endpoint that echoes the request's headers and URL into its error bodies (issue 24 finding 2).

``wtb eval`` and ``wtb generate`` run as a user runs them (subprocesses) against a loopback server
that answers HTTP 500 twice (retried) and then 401, each time with the request's headers (the
``Authorization: Bearer <key>`` the client sent) and path in the body. The key (the value of
``OPENAI_API_KEY``, of no known shape), the password of the base URL's user information and its
encoding in a Basic ``Authorization`` header, and a credential query parameter must appear in no
file of the output folder, nor on stdout or stderr (docs/settings.md §8).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.echo_server import EchoServer
from tests.support.session_factory import make_session

REPO = Path(__file__).resolve().parents[2]
KEY = "Zq7wEchoedServerKey4242"
PASSWORD = "pw-Hidden9876"
QUERY_SECRET = "qs-Hidden5432"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
    return {**env, "OPENAI_API_KEY": KEY, "LANGSMITH_TRACING": "false", "PYTHONPATH": str(REPO)}


def _secrets() -> list[str]:
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    return [KEY, PASSWORD, QUERY_SECRET, basic]


def _leaks(out: Path, done: subprocess.CompletedProcess) -> list[str]:
    """``"<where>: <secret>"`` for every secret found in a file under ``out``, stdout or stderr."""
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    for path in out.rglob("*"):
        if path.is_file():
            texts[str(path.relative_to(out))] = path.read_text(encoding="utf-8", errors="replace")
    return [f"{where}: {secret}" for where, text in texts.items() for secret in _secrets() if secret in text]


@pytest.mark.parametrize("spelling", ["plain", "userinfo", "query"])
def test_wtb_eval_writes_no_secret_an_endpoint_echoed(tmp_path, spelling):
    out = tmp_path / "run"
    with EchoServer([500, 500, 401]) as echo:
        base_url = {
            "plain": echo.base_url,
            "userinfo": f"http://user:{PASSWORD}@127.0.0.1:{echo.port}/v1",
            "query": f"{echo.base_url}?api_key={QUERY_SECRET}",
        }[spelling]
        command = [sys.executable, "-m", "wildtoolbench.cli", "eval", "--model", "openai:gpt-x", "--base-url", base_url]
        command += ["--ids", "0,1", "--concurrency", "1", "--backoff", "0.01", "--out", str(out), "--no-progress"]
        command += ["--no-preflight"]  # the chat requests are what echo the key (the probe sends none)
        done = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
        requests = list(echo.requests)
    if spelling == "userinfo":  # credentials in a base URL are refused as configuration (docs/settings.md §7.4)
        assert done.returncode == 2 and requests == [], done.stderr
        assert PASSWORD not in done.stdout + done.stderr
    else:
        assert done.returncode == 3, done.stderr  # infrastructure errors: the endpoint refused every request
        assert "infrastructure errors in 2 sessions" in done.stderr
        assert len(requests) == 6 and all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in requests)
        assert "retried requests: 2" in done.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert [len(r["errors"]) for r in summary["retried_requests"]] == [3, 3]  # echoed errors kept, redacted
        assert "authorization: Bearer [REDACTED]" in summary["retried_requests"][0]["errors"][0]
    assert _leaks(out, done) == []


def test_wtb_generate_writes_no_secret_an_endpoint_echoed(tmp_path):
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    out = tmp_path / "gen"
    with EchoServer([500, 500, 401]) as echo:
        base_url = f"{echo.base_url}?token={QUERY_SECRET}"
        command = [sys.executable, "-m", "wildtoolbench.cli", "generate", "--tools", str(tools), "--out", str(out)]
        command += ["--model", "openai:gpt-x", "--model", "checker=none", "--base-url", base_url]
        command += ["--layers", "2", "--paths", "ST,CC", "--backoff", "0.01", "--no-progress"]
        done = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
        requests = list(echo.requests)
    assert requests and all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in requests)
    assert (out / "failures.jsonl").read_text().strip(), done.stderr  # the session failed on the endpoint
    assert _leaks(out, done) == []
