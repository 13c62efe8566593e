"""The metric catalog (docs/metrics.md §8): consistent with the published metric dict, the paper's tables
and the readable summary; extra metrics are counted beside the published buckets and never enter them."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from wildtoolbench.bench import catalog
from wildtoolbench.bench.catalog import (
    CATALOG,
    EXTRA_SECTION,
    METRIC_SECTIONS,
    REPORT_TABLES,
    SECTIONS,
    Metric,
    for_metric_dict,
    layer_metric,
    paper_columns,
    register_metric,
    table_metrics,
    unregister_metric,
)
from wildtoolbench.bench.metrics import MetricsAccumulator, compute_metrics, published, readable_metrics, with_extra


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _paper():
    return json.loads(files("wildtoolbench.reports").joinpath("paper_leaderboard.json").read_text(encoding="utf-8"))


@pytest.fixture
def registered():
    """Register metrics for one test and remove them afterwards."""
    keys = []

    def register(*args, **kwargs):
        metric = register_metric(*args, **kwargs)
        keys.append(metric.key)
        return metric

    yield register
    for key in keys:
        unregister_metric(key)


def test_keys_are_unique_and_sections_known():
    keys = [m.key for m in CATALOG]
    assert len(keys) == len(set(keys)) == 34  # 2 overall, 7 + TA task types, 4 positions, 5 subtypes, 6 path, 9 errors
    assert {m.section for m in CATALOG} == set(SECTIONS) - {EXTRA_SECTION}
    assert all(m.count is None and m.section != EXTRA_SECTION for m in CATALOG)
    assert METRIC_SECTIONS == (
        "total_info",
        "task_type_info",
        "layer_info",
        "turn_subtype_info",
        "optimal_info",
        "progress_info",
    )


def test_every_bucket_of_the_published_metric_files_is_in_the_catalog(reference_dir):
    rows = _jsonl(reference_dir / "expected_metrics.jsonl")
    assert len(rows) == 30
    buckets = {m.bucket for m in CATALOG if m.bucket is not None}
    for row in rows:
        metric = row["metric"]
        found = {(section, name) for section in METRIC_SECTIONS for name in metric[section]}
        assert found == buckets, row["candidate"]
        # every bucket is shown once in summary_metrics.json, under the entries of for_metric_dict
        summary_buckets = [m.bucket for m in for_metric_dict(metric) if m.summary is not None]
        assert sorted(summary_buckets) == sorted(found)
        # progress entries read progress buckets, the others accuracy buckets
        for entry in for_metric_dict(metric):
            if entry.bucket is not None:
                bucket = metric[entry.bucket[0]][entry.bucket[1]]
                assert ("rate" in bucket) == (entry.kind == "progress"), entry.key


def test_the_paper_columns_map_to_catalog_entries():
    paper = _paper()
    for table in REPORT_TABLES:
        columns = table_metrics(table)
        assert [c.table[1] for c in columns] == list(range(1, len(columns) + 1))  # numbered 1..n, no gap
        assert list(paper["columns"][table]) == list(paper_columns(table))
        assert {c.paper: c.description for c in columns} == paper["columns"][table]
        for row in paper[table]:
            assert set(row) - {"model", "group"} <= {c.paper for c in columns}, row["model"]
    assert paper_columns("main") == ("single", "multi", "clarify", "chat", "t1", "t2", "t3", "t4", "task", "session")
    assert paper_columns("orchestration") == ("p", "s", "mix", "ta", "ap_s", "ap_mix", "ap", "op_p", "op_mix", "op")
    assert {c.key: c.short for c in table_metrics("orchestration")}["ap_mix"] == "AP Mix"
    assert {c.key: c.label for c in table_metrics("errors")}["wrong_name"] == "Wrong name / missing info"
    not_in_paper = [m.key for m in CATALOG if not m.in_paper]
    assert not_in_paper == [
        "first_turn",
        "subsequent_turn",
        "coreferential_reference",
        "partial_information",
        "long_range_dependency",
    ]


def test_readable_metrics_keep_their_layout(reference_dir):
    row = _jsonl(reference_dir / "expected_metrics.jsonl")[0]
    readable = readable_metrics(row["metric"], language="en")
    assert list(readable) == [
        "model_name",
        "language",
        "task_accuracy",
        "session_accuracy",
        "task_type",
        "task_position",
        "turn_subtype",
        "optimal_path_rate",
        "accomplish_progress_rate",
    ]
    assert list(readable["task_position"]) == ["Task 1", "Task 2", "Task 3", "Task 4"]
    assert list(readable["accomplish_progress_rate"]) == ["Total", "Sequential Multi-Tool", "Mixed Multi-Tool"]
    assert list(readable["task_type"])[1] == "Multi-Tool"
    task = row["metric"]["total_info"]["task"]
    assert readable["task_accuracy"] == {
        "value": task["accuracy"],
        "correct": task["correct_count"],
        "total": task["total_count"],
    }


def test_more_task_positions_than_four_get_entries_after_task_4():
    metric = compute_metrics("m", [])
    metric["layer_info"]["4"] = {"accuracy": 0.5, "correct_count": 1, "total_count": 2}
    keys = [m.key for m in for_metric_dict(metric) if m.section == "task_position"]
    assert keys == ["t1", "t2", "t3", "t4", "t5"]
    assert layer_metric(4).paper is None and layer_metric(4).table is None
    assert readable_metrics(metric)["task_position"]["Task 5"] == {"value": 0.5, "correct": 1, "total": 2}


def _session(tasks):
    return {
        "id": "s1",
        "english_task_types": ["Chat"] * len(tasks),
        "english_turn_subtypes": ["Coreferential Reference"] * (len(tasks) - 1),
        "answer_list": [[] for _ in tasks],
    }


def _first_task_correct(session, tasks):
    return int(tasks[0].get("label") == "correct"), 1


def test_an_extra_metric_is_counted_beside_the_published_dict(registered):
    tasks = [{"label": "correct"}, {"label": "error"}]
    before = compute_metrics("m", [(_session(tasks), tasks)])
    metric = register_metric("first_ok", "First task correct", _first_task_correct)
    try:
        assert catalog.extra_metrics() == (metric,)
        counted = MetricsAccumulator()
        counted.add(_session(tasks), tasks)
        counted.add(_session([{"label": "error"}] * 2), [{"label": "error"}] * 2)
        assert counted.result("m")["total_info"]["task"]["total_count"] == 4
        assert counted.extra() == {"first_ok": {"accuracy": 0.5, "correct_count": 1, "total_count": 2}}
        # the published dict has no extra, unless asked for
        assert compute_metrics("m", [(_session(tasks), tasks)]) == before
        both = compute_metrics("m", [(_session(tasks), tasks)], extra=True)
        assert both["extra"] == {"first_ok": {"accuracy": 1.0, "correct_count": 1, "total_count": 1}}
        assert published(both) == before
        readable = readable_metrics(both)
        assert list(readable)[-1] == "extra"
        assert readable["extra"] == {"first_ok": {"value": 1.0, "correct": 1, "total": 1}}
        assert "extra" not in readable_metrics(before)
    finally:
        unregister_metric("first_ok")
    assert catalog.extra_metrics() == ()


def test_an_extra_metric_with_nothing_counted_is_null(registered):
    registered("steps_left", "Steps left", lambda session, tasks: (0, 0), kind="progress")
    metric = compute_metrics("m", [], extra=True)
    assert metric["extra"] == {"steps_left": {"rate": 0.0, "complete_step": 0, "total_step": 0}}
    assert readable_metrics(metric)["extra"] == {"steps_left": None}
    assert with_extra(published(metric), {}) == published(metric)


def test_extra_metrics_join_the_leaderboard_after_the_paper_columns(registered):
    registered("calls", "Tasks with a call", _first_task_correct, short="Calls")
    registered("hidden", "Not in the report", _first_task_correct, table=None)
    main = [m.key for m in table_metrics("main")]
    assert main[:10] == list(paper_columns("main")) and main[10:] == ["calls"]
    assert [m.key for m in table_metrics("main", ["calls", "from_a_file"])][10:] == ["calls", "from_a_file"]
    assert paper_columns("main") == tuple(main[:10])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("task", "Task", _first_task_correct), "already in the catalog"),
        (("bad key", "Bad", _first_task_correct), "use letters"),
        (("nolabel", "", _first_task_correct), "a label is needed"),
        (("nocount", "No count", None), "count must be a function"),
    ],
)
def test_register_metric_refuses(arguments, message):
    with pytest.raises(ValueError, match=message):
        register_metric(*arguments)


def test_register_metric_refuses_a_metric_outside_the_extra_section():
    with pytest.raises(ValueError, match="extra section"):
        register_metric(Metric("mine", "Mine", "Mine", "overall", ("total_info", "task"), count=_first_task_correct))
    with pytest.raises(ValueError, match="kind"):
        register_metric("share_kind", "Share", _first_task_correct, kind="share")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="table"):
        register_metric("where", "Where", _first_task_correct, table="nowhere")
    assert catalog.extra_metrics() == ()


class _EntryPoint:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def load(self):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


def test_installed_packages_add_metrics_through_entry_points(monkeypatch):
    from importlib import metadata

    shipped = Metric("shipped", "Shipped metric", "Shipped", EXTRA_SECTION, count=_first_task_correct)
    found = {catalog.METRIC_ENTRY_POINT_GROUP: [_EntryPoint("shipped", shipped)]}
    monkeypatch.setattr(metadata, "entry_points", lambda group: found.get(group, []))
    monkeypatch.setattr(catalog, "_entry_points_loaded", False)
    try:
        (metric,) = catalog.extra_metrics()
        assert metric.key == "shipped" and metric.summary == (EXTRA_SECTION, "shipped")
        assert catalog.extra_metrics() == (metric,)  # read once
    finally:
        unregister_metric("shipped")
    found[catalog.METRIC_ENTRY_POINT_GROUP] = [_EntryPoint("broken", ImportError("no module named x"))]
    monkeypatch.setattr(catalog, "_entry_points_loaded", False)
    with pytest.raises(ValueError, match="entry point 'broken' of wildtoolbench.metrics: cannot load"):
        catalog.extra_metrics()
