"""Adding a metric is one catalog entry plus its computation (docs/metrics.md §8, issue 22 item 4).

A toy metric, the share of tasks whose log holds at least one tool call, is registered with
``wildtoolbench.bench.catalog.register_metric``; ``wtb eval`` on the bundled demo (replay candidate) then shows it
in the terminal table and ``summary_metrics.json["extra"]``, ``wtb report`` in the page, ``report.md``
and ``leaderboard.csv``, and ``metric.json`` is byte for byte the one of the same run without it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.catalog import register_metric, unregister_metric
from wildtoolbench.cli import app
from wildtoolbench.reports import build_report

REPO = Path(__file__).resolve().parents[2]
DEMO = f"replay:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}#demo-model"
KEY = "tool_call_tasks"


def _has_tool_call(task):
    log = task.get("inference_log") or {}
    return any(
        (step.get("inference_output") or {}).get("tool_calls") for name, step in log.items() if name.startswith("step_")
    )


def tool_call_tasks(session, tasks):
    """Tasks of one scored session with at least one tool call in their log, over its tasks."""
    return sum(1 for task in tasks if _has_tool_call(task)), len(tasks)


def _eval(out):
    result = CliRunner().invoke(
        app, ["eval", "--model", DEMO, "--out", str(out), "--no-progress", "--no-trace"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result.output


def _expected_counts(run):
    """The toy metric counted here from score.jsonl, independently of the scorer's accumulator."""
    called = total = 0
    with open(run / "score.jsonl", encoding="utf-8") as handle:
        for line in handle:
            for task in json.loads(line)["results"]:
                total += 1
                for name, step in task["inference_log"].items():
                    if name.startswith("step_") and step["inference_output"].get("tool_calls"):
                        called += 1
                        break
    return called, total


@pytest.fixture
def toy_metric():
    metric = register_metric(KEY, "Tasks with a tool call", tool_call_tasks, short="Calls")
    yield metric
    unregister_metric(KEY)


def test_a_registered_metric_appears_everywhere_but_metric_json(tmp_path, toy_metric):
    unregister_metric(KEY)
    plain_output = _eval(tmp_path / "plain")
    register_metric(toy_metric)
    output = _eval(tmp_path / "with")
    plain, run = tmp_path / "plain", tmp_path / "with"

    # metric.json: the published format, unchanged by the extra metric
    assert (run / "metric.json").read_bytes() == (plain / "metric.json").read_bytes()
    assert "extra" not in json.loads((run / "metric.json").read_text(encoding="utf-8"))

    # summary_metrics.json: the same, plus the extra section last
    called, total = _expected_counts(run)
    assert (called, total) == (18, 24)  # the demo's 24 tasks, 6 of them answered without a call
    summary = json.loads((run / "summary_metrics.json").read_text(encoding="utf-8"))
    assert list(summary)[-1] == "extra"
    assert summary["extra"] == {KEY: {"value": called / total, "correct": called, "total": total}}
    summary.pop("extra")
    assert summary == json.loads((plain / "summary_metrics.json").read_text(encoding="utf-8"))

    # the terminal table: one more row, in the group Extra, after the paper's rows
    assert "Tasks with a tool call" not in plain_output
    row = next(line for line in output.splitlines() if "Tasks with a tool call" in line)
    assert re.search(r"Extra\s+│\s+Tasks with a tool call\s+│\s+75\.00%\s+│\s+18/24", row), row
    assert output.index("Accomplish progress rate (AP)") < output.index("Tasks with a tool call")

    # the report: a leaderboard column after the paper's, in the page, report.md and leaderboard.csv
    build_report([run], tmp_path / "report")
    rows = list(csv.reader(io.StringIO((tmp_path / "report" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert rows[0][-2:] == ["session", KEY]
    ours = [r for r in rows if r[1] == "run"]
    assert [r[-1] for r in ours] == ["75.00"]
    assert {r[-1] for r in rows[1:] if r[1] == "paper"} == {""}  # the paper has no such column
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "Calls = Tasks with a tool call." in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| rank | model | group | Single |"))
    assert header.endswith("| Session acc. | Calls |")
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="wtb-data">(.*?)</script>', page, re.S).group(1))
    main = data["tables"]["main"]
    assert main["keys"][-1] == KEY
    assert main["short"][KEY] == "Calls" and main["labels"][KEY] == "Tasks with a tool call"
    (run_row,) = [r for r in main["rows"] if r["source"] == "run"]
    assert run_row["values"][KEY] == round(called / total * 100, 4)
    assert "orchestration" in data["tables"] and KEY not in data["tables"]["orchestration"]["keys"]
    report_json = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report_json["runs"][0]["extra_metrics"] == {
        KEY: {"value": called / total, "correct": called, "total": total}
    }

    # a report made where the metric is not registered still shows the run's value, under its key
    unregister_metric(KEY)
    build_report([run], tmp_path / "elsewhere")
    rows = list(csv.reader(io.StringIO((tmp_path / "elsewhere" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert rows[0][-1] == KEY and [r[-1] for r in rows if r[1] == "run"] == ["75.00"]
    # and a report of the run without it has the paper's columns only
    build_report([plain], tmp_path / "plain-report")
    header = (tmp_path / "plain-report" / "leaderboard.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.endswith(",task,session")
    assert (
        "extra_metrics"
        not in json.loads((tmp_path / "plain-report" / "report.json").read_text(encoding="utf-8"))["runs"][0]
    )
