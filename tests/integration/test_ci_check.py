"""`.ci/check_local_run.py` accepts what `wtb eval` writes today and rejects a malformed folder.

CI runs the checker on the real local model's outputs; checking it here on a replay run keeps
the two in step (the record shape grew a ``usage`` key once and only CI noticed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / ".ci" / "check_local_run.py"
DEMO = REPO / "bench" / "data" / "demo_candidates.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def test_checker_accepts_a_replay_eval_and_rejects_a_broken_one(tmp_path):
    out = tmp_path / "eval"
    run = _run(
        "-m",
        "wildtoolbench.cli",
        "eval",
        "--model",
        f"replay:{DEMO}#oracle",
        "--limit",
        "2",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    )
    assert run.returncode == 0, run.stderr
    ok = _run(str(CHECKER), "eval", str(out), "--sessions", "2", "--model-name", "oracle")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 result record(s), 8 tasks, task accuracy 8/8" in ok.stdout
    assert (
        _run(str(CHECKER), "eval", str(out), "--sessions", "2", "--model-name", "oracle", "--all-correct").returncode
        == 0
    )

    records = [json.loads(line) for line in (out / "result.jsonl").read_text().splitlines()]
    del records[0]["result"][0]["is_optimal"]
    (out / "result.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    bad = _run(str(CHECKER), "eval", str(out), "--sessions", "2", "--model-name", "oracle")
    assert bad.returncode == 1
    assert "result.jsonl:1.result[0]: missing is_optimal" in bad.stdout + bad.stderr


def test_checker_all_correct_rejects_a_run_with_wrong_tasks(tmp_path):
    out = tmp_path / "eval"
    run = _run(
        "-m",
        "wildtoolbench.cli",
        "eval",
        "--model",
        f"replay:{DEMO}#demo-model",
        "--limit",
        "2",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    )
    assert run.returncode == 0, run.stderr
    metric = json.loads((out / "metric.json").read_text())
    correct = metric["total_info"]["task"]["correct_count"]
    assert correct < 8
    assert _run(str(CHECKER), "eval", str(out), "--sessions", "2", "--model-name", "demo-model").returncode == 0
    strict = _run(str(CHECKER), "eval", str(out), "--sessions", "2", "--model-name", "demo-model", "--all-correct")
    assert strict.returncode == 1
    assert f"metric.json: {correct} of 8 tasks correct, expected all" in strict.stderr
