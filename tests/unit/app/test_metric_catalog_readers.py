"""The readers of the metric catalog in ``wtb`` (docs/metrics.md §8): the terminal table, the LangSmith
summary feedback and the report's table values show the catalog's entries and the extra metrics."""

from __future__ import annotations

import pytest

from wildtoolbench.bench.catalog import register_metric, unregister_metric
from wildtoolbench.bench.metrics import compute_metrics
from wildtoolbench.common.table import metric_rows
from wildtoolbench.reports.tables import metric_percent, run_values, table_keys
from wildtoolbench.tracing.evaluators import metric_feedback


def _scored():
    session = {
        "id": "s1",
        "english_task_types": ["Single-Tool", "Sequential Multi-Tool", "Clarify", "Chat"],
        "english_turn_subtypes": ["Coreferential Reference", "Partial Information", "Long-Range Dependency"],
        "answer_list": [[{}], [{}, {}, {}], [{}], [{}]],
    }
    tasks = [
        {"label": "correct", "inference_log": {"step_0": {}}},
        {"label": "error", "inference_log": {"step_0": {}, "step_1": {}}},
        {"label": "correct", "inference_log": {"step_0": {}}},
        {"label": "correct", "inference_log": {"step_0": {}}},
    ]
    return [(session, tasks)]


@pytest.fixture
def steps_metric():
    metric = register_metric(
        "logged_steps", "Logged steps per gold node", lambda s, tasks: (5, 6), short="Steps", kind="progress"
    )
    yield metric
    unregister_metric("logged_steps")


def test_the_table_rows_come_from_the_catalog():
    rows = list(metric_rows(compute_metrics("m", _scored())))
    assert rows[0] == ("Overall", "Task accuracy", "75.00%", "3/4")
    assert rows[1] == ("Overall", "Session accuracy", "0.00%", "0/1")
    assert ("Task type", "Parallel Multi-Tool", "n/a", "0 tasks") in rows
    assert ("Task position", "Task 2", "0.00%", "0/1") in rows
    assert rows[-2] == ("Path", "Optimal path rate (OP)", "n/a", "0 tasks")
    assert rows[-1] == ("Path", "Accomplish progress rate (AP)", "66.67%", "2/3 steps")
    assert len(rows) == 20


def test_extra_metrics_reach_the_table_the_feedback_and_the_report(steps_metric):
    metric = compute_metrics("m", _scored(), extra=True)
    assert list(metric_rows(metric))[-1] == ("Extra", "Logged steps per gold node", "83.33%", "5/6 steps")
    feedback = {item["key"]: item for item in metric_feedback(metric)}
    assert feedback["extra/logged_steps"] == {"key": "extra/logged_steps", "score": 5 / 6, "comment": "5/6 steps"}
    assert feedback["accomplish_progress_rate"] == {"key": "accomplish_progress_rate", "score": 2 / 3}
    assert feedback["accuracy/Multi-Tool"]["comment"] == "0/1 tasks"
    assert len(feedback) == 12
    readable = {"logged_steps": {"value": 5 / 6, "completed_steps": 5, "gold_steps": 6}}
    values = run_values(metric, "main", readable)
    assert list(values)[-1] == "logged_steps" and values["logged_steps"] == pytest.approx(83.3333, abs=1e-3)
    assert values["t2"] == 0.0 and values["chat"] == 100.0
    assert run_values(metric, "main", {})["logged_steps"] is None  # a run scored without it
    assert metric_percent(metric, steps_metric, {"logged_steps": None}) is None
    assert "logged_steps" not in table_keys("orchestration")


def test_feedback_without_extra_metrics_is_the_eleven_of_the_catalog():
    keys = [item["key"] for item in metric_feedback(compute_metrics("m", _scored()))]
    assert keys == [
        "task_accuracy",
        "session_accuracy",
        "accuracy/Single-Tool",
        "accuracy/Multi-Tool",
        "accuracy/Parallel Multi-Tool",
        "accuracy/Sequential Multi-Tool",
        "accuracy/Mixed Multi-Tool",
        "accuracy/Clarify",
        "accuracy/Chat",
        "optimal_path_rate",
        "accomplish_progress_rate",
    ]
