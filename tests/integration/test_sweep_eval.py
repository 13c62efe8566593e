"""Issue 42: many models in one ``wtb eval`` (docs/guides/sweeps.md): a sweep of three models writes what three
separate runs write, and a sweep killed twice and resumed finishes with every model exact and, with the
cache, no request that was answered sent again."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.integration.test_scale_eval import _records, eval_args
from tests.support.counting_stub import CountingServer
from wildtoolbench.cli import app
from wildtoolbench.runner import load_dataset

REPO = Path(__file__).resolve().parents[2]


def _invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


# The first 8 reference sessions: a sweep is compared file for file with separate runs of the same sessions,
# which needs no more (wild_tool_bench_3, the one task the oracle fails, is among them). Was all 24.
SWEEP = ("--limit", "8", "--trials", "2")


def _published_accuracy(reference_dir: Path, candidate: str, sessions: int) -> tuple[str, str]:
    """Task and session accuracy of ``candidate``'s published scores on the first ``sessions`` sessions, as the
    sweep table prints them (``"96.88%"``)."""
    rows = [json.loads(line) for line in (reference_dir / "expected_scores.jsonl").read_text("utf-8").splitlines()]
    ids = [json.loads(line)["id"] for line in (reference_dir / "sessions.jsonl").read_text("utf-8").splitlines()]
    labels = {
        r["session_id"]: [t["label"] == "correct" for t in r["results"]] for r in rows if r["candidate"] == candidate
    }
    tasks = [ok for i in ids[:sessions] for ok in labels[i]]
    whole = [all(labels[i]) for i in ids[:sessions]]
    return f"{100 * sum(tasks) / len(tasks):.2f}%", f"{100 * sum(whole) / len(whole):.2f}%"


def test_a_sweep_of_three_models_equals_three_separate_runs(reference_dir, tmp_path):
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#"
    sweep_file = tmp_path / "models.toml"
    sweep_file.write_text(f'[[model]]\nmodel = "{spec}suboptimal"\nname = "third"\nconcurrency = 2\n', encoding="utf-8")
    out = tmp_path / "sweep"
    args = eval_args(reference_dir, out, *SWEEP, "--cache", str(tmp_path / "cache"), candidate="oracle")
    output = _invoke(*args, "--model", f"{spec}noisy", "--sweep", str(sweep_file))
    assert sorted(p.name for p in out.iterdir()) == ["noisy", "oracle", "report", "third"]
    assert "WildToolBench sweep" in output and (out / "report" / "index.html").is_file()
    for candidate, folder in (("oracle", "oracle"), ("noisy", "noisy"), ("suboptimal", "third")):
        alone = tmp_path / f"alone-{candidate}"
        _invoke(*eval_args(reference_dir, alone, *SWEEP, candidate=candidate))
        for name in ("metric.json", "trials.json", "trials_summary.json"):  # score.jsonl keeps the latencies
            assert (out / folder / name).read_text() == (alone / name).read_text(), (candidate, name)
        assert _records(out / folder) == _records(alone)
    settings = json.loads((out / "third" / "run.json").read_text())
    assert settings["settings"]["concurrency"] == 2  # the entry's own setting
    table = output.split("WildToolBench sweep")[1]
    oracle_row = next(line for line in table.splitlines() if "oracle" in line)
    task, session = _published_accuracy(reference_dir, "oracle", 8)
    assert (task, session) == ("96.88%", "87.50%")  # 31 of 32 tasks, 7 of 8 sessions
    assert task in oracle_row and session in oracle_row


def test_a_sweep_refuses_what_it_cannot_run(reference_dir, tmp_path):
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#"
    two = ("--model", f"{spec}oracle", "--model", f"{spec}noisy")
    base = ("eval", "--dataset", str(reference_dir / "sessions.jsonl"), "--no-progress")
    assert "give --out" in _invoke(*base, *two, code=2)
    same = _invoke(*base, "--out", str(tmp_path / "o"), "--model", f"{spec}oracle", "--model", f"{spec}oracle", code=2)
    assert "[sweep.unique]" in same
    refused = _invoke(*base, *two, "--out", str(tmp_path / "o"), "--until-decided", code=2)
    assert "cannot be combined with a sweep" in refused
    assert not (tmp_path / "o").exists()


def _oracle_script(reference_dir: Path) -> dict[str, list]:
    lines = (reference_dir / "candidates.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return {r["session_id"]: r["responses"] for r in rows if r["candidate"] == "oracle"}


@pytest.mark.slow
def test_a_killed_sweep_resumes_exact_and_pays_each_request_once(reference_dir, tmp_path):
    """Three models, each on its own loopback endpoint (given in the sweep file): SIGKILL twice mid-sweep, then the
    same command. Every model's metric is the oracle's; each endpoint received each request of the run once, but
    for those in flight at a kill (their replies never reached the cache)."""
    sessions, script = load_dataset(reference_dir / "sessions.jsonl"), _oracle_script(reference_dir)
    out, cache = tmp_path / "sweep", tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "OPENAI_"))}
    env.update(OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    servers = [CountingServer(sessions, script, latency=0.02) for _ in range(3)]
    for server in servers:
        server.__enter__()
    try:
        sweep_file = tmp_path / "models.toml"
        sweep_file.write_text(
            "".join(
                f'[[model]]\nmodel = "openai:stub-{n}"\nbase_url = "{s.base_url}"\n' for n, s in enumerate(servers)
            ),
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "wildtoolbench.cli", "eval", "--no-progress", "--no-trace", "--no-preflight"]
        command += ["--dataset", str(reference_dir / "sessions.jsonl"), "--out", str(out), "--cache", str(cache)]
        command += ["--sweep", str(sweep_file), "--concurrency", "3"]
        rng = random.Random(42)
        total = lambda: sum(len(s.attempts) for s in servers)  # noqa: E731
        for _ in range(2):
            process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wanted = total() + rng.randint(60, 150)
            deadline = time.monotonic() + 120  # a bound on waiting, not a timing assertion
            while total() < wanted and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        assert total() < 3 * 209
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    expected = json.loads(
        next(line for line in open(reference_dir / "expected_metrics.jsonl") if '"candidate": "oracle"' in line)
    )["metric"]
    repeats = 0
    for n, server in enumerate(servers):
        keys = [(session, index) for session, index, _ in server.attempts]
        assert len(set(keys)) == 209  # every request of the run reached this model's endpoint
        repeats += len(keys) - len(set(keys))
        metric = json.loads((out / f"stub-{n}" / "metric.json").read_text())
        assert metric["total_info"] == expected["total_info"]
        assert len((out / f"stub-{n}" / "result.jsonl").read_text().splitlines()) == 24
    assert repeats <= 2 * 3  # re-sent: only what was in flight at the two kills (3 session-trials at once)
