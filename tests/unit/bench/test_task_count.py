"""Tasks per session inferred from the dataset (issue 14 part 4; docs/dataset.md §6): sessions of N != 4
tasks need no ``--tasks``; a file mixing counts is an error naming the lines; ``--tasks`` is still
accepted and checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.demo_data import SESSIONS_PATH
from wildtoolbench.bench.generation import oracle_candidate
from wildtoolbench.bench.schema import DatasetError, infer_task_count, task_counts
from wildtoolbench.cli import app

PER_TASK = ("english_tasks", "english_answer_list", "english_task_types", "tasks", "answer_list", "task_types")


def _cut(session: dict, tasks: int) -> dict:
    cut = dict(session)
    for key in PER_TASK:
        cut[key] = session[key][:tasks]
    for key in ("english_turn_subtypes", "turn_subtypes"):
        cut[key] = session[key][: tasks - 1]
    return cut


def _demo() -> list[dict]:
    return [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def three_task_run(tmp_path):
    """A dataset of 3-task sessions and the oracle replay for it."""
    sessions = [_cut(s, 3) for s in _demo()[:3]]
    dataset = _write(tmp_path / "three.jsonl", sessions)
    replay = _write(tmp_path / "replay.jsonl", [oracle_candidate(s) for s in sessions])
    return dataset, replay


def test_task_counts_of_a_file(tmp_path):
    assert infer_task_count(SESSIONS_PATH) == 4
    rows = _demo()
    mixed = _write(tmp_path / "mixed.jsonl", [rows[0], _cut(rows[1], 2), rows[2], _cut(rows[3], 3), rows[4]])
    count, issues = task_counts(mixed)
    assert count == 4
    assert [(i.line, i.field) for i in issues] == [(2, "english_tasks"), (4, "english_tasks")]
    assert issues[0].message.startswith("2 tasks, but 3 other session(s) have 4 (first on line 1)")
    with pytest.raises(DatasetError) as caught:
        infer_task_count(mixed)
    assert [i.line for i in caught.value.issues] == [2, 4]
    # Nothing to count (missing file, no list): the loader reports it; the count is the benchmark's.
    assert task_counts(tmp_path / "missing.jsonl") == (4, [])
    assert task_counts(_write(tmp_path / "odd.jsonl", [{"id": "x"}])) == (4, [])
    # A tie goes to the first line's count.
    assert task_counts(_write(tmp_path / "tie.jsonl", [_cut(rows[0], 2), rows[1]]))[0] == 2


def test_eval_validate_score_infer_three_tasks(three_task_run, tmp_path):
    dataset, replay = three_task_run
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", str(dataset)])
    assert validated.exit_code == 0, validated.output
    assert "3 sessions, 9 tasks" in validated.output

    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "eval",
            "--dataset",
            str(dataset),
            "--model",
            f"replay:{replay}#oracle",
            "--out",
            str(out),
            "--no-progress",
            "--no-trace",
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "result.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [len(r["result"]) for r in records] == [3, 3, 3]
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["settings"]["tasks"] == 3
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert metric["total_info"]["task"] == {"accuracy": 1.0, "correct_count": 9, "total_count": 9}
    readable = json.loads((out / "summary_metrics.json").read_text(encoding="utf-8"))
    assert readable["task_position"]["Task 3"] == {"value": 1.0, "correct": 3, "total": 3}
    assert readable["task_position"]["Task 4"] is None  # no fourth task in these sessions

    scored = runner.invoke(
        app, ["score", "--dataset", str(dataset), "--results", str(out / "result.jsonl"), "--out", str(tmp_path / "s")]
    )
    assert scored.exit_code == 0, scored.output
    assert json.loads((tmp_path / "s" / "metric.json").read_text(encoding="utf-8")) == metric

    # --tasks is still accepted, and checked.
    given = runner.invoke(
        app,
        [
            "score",
            "--tasks",
            "3",
            "--dataset",
            str(dataset),
            "--results",
            str(out / "result.jsonl"),
            "--out",
            str(tmp_path / "s3"),
        ],
    )
    assert given.exit_code == 0, given.output
    wrong = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            "4",
            "--dataset",
            str(dataset),
            "--model",
            f"replay:{replay}#oracle",
            "--out",
            str(tmp_path / "run4"),
            "--no-progress",
            "--no-trace",
        ],
    )
    assert wrong.exit_code == 1
    assert f"{dataset}:1: english_tasks: List should have at least 4 items" in wrong.output
    assert not (tmp_path / "run4").exists()


def test_mixed_counts_are_an_error_naming_the_lines(tmp_path):
    rows = _demo()
    mixed = _write(tmp_path / "mixed.jsonl", [rows[0], rows[1], _cut(rows[2], 2)])
    replay = _write(tmp_path / "replay.jsonl", [oracle_candidate(r) for r in rows[:2]])
    runner = CliRunner()
    expected = (
        f"{mixed}:3: english_tasks: 2 tasks, but 2 other session(s) have 4 (first on line 1); every session "
        "of a file needs the same number of tasks (--tasks N checks them all against N)"
    )

    evaluated = runner.invoke(
        app,
        [
            "eval",
            "--dataset",
            str(mixed),
            "--model",
            f"replay:{replay}#oracle",
            "--out",
            str(tmp_path / "run"),
            "--no-progress",
            "--no-trace",
        ],
    )
    assert evaluated.exit_code == 1
    assert evaluated.output.splitlines()[0] == expected
    assert not (tmp_path / "run").exists()

    results = _write(
        tmp_path / "r.jsonl", [{"id": "wild_tool_bench_0", "model_name": "m", "result": "Error during inference: x"}]
    )
    scored = runner.invoke(
        app, ["score", "--dataset", str(mixed), "--results", str(results), "--out", str(tmp_path / "s")]
    )
    assert scored.exit_code == 1 and scored.output.splitlines()[0] == expected
    assert not (tmp_path / "s").exists()

    validated = runner.invoke(app, ["validate", str(mixed)])
    assert validated.exit_code == 1
    lines = validated.output.splitlines()
    assert lines[0] == expected  # then the schema's own problems of line 3 (checked against the common count, 4)
    assert {line.split(":")[1] for line in lines[:-1]} == {"3"}
    assert lines[-1].endswith("problem(s) found")
