"""The bundled demo data: sessions in the dataset schema (docs/dataset.md) and scripted candidates."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from wildtoolbench.bench import demo_data
from wildtoolbench.bench.demo_data import ANSWER, ASK, CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.bench.metrics import compute_metrics
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.schema import load_sessions
from wildtoolbench.bench.scoring import score_session

FIELDS = [
    "id",
    "english_env_info",
    "english_tools",
    "english_tasks",
    "english_answer_list",
    "english_task_types",
    "english_turn_subtypes",
    "env_info",
    "tools",
    "tasks",
    "answer_list",
    "task_types",
    "turn_subtypes",
]
TASK_TYPES_ZH = {
    "Single-Tool": "单工具",
    "Parallel Multi-Tool": "多工具",
    "Sequential Multi-Tool": "多工具",
    "Mixed Multi-Tool": "多工具",
    "Clarify": "澄清",
    "Chat": "闲聊",
}
SUBTYPES_ZH = {
    "Coreferential Reference": "指代",
    "Partial Information": "省略成分",
    "Long-Range Dependency": "长期记忆",
}
WEEKDAYS_ZH = ["星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"]
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load_jsonl(path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{path.name}:{number}: blank line"
        rows.append(json.loads(line))
    return rows


SESSIONS = _load_jsonl(SESSIONS_PATH)
CANDIDATES = _load_jsonl(CANDIDATES_PATH)


def _tasks():
    for session in SESSIONS:
        for t, answer_list in enumerate(session["english_answer_list"]):
            yield session, t, answer_list


def _tool_map(session) -> dict[str, dict[str, Any]]:
    return {tool["function"]["name"]: tool["function"]["parameters"] for tool in session["english_tools"]}


# --- a small, strict schema check of gold arguments (stricter than the reference checker: exact types) -----

_TYPES = {
    "string": str,
    "integer": int,
    "float": float,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _schema_errors(schema: dict[str, Any], value: Any, where: str) -> list[str]:
    expected = _TYPES[schema["type"]]
    if not isinstance(value, expected) or (schema["type"] == "integer" and isinstance(value, bool)):
        return [f"{where}: {value!r} is not {schema['type']}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not in enum")
    if schema["type"] == "object":
        properties = schema.get("properties", {})
        errors += [f"{where}.{k}: required key missing" for k in schema.get("required", []) if k not in value]
        errors += [f"{where}.{k}: key not defined" for k in value if k not in properties]
        errors += [
            e for k, v in value.items() if k in properties for e in _schema_errors(properties[k], v, f"{where}.{k}")
        ]
    if schema["type"] == "array" and "items" in schema:
        errors += [e for i, v in enumerate(value) for e in _schema_errors(schema["items"], v, f"{where}[{i}]")]
    return errors


# --- the step loop at the level of names (docs/evaluation.md §3), enough to count consumed responses -----------------


def _replay_names(session, responses, pairs: list | None = None) -> tuple[list[str], int]:
    """Outcome per task ('optimal', 'correct' or 'error') and the number of responses consumed.

    When ``pairs`` is a list, appends ``(task, call id, tool name, predicted arguments string, gold
    arguments)`` for every matched call, paired as the scorer pairs them (docs/scoring.md).
    """
    queue = iter(responses)
    consumed = 0
    outcomes = []
    for task, answer_list in enumerate(session["english_answer_list"]):
        tracker = PathTracker(answer_list)
        step = 0
        while True:
            response = next(queue)
            consumed += 1
            candidates = tracker.candidates(step)
            names_of = [[tracker.names[i] for i in c] for c in candidates]
            if not response["tool_calls"]:
                if not response["content"]:
                    outcomes.append("error")
                    break
                hit = next((n for n in names_of if ASK in n or ANSWER in n), None)
                if hit is not None and ASK in hit:
                    step += 1
                    continue
                if hit is None:
                    outcomes.append("error")
                else:
                    outcomes.append("optimal" if step == tracker.min_length - 1 else "correct")
                break
            predicted = sorted(c["function"]["name"] for c in response["tool_calls"])
            match = next((c for c, n in zip(candidates, names_of) if sorted(n) == predicted), None)
            if match is None:
                outcomes.append("error")
                break
            if pairs is not None:
                calls = sorted(
                    response["tool_calls"], key=lambda c: (c["function"]["name"], c["function"]["arguments"])
                )
                gold = sorted(
                    (answer_list[i]["action"] for i in match), key=lambda a: (a["name"], json.dumps(a["arguments"]))
                )
                pairs += [
                    (task, c["id"], g["name"], c["function"]["arguments"], g["arguments"]) for c, g in zip(calls, gold)
                ]
            tracker.prune(step, match)
            step += 1
    return outcomes, consumed


# --- sessions ---------------------------------------------------------------------------------------------


def test_sessions_have_every_field_with_the_right_shape():
    assert len(SESSIONS) == 6
    for line, session in enumerate(SESSIONS):
        assert list(session) == FIELDS
        assert session["id"] == f"wild_tool_bench_{line}"
        for prefix in ("english_", ""):
            assert len(session[prefix + "tasks"]) == 4 and all(
                isinstance(t, str) and t for t in session[prefix + "tasks"]
            )
            assert len(session[prefix + "answer_list"]) == 4
            assert len(session[prefix + "task_types"]) == 4 and len(session[prefix + "turn_subtypes"]) == 3
            assert {tool["type"] for tool in session[prefix + "tools"]} == {"function"}
        assert session["task_types"] == [TASK_TYPES_ZH[t] for t in session["english_task_types"]]
        assert session["turn_subtypes"] == [SUBTYPES_ZH[t] for t in session["english_turn_subtypes"]]
        assert session["answer_list"] == session["english_answer_list"]
        assert session["tasks"] == session["english_tasks"]
        when = dt.datetime.strptime(session["english_env_info"][:19], "%Y-%m-%d %H:%M:%S")
        assert session["english_env_info"] == f"{when:%Y-%m-%d %H:%M:%S} {when:%A}"
        assert session["env_info"] == f"{when:%Y-%m-%d %H:%M:%S} {WEEKDAYS_ZH[when.weekday()]}"
        english = [
            (t["function"]["name"], sorted(t["function"]["parameters"]["properties"])) for t in session["english_tools"]
        ]
        chinese = [(t["function"]["name"], sorted(t["function"]["parameters"]["properties"])) for t in session["tools"]]
        assert english == chinese
        assert all(CJK.search(t["function"]["description"]) for t in session["tools"])


def test_dependency_lists_are_valid_and_acyclic():
    for session, t, answer_list in _tasks():
        n = len(answer_list)
        remaining = {i: set(node["dependency_list"]) for i, node in enumerate(answer_list)}
        for i, deps in remaining.items():
            assert all(isinstance(d, int) and 0 <= d < n and d != i for d in deps), (session["id"], t, i)
        while remaining:  # Kahn: some node must always be free of unfinished dependencies
            free = [i for i, deps in remaining.items() if not deps & remaining.keys()]
            assert free, f"{session['id']} task {t}: cycle among {sorted(remaining)}"
            for i in free:
                del remaining[i]


def test_nodes_are_well_formed_and_end_with_an_answer_depending_on_everything():
    for session, t, answer_list in _tasks():
        tools = _tool_map(session)
        *body, last = answer_list
        assert last["action"]["name"] == ANSWER and last["dependency_list"] == list(range(len(body)))
        is_chat = session["english_task_types"][t] == "Chat"
        assert last["action"]["arguments"] == {"answer_type": "chat" if is_chat else "tool"}
        assert isinstance(last["observation"], str) and last["observation"]
        assert (len(body) == 0) == is_chat
        for node in body:
            name, arguments = node["action"]["name"], node["action"]["arguments"]
            if name == ASK:
                assert set(arguments) == {"tool_name", "missing_required_parameters"}
                required = tools[arguments["tool_name"]]["required"]
                assert arguments["missing_required_parameters"]
                assert set(arguments["missing_required_parameters"]) <= set(required)
                assert isinstance(node["observation"], str) and node["user_input"]
            else:
                assert name in tools and "user_input" not in node, (session["id"], t, name)
                assert _schema_errors(tools[name], arguments, name) == [], (session["id"], t)


def test_no_gold_step_mixes_a_pseudo_tool_with_anything():
    for session, t, answer_list in _tasks():
        tracker = PathTracker(answer_list)
        for step in tracker.gold_path:
            names = [tracker.names[i] for i in step]
            if ASK in names or ANSWER in names:
                assert len(names) == 1, (session["id"], t, step, names)


def test_demo_covers_every_task_type_subtype_and_argument_shape():
    types = {t for s in SESSIONS for t in s["english_task_types"]}
    assert types == set(TASK_TYPES_ZH)
    assert {t for s in SESSIONS for t in s["english_turn_subtypes"]} == set(SUBTYPES_ZH)
    shapes = set()
    for session, t, answer_list in _tasks():
        kind = session["english_task_types"][t]
        tracker = PathTracker(answer_list)
        steps = [[tracker.names[i] for i in step] for step in tracker.gold_path]
        if kind == "Parallel Multi-Tool" and len(set(steps[0])) < len(steps[0]):
            shapes.add("same-name parallel group")
        if kind == "Mixed Multi-Tool":
            shapes.add("fan-in" if len(steps[0]) > 1 else "fan-out")
        if kind == "Clarify":
            shapes.add(f"{sum(n == [ASK] for n in steps)} ask(s)")
        for node in answer_list[:-1]:
            text = json.dumps(node["action"]["arguments"], ensure_ascii=False)
            if node["action"]["name"] != ASK and CJK.search(text):
                shapes.add("Chinese argument")
            if any(isinstance(v, (dict, list)) for v in node["action"]["arguments"].values()):
                shapes.add("nested argument")
    assert shapes == {
        "same-name parallel group",
        "fan-in",
        "fan-out",
        "1 ask(s)",
        "2 ask(s)",
        "Chinese argument",
        "nested argument",
    }
    tools_text = json.dumps([s["english_tools"] for s in SESSIONS])
    assert '"type": "float"' in tools_text and '"enum"' in tools_text


# --- candidates -------------------------------------------------------------------------------------------


def test_candidates_file_is_up_to_date_with_the_generator():
    assert demo_data.main(["--check"]) == 0
    assert CANDIDATES == demo_data.build_candidates(SESSIONS)


def test_every_session_has_an_oracle_and_a_demo_model():
    pairs = [(c["session_id"], c["candidate"]) for c in CANDIDATES]
    assert pairs == [(s["id"], name) for s in SESSIONS for name in ("oracle", "demo-model")]
    for record in CANDIDATES:
        assert record["responses"][-1] == {"content": "SPARE RESPONSE", "tool_calls": None, "reasoning_content": None}
        for response in record["responses"]:
            assert set(response) == {"content", "tool_calls", "reasoning_content"}
            for tool_call in response["tool_calls"] or []:
                assert re.fullmatch(r"call_\d+_\d_\d+_\d+", tool_call["id"]) and tool_call["type"] == "function"
                assert isinstance(json.loads(tool_call["function"]["arguments"]), dict)


def test_oracle_has_one_response_per_gold_step_plus_the_spare_and_is_optimal():
    oracle = {c["session_id"]: c["responses"] for c in CANDIDATES if c["candidate"] == "oracle"}
    for session in SESSIONS:
        steps = sum(len(PathTracker(a).gold_path) for a in session["english_answer_list"])
        assert len(oracle[session["id"]]) == steps + 1
        outcomes, consumed = _replay_names(session, oracle[session["id"]])
        assert outcomes == ["optimal"] * 4 and consumed == steps


def test_oracle_uses_the_exact_gold_arguments_questions_and_replies():
    session = SESSIONS[2]
    responses = next(
        c["responses"] for c in CANDIDATES if c["session_id"] == session["id"] and c["candidate"] == "oracle"
    )
    # task 1: one step with both searchCatalog calls, then the reply
    step = responses[3]
    assert [c["id"] for c in step["tool_calls"]] == ["call_2_1_0_0", "call_2_1_0_1"]
    assert [json.loads(c["function"]["arguments"]) for c in step["tool_calls"]] == [
        n["action"]["arguments"] for n in session["english_answer_list"][1][:2]
    ]
    # task 2: two questions, the call, the reply
    clarify = session["english_answer_list"][2]
    assert [r["content"] for r in responses[5:7]] == [clarify[0]["observation"], clarify[1]["observation"]]
    assert responses[8]["content"] == clarify[3]["observation"]


def test_demo_model_makes_the_scripted_mistakes_and_consumes_all_but_the_spare():
    demo = {c["session_id"]: c["responses"] for c in CANDIDATES if c["candidate"] == "demo-model"}
    outcomes = {}
    for session in SESSIONS:
        result, consumed = _replay_names(session, demo[session["id"]])
        assert consumed == len(demo[session["id"]]) - 1, session["id"]
        outcomes[session["id"]] = result
    assert outcomes == {
        "wild_tool_bench_0": ["optimal", "error", "optimal", "optimal"],
        "wild_tool_bench_1": ["optimal"] * 4,
        "wild_tool_bench_2": ["optimal"] * 4,
        "wild_tool_bench_3": ["optimal", "optimal", "optimal", "error"],
        "wild_tool_bench_4": ["optimal", "correct", "error", "optimal"],
        "wild_tool_bench_5": ["optimal", "optimal", "error", "optimal"],
    }


def test_reference_argument_checker_accepts_the_oracle_and_flags_each_scripted_argument_mistake():
    from wildtoolbench.bench.args import check_arguments, float_to_number

    verdicts = {}
    for record in CANDIDATES:
        session = SESSIONS[demo_data.session_index({"id": record["session_id"]})]
        tools = float_to_number(session["english_tools"])
        pairs: list = []
        _replay_names(session, record["responses"], pairs)
        for _task, call_id, name, predicted, gold in pairs:
            verdict = check_arguments(tools, name, predicted, json.dumps(gold))
            if verdict != "correct":
                verdicts[(record["candidate"], call_id)] = verdict
    assert verdicts == {
        ("demo-model", "call_0_2_0_0"): "error_match: string similarity too low at 'check_out' (rouge score: 0.00)",
        ("demo-model", "call_1_1_0_0"): "error_match: value type inconsistent at 'target_temperature_c'",
        ("demo-model", "call_1_3_1_0"): "error_schema: required args missing",
        ("demo-model", "call_3_1_1_0"): "error_schema: nested args value not in enum",
    }


def test_strict_schema_check_flags_the_demo_model_calls_that_break_the_schema():
    demo = {c["session_id"]: c["responses"] for c in CANDIDATES if c["candidate"] == "demo-model"}
    found = {}
    for session in SESSIONS:
        tools = _tool_map(session)
        for response in demo[session["id"]]:
            for tool_call in response["tool_calls"] or []:
                name = tool_call["function"]["name"]
                errors = (
                    _schema_errors(tools[name], json.loads(tool_call["function"]["arguments"]), name)
                    if name in tools
                    else [f"{name}: unknown tool"]
                )
                if errors:
                    found[tool_call["id"]] = errors
    assert found == {
        "call_1_1_0_0": ["setThermostat.target_temperature_c: 17 is not float"],
        "call_1_3_1_0": ["compareTariffs.postcode: required key missing"],
        "call_3_1_1_0": ["addToShoppingList.items[2].unit: 'tablespoons' not in enum"],
        "call_4_2_0_1": ["getRaceDetails: unknown tool"],
    }


def test_dataset_loader_and_wtb_validate_accept_the_demo():
    from typer.testing import CliRunner

    from wildtoolbench.bench.schema import load_sessions
    from wildtoolbench.cli import app

    sessions = load_sessions(SESSIONS_PATH)
    assert [s.id for s in sessions] == [f"wild_tool_bench_{i}" for i in range(6)]
    result = CliRunner().invoke(app, ["validate", str(SESSIONS_PATH)])
    assert result.exit_code == 0, result.output
    assert "6 sessions, 24 tasks" in result.output


def _run_scripted(session: dict[str, Any], responses: list[dict[str, Any]], model_name: str) -> dict[str, Any]:
    """Drive the pure inference functions (branch eval) with a scripted response queue; docs/evaluation.md §5 record."""
    import random

    from wildtoolbench.bench.harness import (
        build_prompt,
        close_task_result,
        float_to_number,
        match_step,
        new_task_result,
        session_record,
        step_log,
    )

    tools = float_to_number(session["english_tools"])
    position = 0
    results = []
    for t, answer_list in enumerate(session["english_answer_list"]):
        messages = build_prompt(session, t, random.Random(0))
        result = new_task_result(t, messages[-1])
        tracker = PathTracker(answer_list)
        step = 0
        while True:
            response = responses[position]
            position += 1
            outcome = match_step(tracker, answer_list, step, response)
            result["inference_log"][f"step_{step}"] = step_log(messages, tools, response, outcome)
            messages = messages + outcome.messages
            if outcome.prune is not None:
                tracker.prune(step, outcome.prune)
            if outcome.task_end:
                break
            step += 1
        results.append(close_task_result(result, outcome.task_correct, step, tracker.min_length))
    assert position == len(responses) - 1, "the spare response must be the only one left"
    return session_record(session["id"], model_name, results)


def test_demo_scores_end_to_end_with_the_reference_rules():

    gold = {s.id: s for s in load_sessions(SESSIONS_PATH)}
    raw = {s["id"]: s for s in SESSIONS}
    labels: dict[str, dict[str, list]] = {"oracle": {}, "demo-model": {}}
    scored: dict[str, list] = {"oracle": [], "demo-model": []}
    for record in CANDIDATES:
        name, sid = record["candidate"], record["session_id"]
        tasks = score_session(_run_scripted(raw[sid], record["responses"], name), gold[sid])
        labels[name][sid] = [(task["label"], task["is_optimal"]) for task in tasks]
        scored[name].append((gold[sid], tasks))
    assert all(v == [("correct", True)] * 4 for v in labels["oracle"].values())
    ok, error = ("correct", True), ("error", False)
    assert labels["demo-model"] == {
        "wild_tool_bench_0": [ok, error, error, ok],
        "wild_tool_bench_1": [ok, error, ok, error],
        "wild_tool_bench_2": [ok, ok, ok, ok],
        "wild_tool_bench_3": [ok, error, ok, error],
        "wild_tool_bench_4": [ok, ("correct", False), error, ok],
        "wild_tool_bench_5": [ok, ok, error, ok],
    }
    metric = compute_metrics("demo-model", scored["demo-model"])
    assert metric["total_info"]["task"]["correct_count"] == 16
    assert metric["total_info"]["session"]["correct_count"] == 1
    assert metric["optimal_info"]["Total"]["correct_count"] == 3
    assert compute_metrics("oracle", scored["oracle"])["total_info"]["task"]["correct_count"] == 24
