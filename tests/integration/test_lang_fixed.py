"""``--lang zh`` and ``--scoring fixed`` together (the two features meet in records, run.json and scoring)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ORACLE = "replay:bench/data/demo_candidates.jsonl#oracle"


def _wtb(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update(PYTHONPATH=str(REPO), LANGSMITH_TRACING="false")
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_a_fixed_run_of_the_chinese_side(tmp_path):
    out = tmp_path / "run"
    done = _wtb("eval", "--model", ORACLE, "--lang", "zh", "--scoring", "fixed", "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "result.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records and all(list(r)[:4] == ["id", "model_name", "language", "scoring"] for r in records)
    assert all(r["language"] == "zh" and r["scoring"] == "fixed" and "candidate" in r for r in records)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["scoring"] == "fixed" and run["settings"]["language"] == "zh"
    assert sorted(p.name for p in out.iterdir() if p.suffix in (".json", ".jsonl")) == [
        "metric.fixed.json",
        "result.jsonl",
        "run.json",
        "score.fixed.jsonl",
        "summary.json",
        "summary_metrics.fixed.json",
    ]
    summary = json.loads((out / "summary_metrics.fixed.json").read_text(encoding="utf-8"))
    assert (summary["language"], summary["scoring"]) == ("zh", "fixed")
    assert json.loads((out / "metric.fixed.json").read_text(encoding="utf-8"))["scoring"] == "fixed"

    # a run directory holds one mode and one side
    other_mode = _wtb("eval", "--model", ORACLE, "--lang", "zh", "--out", str(out), "--no-progress")
    assert other_mode.returncode == 1 and "scoring modes" in other_mode.stderr
    other_side = _wtb("eval", "--model", ORACLE, "--scoring", "fixed", "--out", str(out), "--no-progress")
    assert other_side.returncode == 1 and "zh side" in other_side.stderr

    # rescoring reads the side from the records; reference scoring refuses fixed records
    rescored = _wtb(
        "score",
        "--dataset",
        "bench/data/demo_sessions.jsonl",
        "--results",
        str(out / "result.jsonl"),
        "--out",
        str(tmp_path / "rescored"),
        "--scoring",
        "fixed",
    )
    assert rescored.returncode == 0, rescored.stderr
    assert json.loads((tmp_path / "rescored" / "metric.fixed.json").read_text(encoding="utf-8")) == json.loads(
        (out / "metric.fixed.json").read_text(encoding="utf-8")
    )
    reference = _wtb(
        "score",
        "--dataset",
        "bench/data/demo_sessions.jsonl",
        "--results",
        str(out / "result.jsonl"),
        "--out",
        str(tmp_path / "reference"),
    )
    assert reference.returncode == 1 and "--scoring fixed" in reference.stderr
    wrong_side = _wtb(
        "score",
        "--dataset",
        "bench/data/demo_sessions.jsonl",
        "--results",
        str(out / "result.jsonl"),
        "--out",
        str(tmp_path / "en"),
        "--lang",
        "en",
        "--scoring",
        "fixed",
    )
    assert wrong_side.returncode == 1 and "zh side" in wrong_side.stderr
