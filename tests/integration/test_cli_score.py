"""`wtb score` end to end, `score_run`, and the metric table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.schema import DatasetError
from wildtoolbench.cli import app
from wildtoolbench.common.table import metric_rows, render_metric_table
from wildtoolbench.scoring.results import natural_id_key
from wildtoolbench.scoring.run import score_run

REPO_ROOT = Path(__file__).resolve().parents[2]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _candidate_results(reference_dir: Path, candidate: str, tmp_path: Path, ours: bool = True) -> Path:
    """Result file of one candidate; in our record format unless ``ours`` is False; lines shuffled by id."""
    rows = [r for r in _jsonl(reference_dir / "expected_results.jsonl") if r["candidate"] == candidate]
    rows.sort(key=lambda r: r["session_id"], reverse=True)
    if ours:
        rows = [{"id": r["session_id"], "model_name": r["candidate"], "result": r["result"]} for r in rows]
    path = tmp_path / f"{candidate}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _expected_metric(reference_dir: Path, candidate: str) -> dict:
    return next(r["metric"] for r in _jsonl(reference_dir / "expected_metrics.jsonl") if r["candidate"] == candidate)


@pytest.mark.shared
def test_wtb_score_subprocess_writes_both_files(reference_dir, tmp_path):
    results = _candidate_results(reference_dir, "noisy", tmp_path)
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "score",
            "--dataset",
            str(reference_dir / "sessions.jsonl"),
            "--results",
            str(results),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert json.dumps(metric) == json.dumps(_expected_metric(reference_dir, "noisy"))
    lines = _jsonl(out / "score.jsonl")
    assert [list(line) for line in lines] == [["id", "model_name", "results"]] * 24
    ids = [line["id"] for line in lines]
    assert ids == sorted(ids, key=natural_id_key) and ids[:3] == [
        "wild_tool_bench_0",
        "wild_tool_bench_1",
        "wild_tool_bench_2",
    ]
    expected_scores = {
        r["session_id"]: r["results"]
        for r in _jsonl(reference_dir / "expected_scores.jsonl")
        if r["candidate"] == "noisy"
    }
    for line in lines:
        for task in line["results"]:
            for key, step in task["inference_log"].items():
                if key.startswith("step_"):
                    step.pop("inference_input", None)
        assert line["results"] == expected_scores[line["id"]]
    assert "Task accuracy" in proc.stdout and "50.00%" in proc.stdout and "48/96" in proc.stdout
    assert not list(out.glob(".*tmp"))  # no temp files left by the atomic writes


@pytest.mark.shared
def test_score_run_accepts_fixture_record_format(reference_dir, tmp_path):
    results = _candidate_results(reference_dir, "wrong_args_key_order", tmp_path, ours=False)
    metric = score_run(reference_dir / "sessions.jsonl", results, tmp_path / "o")
    assert metric == _expected_metric(reference_dir, "wrong_args_key_order")
    assert len(_jsonl(tmp_path / "o" / "score.jsonl")) == 3


@pytest.mark.shared
def test_wtb_score_bad_results_report_line_and_field(reference_dir, tmp_path):
    good = _jsonl(_candidate_results(reference_dir, "oracle", tmp_path))
    unknown = dict(good[1], id="wild_tool_bench_999")
    other_model = dict(good[2], model_name="someone-else")
    broken = json.loads(json.dumps(good[3]))
    del broken["result"][1]["inference_log"]["step_0"]["inference_output"]
    rows = [
        json.dumps(good[0]),
        "{oops",
        json.dumps(unknown),
        json.dumps(other_model),
        json.dumps(broken),
        json.dumps(good[0]),
    ]
    results = tmp_path / "bad.jsonl"
    results.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(
        app, ["score", "--dataset", str(reference_dir / "sessions.jsonl"), "--results", str(results), "--out", str(out)]
    )
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    # The file-level pass reports bad JSON and the duplicate id first.
    assert f"{results}:2: (json): invalid JSON" in result.output
    assert f"{results}:6: id: duplicate id" in result.output
    assert not out.exists()
    results.write_text("\n".join(rows[:1] + rows[2:5]) + "\n", encoding="utf-8")
    result = runner.invoke(
        app, ["score", "--dataset", str(reference_dir / "sessions.jsonl"), "--results", str(results), "--out", str(out)]
    )
    assert result.exit_code == 1
    assert f"{results}:2: id: no session 'wild_tool_bench_999' in the dataset" in result.output
    assert f"{results}:4: result[1].inference_log.step_0.inference_output: missing or not an object" in result.output
    assert f"{results}: model_name: one model per result file expected" in result.output
    assert not out.exists()


def test_wtb_score_missing_files_no_traceback(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "score",
            "--dataset",
            str(tmp_path / "none.jsonl"),
            "--results",
            str(tmp_path / "r.jsonl"),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert proc.returncode == 2  # a file named on the command line that does not exist (docs/cli.md §2)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"Invalid value for '--dataset': File '{tmp_path / 'none.jsonl'}' does not exist." in proc.stderr
    assert not (tmp_path / "o").exists()


def test_score_run_raises_dataset_error_for_missing_results(tmp_path):
    from tests.support.session_factory import make_session

    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps(make_session()) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        score_run(dataset, tmp_path / "missing.jsonl", tmp_path / "o")
    assert str(info.value.issues[0]) == f"{tmp_path / 'missing.jsonl'}: file not found"


def _metric(correct: int, total: int) -> dict:
    bucket = {"accuracy": correct / total if total else 0.0, "correct_count": correct, "total_count": total}
    return bucket


def test_metric_table_rows():
    metric = {
        "model_name": "m",
        "total_info": {"task": _metric(3, 8), "session": _metric(1, 2)},
        "task_type_info": {"Single-Tool": _metric(0, 0), "Multi-Tool": _metric(2, 3)},
        "layer_info": {"0": _metric(1, 2), "1": _metric(2, 2)},
        "turn_subtype_info": {"First Turn": _metric(1, 2), "Partial Information": _metric(1, 3)},
        "optimal_info": {"Total": _metric(2, 3)},
        "progress_info": {"Total": {"rate": 5 / 7, "complete_step": 5, "total_step": 7}},
    }
    rows = list(metric_rows(metric))
    assert rows[0] == ("Overall", "Task accuracy", "37.50%", "3/8")
    assert ("Task type", "Single-Tool", "n/a", "0 tasks") in rows  # no task in the group: not a 0% score
    assert not [row for row in rows if row[2] == "0.00%" or row[3] == "0/0"]
    assert ("Task position", "Task 2", "100.00%", "2/2") in rows
    assert ("Turn subtype", "Partial Information", "33.33%", "1/3") in rows
    assert rows[-2] == ("Path", "Optimal path rate (OP)", "66.67%", "2/3")
    assert rows[-1] == ("Path", "Accomplish progress rate (AP)", "71.43%", "5/7 steps")
    text = render_metric_table(metric)
    assert "Session accuracy" in text and "50.00%" in text and "\x1b[" not in text


def test_score_says_when_a_file_mixes_models(reference_dir, tmp_path):
    """The fixtures' expected_results.jsonl holds every candidate's records: one model per file is the rule."""
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--dataset",
            str(reference_dir / "sessions.jsonl"),
            "--results",
            str(reference_dir / "expected_results.jsonl"),
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.endswith(
        "id: duplicate id 'wild_tool_bench_0' (first on line 1): model 'suboptimal' here, 'oracle' there; "
        "the file holds several models' results: score one model per file"
    )
    assert not (tmp_path / "metric.json").exists()
