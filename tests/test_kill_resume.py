"""SIGKILL in the middle of ``wtb eval``, then the same command again (resume).

The candidate is slowed down with ``WTB_REPLAY_DELAY`` (seconds per model
request, read by the replay provider) so that the kill lands while sessions
are in flight. After the re-run every session is in result.jsonl exactly once
and the records (and, with scoring, the metrics) equal those of an
uninterrupted run.
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

from typer.testing import CliRunner

from bench.cli import app
from tests.test_evaluation_reference import normalise

REPO = Path(__file__).resolve().parents[1]
SESSIONS = ",".join(str(i) for i in range(10))


def _lines(path):
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def test_sigkill_then_resume(reference_dir, tmp_path):
    dataset = reference_dir / "sessions.jsonl"
    model = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    out = tmp_path / "run"
    command = [
        sys.executable, "-m", "bench.cli", "eval", "--dataset", str(dataset), "--model", model,
        "--out", str(out), "--ids", SESSIONS, "--concurrency", "2", "--no-progress",
    ]  # fmt: skip
    slow = dict(os.environ, WTB_REPLAY_DELAY="0.15")
    process = subprocess.Popen(command, cwd=REPO, env=slow, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a timing assertion
        while len(_lines(out / "result.jsonl")) < 3 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "the slowed run finished before it could be killed"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    interrupted = _lines(out / "result.jsonl")
    assert 3 <= len(interrupted) < 10

    resumed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    records = [json.loads(line) for line in _lines(out / "result.jsonl")]
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(10)]
    assert f"{len(interrupted)} already done" in resumed.stderr

    reference = tmp_path / "uninterrupted"
    uninterrupted = CliRunner().invoke(app, [*command[3:9], str(reference), *command[10:]], catch_exceptions=False)
    assert uninterrupted.exit_code == 0, uninterrupted.output
    expected = [json.loads(line) for line in _lines(reference / "result.jsonl")]
    assert [normalise(r["result"]) for r in records] == [normalise(r["result"]) for r in expected]
    if importlib.util.find_spec("bench.scoring") is not None:
        assert json.loads((out / "metric.json").read_text()) == json.loads((reference / "metric.json").read_text())
