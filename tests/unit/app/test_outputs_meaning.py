"""Outputs that say what they mean (issue 14 part 4): empty metric groups are ``n/a`` / ``null`` (and
still 0.0 in the reference-format ``metric.json``), and the end-of-run line carries no second accuracy."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.bench.metrics import compute_metrics, readable_metrics
from wildtoolbench.common.table import render_metric_table
from wildtoolbench.evaluation.accounting_text import run_summary_line
from wildtoolbench.runner import RunSummary

REPO = Path(__file__).resolve().parents[3]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_"))}
    return dict(env, PYTHONPATH=str(REPO), LANGSMITH_TRACING="false", **extra)


def _wtb(*args: str, umask: int = 0o022, cwd: Path = REPO, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=cwd,
        env=_env(**extra),
        capture_output=True,
        text=True,
        timeout=300,
        umask=umask,
        stdin=subprocess.DEVNULL,
    )


# --------------------------------------------------------------------------- empty groups


def test_an_empty_group_is_na_in_the_table_null_in_the_summary_and_zero_in_metric_json(tmp_path):
    out = tmp_path / "run"
    result = _wtb(
        "eval",
        "--model",
        f"replay:{CANDIDATES_PATH}#oracle",
        "--ids",
        "0",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    )
    assert result.returncode == 0, result.stderr
    # Session 0: Single-Tool, Clarify, Parallel Multi-Tool, Chat: no Sequential or Mixed task, so no progress steps.
    rows = {line.split("│")[2].strip(): line for line in result.stdout.splitlines() if line.count("│") == 5}
    assert "n/a" in rows["Sequential Multi-Tool"] and "0 tasks" in rows["Sequential Multi-Tool"]
    assert "n/a" in rows["Accomplish progress rate (AP)"] and "0 steps" in rows["Accomplish progress rate (AP)"]
    assert "100.00%" in rows["Parallel Multi-Tool"] and "1/1" in rows["Parallel Multi-Tool"]
    assert not re.search(r"(?<![0-9])0\.00%", result.stdout) and " 0/0" not in result.stdout

    metric_text = (out / "metric.json").read_text(encoding="utf-8")
    metric = json.loads(metric_text)
    assert metric_text == json.dumps(metric, ensure_ascii=False, indent=2) + "\n"  # the reference format, unchanged
    assert metric["task_type_info"]["Sequential Multi-Tool"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 0}
    assert metric["progress_info"]["Total"] == {"rate": 0.0, "complete_step": 0, "total_step": 0}

    readable = json.loads((out / "summary_metrics.json").read_text(encoding="utf-8"))
    assert readable == readable_metrics(metric, language="en")
    assert readable["model_name"] == "oracle" and readable["language"] == "en"
    assert readable["task_accuracy"] == {"value": 1.0, "correct": 4, "total": 4}
    assert readable["task_type"]["Sequential Multi-Tool"] is None
    assert readable["task_type"]["Parallel Multi-Tool"] == {"value": 1.0, "correct": 1, "total": 1}
    assert readable["accomplish_progress_rate"]["Total"] is None
    assert readable["optimal_path_rate"]["Total"] == {"value": 1.0, "correct": 1, "total": 1}
    assert list(readable["task_position"]) == ["Task 1", "Task 2", "Task 3", "Task 4"]


def test_readable_metrics_of_a_progress_group():
    session = json.loads(SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[1])  # Mixed, ST, Parallel, Sequential
    tasks = [{"label": "correct", "is_optimal": False, "inference_log": {"step_0": {}, "step_1": {}}}] * 4
    metric = compute_metrics("m", [(session, tasks)])
    readable = readable_metrics(metric)
    total_steps = len(session["answer_list"][0]) + len(session["answer_list"][3])
    assert readable["accomplish_progress_rate"]["Total"] == {
        "value": 4 / total_steps,
        "completed_steps": 4,
        "gold_steps": total_steps,
    }
    assert readable["task_type"]["Clarify"] is None and readable["turn_subtype"]["First Turn"]["total"] == 1
    text = render_metric_table(metric, language="zh")
    assert "WildToolBench: m (zh)" in text and "n/a" in text


# --------------------------------------------------------------------------- the end-of-run line


def test_the_run_line_has_no_second_accuracy(tmp_path):
    summary = RunSummary(
        result_path=tmp_path / "result.jsonl",
        selected=6,
        skipped=2,
        evaluated=4,
        tasks=24,
        tasks_right_tool_names=20,
        wall_time=1.25,
    )
    line = run_summary_line(summary, "zh")
    assert line == f"6 sessions: 4 evaluated, 2 already done; zh side; 1.2s -> {tmp_path / 'result.jsonl'}"
    counts = line.replace(str(tmp_path), "")  # the temporary path may hold digits (pytest-124)
    assert "20" not in counts and "24" not in counts

    result = _wtb(
        "eval",
        "--model",
        f"replay:{CANDIDATES_PATH}#demo-model",
        "--out",
        str(tmp_path / "run"),
        "--no-progress",
        "--no-trace",
    )
    assert result.returncode == 0, result.stderr
    assert "6 sessions: 6 evaluated, 0 already done; en side;" in result.stderr
    assert "right actions" not in result.stderr and "tasks correct" not in result.stderr
    assert "16/24" in result.stdout  # task accuracy: in the table, once
