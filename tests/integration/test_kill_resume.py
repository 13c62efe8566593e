"""SIGKILL in the middle of ``wtb eval``, then the same command again (resume); the directory lock.

The candidate is slowed down with ``WTB_REPLAY_DELAY`` (seconds per model
request, read by the replay provider) so that the kills land while sessions
are in flight. The run is killed three times at seeded random points and
resumed each time; in the end every session is in result.jsonl exactly once
and the records (modulo latency and wall time) and the metrics equal those of
an uninterrupted run.
"""

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
from filelock import FileLock
from typer.testing import CliRunner

from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.cli import app
from wildtoolbench.runner import LOCK_FILE

REPO = Path(__file__).resolve().parents[2]
SESSIONS = 12
IDS = ",".join(str(i) for i in range(SESSIONS))


def _lines(path):
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _comparable(record):
    usage = {k: v for k, v in record["usage"].items() if k != "wall_time"}
    return record["id"], record["model_name"], normalise(record["result"]), usage


def _command(dataset, model, out):
    return [
        sys.executable,
        "-m",
        "wildtoolbench.cli",
        "eval",
        "--dataset",
        str(dataset),
        "--model",
        model,
        "--out",
        str(out),
        "--ids",
        IDS,
        "--concurrency",
        "2",
        "--no-progress",
    ]


def _run_and_kill(command, out, rng):
    """Start the run, wait until 1-3 more sessions are written, then a random fraction of a request more, SIGKILL."""
    before = len(_lines(out / "result.jsonl"))
    wanted = before + rng.randint(1, 3)
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env=dict(os.environ, WTB_REPLAY_DELAY="0.05"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a timing assertion
        while len(_lines(out / "result.jsonl")) < wanted and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.05))
        killed = process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return killed


def test_three_sigkills_then_resume_equal_an_uninterrupted_run(reference_dir, tmp_path):
    dataset = reference_dir / "sessions.jsonl"
    model = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    out = tmp_path / "run"
    command = _command(dataset, model, out)
    rng = random.Random(20260406)
    kills = [_run_and_kill(command, out, rng) for _ in range(3)]
    assert kills.count(True) >= 2, "the slowed run finished before it could be killed"
    interrupted = _lines(out / "result.jsonl")
    assert len(interrupted) < SESSIONS
    # never a duplicate, and a torn last line (if a kill hit an append) is all that can be incomplete
    complete = [json.loads(line) for line in interrupted[:-1]]
    assert len({r["id"] for r in complete}) == len(complete)

    resumed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    records = [json.loads(line) for line in _lines(out / "result.jsonl")]
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(SESSIONS)]
    assert "already done" in resumed.stderr

    reference = tmp_path / "uninterrupted"
    uninterrupted = CliRunner().invoke(app, [*command[3:9], str(reference), *command[10:]], catch_exceptions=False)
    assert uninterrupted.exit_code == 0, uninterrupted.output
    expected = [json.loads(line) for line in _lines(reference / "result.jsonl")]
    assert [_comparable(r) for r in records] == [_comparable(r) for r in expected]
    assert json.loads((out / "metric.json").read_text()) == json.loads((reference / "metric.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["selected_sessions"] == json.loads((reference / "summary.json").read_text())["selected_sessions"]


def test_a_second_run_on_the_same_directory_is_refused(reference_dir, tmp_path):
    dataset = reference_dir / "sessions.jsonl"
    model = f"replay:{reference_dir / 'candidates.jsonl'}#oracle"
    tmp_path.mkdir(exist_ok=True)
    with FileLock(str(tmp_path / LOCK_FILE)):  # as held by a run in progress (another process)
        refused = subprocess.run(
            _command(dataset, model, tmp_path), cwd=REPO, capture_output=True, text=True, timeout=120
        )
    assert refused.returncode == 1
    assert "another `wtb eval` is already writing to" in refused.stderr and "use another --out" in refused.stderr
    assert not (tmp_path / "result.jsonl").exists()
    # once the lock is free the same command runs
    done = subprocess.run(_command(dataset, model, tmp_path), cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(_lines(tmp_path / "result.jsonl")) == SESSIONS


def _default_sigint() -> None:
    """In the child before exec: SIGINT as in a terminal. A shell runs background jobs (``cmd &``, as CI
    may run this suite) with SIGINT ignored, and an ignored signal stays ignored across exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_prints_a_resume_hint_and_the_rerun_completes(tmp_path, signum):
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "wildtoolbench.cli",
        "eval",
        "--model",
        "replay:bench/data/demo_candidates.jsonl#oracle",
        "--out",
        str(out),
        "--concurrency",
        "1",
        "--no-progress",
    ]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env=dict(os.environ, WTB_REPLAY_DELAY="0.2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a timing assertion
        while not _lines(out / "result.jsonl") and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be interrupted"
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    kept = len(_lines(out / "result.jsonl"))
    assert process.returncode == 130, stderr
    assert 1 <= kept < 6
    assert f"interrupted: {kept} of 6 sessions are in {out / 'result.jsonl'}; run the same command again" in stderr
    assert not (out / "metric.json").exists()

    rerun = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"6 sessions: {6 - kept} evaluated, {kept} already done" in rerun.stderr
    ids = [json.loads(line)["id"] for line in _lines(out / "result.jsonl")]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 6
