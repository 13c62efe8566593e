"""Pure harness logic of the evaluation loop (wildtoolbench.bench.harness; docs/evaluation.md §2, §3, §5), on hand-written DAGs."""

from __future__ import annotations

import json
import random
import re

import pytest

from wildtoolbench.bench import harness as inference
from wildtoolbench.bench.paths import PathTracker

ID = re.compile(r"^toolu_bdrk_[A-Za-z0-9]{24}$")


def node(name, arguments=None, observation=None, deps=(), user_input=None):
    out = {
        "action": {"name": name, "arguments": arguments or {}},
        "observation": observation,
        "dependency_list": list(deps),
    }
    if user_input is not None:
        out["user_input"] = user_input
    return out


def call(call_id, name, arguments="{}"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# getA(x) and getB are independent, prep depends on both.
PARALLEL = [
    node("getB", {"q": "b"}, {"b": 1}),
    node("getA", {"q": "a"}, "plain text"),
    node("prepare_to_answer", {"answer_type": "tool"}, "gold reply", deps=[0, 1]),
]
# ask -> call -> prep
CLARIFY = [
    node(
        "ask_user_for_required_parameters",
        {"tool_name": "getA", "missing_required_parameters": ["q"]},
        "Which q?",
        user_input="q is 7",
    ),
    node("getA", {"q": "7"}, {"v": 7}, deps=[0]),
    node("prepare_to_answer", {"answer_type": "tool"}, "done", deps=[1]),
]


def session_with(answer_lists, tasks=None):
    return {
        "id": "wild_tool_bench_9",
        "english_env_info": "2024-05-03 10:12:00 Friday",
        "english_tools": [
            {
                "type": "function",
                "function": {"name": "getA", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}},
            }
        ],
        "english_tasks": tasks or [f"task {i}" for i in range(len(answer_lists))],
        "english_answer_list": answer_lists,
    }


def test_prompt_history_is_gold_and_double_encoded():
    session = session_with([PARALLEL, CLARIFY, PARALLEL])
    messages = inference.build_prompt(session, 2, random.Random(0))
    assert messages[0] == {"role": "system", "content": "Current Date: 2024-05-03 10:12:00 Friday"}
    assert messages[-1] == {"role": "user", "content": "task 2"}
    # task 0: one parallel step (getB, getA in node-index order), two tool messages, the gold reply
    assert messages[1] == {"role": "user", "content": "task 0"}
    assistant = messages[2]
    assert assistant["content"] == "" and [c["function"]["name"] for c in assistant["tool_calls"]] == ["getB", "getA"]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"q": "b"}'
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert all(ID.match(i) for i in ids) and len(set(ids)) == 2
    assert messages[3] == {"role": "tool", "content": '{"b": 1}', "tool_call_id": ids[0]}
    # a string observation gains quotes in the history (quirk 2)
    assert messages[4] == {"role": "tool", "content": '"plain text"', "tool_call_id": ids[1]}
    assert messages[5] == {"role": "assistant", "content": "gold reply"}
    # task 1: ask -> user reply, call, reply
    assert messages[6:9] == [
        {"role": "user", "content": "task 1"},
        {"role": "assistant", "content": "Which q?"},
        {"role": "user", "content": "q is 7"},
    ]
    assert messages[9]["tool_calls"][0]["function"]["arguments"] == '{"q": "7"}'
    assert messages[10]["content"] == '{"v": 7}'
    assert messages[11] == {"role": "assistant", "content": "done"}
    assert len(messages) == 13


def test_prompt_ids_are_reproducible_per_session_and_task():
    session = session_with([PARALLEL, PARALLEL, PARALLEL])
    assert inference.build_prompt(session, 2) == inference.build_prompt(session, 2)
    first = inference.build_prompt(session, 1)[2]["tool_calls"][0]["id"]
    second = inference.build_prompt(session, 2)[2]["tool_calls"][0]["id"]
    assert first != second


def test_history_replay_fails_on_ask_mixed_with_call():
    # ask and an independent call are both ready first: the optimal path issues them together (quirk 11)
    mixed = [
        node("ask_user_for_required_parameters", {}, "Which?", user_input="this"),
        node("getA", {}, {"a": 1}),
        node("prepare_to_answer", {}, "ok", deps=[0, 1]),
    ]
    assert PathTracker(mixed).gold_path[0] == [0, 1]
    session = session_with([mixed, PARALLEL])
    inference.build_prompt(session, 0)  # task 0 itself needs no history
    with pytest.raises(inference.InferenceError) as raised:
        inference.build_prompt(session, 1)
    assert str(raised.value) == ""
    assert "quirk 11" in raised.value.detail
    assert inference.error_record("wild_tool_bench_9", "m", str(raised.value))["result"] == "Error during inference: "


def test_float_becomes_number():
    tools = inference.float_to_number(session_with([PARALLEL])["english_tools"])
    assert tools[0]["function"]["parameters"]["properties"]["x"]["type"] == "number"


def test_empty_response_has_no_inference_answer():
    tracker = PathTracker(PARALLEL)
    for content, calls in ((None, None), ("", None), ("", [])):
        outcome = inference.match_step(tracker, PARALLEL, 0, {"content": content, "tool_calls": calls})
        assert (outcome.label, outcome.error_reason, outcome.inference_answer, outcome.task_end) == (
            "error",
            "tool_calls and content are None or empty",
            None,
            True,
        )


def test_tool_calls_get_observations_in_sorted_order_and_ids_in_model_order():
    tracker = PathTracker(PARALLEL)
    response = {
        "content": None,
        "tool_calls": [call("c1", "getB", '{"q": "b"}'), call("c2", "getA", '{"q":"a"}')],
        "reasoning_content": "hmm",
    }
    outcome = inference.match_step(tracker, PARALLEL, 0, response)
    assert outcome.label == "correct" and not outcome.task_end and outcome.prune == [1, 0]
    assistant, first, second = outcome.messages
    assert assistant == {
        "role": "assistant",
        "reasoning_content": "hmm",
        "content": None,
        "tool_calls": response["tool_calls"],
    }
    # sorted gold order is getA ("plain text", raw in the live task), then getB; ids come positionally from the model
    assert first == {"role": "tool", "content": "plain text", "tool_call_id": "c1"}
    assert second == {"role": "tool", "content": '{"b": 1}', "tool_call_id": "c2"}
    assert outcome.inference_answer == {
        "candidate_0_answer_function_list": {
            "action": [{"arguments": '{"q": "a"}', "name": "getA"}, {"arguments": '{"q": "b"}', "name": "getB"}]
        }
    }


def test_wrong_name_records_every_alive_path_with_duplicates():
    # three independent same-name-free nodes: many paths share their first step
    nodes = [node("getA", {}, 1), node("getB", {}, 2), node("prepare_to_answer", {}, "r", deps=[0, 1])]
    tracker = PathTracker(nodes)
    outcome = inference.match_step(tracker, nodes, 0, {"content": None, "tool_calls": [call("c", "getC")]})
    assert (outcome.label, outcome.error_reason) == ("error", "action name not in candidate_answer_function_list")
    names = [[a["name"] for a in c["action"]] for c in outcome.inference_answer.values()]
    assert names == [["getA"], ["getB"], ["getA", "getB"]]
    # after getA at step 0, step 1 has getB then prep on one path each
    tracker.prune(0, [0])
    outcome = inference.match_step(tracker, nodes, 1, {"content": "chat", "tool_calls": None})
    assert outcome.label == "error"
    assert list(outcome.inference_answer.values()) == [{"action": [{"arguments": "{}", "name": "getB"}]}]


def test_duplicate_candidates_are_kept_on_error():
    # getA, then getB and getC: after getA, both orders of getB/getC share nothing, but
    # path [[0],[1],[2],...] and [[0],[1,2],...] share step 0
    nodes = [
        node("getA", {}, 1),
        node("getB", {}, 2, deps=[0]),
        node("getC", {}, 3, deps=[0]),
        node("prepare_to_answer", {}, "r", deps=[1, 2]),
    ]
    outcome = inference.match_step(PathTracker(nodes), nodes, 0, {"content": "no tools", "tool_calls": None})
    keys = list(outcome.inference_answer)
    assert keys == [f"candidate_{i}_answer_function_list" for i in range(3)]
    assert all(c == {"action": [{"arguments": "{}", "name": "getA"}]} for c in outcome.inference_answer.values())


def test_text_reply_asks_then_answers():
    tracker = PathTracker(CLARIFY)
    ask = inference.match_step(tracker, CLARIFY, 0, {"content": "Which q do you mean?", "tool_calls": []})
    assert ask.label == "correct" and not ask.task_end and ask.prune is None
    assert ask.messages == [
        {"role": "assistant", "content": "Which q do you mean?"},
        {"role": "user", "content": "q is 7"},
    ]
    assert ask.inference_answer["candidate_0_answer_function_list"] == {
        "action": [
            {
                "arguments": '{"tool_name": "getA", "missing_required_parameters": ["q"]}',
                "name": "ask_user_for_required_parameters",
            }
        ],
        "observation": "Which q?",
        "user_input": "q is 7",
    }
    # asking again at step 1 is an error: no path has an ask node there
    again = inference.match_step(tracker, CLARIFY, 1, {"content": "And?", "tool_calls": None})
    assert again.label == "error" and again.task_end
    # the final reply at step 2 ends the task correct
    tracker.prune(1, [1])
    final = inference.match_step(tracker, CLARIFY, 2, {"content": "It is 7.", "tool_calls": None})
    assert (final.label, final.task_end, final.task_correct) == ("correct", True, True)
    assert final.inference_answer["candidate_0_answer_function_list"]["observation"] == "done"
    assert inference.is_optimal(True, 2, tracker.min_length) is True
    assert inference.is_optimal(True, 3, tracker.min_length) is False


def test_unparseable_tool_calls_and_steps_past_the_end():
    tracker = PathTracker(PARALLEL)
    bad = inference.match_step(
        tracker, PARALLEL, 0, {"content": None, "tool_calls": [{"type": "function", "function": {"name": "getA"}}]}
    )
    assert (bad.label, bad.error_reason, bad.inference_answer) == (
        "error",
        "parse tool_calls failed, error: 'id'",
        None,
    )
    past = inference.match_step(tracker, PARALLEL, 3, {"content": None, "tool_calls": [call("c", "getA")]})
    assert (past.label, past.error_reason) == ("error", "current step: 3, idx_list is None")
    with pytest.raises(inference.InferenceError) as raised:
        inference.match_step(tracker, PARALLEL, 3, {"content": "text", "tool_calls": None})
    assert str(raised.value) == "3"


def test_step_log_shape():
    outcome = inference.StepOutcome("error", "tool_calls and content are None or empty", task_end=True)
    messages = [{"role": "user", "content": "hi"}]
    log = inference.step_log(
        messages, [{"t": 1}], {"content": "", "tool_calls": [], "reasoning_content": None}, outcome
    )
    assert log == {
        "inference_input": {"messages": [{"role": "user", "content": "hi"}], "tools": [{"t": 1}]},
        "inference_output": {
            "reasoning_content": None,
            "content": "",
            "tool_calls": [],
            "current_action_name_label": "error",
            "error_reason": "tool_calls and content are None or empty",
        },
    }
    assert json.loads(json.dumps(log)) == log


def test_matched_call_while_a_shorter_path_is_alive_crashes_like_the_reference():
    # two independent asks and an independent call: asking twice moves the call to step 2,
    # while the path [[ask, ask, call], [prep]] (2 steps) is still alive (asks never prune)
    nodes = [
        node("ask_user_for_required_parameters", {}, "Q1?", user_input="a1"),
        node("ask_user_for_required_parameters", {}, "Q2?", user_input="a2"),
        node("getA", {}, {"a": 1}),
        node("prepare_to_answer", {}, "r", deps=[0, 1, 2]),
    ]
    tracker = PathTracker(nodes)
    assert inference.match_step(tracker, nodes, 0, {"content": "Q1?", "tool_calls": None}).label == "correct"
    assert inference.match_step(tracker, nodes, 1, {"content": "Q2?", "tool_calls": None}).label == "correct"
    with pytest.raises(inference.InferenceError) as raised:
        inference.match_step(tracker, nodes, 2, {"content": None, "tool_calls": [call("c", "getA")]})
    assert str(raised.value) == "list index out of range"
    # without the extra asks the same call is an ordinary matched step
    fresh = PathTracker(nodes[2:3] + [node("prepare_to_answer", {}, "r", deps=[0])])
    ok = inference.match_step(
        fresh,
        nodes[2:3] + [node("prepare_to_answer", {}, "r", deps=[0])],
        0,
        {"content": None, "tool_calls": [call("c", "getA")]},
    )
    assert ok.label == "correct" and ok.prune == [0]


def _independent(count):
    """``count`` independent distinct calls, then a final answer depending on all of them."""
    nodes = [node(f"get{i:02d}", {"i": i}, {"v": i}) for i in range(count)]
    return nodes + [node("prepare_to_answer", {"answer_type": "tool"}, "reply", deps=range(count))]


def test_error_step_records_the_whole_table_when_it_is_small():
    # 5 independent distinct calls: every ordered set partition is a path, Fubini a(5) = 541 entries.
    answer_list = _independent(5)
    outcome = inference.match_step(PathTracker(answer_list), answer_list, 0, {"tool_calls": [call("c0", "nope")]})
    assert outcome.label == "error" and outcome.error_reason == inference.ERROR_ACTION_NAME
    assert len(outcome.inference_answer) == 541
    assert outcome.diagnostics == []
    log = inference.step_log([], [], {"tool_calls": [call("c0", "nope")]}, outcome)
    assert "diagnostics" not in log["inference_output"]


def test_error_step_on_a_wide_layer_records_the_reference_prefix_and_the_count():
    # 12 independent distinct calls: a(12) = 28,091,567,595 entries in the reference's table.
    answer_list = _independent(12)
    tracker = PathTracker(answer_list)
    outcome = inference.match_step(tracker, answer_list, 0, {"tool_calls": [call("c0", "nope")]})
    assert len(outcome.inference_answer) == inference.MAX_RECORDED_CANDIDATES
    expected_prefix = [nodes for nodes, _ in zip(tracker.step_entries(0), range(inference.MAX_RECORDED_CANDIDATES))]
    recorded = [
        [int(json.loads(action["arguments"])["i"]) for action in entry["action"]]
        for entry in outcome.inference_answer.values()
    ]
    assert recorded == [sorted(nodes, key=lambda i: f"get{i:02d}") for nodes in expected_prefix]
    (note,) = outcome.diagnostics
    assert note["kind"] == "candidates_truncated"
    assert (note["recorded"], note["total"]) == (1000, 28091567595)
    log = inference.step_log([], [], {"tool_calls": [call("c0", "nope")]}, outcome)
    assert log["inference_output"]["diagnostics"] == [note]
