"""``wtb validate --tasks N``: sessions with N tasks (as ``wtb generate --layers N`` makes them)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.demo_data import SESSIONS_PATH
from wildtoolbench.bench.schema import Session, session_model, validate_file
from wildtoolbench.cli import app

PER_TASK = ("english_tasks", "english_answer_list", "english_task_types", "tasks", "answer_list", "task_types")


def _cut(session: dict, tasks: int) -> dict:
    cut = dict(session)
    for key in PER_TASK:
        cut[key] = session[key][:tasks]
    for key in ("english_turn_subtypes", "turn_subtypes"):
        cut[key] = session[key][: tasks - 1]
    return cut


@pytest.fixture
def two_task_file(tmp_path):
    sessions = [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[:2]]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(_cut(s, 2)) + "\n" for s in sessions), encoding="utf-8")
    return path


def test_session_model_lengths():
    assert session_model() is Session and session_model(4) is Session
    assert session_model(2) is session_model(2)
    with pytest.raises(ValueError, match="at least 1 task"):
        session_model(-1)
    assert session_model(0) is not Session  # MIXED_TASKS: a variant set's model (docs/variants.md §2)


def test_validate_counts_tasks_of_the_given_length(two_task_file):
    report = validate_file(two_task_file, tasks=2)
    assert report.ok, report.issues
    assert report.sessions == 2 and sum(report.task_types.values()) == 4
    strict = validate_file(two_task_file)
    assert not strict.ok
    assert {(i.line, i.field) for i in strict.issues} >= {(1, "english_tasks"), (2, "english_answer_list")}
    # The benchmark's own file does not pass as 2-task sessions.
    assert not validate_file(SESSIONS_PATH, tasks=2).ok


def test_validate_cli_tasks_option(two_task_file):
    runner = CliRunner()
    ok = runner.invoke(app, ["validate", "--tasks", "2", str(two_task_file)])
    assert ok.exit_code == 0, ok.output
    assert "2 sessions, 4 tasks" in ok.output
    inferred = runner.invoke(app, ["validate", str(two_task_file)])  # every session has 2: no option needed
    assert inferred.exit_code == 0, inferred.output
    assert "2 sessions, 4 tasks" in inferred.output
    bad = runner.invoke(app, ["validate", "--tasks", "4", str(two_task_file)])  # given, it is checked
    assert bad.exit_code == 1
    assert f"{two_task_file}:1: english_tasks:" in bad.output
