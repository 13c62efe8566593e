"""Streaming scoring (issue 15): ``score_run`` reads the dataset and the result file one line at a time and
gives the outputs and the problems of a whole-file pass; the dataset index and the streaming loaders
agree with the whole-file loaders."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from tests.support.session_factory import make_session
from wildtoolbench.bench.metrics import MetricsAccumulator, compute_metrics
from wildtoolbench.bench.schema import DatasetError, index_sessions, load_sessions, parse_jsonl_file, task_counts
from wildtoolbench.bench.scoring import score_session
from wildtoolbench.common.run_folder import METRIC_FILE, SCORE_FILE, SUMMARY_METRICS_FILE
from wildtoolbench.scoring.results import load_result_records, scan_result_records
from wildtoolbench.scoring.run import score_run
from wildtoolbench.scoring.stream import score_records


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _copies(reference_dir: Path, tmp_path: Path, copies: int, candidate: str = "noisy") -> tuple[Path, Path]:
    """``copies`` copies of the fixture sessions (ids ``wild_tool_bench_<copy * 100 + n>``) and of the candidate's records."""
    sessions = _jsonl(reference_dir / "sessions.jsonl")
    records = {
        r["session_id"]: r for r in _jsonl(reference_dir / "expected_results.jsonl") if r["candidate"] == candidate
    }
    dataset_rows, result_rows = [], []
    for copy in range(copies):
        for session in sessions:
            new_id = f"wild_tool_bench_{copy * 100 + int(session['id'].rsplit('_', 1)[1])}"
            dataset_rows.append({**session, "id": new_id})
            result_rows.append({"id": new_id, "model_name": candidate, "result": records[session["id"]]["result"]})
    return _write(tmp_path / "sessions.jsonl", dataset_rows), _write(tmp_path / "result.jsonl", result_rows)


def _whole_file_outputs(dataset: Path, results: Path) -> tuple[str, str]:
    """score.jsonl and metric.json text as the whole-file pass computes them (score_records over loaded lists)."""
    sessions = {session.id: session for session in load_sessions(dataset)}
    _, lines, metric = score_records(sessions, load_result_records(results), results_file=str(results))
    score_text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    return score_text, json.dumps(metric, ensure_ascii=False, indent=2) + "\n"


@pytest.mark.shared
def test_streamed_outputs_equal_the_whole_file_pass_in_any_record_order(reference_dir, tmp_path):
    dataset, results = _copies(reference_dir, tmp_path, 3)
    expected_scores, expected_metric = _whole_file_outputs(dataset, results)
    shuffled = _write(tmp_path / "shuffled.jsonl", list(reversed(results.read_text(encoding="utf-8").splitlines())))
    for name, path in (("sorted", results), ("shuffled", shuffled)):
        out = tmp_path / name
        score_run(dataset, path, out)
        assert (out / SCORE_FILE).read_text(encoding="utf-8") == expected_scores
        assert (out / METRIC_FILE).read_text(encoding="utf-8") == expected_metric
        assert json.loads((out / SUMMARY_METRICS_FILE).read_text(encoding="utf-8"))["task_accuracy"]["total"] == 288
        assert sorted(p.name for p in out.iterdir()) == [
            METRIC_FILE,
            SCORE_FILE,
            SUMMARY_METRICS_FILE,
        ]  # no temp file left
        assert (out / SCORE_FILE).stat().st_mode & 0o777 == (out / METRIC_FILE).stat().st_mode & 0o777


def _traced_peak(dataset: Path, results: Path, out: Path) -> int:
    tracemalloc.start()
    try:
        score_run(dataset, results, out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.shared
def test_score_run_memory_does_not_grow_with_the_result_file(reference_dir, tmp_path):
    """Traced peaks (Python allocations: deterministic): a result file 4 times longer does not need
    more memory, and the peak stays far below the file's size (the records are never all held)."""
    small, large = tmp_path / "small", tmp_path / "large"
    small.mkdir(), large.mkdir()
    small_files, large_files = _copies(reference_dir, small, 2), _copies(reference_dir, large, 8)
    score_run(*small_files, small / "warm")  # imports and caches before measuring
    small_peak = _traced_peak(*small_files, small / "out")
    large_peak = _traced_peak(*large_files, large / "out")
    size = large_files[1].stat().st_size
    assert size > 3_000_000
    assert large_peak < small_peak * 1.5, (small_peak, large_peak)
    assert large_peak < size / 4, (large_peak, size)
    assert len(_jsonl(large / "out" / SCORE_FILE)) == 192


def test_index_sessions_agrees_with_load_sessions(tmp_path):
    dataset = _write(tmp_path / "d.jsonl", [make_session("wild_tool_bench_2"), "", make_session("wild_tool_bench_10")])
    loaded = load_sessions(dataset)
    index = index_sessions(dataset)
    assert list(index) == [s.id for s in loaded] and len(index) == 2
    assert [index[s.id] for s in loaded] == [s.to_dict() for s in loaded]
    assert index.source("wild_tool_bench_10") == (str(dataset), 3) == loaded[1].source
    assert "wild_tool_bench_3" not in index and index.get("wild_tool_bench_3") is None
    assert index.language_issues("en") == [] and index.language_issues("zh") == []
    with pytest.raises(ValueError, match="language must be one of"):
        index.language_issues("fr")


def test_index_sessions_reports_what_load_sessions_reports(tmp_path):
    broken = make_session("wild_tool_bench_1")
    broken["english_answer_list"][0] = []
    rows = [make_session(), "{oops", "[1]", broken, make_session(), b"\xe9\n"]
    dataset = tmp_path / "d.jsonl"
    dataset.write_bytes(
        b"".join(
            r if isinstance(r, bytes) else (json.dumps(r) if isinstance(r, dict) else r).encode() + b"\n" for r in rows
        )
    )
    with pytest.raises(DatasetError) as loaded:
        load_sessions(dataset)
    with pytest.raises(DatasetError) as indexed:
        index_sessions(dataset)
    assert indexed.value.issues == loaded.value.issues
    assert [(i.line, i.field) for i in indexed.value.issues] == [
        (2, "(json)"),
        (3, "(line)"),
        (4, "english_answer_list[0]"),
        (5, "id"),
        (6, "(encoding)"),
    ]
    for path, message in (
        (tmp_path / "none.jsonl", "file not found"),
        (_write(tmp_path / "e.jsonl", [""]), "file holds no sessions"),
    ):
        with pytest.raises(DatasetError) as info:
            index_sessions(path)
        assert [str(issue) for issue in info.value.issues] == [f"{path}: {message}"]


def test_index_sessions_keeps_the_chinese_side_problems(tmp_path):
    session = make_session()
    session["task_types"][1] = "多工具"  # the English label of task 1 is Clarify, not a multi-tool type
    dataset = _write(tmp_path / "d.jsonl", [session])
    issues = index_sessions(dataset).language_issues("zh")
    assert [(i.file, i.line, i.field) for i in issues] == [(str(dataset), 1, "task_types[1]")]
    with pytest.raises(DatasetError) as info:
        load_sessions(dataset, language="zh")
    assert info.value.issues == issues


def test_task_counts_reads_the_dataset_one_line_at_a_time(tmp_path):
    """``wtb score`` counts the tasks before scoring: that pass must not hold the file either."""
    dataset = _write(tmp_path / "d.jsonl", [make_session(f"wild_tool_bench_{i}") for i in range(300)])
    size = dataset.stat().st_size
    task_counts(dataset)  # warm
    tracemalloc.start()
    try:
        assert task_counts(dataset) == (4, [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size > 1_000_000 and peak < size / 10, (peak, size)


def test_result_scan_yields_what_the_loader_returns(tmp_path):
    session = make_session()
    record = {"id": session["id"], "model_name": "m", "result": "Error during inference: boom"}
    good = _write(tmp_path / "good.jsonl", [record, "", {**record, "id": "wild_tool_bench_7"}])
    scan = scan_result_records(good)
    assert [(number, rec) for _, _, (number, rec) in scan] == load_result_records(good)
    assert scan.issues == []
    bad = _write(tmp_path / "bad.jsonl", [record, "{oops", {"id": "x"}, record])
    scan = scan_result_records(bad)
    assert [number for _, _, (number, _) in scan] == [1]
    with pytest.raises(DatasetError) as info:
        load_result_records(bad)
    assert scan.issues == info.value.issues
    assert [(i.line, i.field) for i in scan.issues] == [(2, "(json)"), (3, "model_name"), (4, "id")]


def test_parse_jsonl_file_drops_the_values_of_an_unreadable_file(tmp_path):
    values, issues = parse_jsonl_file(tmp_path, lambda file, number, raw: (raw, []), empty_message="empty")
    assert values == [] and len(issues) == 1 and issues[0].message.startswith("cannot read")


def _error_record(session_id: str, **extra) -> dict:
    return {"id": session_id, "model_name": "m", "result": "Error during inference: boom", **extra}


def test_problems_are_reported_in_whole_file_order_and_nothing_is_written(tmp_path):
    dataset = _write(tmp_path / "d.jsonl", [make_session(f"wild_tool_bench_{i}") for i in range(3)])
    out = tmp_path / "new" / "out"

    def problems(rows: list, **kwargs) -> list[str]:
        results = _write(tmp_path / "r.jsonl", rows)
        with pytest.raises(DatasetError) as info:
            score_run(dataset, results, out, **kwargs)
        assert not (tmp_path / "new").exists()  # not even the folder
        return [str(issue).removeprefix(f"{results}") for issue in info.value.issues]

    # A bad line after an unknown id: only the file-level problems.
    assert problems([_error_record("wild_tool_bench_9"), _error_record("wild_tool_bench_0"), "{oops"]) == [
        ":3: (json): invalid JSON: Expecting property name enclosed in double quotes (column 2)"
    ]
    # Mixed language sides before the scoring problems.
    assert problems([_error_record("wild_tool_bench_9"), _error_record("wild_tool_bench_1", language="zh")]) == [
        ":2: language: zh record, but line 1 is en: one language side per result file"
    ]
    # An unknown side in every record: the ValueError of the dataset side check.
    with pytest.raises(ValueError, match="language must be one of"):
        score_run(dataset, _write(tmp_path / "r.jsonl", [_error_record("wild_tool_bench_0", language="fr")]), out)
    assert not (tmp_path / "new").exists()
    # Scoring problems, then mixed modes and models, in line order.
    assert problems(
        [
            _error_record("wild_tool_bench_0"),
            _error_record("wild_tool_bench_9"),
            {**_error_record("wild_tool_bench_1"), "model_name": "other"},
            _error_record("wild_tool_bench_2", scoring="fixed"),
        ]
    ) == [
        ":2: id: no session 'wild_tool_bench_9' in the dataset",
        ":4: scoring: this record was made by a --scoring fixed run: score it in fixed mode (--scoring fixed)",
        ": scoring: one scoring mode per result file expected, found 'reference' (line 1), 'fixed' (line 4)",
        ": model_name: one model per result file expected, found 'm' (line 1), 'other' (line 3)",
    ]
    # --lang given: a record of the other side is a scoring problem of its line.
    assert problems(
        [_error_record("wild_tool_bench_0"), _error_record("wild_tool_bench_1", language="zh")], language="en"
    ) == [":2: language: the record was made on the zh side, not en (--lang zh)"]


def test_an_existing_output_folder_keeps_only_its_own_files_after_an_error(tmp_path):
    dataset = _write(tmp_path / "d.jsonl", [make_session()])
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    results = _write(tmp_path / "r.jsonl", [_error_record("wild_tool_bench_0"), _error_record("wild_tool_bench_9")])
    with pytest.raises(DatasetError):
        score_run(dataset, results, out)
    # No score file; only the folder's run lock, which scoring holds as `wtb eval` does (docs/cli.md §3.2).
    assert sorted(p.name for p in out.iterdir()) == [".wtb-eval.lock", "notes.txt"]


def test_metrics_accumulator_is_compute_metrics_one_session_at_a_time():
    sessions = [make_session(f"wild_tool_bench_{i}") for i in range(3)]
    scored = [(s, score_session(_error_record(s["id"]), s, tools=[])) for s in sessions]
    for scoring in ("reference", "fixed"):
        metrics = MetricsAccumulator(scoring=scoring)
        for session, tasks in scored:
            metrics.add(session, tasks)
        assert metrics.result("m") == compute_metrics("m", scored, scoring=scoring)
        assert metrics.result("m")["total_info"]["session"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 3}
    with pytest.raises(ValueError, match="3 scored tasks, expected 4"):
        MetricsAccumulator().add(sessions[0], scored[0][1][:3])


@pytest.mark.shared
def test_consume_scores_like_a_copy_and_the_default_leaves_the_record_alone(reference_dir):
    sessions = {s["id"]: s for s in _jsonl(reference_dir / "sessions.jsonl")}
    records = _jsonl(reference_dir / "expected_results.jsonl")  # every candidate of the fixtures
    assert len(records) > 100
    for scoring in ("reference", "fixed"):
        for record in records:
            before = json.dumps(record)
            copied = score_session(record, sessions[record["session_id"]], scoring=scoring)
            assert json.dumps(record) == before
            consumed = score_session(json.loads(before), sessions[record["session_id"]], scoring=scoring, consume=True)
            assert json.dumps(consumed) == json.dumps(copied)
