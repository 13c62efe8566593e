"""One numbering of tasks and steps in every human-facing output (docs/terms.md §1.2): the second task of
``wild_tool_bench_0`` (``task_idx`` 1), failed by the demo model at its first step, is "task 2" and "step 1"
in the terminal, report.md, the report page's script, tasks.csv, wtb diff, wtb gate and gate.md, wtb audit
and wtb review; the files keep ``task_idx`` 1 and ``step_0``."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
CANDIDATES = REPO / "bench" / "data" / "demo_candidates.jsonl"
SESSION = "wild_tool_bench_0"


def _wtb(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, [*args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("numbering")
    for name, candidate in (("a", "oracle"), ("b", "demo-model")):
        out = _wtb("eval", "--model", f"replay:{CANDIDATES}#{candidate}", "--out", str(base / name),
                   "--no-progress", "--no-trace")  # fmt: skip
        (base / f"{name}.out").write_text(out)
    _wtb("report", str(base / "a"), str(base / "b"), "--out", str(base / "report"))
    return base


def test_the_files_keep_the_published_indices(runs):
    record = next(json.loads(line) for line in (runs / "b" / "score.jsonl").open() if SESSION in line)
    assert record["results"][1]["label"] == "error" and "step_0" in record["results"][1]["inference_log"]


def test_terminal_table_counts_tasks_from_one(runs):
    out = (runs / "b.out").read_text()
    assert re.search(r"Task 1 .*\n.*Task 2 .*\n.*Task 3 .*\n.*Task 4 ", out) and "Task 0" not in out


def test_report_md_csv_and_page_say_task_2(runs):
    markdown = (runs / "report" / "report.md").read_text()
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {SESSION}") and "traj/r1/0/1)" in line)
    assert "[task 2](index.html#traj/r1/0/1)" in line and "| 1 |" in line  # failing step 1
    with open(runs / "report" / "tasks.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["session_id"] == SESSION and r["run"] == "r1"]
    assert [r["task"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[1]["label"] == "error" and rows[1]["failing_step"] == "1" and rows[1]["trajectory"].endswith("/0/1")
    script = (REPO / "wildtoolbench" / "reports" / "assets" / "report.js").read_text()
    assert "task ' + (t + 1)" in script and "<b>step ' + (step.i + 1)" in script and "'step ' + (t[7] + 1)" in script


def test_diff_gate_and_gate_md_say_task_2(runs):
    diff = _wtb("diff", str(runs / "a"), str(runs / "b"))
    assert f"{SESSION} task 2: correct -> error (regressed); first divergent step: A 1, B 1" in diff
    gate = _wtb("gate", str(runs / "b"), "--baseline", str(runs / "a"), "--markdown", str(runs / "gate.md"), code=1)
    assert f"{SESSION} task 2:" in gate
    assert f"| {SESSION} | 2 | regressed | 1, 1 |" in (runs / "gate.md").read_text()


def test_audit_says_task_2(runs):
    out = _wtb("audit", str(DEMO), "--runs", str(runs / "b"), "--json", str(runs / "audit.jsonl"))
    found = [json.loads(line) for line in (runs / "audit.jsonl").open()]
    failed = [f for f in found if f["id"] == SESSION and f["kind"] == "failed_by_all"]
    assert [f["task"] for f in failed] == [1, 2]  # the JSON keeps task_idx
    assert "step 1: action name not in candidate_answer_function_list" in failed[0]["message"]
    assert re.search(rf"{SESSION}\s*│\s*2\s*│\s*failed_by_all", out)


def test_review_says_task_2(tmp_path):
    from wildtoolbench.review.app import ReviewConfig, create_app
    from wildtoolbench.review.command import open_store

    store, _ = open_store(DEMO, tmp_path / "r.sqlite3", language="en", tasks=None)
    client = TestClient(create_app(ReviewConfig(store)), base_url="http://127.0.0.1:8765")
    page = client.get("/session/0").text
    assert re.search(r'id="t1" data-task="1"><div class="task-main"><h2>Task 2 ', page)
    assert "Task 0" not in page and "<h2>Task 4 " in page
    queue = client.get("/").text
    assert 'title="task 1: open">1</span>' in queue and 'title="task 0' not in queue
