"""The run-against-run diff on hand-built gold DAGs (docs/diff.md §2-§4) and the gate's rule (docs/diff.md §6)."""

from __future__ import annotations

import json

import pytest

from wildtoolbench.bench.diff import (
    ANSWER,
    ASK,
    CALLS,
    END,
    ERROR,
    IMPROVED,
    REGRESSED,
    DiffInputError,
    diff_flipped,
    diff_task,
    first_divergence,
    flip_counts,
    gate_decision,
    trajectory,
)

ASK_USER = "ask_user_for_required_parameters"


def node(name, arguments, *deps, user_input=None):
    found = {"action": {"name": name, "arguments": arguments}, "observation": "ok", "dependency_list": list(deps)}
    if user_input is not None:
        found["user_input"] = user_input
    return found


# three independent calls, then the answer
PARALLEL = [
    node("getA", {"x": 1}),
    node("getB", {"y": 2}),
    node("getC", {"z": 3}),
    node("prepare_to_answer", {}, 0, 1, 2),
]
# a question, a call that needs its answer, the answer
CLARIFY = [
    node(ASK_USER, {"question": "which?"}, user_input="this one"),
    node("getA", {"x": 1}, 0),
    node("prepare_to_answer", {}, 1),
]


def calls(dag, *nodes, wrong=()):
    """A matched call step completing ``nodes``; the calls of ``wrong`` nodes carry bad arguments."""
    gold = [dag[n]["action"] for n in nodes]
    tool_calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": a["name"], "arguments": json.dumps({"bad": 0} if n in wrong else a["arguments"])}}
        for n, a in zip(nodes, gold)
    ]  # fmt: skip
    output = {"content": None, "tool_calls": tool_calls, "current_action_name_label": "correct"}
    if wrong:
        output["current_action_arguments_label"] = "error"
        output["current_action_arguments_check_result"] = [
            "error_match: bad" if n in wrong else "correct" for n in nodes
        ]
    else:
        output["current_action_arguments_label"] = "correct"
    answer = {"action": [{"name": a["name"], "arguments": json.dumps(a["arguments"])} for a in gold]}
    return {"inference_output": output, "inference_answer": {"candidate_0_answer_function_list": answer}}


def text(dag, n, content="some text"):
    """A text reply matched to the pseudo-tool node ``n`` (a question or the answer)."""
    action = dag[n]["action"]
    answer = {"action": [{"name": action["name"], "arguments": json.dumps(action["arguments"])}]}
    output = {"content": content, "tool_calls": None, "current_action_name_label": "correct"}
    return {"inference_output": output, "inference_answer": {"candidate_0_answer_function_list": answer}}


def wrong_name(name="getX"):
    output = {
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": "{}"}}],
        "current_action_name_label": "error",
        "error_reason": "action name not in candidate_answer_function_list",
    }
    return {"inference_output": output, "inference_answer": {}}


def empty():
    output = {"content": None, "tool_calls": None, "current_action_name_label": "error"}
    output["error_reason"] = "tool_calls and content are None or empty"
    return {"inference_output": output}


def task(label, *steps, **extra):
    log = {"task_idx": 0, **{f"step_{s}": step for s, step in enumerate(steps)}}
    return {"label": label, "inference_log": log, **extra}


def divergence(dag, a_steps, b_steps):
    return first_divergence(trajectory(task("x", *a_steps), dag), trajectory(task("x", *b_steps), dag))


# --------------------------------------------------------------------------- trajectories


def test_a_trajectory_names_the_nodes_each_step_completes_and_stops_at_the_label():
    steps = trajectory(task("correct", calls(PARALLEL, 0, 2), calls(PARALLEL, 1), text(PARALLEL, 3)), PARALLEL)
    assert [(s.step, s.kind, s.nodes) for s in steps] == [(0, CALLS, (0, 2)), (1, CALLS, (1,)), (2, ANSWER, ())]
    assert [(c.name, c.node, c.verdict) for c in steps[0].calls] == [("getA", 0, "correct"), ("getC", 2, "correct")]
    # an argument error decides the label: later steps are not part of the trajectory
    steps = trajectory(task("error", calls(PARALLEL, 0, 1, wrong={1}), calls(PARALLEL, 2), text(PARALLEL, 3)), PARALLEL)
    assert [(s.kind, s.nodes, s.terminal) for s in steps] == [(CALLS, (0, 1), True)]
    assert [c.verdict for c in steps[0].calls] == ["correct", "error_match: bad"]


def test_a_log_without_an_end_gets_an_end_outcome_with_the_tasks_reason():
    lost = {"label": "error", "inference_log": {"task_idx": 0}, "error_reason": "Error during inference: "}
    assert [(s.step, s.kind, s.error_reason) for s in trajectory(lost, PARALLEL)] == [
        (0, END, "Error during inference: ")
    ]
    limit = task("error", calls(PARALLEL, 0), error_reason="step limit reached")
    assert [(s.step, s.kind) for s in trajectory(limit, PARALLEL)] == [(0, CALLS), (1, END)]


def test_a_question_asked_again_completes_no_node():
    steps = trajectory(
        task("correct", text(CLARIFY, 0), text(CLARIFY, 0), calls(CLARIFY, 1), text(CLARIFY, 2)), CLARIFY
    )
    assert [(s.kind, s.nodes) for s in steps] == [(ASK, (0,)), (ASK, ()), (CALLS, (1,)), (ANSWER, ())]


def test_same_name_calls_find_their_node_by_arguments_ready_nodes_first():
    dag = [
        node("getA", {"x": 1}),
        node("getA", {"x": 2}),
        node("getA", {"x": 1}, 1),
        node("prepare_to_answer", {}, 0, 2),
    ]
    steps = trajectory(task("correct", calls(dag, 1), calls(dag, 0), calls(dag, 2)), dag)
    assert [s.nodes for s in steps[:3]] == [(1,), (0,), (2,)]
    # before node 1 is done, getA(x=1) is node 0 (the ready one), never node 2
    steps = trajectory(task("correct", calls(dag, 0), calls(dag, 0)), dag)
    assert [s.nodes for s in steps[:2]] == [(0,), (2,)]


def test_a_call_that_is_no_gold_node_names_the_field():
    step = calls(PARALLEL, 0)
    step["inference_answer"]["candidate_0_answer_function_list"]["action"][0]["arguments"] = '{"x": 99}'
    with pytest.raises(DiffInputError) as raised:
        trajectory(task("correct", step), PARALLEL, where="results[1]")
    assert (
        raised.value.field
        == "results[1].inference_log.step_0.inference_answer.candidate_0_answer_function_list.action[0]"
    )
    with pytest.raises(DiffInputError, match="inference_log: missing"):
        trajectory({"label": "correct"}, PARALLEL)


# --------------------------------------------------------------------------- alignment


def test_a_parallel_step_is_the_same_progress_as_the_calls_one_by_one():
    answer = text(PARALLEL, 3)
    parallel = [calls(PARALLEL, 0, 1, 2), answer]
    assert divergence(PARALLEL, parallel, [calls(PARALLEL, 0), calls(PARALLEL, 1), calls(PARALLEL, 2), answer]) is None
    # any grouping of the same calls, and another order between milestones
    assert (
        divergence(
            PARALLEL,
            [calls(PARALLEL, 0, 1), calls(PARALLEL, 2), answer],
            [calls(PARALLEL, 0), calls(PARALLEL, 1, 2), answer],
        )
        is None
    )
    assert divergence(PARALLEL, [calls(PARALLEL, 1), calls(PARALLEL, 0), calls(PARALLEL, 2), answer], parallel) is None
    swapped = [calls(PARALLEL, 2), calls(PARALLEL, 1), calls(PARALLEL, 0), answer]
    assert divergence(PARALLEL, [calls(PARALLEL, 0), calls(PARALLEL, 1), calls(PARALLEL, 2), answer], swapped) is None


def test_the_divergence_is_at_the_step_that_leaves_the_common_progress():
    answer = text(PARALLEL, 3)
    # A calls all three at once; B makes two of them, then a wrong call at its step 2
    assert divergence(
        PARALLEL, [calls(PARALLEL, 0, 1, 2), answer], [calls(PARALLEL, 0), calls(PARALLEL, 1), wrong_name()]
    ) == (0, 2)
    # B stops early (empty reply) after the first call
    assert divergence(PARALLEL, [calls(PARALLEL, 0, 1, 2), answer], [calls(PARALLEL, 0), empty()]) == (0, 1)
    # a milestone, then the answer against one more call
    assert divergence(PARALLEL, [calls(PARALLEL, 0, 1, 2), answer], [calls(PARALLEL, 0, 1, 2), wrong_name()]) == (1, 1)
    # different nodes at once: both at the step that completes the other node
    assert divergence(PARALLEL, [calls(PARALLEL, 0), calls(PARALLEL, 1)], [calls(PARALLEL, 1), calls(PARALLEL, 2)]) == (
        0,
        1,
    )
    assert divergence(PARALLEL, [calls(PARALLEL, 0, 1), answer], [calls(PARALLEL, 0, 2), answer]) == (0, 0)


def test_an_argument_error_diverges_where_the_node_is_called_on_each_side():
    answer = text(PARALLEL, 3)
    assert divergence(PARALLEL, [calls(PARALLEL, 0), answer], [calls(PARALLEL, 0, wrong={0})]) == (0, 0)
    # A calls 0 and 1 together; B calls 0 then 1 with bad arguments: the node is in A's step 0, B's step 1
    assert divergence(
        PARALLEL, [calls(PARALLEL, 0, 1, 2), answer], [calls(PARALLEL, 0), calls(PARALLEL, 1, wrong={1})]
    ) == (0, 1)
    # the same argument error on both sides: both ended alike
    assert (
        divergence(PARALLEL, [calls(PARALLEL, 0, 1, wrong={1})], [calls(PARALLEL, 0), calls(PARALLEL, 1, wrong={1})])
        is None
    )


def test_a_wrong_call_a_question_and_the_answer_are_different_outcomes():
    ask, call, answer = text(CLARIFY, 0), calls(CLARIFY, 1), text(CLARIFY, 2)
    assert divergence(CLARIFY, [ask, call, answer], [ask, call, answer]) is None
    assert divergence(CLARIFY, [ask, call, answer], [wrong_name("getA")]) == (0, 0)  # a call instead of the question
    assert divergence(CLARIFY, [ask, call, answer], [ask, text(CLARIFY, 2)]) == (1, 1)  # answering instead of calling
    assert divergence(CLARIFY, [ask, call, answer], [ask, text(CLARIFY, 0), call, answer]) == (1, 1)  # asking again
    assert divergence(CLARIFY, [ask, call, answer], [ask, call, empty()]) == (2, 2)  # an error instead of the answer
    assert divergence(CLARIFY, [ask, wrong_name()], [ask, empty()]) is None  # both ended wrong at the same point


def test_a_lost_session_diverges_at_step_0():
    lost = {"label": "error", "inference_log": {"task_idx": 0}, "error_reason": "Error during inference: "}
    found = diff_task("s", 0, task("correct", calls(PARALLEL, 0, 1, 2), text(PARALLEL, 3)), lost, PARALLEL)
    assert found["first_divergent_step"] == {"a": 0, "b": 0} and found["flip"] == REGRESSED
    assert found["b_step"] == {
        "step": 0,
        "kind": END,
        "nodes": [],
        "calls": [],
        "content": None,
        "error_reason": "Error during inference: ",
    }


# --------------------------------------------------------------------------- tasks and counts


def test_diff_task_gives_both_sides_steps_at_the_divergence():
    good = task("correct", calls(PARALLEL, 0, 1, 2), text(PARALLEL, 3))
    bad = task("error", calls(PARALLEL, 0), calls(PARALLEL, 1), wrong_name("getZ"))
    found = diff_task("wild_tool_bench_7", 2, bad, good, PARALLEL)
    assert list(found) == ["id", "task", "a_label", "b_label", "first_divergent_step", "flip", "a_step", "b_step"]
    assert (found["id"], found["task"], found["flip"]) == ("wild_tool_bench_7", 2, IMPROVED)
    assert found["first_divergent_step"] == {"a": 2, "b": 0}
    assert found["a_step"]["kind"] == ERROR and found["a_step"]["calls"][0]["name"] == "getZ"
    assert [c["node"] for c in found["b_step"]["calls"]] == [0, 1, 2]
    json.dumps(found)  # JSON-ready


def test_only_flipped_tasks_are_listed_and_counted_by_kind():
    good = task("correct", calls(PARALLEL, 0, 1, 2), text(PARALLEL, 3))
    bad = task("error", empty())
    tasks = [
        ("s1", 0, good, bad, PARALLEL),
        ("s1", 1, good, good, PARALLEL),
        ("s2", 0, bad, good, PARALLEL),
        ("s2", 1, good, bad, PARALLEL),
    ]
    found = diff_flipped(tasks)
    assert [(d["id"], d["task"], d["flip"]) for d in found] == [
        ("s1", 0, REGRESSED),
        ("s2", 0, IMPROVED),
        ("s2", 1, REGRESSED),
    ]
    assert flip_counts(found) == {"regressed": 2, "improved": 1, "total": 3}


# --------------------------------------------------------------------------- the gate


def difference(value, low, high):
    return {"a": 0.5, "b": 0.5 - value, "value": value, "low": low, "high": high}


def test_the_gate_fails_when_the_candidate_is_worse_beyond_noise():
    failed = gate_decision(difference(-0.10, -0.15, -0.05))
    assert failed["passed"] is False and failed["drop"] == pytest.approx(10.0)
    assert failed["reasons"] == [
        "the candidate is worse beyond noise: candidate - baseline -10.00 points, interval [-15.00, -5.00] below 0"
    ]
    assert gate_decision(difference(-0.10, -0.25, 0.05))["passed"] is True  # within noise
    assert gate_decision(difference(0.10, 0.05, 0.15))["passed"] is True  # better
    same = gate_decision(difference(0.0, 0.0, 0.0))
    assert same == {"passed": True, "reasons": [], "drop": 0.0, "max_drop": None} and str(same["drop"]) == "0.0"


def test_max_drop_also_fails_a_larger_drop_within_noise():
    within = difference(-0.10, -0.25, 0.05)
    assert gate_decision(within, 10.0)["passed"] is True  # exactly the allowed drop
    failed = gate_decision(within, 5.0)
    assert failed["passed"] is False and failed["reasons"] == [
        "task accuracy dropped 10.00 points, more than the allowed 5"
    ]
    assert len(gate_decision(difference(-0.10, -0.15, -0.05), 5)["reasons"]) == 2
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="max_drop"):
            gate_decision(within, bad)
