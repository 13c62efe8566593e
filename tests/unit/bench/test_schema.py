"""Dataset schema, loader and `wtb validate` (docs/dataset.md)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from tests.support.session_factory import make_session
from wildtoolbench.bench.schema import (
    DatasetError,
    DatasetIssue,
    Session,
    load_sessions,
    sessions_by_id,
    validate_file,
)
from wildtoolbench.cli import app

REPO_ROOT = Path(__file__).resolve().parents[3]


def write_lines(path: Path, rows) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


# --------------------------------------------------------------------------- model


def test_round_trip_keeps_types_and_key_order():
    raw = make_session()
    raw["extra_field"] = {"kept": [1, 2.0]}
    raw["english_answer_list"][0][0]["note"] = "unknown node field"
    dumped = Session.model_validate(raw).model_dump(mode="json")
    assert json.dumps(dumped, ensure_ascii=False) == json.dumps(raw, ensure_ascii=False)
    args = dumped["english_answer_list"][0][0]["action"]["arguments"]
    assert list(args) == ["lat", "city"] and isinstance(args["lat"], float)
    assert "user_input" not in dumped["english_answer_list"][0][0]
    assert dumped["english_answer_list"][1][0]["user_input"] == "Four."


def test_int_and_float_values_stay_distinct():
    raw = make_session()
    raw["english_answer_list"][3][1]["action"]["arguments"]["people"] = 2.0
    dumped = Session.model_validate(raw).to_dict()
    value = dumped["english_answer_list"][3][1]["action"]["arguments"]["people"]
    assert value == 2.0 and isinstance(value, float)
    assert json.dumps(dumped["english_answer_list"][3][1]) == json.dumps(raw["english_answer_list"][3][1])


def test_structural_error_lists_every_problem_with_its_field():
    raw = make_session()
    raw["english_answer_list"][0][2]["dependency_list"] = [0, 7]
    raw["answer_list"][3][0]["dependency_list"] = [2]
    with pytest.raises(ValidationError) as info:
        Session.model_validate(raw)
    (error,) = info.value.errors()
    fields = [field for field, _ in error["ctx"]["issues"]]
    assert fields == ["english_answer_list[0][2].dependency_list[1]", "answer_list[3][0].dependency_list[0]"]


@pytest.mark.parametrize(
    "mutate, field, fragment",
    [
        (
            lambda s: s["english_answer_list"][1].__setitem__(
                0, {**s["english_answer_list"][1][0], "user_input": None}
            ),
            "english_answer_list[1][0].user_input",
            "user_input",
        ),
        (
            lambda s: s["english_answer_list"][1][0]["action"]["arguments"].pop("tool_name"),
            "english_answer_list[1][0].action.arguments.tool_name",
            "tool_name",
        ),
        (
            lambda s: s["english_answer_list"][2][0]["action"]["arguments"].__setitem__("answer_type", "text"),
            "english_answer_list[2][0].action.arguments",
            "answer_type",
        ),
        (lambda s: s["english_answer_list"].__setitem__(2, []), "english_answer_list[2]", "empty"),
        (
            lambda s: s["english_answer_list"][0][0]["dependency_list"].append(0),
            "english_answer_list[0][0].dependency_list[0]",
            "itself",
        ),
        (lambda s: s["task_types"].__setitem__(1, "Clarify"), "task_types[1]", "澄清"),
        (lambda s: s["english_turn_subtypes"].append("Partial Information"), "english_turn_subtypes", "at most 3"),
        (
            lambda s: s["english_answer_list"][0][0].__setitem__("dependency_list", ["1"]),
            "english_answer_list[0][0].dependency_list[0]",
            "integer",
        ),
        (lambda s: s.pop("answer_list"), "answer_list", "required"),
    ],
)
def test_invalid_session_is_reported_by_field(tmp_path, mutate, field, fragment):
    raw = make_session()
    mutate(raw)
    path = write_lines(tmp_path / "d.jsonl", [make_session("wild_tool_bench_0"), raw | {"id": "wild_tool_bench_1"}])
    with pytest.raises(DatasetError) as info:
        load_sessions(path)
    issues = info.value.issues
    assert [(i.line, i.field) for i in issues] == [(2, field)], issues
    assert fragment in issues[0].message


def test_load_collects_every_bad_line(tmp_path):
    bad_type = make_session("wild_tool_bench_2")
    bad_type["english_task_types"][3] = "Multi-Tool"
    path = write_lines(
        tmp_path / "d.jsonl",
        [make_session("wild_tool_bench_0"), '{"id": "x", ', make_session("wild_tool_bench_0"), bad_type, "[1, 2]"],
    )
    with pytest.raises(DatasetError) as info:
        load_sessions(path)
    got = [(i.line, i.field) for i in info.value.issues]
    assert got == [(2, "(json)"), (3, "id"), (4, "english_task_types[3]"), (5, "(line)")]
    assert str(info.value.issues[1]) == f"{path}:3: id: duplicate id 'wild_tool_bench_0' (first on line 1)"
    assert "invalid JSON" in info.value.issues[0].message


def test_sessions_by_id_indexes_by_id_not_position(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [make_session("wild_tool_bench_7"), make_session("wild_tool_bench_3")])
    sessions = load_sessions(path)
    index = sessions_by_id(sessions)
    assert list(index) == ["wild_tool_bench_7", "wild_tool_bench_3"]
    assert index["wild_tool_bench_3"].source == (str(path), 2)
    with pytest.raises(DatasetError) as info:
        sessions_by_id(sessions + sessions[:1])
    assert info.value.issues[0].field == "id"


def test_issue_format():
    assert str(DatasetIssue("a.jsonl", 3, "english_tasks", "too short")) == "a.jsonl:3: english_tasks: too short"
    assert str(DatasetIssue("a.jsonl", None, None, "file not found")) == "a.jsonl: file not found"


def test_validate_file_counts(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [make_session("s0"), make_session("s1")])
    report = validate_file(path)
    assert report.ok and report.sessions == 2
    assert report.task_types["Parallel Multi-Tool"] == 2 and report.task_types["Single-Tool"] == 0
    assert report.turn_subtypes["Partial Information"] == 2


@pytest.mark.shared
def test_reference_sessions_round_trip(reference_dir):
    path = reference_dir / "sessions.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    sessions = load_sessions(path)
    assert [s.id for s in sessions] == [r["id"] for r in raw]
    for session, row in zip(sessions, raw):
        assert json.dumps(session.model_dump(mode="json"), ensure_ascii=False) == json.dumps(row, ensure_ascii=False)
    report = validate_file(path)
    assert report.ok and report.sessions == len(raw)
    assert sum(report.task_types.values()) == 4 * len(raw)


# --------------------------------------------------------------------------- wtb validate


def _broken(kind: str) -> tuple[list, int, str | None]:
    """Rows of a dataset file broken in one way, the bad line and the field expected in the message."""
    good = [make_session(f"wild_tool_bench_{i}") for i in range(3)]
    bad = copy.deepcopy(good[1])
    if kind == "bad_json":
        return [good[0], json.dumps(bad)[:-5], good[2]], 2, "(json)"
    if kind == "task_type":
        bad["english_task_types"][2] = "Multi Tool"
        return [good[0], bad, good[2]], 2, "english_task_types[2]"
    if kind == "dependency_range":
        bad["english_answer_list"][3][2]["dependency_list"] = [5]
        return [good[0], bad, good[2]], 2, "english_answer_list[3][2].dependency_list[0]"
    if kind == "cycle":
        bad["english_answer_list"][3][0]["dependency_list"] = [2]
        return [good[0], good[2], bad], 3, "english_answer_list[3][0].dependency_list[0]"
    if kind == "three_tasks":
        bad["english_tasks"] = bad["english_tasks"][:3]
        return [bad, good[0], good[2]], 1, "english_tasks"
    if kind == "duplicate_id":
        return [good[0], good[1], good[0]], 3, "id"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["bad_json", "task_type", "dependency_range", "cycle", "three_tasks", "duplicate_id"])
def test_wtb_validate_reports_line_and_field(tmp_path, kind):
    rows, line, field = _broken(kind)
    path = write_lines(tmp_path / "broken.jsonl", rows)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    prefix = f"{path}:{line}: " + (f"{field}: " if field else "")
    bad_lines = [text for text in result.output.splitlines() if text.startswith(f"{path}:")]
    assert any(text.startswith(prefix) for text in bad_lines), result.output
    assert all(text.startswith(f"{path}:{line}:") for text in bad_lines[:-1]), result.output


def test_wtb_validate_ok_summary(tmp_path):
    path = write_lines(tmp_path / "ok.jsonl", [make_session("a"), make_session("b")])
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "2 sessions, 8 tasks" in result.output and "Clarify 2" in result.output


def test_wtb_validate_subprocess_all_problems_no_traceback(tmp_path):
    rows = []
    for kind in ["task_type", "cycle", "three_tasks"]:
        broken, line, _ = _broken(kind)
        rows.append(broken[line - 1] | {"id": f"s_{kind}"})
    rows.append("{not json")
    path = write_lines(tmp_path / "many.jsonl", rows)
    missing = tmp_path / "missing.jsonl"
    for target, expected in [(path, [1, 2, 3, 4]), (missing, [])]:
        proc = subprocess.run(
            [sys.executable, "-m", "wildtoolbench.cli", "validate", str(target)],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            timeout=120,
        )
        assert proc.returncode == (1 if expected else 2)  # a missing file is a command-line mistake (docs/cli.md §2)
        assert "Traceback" not in proc.stderr + proc.stdout
        lines = {
            int(text.split(":")[1])
            for text in proc.stderr.splitlines()
            if text.startswith(f"{target}:") and text.split(":")[1].isdigit()
        }
        assert sorted(lines) == expected, proc.stderr
        if not expected:
            assert f"Invalid value for 'path': File '{target}' does not exist." in proc.stderr


@pytest.mark.shared
def test_every_original_tool_list_is_accepted(shared_dir):
    """Tool lists stay raw dicts: "float" types and one list's repeated tool names must not be rejected."""
    english = (shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()
    chinese = (shared_dir / "data" / "tools_zh.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(english) == len(chinese) > 0
    for en, zh in zip(english, chinese):
        raw = make_session() | {"english_tools": json.loads(en), "tools": json.loads(zh)}
        assert Session.model_validate(raw).model_dump(mode="json")["english_tools"] == raw["english_tools"]


def test_json_lines_names_file_and_line(tmp_path):
    from wildtoolbench.bench.io import json_lines

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n[2]\n{broken\n')
    rows = json_lines(path, KeyError)
    assert next(rows) == (1, {"a": 1})
    assert next(rows) == (3, [2])
    with pytest.raises(KeyError, match=r"rows.jsonl:4: not JSON"):
        next(rows)
    path.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(ValueError, match=r"rows.jsonl:1: not UTF-8"):
        list(json_lines(path))
