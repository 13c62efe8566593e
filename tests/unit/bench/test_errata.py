"""Errata (docs/audit.md §9): parsing with file:line: field: message problems, checking against the
dataset, applying corrections and exclusions, rewriting a run's logged gold, drafting from findings."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from wildtoolbench.bench.audit import Finding
from wildtoolbench.bench.audit_oracle import gold_record
from wildtoolbench.bench.errata import (
    Erratum,
    apply_errata,
    check_errata,
    draft_errata,
    erratum_line,
    load_errata,
    parse_path,
    patch_record_gold,
)
from wildtoolbench.bench.metrics import MetricsAccumulator
from wildtoolbench.bench.schema import DatasetError
from wildtoolbench.bench.scoring import score_session

DEMO = Path(__file__).resolve().parents[3] / "bench" / "data" / "demo_sessions.jsonl"


@pytest.fixture
def sessions() -> dict[str, dict]:
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "errata.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_parse_path():
    assert parse_path("english_answer_list[1][0].action.arguments.city") == [
        "english_answer_list", 1, 0, "action", "arguments", "city"
    ]  # fmt: skip
    for bad in ("", "a..b", "a[x]", "a]"):
        with pytest.raises(ValueError):
            parse_path(bad)


def test_every_bad_line_is_named_with_its_field(tmp_path):
    path = _write(
        tmp_path,
        [
            {"session": "s", "task": 0, "kind": "k", "note": "", "correction": None},
            {"session": "", "task": -1, "kind": "k", "correction": {"exclude": 1}},
            "[1, 2]",
            "{oops",
            {"session": "s", "task": None, "kind": "k", "correction": {"path": "x", "value": 1, "delete": True}},
            {"session": "s", "task": None, "kind": "k"},
        ],
    )
    with pytest.raises(DatasetError) as caught:
        load_errata(path)
    assert [str(issue).removeprefix(str(path)) for issue in caught.value.issues] == [
        ":2: session: missing or not a non-empty string",
        ":2: task: expected a task index (0, 1, ...) or null, got -1",
        ':2: correction: an exclusion is exactly {"exclude": true}',
        ":3: (line): expected a JSON object, got list",
        ":4: (json): not JSON (Expecting property name enclosed in double quotes)",
        ':5: correction: give exactly one of "value" and "delete": true',
        ":6: correction: missing (null for a note without a correction)",
    ]


def test_errata_are_checked_against_the_dataset(sessions):
    path = "english_answer_list[1][0].action.arguments.target_temperature_c"
    errata = [
        Erratum("nope", 0, "k", "", None, 1),
        Erratum("wild_tool_bench_1", 7, "k", "", None, 2),
        Erratum("wild_tool_bench_1", 2, "k", "", {"path": path, "value": 17}, 3),
        Erratum("wild_tool_bench_1", 1, "k", "", {"path": path, "value": 17, "was": 18}, 4),
        Erratum("wild_tool_bench_1", 1, "k", "", {"path": "english_answer_list[1][9].observation", "value": 1}, 5),
        Erratum(
            "wild_tool_bench_1", 1, "k", "", {"path": path.replace("target_temperature_c", "x"), "delete": True}, 6
        ),
        Erratum("wild_tool_bench_1", 1, "k", "", {"path": path, "value": 17, "was": 17.0}, 7),
        Erratum(
            "wild_tool_bench_1", 1, "k", "", {"path": path.replace("target_temperature_c", "new_key"), "value": 1}, 8
        ),
    ]
    with pytest.raises(DatasetError) as caught:
        check_errata(errata, sessions, "e.jsonl")
    lines = [(issue.line, issue.field) for issue in caught.value.issues]
    assert lines == [
        (1, "session"),
        (2, "task"),
        (3, "correction.path"),
        (4, "correction.was"),
        (5, "correction.path"),
        (6, "correction.path"),
    ]
    assert "belongs to task 1, the erratum names task 2" in caught.value.issues[2].message


def test_apply_replaces_deletes_excludes_and_leaves_the_input_alone(sessions):
    original = copy.deepcopy(sessions)
    errata = [
        Erratum(
            "wild_tool_bench_1",
            1,
            "k",
            "",
            {"path": "english_answer_list[1][0].action.arguments.target_temperature_c", "value": 17},
        ),
        Erratum(
            "wild_tool_bench_1", 1, "k", "", {"path": "english_answer_list[1][0].action.arguments.mode", "delete": True}
        ),
        Erratum("wild_tool_bench_2", None, "duplicate_session", "", {"exclude": True}),
        Erratum("wild_tool_bench_0", 3, "k", "", {"path": "english_tasks[3]", "value": "Hello?"}),
        Erratum("wild_tool_bench_0", 2, "k", "to decide", None),
    ]
    applied = apply_errata(errata, sessions)
    assert sessions == original
    arguments = applied.sessions["wild_tool_bench_1"]["english_answer_list"][1][0]["action"]["arguments"]
    assert arguments["target_temperature_c"] == 17 and type(arguments["target_temperature_c"]) is int
    assert "mode" not in arguments
    assert applied.sessions["wild_tool_bench_0"]["english_tasks"][3] == "Hello?"
    assert applied.excluded == {"wild_tool_bench_2": {0, 1, 2, 3}}
    assert [(c.task, c.node, c.name, c.new.get("mode")) for c in applied.argument_changes] == [
        (1, 0, "setThermostat", "heat"),
        (1, 0, "setThermostat", None),
    ]
    assert [e.path for e in applied.other_changes] == ["english_tasks[3]"]
    assert [e.note for e in applied.pending] == ["to decide"]
    assert applied.sessions["wild_tool_bench_3"] is sessions["wild_tool_bench_3"]


def test_a_corrected_gold_argument_is_what_a_run_is_rescored_against(sessions):
    session = sessions["wild_tool_bench_1"]
    record = gold_record(session)
    call = record["result"][1]["inference_log"]["step_0"]["inference_output"]["tool_calls"][0]["function"]
    call["arguments"] = call["arguments"].replace("17.0", "16.5")  # the model said 16.5
    assert score_session(record, session)[1]["label"] == "error"
    path = "english_answer_list[1][0].action.arguments.target_temperature_c"
    applied = apply_errata([Erratum(session["id"], 1, "k", "", {"path": path, "value": 16.5})], sessions)
    patched = copy.deepcopy(record)
    assert patch_record_gold(patched, applied.argument_changes, "english_answer_list") == 1
    assert patch_record_gold(copy.deepcopy(record), applied.argument_changes, "answer_list") == 0
    assert score_session(patched, applied.sessions[session["id"]])[1]["label"] == "correct"


def test_excluded_tasks_count_in_no_bucket(sessions):
    session = sessions["wild_tool_bench_0"]
    tasks = score_session(gold_record(session), session)
    tasks[2]["label"] = "error"
    plain, without = MetricsAccumulator(), MetricsAccumulator()
    plain.add(session, tasks)
    without.add(session, tasks, excluded={2})
    assert plain.result("m")["total_info"]["task"] == {"accuracy": 0.75, "correct_count": 3, "total_count": 4}
    assert without.result("m")["total_info"] == {
        "task": {"accuracy": 1.0, "correct_count": 3, "total_count": 3},
        "session": {"accuracy": 1.0, "correct_count": 1, "total_count": 1},
    }
    everything = MetricsAccumulator()
    everything.add(session, tasks, excluded={0, 1, 2, 3})
    assert everything.result("m")["total_info"]["session"]["total_count"] == 0


def test_draft_errata_from_findings():
    findings = [
        Finding("a", 1, "schema_violation", "error", "m1", correction={"path": "p", "delete": True}),
        Finding("a", 2, "scorer_sensitive", "error", "m2"),
        Finding("b", None, "duplicate_session", "error", "m3", correction={}),
        Finding("c", 0, "value_not_in_context", "warning", "m4"),
        Finding(None, None, "invalid_session", "error", "line 9: (json): not JSON"),
    ]
    assert [erratum_line(e) for e in draft_errata(findings)] == [
        {
            "session": "a",
            "task": 1,
            "kind": "schema_violation",
            "note": "m1",
            "correction": {"path": "p", "delete": True},
        },
        {"session": "a", "task": 2, "kind": "scorer_sensitive", "note": "m2", "correction": {"exclude": True}},
        {"session": "b", "task": None, "kind": "duplicate_session", "note": "m3", "correction": None},
        {"session": "c", "task": 0, "kind": "value_not_in_context", "note": "m4", "correction": None},
    ]
