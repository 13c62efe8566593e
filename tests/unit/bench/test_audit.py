"""The dataset audit (docs/audit.md): each kind of defect planted in copies of the public fixture
sessions (and the bundled demo sessions) is found with the right id, task and kind; the clean files
give none of the kinds that mark a broken file."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from wildtoolbench.bench.audit import (
    DUPLICATE_SESSION,
    FAILED_BY_ALL,
    INVALID_SESSION,
    OBSERVATION_MISMATCH,
    SCHEMA_VIOLATION,
    SCORER_SENSITIVE,
    UNKNOWN_TOOL,
    VALUE_NOT_IN_CONTEXT,
    RunTasks,
    audit_sessions,
    validation_findings,
)
from wildtoolbench.bench.audit_context import CallContext, normalise, numbers_in
from wildtoolbench.bench.audit_duplicates import duplicate_pairs
from wildtoolbench.bench.audit_oracle import gold_labels, gold_record
from wildtoolbench.bench.audit_schema import schema_problems
from wildtoolbench.bench.schema import DatasetIssue

DEMO = Path(__file__).resolve().parents[3] / "bench" / "data" / "demo_sessions.jsonl"


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def reference(reference_dir: Path) -> list[dict]:
    return _read(reference_dir / "sessions.jsonl")


@pytest.fixture
def sessions(reference: list[dict]) -> list[dict]:
    return copy.deepcopy(reference)


def found(findings, kind: str) -> set[tuple[str | None, int | None]]:
    return {(f.id, f.task) for f in findings if f.kind == kind}


def node(session: dict, task: int, index: int, side: str = "english_answer_list") -> dict:
    return session[side][task][index]


def tool(session: dict, name: str, side: str = "english_tools") -> dict:
    return next(t["function"] for t in session[side] if t["function"]["name"] == name)


# --------------------------------------------------------------------------- clean files


@pytest.mark.parametrize("language", ["en", "zh"])
def test_clean_reference_sessions_give_exactly_the_known_findings(reference, language):
    findings = audit_sessions(reference, language=language)
    for kind in (UNKNOWN_TOOL, DUPLICATE_SESSION, SCHEMA_VIOLATION, OBSERVATION_MISMATCH, INVALID_SESSION):
        assert found(findings, kind) == set()
    # The quirk-24 task (overlayDataOnMap's data[].properties has no schema): a perfect model fails it.
    assert [(f.id, f.task, f.severity) for f in findings if f.kind == SCORER_SENSITIVE] == [
        ("wild_tool_bench_3", 2, "error")
    ]
    assert "nested args not defined" in next(f.message for f in findings if f.kind == SCORER_SENSITIVE)
    assert found(findings, VALUE_NOT_IN_CONTEXT) == {("wild_tool_bench_19", 1), ("wild_tool_bench_21", 2)}


def test_clean_demo_sessions_give_no_schema_tool_or_duplicate_finding():
    findings = audit_sessions(_read(DEMO))
    assert {f.kind for f in findings} == {VALUE_NOT_IN_CONTEXT}
    assert [(f.id, f.task, f.field) for f in findings] == [
        ("wild_tool_bench_4", 2, "english_answer_list[2][2].action.arguments.current_weekly_km")
    ]


# --------------------------------------------------------------------------- schema_violation


@pytest.mark.parametrize(
    "sid, task, index, change, expected",
    [
        (3, 0, 0, lambda a: a.update(zoom="14"), "zoom: expected integer, got string"),
        (3, 0, 0, lambda a: a.update(mapType="street"), 'mapType: "street" is not one of the enum values'),
        (0, 2, 0, lambda a: a.pop("endDate"), "required parameter 'endDate' is missing"),
        (7, 0, 0, lambda a: a.update(colour="red"), "colour: unknown key 'colour'"),
        (16, 2, 0, lambda a: a["startLocation"].update(altitude=3), "startLocation.altitude: unknown key"),
        (19, 1, 1, lambda a: a.update(volume=True), "volume: expected float, got boolean"),
    ],
)
def test_a_planted_schema_violation_is_found(sessions, sid, task, index, change, expected):
    change(node(sessions[sid], task, index)["action"]["arguments"])
    findings = audit_sessions(sessions)
    assert found(findings, SCHEMA_VIOLATION) == {(f"wild_tool_bench_{sid}", task)}
    assert expected in next(f.message for f in findings if f.kind == SCHEMA_VIOLATION)


def test_a_schema_violation_on_the_chinese_side_is_found_there_only(sessions):
    node(sessions[18], 3, 0, "answer_list")["action"]["arguments"]["intensity"] = "Extreme"
    assert found(audit_sessions(sessions, language="zh"), SCHEMA_VIOLATION) == {("wild_tool_bench_18", 3)}
    assert found(audit_sessions(sessions, language="en"), SCHEMA_VIOLATION) == set()


def test_a_question_naming_an_undeclared_parameter_is_a_schema_violation(sessions):
    node(sessions[2], 2, 0)["action"]["arguments"]["missing_required_parameters"] = ["amount", "colour"]
    findings = audit_sessions(sessions)
    assert found(findings, SCHEMA_VIOLATION) == {("wild_tool_bench_2", 2)}


def test_the_plain_schema_reading_differs_from_the_published_checker():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "o": {"type": "object"}, "s": {}}}
    assert schema_problems({"n": 5.0, "o": {"any": 1}, "s": 3}, schema, root=True) == []
    assert schema_problems({"n": True}, schema, root=True) == [("n", "expected integer, got boolean true")]
    assert schema_problems({"x": 1}, {"type": "object"}, root=True)[0][1].startswith("unknown key 'x'")
    assert schema_problems({"a": "x"}, {"properties": {"a": {"anyOf": [{"type": "integer"}, {"enum": ["y"]}]}}}) == [
        ("a", '"x" fits none of the anyOf branches')
    ]
    assert schema_problems({"a": [1, "2"]}, {"properties": {"a": {"items": {"type": "float"}}}}) == [
        ("a[1]", 'expected float, got string "2"')
    ]


# --------------------------------------------------------------------------- unknown_tool


@pytest.mark.parametrize("sid, task, index", [(7, 2, 1), (0, 0, 0), (21, 0, 2)])
def test_a_gold_call_to_a_missing_tool_is_found(sessions, sid, task, index):
    node(sessions[sid], task, index)["action"]["name"] = "teleportUser"
    findings = audit_sessions(sessions)
    assert found(findings, UNKNOWN_TOOL) == {(f"wild_tool_bench_{sid}", task)}
    assert "'teleportUser'" in next(f.message for f in findings if f.kind == UNKNOWN_TOOL)
    assert found(findings, SCORER_SENSITIVE) - {("wild_tool_bench_3", 2)} == set()  # the scorer cannot run it


def test_a_tool_dropped_from_the_list_and_a_question_about_a_missing_tool_are_found(sessions):
    sessions[12]["english_tools"] = [t for t in sessions[12]["english_tools"] if t["function"]["name"] != "placeOrder"]
    node(sessions[1], 1, 0)["action"]["arguments"]["tool_name"] = "getMoonPhase"
    findings = audit_sessions(sessions)
    used = {n["action"]["name"] for al in sessions[12]["english_answer_list"] for n in al}
    expected = {("wild_tool_bench_1", 1)}
    if "placeOrder" in used:
        expected |= {
            ("wild_tool_bench_12", t)
            for t, al in enumerate(sessions[12]["english_answer_list"])
            if any(n["action"]["name"] == "placeOrder" for n in al)
        }
    assert found(findings, UNKNOWN_TOOL) == expected


def test_unknown_tool_on_the_chinese_side(sessions):
    node(sessions[17], 1, 1, "answer_list")["action"]["name"] = "getFishPrice"
    assert found(audit_sessions(sessions, language="zh"), UNKNOWN_TOOL) == {("wild_tool_bench_17", 1)}


# --------------------------------------------------------------------------- duplicate_session


def _renamed(session: dict, number: int) -> dict:
    copy_ = copy.deepcopy(session)
    copy_["id"] = f"wild_tool_bench_{number}"
    return copy_


def test_an_exact_duplicate_is_found_on_both_sessions_naming_the_other(sessions):
    sessions.append(_renamed(sessions[5], 24))
    findings = [f for f in audit_sessions(sessions) if f.kind == DUPLICATE_SESSION]
    assert [(f.id, f.task, f.severity) for f in findings] == [
        ("wild_tool_bench_5", None, "error"),
        ("wild_tool_bench_24", None, "error"),
    ]
    assert "wild_tool_bench_24" in findings[0].message and "wild_tool_bench_5" in findings[1].message
    assert [f.correction for f in findings] == [{}, {"exclude": True}]


@pytest.mark.parametrize(
    "sid, task, old, new",
    [(9, 1, None, None), (0, 1, "Portland", "Boston"), (13, 3, None, "Could you also show me the lyrics please?")],
)
def test_a_near_duplicate_is_found(sessions, sid, task, old, new):
    twin = _renamed(sessions[sid], 30)
    message = twin["english_tasks"][task]
    if old is not None:
        twin["english_tasks"][task] = message.replace(old, new)
    elif new is not None:
        twin["english_tasks"][task] = new
    else:
        twin["english_tasks"][task] = message.replace(" ", "  ").upper() + " thanks"
    sessions.insert(2, twin)
    findings = [f for f in audit_sessions(sessions) if f.kind == DUPLICATE_SESSION]
    assert {(f.id, f.task) for f in findings} == {(f"wild_tool_bench_{sid}", None), ("wild_tool_bench_30", None)}
    assert all(f.severity == "warning" and "near duplicate" in f.message for f in findings)


def test_a_duplicate_on_the_chinese_side(sessions):
    twin = _renamed(sessions[17], 40)
    twin["english_tasks"] = ["Something else entirely", "and more", "and more still", "the end"]
    sessions.append(twin)
    assert found(audit_sessions(sessions, language="zh"), DUPLICATE_SESSION) == {
        ("wild_tool_bench_17", None),
        ("wild_tool_bench_40", None),
    }
    assert found(audit_sessions(sessions, language="en"), DUPLICATE_SESSION) == set()


def test_duplicates_among_thousands_of_distinct_sessions(reference):
    words = [f"w{i}" for i in range(4000)]
    many = []
    for i in range(2000):
        session = copy.deepcopy(reference[i % 24])
        session["id"] = f"s{i}"
        session["english_tasks"] = [" ".join(words[(i * 7 + k * 3 + j) % 4000] for j in range(9)) for k in range(4)]
        many.append(session)
    many[1500]["english_tasks"] = list(many[321]["english_tasks"])
    many[1500]["english_tools"] = copy.deepcopy(many[321]["english_tools"])
    assert [(i, j, exact) for i, j, _, exact in duplicate_pairs(many)] == [(321, 1500, True)]


# --------------------------------------------------------------------------- value_not_in_context


@pytest.mark.parametrize(
    "sid, task, index, key, value",
    [
        (0, 0, 0, "city", "Boston"),
        (4, 0, 1, "quantity", 350),
        (0, 2, 1, "activity_id", "SF-9999"),
        (0, 2, 0, "startDate", "2023-01-17"),
        (22, 3, 0, "airportCode", "BOM"),
    ],
)
def test_a_planted_value_no_one_mentioned_is_found(sessions, sid, task, index, key, value):
    node(sessions[sid], task, index)["action"]["arguments"][key] = value
    findings = [f for f in audit_sessions(sessions) if f.kind == VALUE_NOT_IN_CONTEXT]
    planted = [f for f in findings if f.id == f"wild_tool_bench_{sid}"]
    assert [(f.task, f.field) for f in planted] == [
        (task, f"english_answer_list[{task}][{index}].action.arguments.{key}")
    ]
    assert json.dumps(value) in planted[0].message


def test_a_planted_value_on_the_chinese_side(sessions):
    node(sessions[21], 0, 0, "answer_list")["action"]["arguments"]["city"] = "西安"
    findings = audit_sessions(sessions, language="zh")
    assert ("wild_tool_bench_21", 0) in found(findings, VALUE_NOT_IN_CONTEXT)
    assert any("西安" in f.message for f in findings)


def test_a_value_the_user_gives_in_a_later_task_is_not_known_earlier(sessions):
    # Session 4: "Place an order for 200 LM317T and 50 NE555P" comes in task 2; task 1 asks for 50 NE555P itself.
    node(sessions[4], 0, 1)["action"]["arguments"]["quantity"] = 12000  # only in a later observation
    assert ("wild_tool_bench_4", 0) in found(audit_sessions(sessions), VALUE_NOT_IN_CONTEXT)


def test_the_normalisation_rules():
    context = CallContext(
        ["It’s  between 1 and 50 billion, about 5,400 units at 20% off; see me on May 4th at 7pm.", "去 成都 吧"],
        today=None,
    )
    for value in ("it's between", "IT'S", 1e9, 5e10, 5400, 0.2, "2024-05-04", "19:00", "成都", True, None, ""):
        assert context.knows(value), value
    for value in (5, 40, "Boston", "2024-06-04", "西安"):
        assert not context.knows(value), value
    assert normalise("Ｔｏｋｙｏ\u3000 Tower") == "tokyo tower"
    assert numbers_in("-54.30; 3万") == {54.3, 3.0, 30000.0}
    assert numbers_in("1 to 2 million") == {1.0, 2.0, 1e6, 2e6}


# --------------------------------------------------------------------------- observation_mismatch


def test_an_observation_that_answers_another_call_is_found(sessions):
    node(sessions[0], 1, 0)["observation"]["city"] = "Denver"
    node(sessions[15], 3, 0)["observation"]["trainNumber"] = "AVE 09999"
    findings = [f for f in audit_sessions(sessions) if f.kind == OBSERVATION_MISMATCH]
    assert [(f.id, f.task, f.severity) for f in findings] == [
        ("wild_tool_bench_0", 1, "warning"),
        ("wild_tool_bench_15", 3, "warning"),
    ]
    assert 'city = "Denver" but the call asked for city = "Portland"' in findings[0].message


def test_an_observation_against_a_declared_output_schema_and_empty_texts(sessions):
    tool(sessions[0], "getRealtimeCity")["output_schema"] = {
        "type": "object",
        "properties": {"temperature": {"type": "number"}},
        "required": ["temperature", "city"],
    }
    node(sessions[11], 0, len(sessions[11]["english_answer_list"][0]) - 1)["observation"] = ""
    node(sessions[6], 2, 0)["observation"] = {}
    findings = [f for f in audit_sessions(sessions) if f.kind == OBSERVATION_MISMATCH]
    assert {(f.id, f.task, f.severity) for f in findings} == {
        ("wild_tool_bench_0", 0, "error"),  # getRealtimeCity's temperature is "14°C", a string
        ("wild_tool_bench_0", 1, "error"),
        ("wild_tool_bench_11", 0, "error"),
        ("wild_tool_bench_6", 2, "warning"),
    }
    assert any("temperature: expected number, got string" in f.message for f in findings)


def test_an_observation_value_outside_its_enum_on_the_chinese_side(sessions):
    node(sessions[1], 0, 0, "answer_list")["observation"]["unit"] = "K"
    node(sessions[1], 0, 0, "answer_list")["action"]["arguments"].pop("unit")
    findings = audit_sessions(sessions, language="zh")
    assert found(findings, OBSERVATION_MISMATCH) == {("wild_tool_bench_1", 0)}


# --------------------------------------------------------------------------- scorer_sensitive


def test_a_nested_object_without_properties_makes_the_gold_fail_the_reference(sessions):
    tool(sessions[16], "planTrip")["parameters"]["properties"]["startLocation"].pop("properties")
    findings = [f for f in audit_sessions(sessions) if f.kind == SCORER_SENSITIVE]
    assert [(f.id, f.task, f.severity) for f in findings] == [
        ("wild_tool_bench_3", 2, "error"),
        ("wild_tool_bench_16", 2, "error"),
    ]
    assert "correct under fixed scoring" in findings[1].message
    assert found(audit_sessions(sessions), SCHEMA_VIOLATION) == set()  # JSON Schema accepts it


def test_two_independent_questions_break_the_reference_replay(sessions):
    # Session 4, task 2: the second question no longer waits for the first (quirk 11): the reference's
    # gold path asks both in one step, which no reply can match.
    node(sessions[4], 2, 1)["dependency_list"] = []
    assert isinstance(gold_record(sessions[4])["result"], str)  # "Error during inference: ..."
    assert isinstance(gold_record(sessions[4], scoring="fixed")["result"], list)
    findings = [f for f in audit_sessions(sessions) if f.kind == SCORER_SENSITIVE and f.id == "wild_tool_bench_4"]
    assert [f.task for f in findings] == [0, 1, 2, 3]
    assert all("quirk 11" in f.message and f.severity == "error" for f in findings)
    assert all("correct under fixed scoring" in f.message for f in findings)


def test_an_argument_the_reference_checker_reads_otherwise_flips_the_gold_label(sessions):
    # A type list with "float": reference scoring keeps it (a float only), fixed scoring reads "number".
    tool(sessions[4], "getPricingAndStock")["parameters"]["properties"]["quantity"]["type"] = ["float", "null"]
    labels = gold_labels(sessions[4]), gold_labels(sessions[4], scoring="fixed")
    assert [label.label for label in labels[0]][:2] == ["error", "error"]
    assert [label.label for label in labels[1]] == ["correct"] * 4
    assert found(audit_sessions(sessions), SCORER_SENSITIVE) == {
        ("wild_tool_bench_3", 2),
        ("wild_tool_bench_4", 0),
        ("wild_tool_bench_4", 1),
    }


def test_the_gold_of_every_demo_session_scores_correct_both_ways():
    for session in _read(DEMO):
        for scoring in ("reference", "fixed"):
            assert {label.label for label in gold_labels(session, scoring=scoring)} == {"correct"}


# --------------------------------------------------------------------------- failed_by_all and validation


def _task(label: str, step: int = 0, reason: str = "action name not in candidate_answer_function_list") -> dict:
    log = {"task_idx": 0}
    for s in range(step):
        log[f"step_{s}"] = {"inference_output": {"current_action_name_label": "correct"}}
    if label != "correct":
        log[f"step_{step}"] = {"inference_output": {"current_action_name_label": "error", "error_reason": reason}}
    return {"label": label, "inference_log": log}


def test_a_task_every_run_failed_is_found_with_each_runs_first_failing_step(reference):
    ok = _task("correct")
    a = RunTasks("model-a", {"wild_tool_bench_2": [ok, _task("error", 1), _task("error"), ok]})
    b = RunTasks(
        "model-b", {"wild_tool_bench_2": [ok, _task("error", 0, "tool_calls and content are None or empty"), ok, ok]}
    )
    findings = [f for f in audit_sessions(reference, runs=[a, b]) if f.kind == FAILED_BY_ALL]
    assert [(f.id, f.task) for f in findings] == [("wild_tool_bench_2", 1)]
    assert findings[0].message == (
        "failed by all 2 run(s): model-a: step 2: action name not in candidate_answer_function_list; "
        "model-b: step 1: tool_calls and content are None or empty"  # steps counted from 1 (docs/terms.md §5.1)
    )
    only_a = [f for f in audit_sessions(reference, runs=[a]) if f.kind == FAILED_BY_ALL]
    assert [(f.id, f.task) for f in only_a] == [("wild_tool_bench_2", 1), ("wild_tool_bench_2", 2)]


def test_validation_problems_become_findings_with_their_task():
    issues = [
        DatasetIssue("d.jsonl", 3, "english_answer_list[2][1].dependency_list[0]", "index 9 out of range"),
        DatasetIssue("d.jsonl", 3, "english_turn_subtypes[0]", "unknown label"),
        DatasetIssue("d.jsonl", 5, "(json)", "not JSON"),
    ]
    findings = validation_findings(issues, {3: "wild_tool_bench_2"})
    assert [(f.id, f.task, f.kind, f.severity) for f in findings] == [
        ("wild_tool_bench_2", 2, INVALID_SESSION, "error"),
        ("wild_tool_bench_2", 1, INVALID_SESSION, "error"),
        (None, None, INVALID_SESSION, "error"),
    ]
    assert findings[2].message == "line 5: (json): not JSON"


def test_a_session_that_breaks_the_schema_is_still_audited(sessions):
    broken = sessions[7]
    broken["english_task_types"] = "not a list"
    del broken["english_turn_subtypes"]
    broken["english_answer_list"][2][1]["action"]["name"] = "nowhere"
    broken["english_answer_list"][3].append("not a node")
    findings = audit_sessions(sessions, valid=[i != 7 for i in range(len(sessions))])
    assert found(findings, UNKNOWN_TOOL) == {("wild_tool_bench_7", 2)}


def test_a_loader_problem_that_a_specific_check_names_is_reported_once():
    from wildtoolbench.bench.audit import UNKNOWN_TOOL, Finding, drop_covered

    loader = [
        Finding("s1", 0, INVALID_SESSION, "error", "line 1: ...", field="english_answer_list[0][0].action.name"),
        Finding("s1", 1, INVALID_SESSION, "error", "line 1: ...", field="english_task_types[1]"),
        Finding("s2", 0, INVALID_SESSION, "error", "line 2: ...", field="english_answer_list[0][0].action.name"),
        Finding("s1", 2, INVALID_SESSION, "error", "line 1: ...", field="english_answer_list[2][0]x"),
    ]
    found = [Finding("s1", 0, UNKNOWN_TOOL, "error", "...", field="english_answer_list[0][0]")]
    assert drop_covered(loader, found) == loader[1:]
