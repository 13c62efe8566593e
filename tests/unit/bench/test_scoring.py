"""Per-task scoring rules (docs/scoring.md, quirks 12-16) and metrics (docs/metrics.md, quirks 17-20) on hand-made records.

A stub argument checker is injected so these tests pin the scoring walk itself;
tests/unit/bench/test_scoring_reference.py runs the real checker on the reference fixtures.
"""

from __future__ import annotations

import copy
import json

import pytest

from tests.support.session_factory import make_session
from wildtoolbench.bench.metrics import compute_metrics
from wildtoolbench.bench.schema import Session
from wildtoolbench.bench.scoring import ResultRecordError, score_session, score_task


class StubChecker:
    """Correct when both JSON texts parse to equal values; records every call."""

    def __init__(self):
        self.calls = []

    def __call__(self, tools, name, predicted, gold):
        self.calls.append((name, predicted, gold))
        try:
            same = json.loads(predicted) == json.loads(gold)
        except ValueError:
            return "error: args invalid json format"
        return "correct" if same else f"mismatch {predicted} vs {gold}"


def call_step(calls, gold, label="correct"):
    step = {
        "inference_input": {"messages": [], "tools": []},
        "inference_output": {
            "reasoning_content": None,
            "content": None,
            "tool_calls": [
                {"id": f"c{j}", "type": "function", "function": {"name": n, "arguments": a}}
                for j, (n, a) in enumerate(calls)
            ],
            "current_action_name_label": label,
        },
        "inference_answer": {
            "candidate_0_answer_function_list": {"action": [{"arguments": a, "name": n} for n, a in gold]}
        },
    }
    if label != "correct":
        step["inference_output"]["error_reason"] = "action name not in candidate_answer_function_list"
    return step


def text_step(content, gold_name, gold_args, observation="gold text", label="correct"):
    return {
        "inference_input": {"messages": [], "tools": []},
        "inference_output": {
            "reasoning_content": None,
            "content": content,
            "tool_calls": None,
            "current_action_name_label": label,
        },
        "inference_answer": {
            "candidate_0_answer_function_list": {
                "action": [{"arguments": gold_args, "name": gold_name}],
                "observation": observation,
            }
        },
    }


FINAL = ("prepare_to_answer", '{"answer_type": "tool"}')


def task(steps, name_label="correct", is_optimal=True, index=0):
    log = {"task_idx": index, "begin_of_current_task": {"role": "user", "content": "hi"}}
    log.update({f"step_{i}": s for i, s in enumerate(steps)})
    n = len(steps)
    return {
        "action_name_label": name_label,
        "is_optimal": is_optimal,
        "inference_log": log,
        "latency": [0.0] * n,
        "input_token_count": [0] * n,
        "output_token_count": [0] * n,
    }


def test_all_correct_inserts_labels_in_reference_order():
    checker = StubChecker()
    raw = task([call_step([("f", '{"a": 1}')], [("f", '{"a": 1}')]), text_step("done", *FINAL)])
    before = copy.deepcopy(raw)
    out = score_task(raw, [], checker=checker)
    assert raw == before  # input untouched
    assert list(out) == [
        "label",
        "action_name_label",
        "action_arguments_label",
        "is_optimal",
        "inference_log",
        "latency",
        "input_token_count",
        "output_token_count",
    ]
    assert (out["label"], out["action_arguments_label"], out["is_optimal"]) == ("correct", "correct", True)
    step0 = out["inference_log"]["step_0"]["inference_output"]
    assert list(step0)[-1] == "current_action_arguments_label" and step0["current_action_arguments_label"] == "correct"
    assert "current_action_arguments_check_result" not in step0
    assert "current_action_arguments_label" not in out["inference_log"]["step_1"]["inference_output"]
    assert checker.calls == [("f", '{"a": 1}', '{"a": 1}')]  # the final-answer step is never checked


def test_sorting_pairs_by_raw_text_and_writes_lists_back():
    # Predicted sorted by raw string: '{"a": 2, ...' < '{"b": 9, ...'; gold sorted by json.dumps of the
    # object: '{"a": 1, ...' < '{"a": 2, ...'. Key order in the model's JSON mis-pairs the calls (quirk 13).
    predicted = [("f", '{"b": 9, "a": 1}'), ("f", '{"a": 2, "b": 1}')]
    gold = [("f", '{"a": 2, "b": 1}'), ("f", '{"a": 1, "b": 9}')]
    out = score_task(task([call_step(predicted, gold), text_step("x", *FINAL)]), [], checker=StubChecker())
    step = out["inference_log"]["step_0"]
    assert [c["function"]["arguments"] for c in step["inference_output"]["tool_calls"]] == [
        '{"a": 2, "b": 1}',
        '{"b": 9, "a": 1}',
    ]
    assert [c["id"] for c in step["inference_output"]["tool_calls"]] == ["c1", "c0"]
    assert [a["arguments"] for a in step["inference_answer"]["candidate_0_answer_function_list"]["action"]] == [
        '{"a": 1, "b": 9}',
        '{"a": 2, "b": 1}',
    ]
    assert step["inference_output"]["current_action_arguments_check_result"] == [
        'mismatch {"a": 2, "b": 1} vs {"a": 1, "b": 9}',
        'mismatch {"b": 9, "a": 1} vs {"a": 2, "b": 1}',
    ]
    assert out["label"] == "error"


def test_gold_sort_key_is_json_of_the_object_not_of_the_text():
    # As text, '"12"' sorts before '"1"' once quotes are escaped; as an object, "1" comes first.
    gold = [("g", '{"id": "12"}'), ("g", '{"id":"1"}'), ("f", '{"id": "9"}')]
    predicted = [("g", '{"id": "1"}'), ("g", '{"id": "12"}'), ("f", '{"id": "9"}')]
    out = score_task(task([call_step(predicted, gold), text_step("x", *FINAL)]), [], checker=StubChecker())
    actions = out["inference_log"]["step_0"]["inference_answer"]["candidate_0_answer_function_list"]["action"]
    assert [(a["name"], a["arguments"]) for a in actions] == [
        ("f", '{"id": "9"}'),
        ("g", '{"id":"1"}'),
        ("g", '{"id": "12"}'),
    ]
    assert out["label"] == "correct"


def test_argument_error_deletes_only_next_step_and_forces_name_label():
    steps = [
        call_step([("f", '{"a": 0}')], [("f", '{"a": 1}')]),
        call_step([("g", '{"b": 1}')], [("g", '{"b": 1}')]),
        call_step([("h", "{}")], [("k", "{}")], label="error"),
    ]
    checker = StubChecker()
    out = score_task(task(steps, name_label="error", is_optimal=False), [], checker=checker)
    log = out["inference_log"]
    assert [k for k in log if k.startswith("step_")] == ["step_0", "step_2"]
    assert (out["label"], out["action_name_label"], out["action_arguments_label"]) == ("error", "correct", "error")
    assert log["step_0"]["inference_output"]["current_action_arguments_check_result"] == [
        'mismatch {"a": 0} vs {"a": 1}'
    ]
    assert "current_action_arguments_label" not in log["step_2"]["inference_output"]
    assert len(checker.calls) == 1
    assert out["latency"] == [0.0] * 3  # per-request lists are left alone


def test_argument_error_clears_is_optimal_and_drops_final_step():
    steps = [
        call_step([("f", '{"a": 0}'), ("f", '{"a": 5}')], [("f", '{"a": 5}'), ("f", '{"a": 1}')]),
        text_step("x", *FINAL),
    ]
    out = score_task(task(steps, is_optimal=True), [], checker=StubChecker())
    assert out["is_optimal"] is False
    assert [k for k in out["inference_log"] if k.startswith("step_")] == ["step_0"]
    assert out["inference_log"]["step_0"]["inference_output"]["current_action_arguments_check_result"] == [
        'mismatch {"a": 0} vs {"a": 1}',
        "correct",
    ]


def test_name_error_stops_without_arguments_label():
    steps = [
        call_step([("f", '{"a": 1}')], [("f", '{"a": 1}')]),
        call_step([("x", "{}")], [("g", "{}")], label="error"),
    ]
    checker = StubChecker()
    out = score_task(task(steps, name_label="error", is_optimal=False), [], checker=checker)
    assert list(out)[:3] == ["label", "action_name_label", "is_optimal"]
    assert (out["label"], out["action_name_label"]) == ("error", "error")
    assert out["inference_log"]["step_0"]["inference_output"]["current_action_arguments_label"] == "correct"
    assert len(checker.calls) == 1


def test_empty_response_step_without_answer_counts_as_name_error():
    empty = {
        "inference_input": {"messages": [], "tools": []},
        "inference_output": {
            "reasoning_content": None,
            "content": "",
            "tool_calls": [],
            "current_action_name_label": "error",
            "error_reason": "tool_calls and content are None or empty",
        },
    }
    steps = [call_step([("f", '{"a": 1}')], [("f", '{"a": 1}')]), empty]
    out = score_task(task(steps, name_label="error", is_optimal=False), [], checker=StubChecker())
    assert (out["label"], out["action_name_label"]) == ("error", "error")
    assert "action_arguments_label" not in out
    assert out["inference_log"]["step_1"] == empty


def test_clarification_steps_are_skipped():
    ask = ("ask_user_for_required_parameters", '{"tool_name": "f", "missing_required_parameters": ["a"]}')
    steps = [text_step("Which a?", *ask), call_step([("f", '{"a": 3}')], [("f", '{"a": 3}')]), text_step("x", *FINAL)]
    checker = StubChecker()
    out = score_task(task(steps), [], checker=checker)
    assert out["label"] == "correct"
    assert "current_action_arguments_label" not in out["inference_log"]["step_0"]["inference_output"]
    assert checker.calls == [("f", '{"a": 3}', '{"a": 3}')]


def test_checker_receives_the_tools_given():
    seen = []

    def checker(tools, name, predicted, gold):
        seen.append(tools)
        return "correct"

    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    score_task(task([call_step([("f", "{}")], [("f", "{}")]), text_step("x", *FINAL)]), tools, checker=checker)
    assert seen == [tools]


def test_malformed_task_names_the_field():
    bad = task([call_step([("f", "{}")], [("f", "{}")])])
    del bad["inference_log"]["step_0"]["inference_output"]
    with pytest.raises(ResultRecordError) as info:
        score_task(bad, [], checker=StubChecker(), where="result[2]")
    assert info.value.field == "result[2].inference_log.step_0.inference_output"


# --------------------------------------------------------------------------- sessions


def _session_record(session: Session, fmt: str):
    tasks = [
        task(
            [
                call_step(
                    [("getWeather", '{"city": "Paris"}'), ("getWeather", '{"lat": 47.5, "city": "Seattle"}')],
                    [("getWeather", '{"lat": 47.5, "city": "Seattle"}'), ("getWeather", '{"city": "Paris"}')],
                ),
                text_step("x", *FINAL),
            ],
            index=0,
        ),
        task(
            [
                text_step("How many?", "ask_user_for_required_parameters", "{}"),
                call_step(
                    [("bookTable", '{"place": "Chez Nous", "people": 4}')],
                    [("bookTable", '{"place": "Chez Nous", "people": 4}')],
                ),
                text_step("x", *FINAL),
            ],
            index=1,
            is_optimal=True,
        ),
        task([text_step("Welcome", "prepare_to_answer", '{"answer_type": "chat"}')], index=2),
        task(
            [
                call_step([("getWeather", '{"city": "Oslo"}')], [("getWeather", '{"city": "Oslo"}')]),
                call_step(
                    [("bookTable", '{"place": "Oslo Fish", "people": 2.0}')],
                    [("bookTable", '{"place": "Oslo Fish", "people": 2}')],
                ),
                text_step("x", *FINAL),
            ],
            index=3,
        ),
    ]
    if fmt == "ours":
        return {"id": session.id, "model_name": "m", "result": tasks}
    return {"session_id": session.id, "candidate": "m", "result": tasks}


def test_score_session_accepts_both_record_formats():
    session = Session.model_validate(make_session())
    ours = score_session(_session_record(session, "ours"), session, checker=StubChecker(), tools=[])
    fixture = score_session(_session_record(session, "fixture"), session, checker=StubChecker(), tools=[])
    assert ours == fixture
    assert [t["label"] for t in ours] == ["correct", "correct", "correct", "correct"]  # stub: 2.0 == 2


def test_score_session_rejects_mismatched_records():
    session = Session.model_validate(make_session())
    record = _session_record(session, "ours")
    with pytest.raises(ResultRecordError) as info:
        score_session({**record, "id": "other"}, session, checker=StubChecker(), tools=[])
    assert info.value.field == "id"
    with pytest.raises(ResultRecordError) as info:
        score_session({**record, "result": record["result"][:3]}, session, checker=StubChecker(), tools=[])
    assert info.value.field == "result"


def test_inference_error_record_scores_every_task_wrong():
    session = Session.model_validate(make_session())
    record = {"id": session.id, "model_name": "m", "result": "Error during inference: boom"}
    scored = score_session(record, session, checker=StubChecker(), tools=[])
    assert [t["label"] for t in scored] == ["error"] * 4
    assert all(t["error_reason"] == "Error during inference: boom" and t["is_optimal"] is False for t in scored)
    metric = compute_metrics("m", [(session, scored)])
    assert metric["total_info"]["task"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 4}
    assert metric["progress_info"]["Total"] == {"rate": 0.0, "complete_step": 0, "total_step": 3}
    assert metric["optimal_info"]["Total"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 1}


# --------------------------------------------------------------------------- metrics


def test_metrics_buckets_and_key_order():
    session = Session.model_validate(make_session("s1"))
    other = Session.model_validate(make_session("s2"))
    good = score_session(_session_record(session, "ours"), session, checker=StubChecker(), tools=[])
    bad_record = _session_record(other, "ours") | {"id": "s2"}
    # Task 0 of s2 gets a wrong argument: label error, is_optimal False.
    bad_record["result"][0]["inference_log"]["step_0"]["inference_output"]["tool_calls"][0]["function"]["arguments"] = (
        '{"city": "Rome"}'
    )
    bad = score_session(bad_record, other, checker=StubChecker(), tools=[])
    metric = compute_metrics("model-x", [(session, good), (other.model_dump(mode="json"), bad)])
    assert list(metric) == [
        "model_name",
        "total_info",
        "task_type_info",
        "layer_info",
        "turn_subtype_info",
        "optimal_info",
        "progress_info",
    ]
    assert metric["model_name"] == "model-x"
    assert metric["total_info"]["task"] == {"accuracy": 7 / 8, "correct_count": 7, "total_count": 8}
    assert metric["total_info"]["session"] == {"accuracy": 0.5, "correct_count": 1, "total_count": 2}
    types = metric["task_type_info"]
    assert list(types) == [
        "Single-Tool",
        "Multi-Tool",
        "Parallel Multi-Tool",
        "Sequential Multi-Tool",
        "Mixed Multi-Tool",
        "Clarify",
        "Chat",
    ]
    assert types["Single-Tool"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 0}
    assert types["Multi-Tool"] == {"accuracy": 0.75, "correct_count": 3, "total_count": 4}
    assert types["Parallel Multi-Tool"]["correct_count"] == 1 and types["Parallel Multi-Tool"]["total_count"] == 2
    assert list(metric["layer_info"]) == ["0", "1", "2", "3"]
    assert metric["layer_info"]["0"]["correct_count"] == 1
    turns = metric["turn_subtype_info"]
    assert list(turns) == [
        "First Turn",
        "Subsequent Turn",
        "Coreferential Reference",
        "Partial Information",
        "Long-Range Dependency",
    ]
    assert turns["First Turn"] == {"accuracy": 0.5, "correct_count": 1, "total_count": 2}
    assert turns["Subsequent Turn"]["total_count"] == 6 and turns["Partial Information"]["total_count"] == 2
    assert list(metric["optimal_info"]) == ["Total", "Parallel Multi-Tool", "Mixed Multi-Tool"]
    assert metric["optimal_info"]["Total"] == {"accuracy": 0.5, "correct_count": 1, "total_count": 2}
    assert metric["optimal_info"]["Mixed Multi-Tool"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 0}
    # Sequential task 3: 3 recorded steps left out of len(answer_list[3]) == 3 gold nodes, in both sessions.
    assert metric["progress_info"]["Sequential Multi-Tool"] == {"rate": 1.0, "complete_step": 6, "total_step": 6}
    assert list(metric["progress_info"]["Total"]) == ["rate", "complete_step", "total_step"]


def test_progress_counts_steps_left_after_deletion_and_uses_chinese_answer_list():
    raw = make_session()
    raw["answer_list"][3].insert(0, copy.deepcopy(raw["answer_list"][3][0]))  # Chinese side: 4 nodes
    for node in raw["answer_list"][3][1:]:
        node["dependency_list"] = [i + 1 for i in node["dependency_list"]]
    session = Session.model_validate(raw)
    record = _session_record(session, "ours")
    record["result"][3]["inference_log"]["step_0"]["inference_output"]["tool_calls"][0]["function"]["arguments"] = (
        '{"city": "Bergen"}'
    )
    scored = score_session(record, session, checker=StubChecker(), tools=[])
    assert [k for k in scored[3]["inference_log"] if k.startswith("step_")] == ["step_0", "step_2"]
    metric = compute_metrics("m", [(session, scored)])
    assert metric["progress_info"]["Sequential Multi-Tool"] == {"rate": 0.5, "complete_step": 2, "total_step": 4}
