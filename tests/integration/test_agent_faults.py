"""One fault rule on every provider path (issue 23 item 4, docs/guides/faults.md).

A missing key, a refused connection, HTTP 401/403/404 and timeouts are infrastructure errors (nothing
scored, ``errors.jsonl``, exit 3, run again on resume) for ``openai:``, ``langchain:``, ``graph:``
candidates and agent factories, locally and in LangSmith experiment mode; a ``langchain:`` model that
cannot be built at all (no API key) stops ``wtb eval`` before any session (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.agent_runs import AGENTS, jsonl, run_over_server
from tests.support.langsmith_stub import LangSmithStub
from wildtoolbench.cli import app
from wildtoolbench.runner import load_dataset

REPO = Path(__file__).resolve().parents[2]
FAKE_LANGSMITH_KEY = "lsv2_fake_FAULTS123"
DEAD_URL = "http://127.0.0.1:9/v1"  # the discard port: the connection is refused


def _sessions(reference_dir, count=2):
    return load_dataset(reference_dir / "sessions.jsonl")[:count]


def test_langchain_openai_without_a_key_is_refused_before_any_session(reference_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    args = ["eval", "--dataset", str(reference_dir / "sessions.jsonl"), "--model", "langchain:openai:gpt-4o-mini"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "error: langchain:openai:gpt-4o-mini: the chat model cannot be built: OpenAIError:" in result.output
    assert "OPENAI_API_KEY" in result.output
    assert not out.exists()


def test_langchain_openai_without_a_key_in_the_python_api_is_an_infrastructure_error(
    reference_dir, tmp_path, monkeypatch
):
    """Without the command's check (the Python API, a server), the model that cannot be built scores nothing."""
    import asyncio

    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.runner import arun_eval

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    summary = asyncio.run(
        arun_eval(
            _sessions(reference_dir),
            EvaluationContext(model="langchain:openai:gpt-4o-mini"),
            tmp_path,
            progress=False,
        )
    )
    assert summary.evaluated == 0 and len(summary.infrastructure_errors) == 2
    assert not (tmp_path / "result.jsonl").read_text(encoding="utf-8").strip()
    errors = jsonl(tmp_path / "errors.jsonl")
    assert [e["id"] for e in errors] == ["wild_tool_bench_0", "wild_tool_bench_1"]
    assert "the candidate langchain:openai:gpt-4o-mini cannot be built: OpenAIError" in errors[0]["error"]


@pytest.mark.parametrize("status", [401, 403, 404])
@pytest.mark.parametrize(
    "spec",
    ["openai:oracle", "langchain:openai:oracle", f"graph:{AGENTS}:one_request_graph", f"graph:{AGENTS}:prebuilt_agent"],
)
def test_http_auth_and_not_found_are_infrastructure_errors(reference_dir, tmp_path, spec, status):
    sessions = _sessions(reference_dir, 1)
    faults = {("wild_tool_bench_0", 1): [{"status": status}]}  # the second request: inside the agent's run
    records, _, server = run_over_server(
        reference_dir, "oracle", spec, tmp_path, sessions=sessions, faults=faults, max_attempts=3, backoff=0
    )
    assert records == {}
    (error,) = jsonl(tmp_path / "errors.jsonl")
    assert error["attempts"] == 1 and error["errors"][0].startswith(f"http {status}"), error  # not retried
    assert error["where"] == {"task": 0, "step": 1}
    # resumable: the same run again (the fault was for one attempt) evaluates the session
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions)
    assert list(records) == ["wild_tool_bench_0"]


def _experiment(reference_dir, tmp_path, stub, model, env, out):
    dataset = tmp_path / "two.jsonl"
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
    clean.update(
        LANGSMITH_TRACING="true",
        LANGSMITH_ENDPOINT=stub.url,
        LANGSMITH_API_KEY=FAKE_LANGSMITH_KEY,
        LANGSMITH_PROJECT="wtb-faults",
        OPENAI_API_KEY="sk-test-faults",
        HOME=str(tmp_path),
        **env,
    )
    args = ["eval", "--dataset", str(dataset), "--model", model, "--out", str(out), "--no-progress"]
    args += ["--langsmith-dataset", "wtb-faults", "--no-preflight", "--max-attempts", "2", "--backoff", "0"]
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args], cwd=REPO, env=clean, capture_output=True, text=True, timeout=300
    )


def test_experiment_mode_connection_failures_are_infrastructure_errors(reference_dir, tmp_path):
    """--langsmith-dataset against a refused endpoint: exit 3, no record scored, no feedback for the sessions,
    errors.jsonl names the failure; no traceback, no stray ``NoneType: None``; the experiments' metadata
    tells two models of one agent file apart."""
    spec = f"graph:{AGENTS}:langchain_agent"
    with LangSmithStub(lifetime=240) as stub:
        outs = []
        for model in ("model-one", "model-two"):
            out = tmp_path / model
            env = {"WTB_TEST_AGENT_BASE_URL": DEAD_URL, "WTB_TEST_AGENT_MODEL": model}
            proc = _experiment(reference_dir, tmp_path, stub, spec, env, out)
            assert proc.returncode == 3, proc.stderr[-3000:]
            assert "infrastructure errors in 2 sessions" in proc.stderr
            assert "Traceback" not in proc.stderr and "NoneType" not in proc.stderr
            outs.append(out)
        proc = _experiment(
            reference_dir, tmp_path, stub, "openai:gpt-4o-mini", {"WTB_BASE_URL": DEAD_URL}, tmp_path / "openai"
        )
        assert proc.returncode == 3, proc.stderr[-3000:]
        outs.append(tmp_path / "openai")
        for out in outs:
            assert not (out / "result.jsonl").read_text(encoding="utf-8").strip()
            errors = jsonl(out / "errors.jsonl")
            assert [e["id"] for e in errors] == ["wild_tool_bench_0", "wild_tool_bench_1"]
            assert all("connection" in e["error"] and "NoneType" not in e["error"] for e in errors), errors
            assert not (out / "metric.json").exists()
        assert not [f for f in stub.feedback.values() if f.get("run_id")]  # nothing scored per session
        metadata = [e["extra"]["metadata"] for e in stub.sessions.values()]
        agents = [m for m in metadata if m["model"] == spec]
        assert sorted(m["candidate"]["models"] for m in agents) == [["model-one"], ["model-two"]]
        assert all("temperature" not in m["settings"] for m in agents)
        assert FAKE_LANGSMITH_KEY not in json.dumps(metadata)
