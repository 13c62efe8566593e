"""The error taxonomy of reports (bench/errors.py, docs/errors.md): one hand-built task per rule, then the fixtures."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from wildtoolbench.bench.errors import (
    CATEGORIES,
    TaskError,
    argument_error_category,
    classify_task,
    error_counts,
)
from wildtoolbench.bench.scoring import score_task

ASK = "ask_user_for_required_parameters"
ANSWER = "prepare_to_answer"
NAME_ERROR = "action name not in candidate_answer_function_list"


# --------------------------------------------------------------------------- record builders


def _call(name: str, arguments: str = "{}", call_id: str = "c0") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _answer(*candidates: list[str]) -> dict:
    return {
        f"candidate_{i}_answer_function_list": {"action": [{"name": n, "arguments": "{}"} for n in names]}
        for i, names in enumerate(candidates)
    }


def ok_step(*names: str) -> dict:
    """A correct step whose matched candidate holds ``names`` (arguments correct)."""
    output = {"content": None, "tool_calls": None, "current_action_name_label": "correct"}
    if names and not set(names) & {ASK, ANSWER}:
        output["tool_calls"] = [_call(n, call_id=f"c{j}") for j, n in enumerate(names)]
        output["current_action_arguments_label"] = "correct"
    else:
        output["content"] = "text"
    return {"inference_output": output, "inference_answer": _answer(list(names))}


def text_error(text, *candidates: list[str]) -> dict:
    """A name-error step where the model replied ``text`` and no tool calls."""
    step = {
        "inference_output": {
            "content": text,
            "tool_calls": None,
            "current_action_name_label": "error",
            "error_reason": NAME_ERROR,
        }
    }
    if candidates:
        step["inference_answer"] = _answer(*candidates)
    return step


def calls_error(called: list[str], *candidates: list[str], reason: str = NAME_ERROR) -> dict:
    """A name-error step where the model called ``called``."""
    step = {
        "inference_output": {
            "content": None,
            "tool_calls": [_call(n, call_id=f"c{j}") for j, n in enumerate(called)],
            "current_action_name_label": "error",
            "error_reason": reason,
        }
    }
    if candidates:
        step["inference_answer"] = _answer(*candidates)
    return step


def args_error(called: list[str], results: list[str]) -> dict:
    """A call step whose names matched and whose argument check gave ``results`` (one per call)."""
    step = ok_step(*called)
    step["inference_output"]["current_action_arguments_label"] = "error"
    step["inference_output"]["current_action_arguments_check_result"] = results
    return step


def task(*steps: dict, label: str = "error", **extra) -> dict:
    log = {"task_idx": 0}
    log.update({f"step_{i}": s for i, s in enumerate(steps)})
    return {"label": label, "action_name_label": "error", "is_optimal": False, "inference_log": log, **extra}


# --------------------------------------------------------------------------- action errors


def test_correct_task_has_no_category():
    assert classify_task(task(ok_step("getA"), ok_step(ANSWER), label="correct")) is None


def test_refusal_text_reply_before_any_tool_step():
    found = classify_task(task(text_error("I cannot look that up.", ["getA"], ["getA", "getA"])))
    assert found == TaskError("refusal", f"{NAME_ERROR}: replied in text; candidates: [getA] | [getA, getA]", 0)
    assert found.kind == "action"


@pytest.mark.parametrize("text", ["Which city do you mean?", "Which city?  \n", "您要查询哪个城市？"])
def test_wrong_refusal_text_ending_in_a_question(text):
    assert classify_task(task(text_error(text, ["getA"]))).category == "wrong_refusal"


def test_question_mark_inside_the_text_is_not_a_question():
    assert classify_task(task(text_error("Why? Because I can't.", ["getA"]))).category == "refusal"


def test_early_termination_after_a_tool_step():
    found = classify_task(task(ok_step("getA"), text_error("Here is what I found?", ["getB"])))
    assert (found.category, found.step) == ("early_term", 1)


def test_ask_steps_are_not_tool_steps_done():
    # An answered clarification before the text reply does not make it an early termination.
    assert classify_task(task(ok_step(ASK), text_error("No.", ["getA"]))).category == "refusal"


def test_redundant_call_where_the_answer_step_is_due():
    found = classify_task(task(ok_step("getA"), calls_error(["getA"], [ANSWER])))
    assert found == TaskError("redundant", f"{NAME_ERROR}: called [getA]; candidates: [{ANSWER}]", 1)


def test_redundant_call_in_a_chat_task():
    assert classify_task(task(calls_error(["search"], [ANSWER]))).category == "redundant"


def test_wrong_name_call_without_the_missing_information():
    assert classify_task(task(calls_error(["getA"], [ASK]))).category == "wrong_name"


def test_wrong_name_unrelated_names():
    assert classify_task(task(calls_error(["getC"], ["getA"], ["getA", "getB"]))).category == "wrong_name"


def test_wrong_name_when_names_overlap_but_are_no_sub_or_superset():
    assert classify_task(task(calls_error(["getA", "getC"], ["getA", "getB"]))).category == "wrong_name"


def test_wrong_name_when_no_candidate_exists_beyond_the_dag():
    step = calls_error(["getA"], reason="current step: 3, idx_list is None")
    found = classify_task(task(ok_step(ASK), step))
    assert found.category == "wrong_name" and found.reason.startswith("current step: 3, idx_list is None")


@pytest.mark.parametrize(
    "called, candidates",
    [
        (["getA"], [["getA", "getA"]]),  # too few same-name calls (wrong count)
        (["getA", "getB"], [["getA"]]),  # one call too many
        (["getA", "getA", "getA"], [["getA", "getA"]]),
        (["getA"], [["getC"], ["getA", "getB"]]),  # a subset of the second candidate
    ],
)
def test_call_error_strict_sub_or_superset(called, candidates):
    assert classify_task(task(calls_error(called, *candidates))).category == "call_error"


def test_answer_candidate_wins_over_ask_and_subset():
    assert classify_task(task(calls_error(["getA"], [ASK], ["getA", "getA"], [ANSWER]))).category == "redundant"


def test_ask_candidate_wins_over_subset():
    assert classify_task(task(calls_error(["getA"], ["getA", "getA"], [ASK]))).category == "wrong_name"


@pytest.mark.parametrize("content, calls", [(None, None), ("", None), ("", [])])
def test_call_error_empty_reply(content, calls):
    step = {
        "inference_output": {
            "content": content,
            "tool_calls": calls,
            "current_action_name_label": "error",
            "error_reason": "tool_calls and content are None or empty",
        }
    }
    found = classify_task(task(ok_step("getA"), step))
    assert found == TaskError("call_error", "tool_calls and content are None or empty", 1)


def test_call_error_unparsable_calls():
    reason = "parse tool_calls failed, error: 'id'"
    step = {
        "inference_output": {
            "content": None,
            "tool_calls": [{"function": {"name": "getA"}}],
            "current_action_name_label": "error",
            "error_reason": reason,
        }
    }
    assert classify_task(task(step)) == TaskError("call_error", reason, 0)


def test_call_error_step_limit():
    reason = "step limit reached: 2 model requests in this task without an end (--max-steps 2)"
    assert classify_task(task(ok_step("getA"), ok_step("getB"), error_reason=reason)) == TaskError(
        "call_error", reason, None
    )


def test_call_error_inference_failure_of_the_whole_session():
    from wildtoolbench.bench.scoring import inference_error_tasks

    tasks = inference_error_tasks("Error during inference: list index out of range")
    found = [classify_task(t) for t in tasks]
    assert found == [TaskError("call_error", "Error during inference: list index out of range", None)] * 4


# --------------------------------------------------------------------------- parameter errors


@pytest.mark.parametrize(
    "message, category",
    [
        ("error: args invalid json format", "param_type"),
        ("error_schema: args type inconsistent", "param_type"),
        ("error_schema: nested args type inconsistent", "param_type"),
        ("error_match: value type inconsistent at 'count'", "param_type"),
        ("error_schema: args not defined", "param_halluc"),
        ("error_schema: nested args not defined", "param_halluc"),
        ("error_schema: required args missing", "param_halluc"),
        ("error_schema: required nested args missing", "param_halluc"),
        ("error_match: args keys mismatch (missing: ['unit'])", "param_halluc"),
        ("error_schema: args value not in enum", "param_value"),
        ("error_schema: nested args value not in enum", "param_value"),
        ("error_match: string similarity too low at 'city' (edit score: 0.40)", "param_value"),
        ("error_match: string similarity too low at 'q' (rouge score: 0.12)", "param_value"),
        ("error_match: value mismatch at 'amount'", "param_value"),
        ("error_match: rouge calculation failed", "param_value"),
        ("error_match: array length mismatch at 'ids'", "param_value"),
        ("error: comparison failed - maximum recursion depth exceeded", "param_value"),
    ],
)
def test_argument_message_categories(message, category):
    assert argument_error_category(message) == category
    found = classify_task(task(ok_step("getA"), args_error(["getB", "getB"], ["correct", message])))
    assert found == TaskError(category, message, 1)
    assert found.kind == "parameter"


def test_first_failing_message_of_the_step_decides():
    step = args_error(["getA", "getB"], ["error_match: value mismatch at 'x'", "error: args invalid json format"])
    assert classify_task(task(step)).category == "param_value"


def test_first_failing_step_decides():
    # An argument error at step 0 comes before a later name error (kept in the log, fixtures quirk 14).
    found = classify_task(
        task(
            args_error(["getA"], ["error_schema: required args missing"]), ok_step("getB"), text_error("done", ["getC"])
        )
    )
    assert (found.category, found.step) == ("param_halluc", 0)


def test_classify_rejects_unscored_input():
    with pytest.raises(ValueError):
        classify_task({"action_name_label": "error"})


def test_with_the_real_scorer():
    """A record labelled by wildtoolbench.bench.scoring.score_task (not hand-labelled) classifies by its check message."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "getA",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    step = {
        "inference_output": {
            "content": None,
            "tool_calls": [_call("getA", '{"town": "Oslo"}')],
            "current_action_name_label": "correct",
        },
        "inference_answer": {
            "candidate_0_answer_function_list": {"action": [{"name": "getA", "arguments": '{"city": "Oslo"}'}]}
        },
    }
    record = {
        "action_name_label": "correct",
        "is_optimal": True,
        "inference_log": {"task_idx": 0, "step_0": step},
        "latency": [0.0],
        "input_token_count": [0],
        "output_token_count": [0],
    }
    scored = score_task(record, tools)
    assert scored["label"] == "error"
    assert classify_task(scored) == TaskError("param_halluc", "error_schema: required args missing", 0)


def test_error_counts_cover_every_category_in_order():
    tasks = [
        task(text_error("no", ["getA"])),
        task(calls_error(["getA"], [ANSWER])),
        task(ok_step("getA"), label="correct"),
    ]
    counts = error_counts(tasks)
    assert list(counts) == list(CATEGORIES)
    assert counts["refusal"] == 1 and counts["redundant"] == 1 and sum(counts.values()) == 2


# --------------------------------------------------------------------------- reference fixtures


def test_fixture_scores_every_failed_task_gets_one_category(reference_dir):
    """Over every candidate of the reference scores: the counts sum to the failed tasks, with the expected kinds."""
    by_candidate: dict[str, Counter] = {}
    for line in (reference_dir / "expected_scores.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        counts = by_candidate.setdefault(row["candidate"], Counter())
        for scored in row["results"]:
            found = classify_task(scored)
            if found is not None:
                assert found.category in CATEGORIES and found.reason
                counts[found.category] += 1
            counts["failed"] += scored["label"] != "correct"
    for candidate, counts in by_candidate.items():
        assert sum(counts[c] for c in CATEGORIES) == counts["failed"], candidate
    # Every failure of the oracle is the overlayDataOnMap schema quirk (fixtures quirk 24).
    assert by_candidate["oracle"] == Counter({"param_halluc": 1, "failed": 1})
    assert by_candidate["chatty"] == Counter({"refusal": 24, "param_halluc": 1, "failed": 25})
    assert by_candidate["no_reply"] == Counter({"call_error": 24, "param_halluc": 1, "failed": 25})
    assert by_candidate["over_ask"] == Counter({"wrong_refusal": 23, "failed": 23})
    assert by_candidate["wrong_name"] == Counter({"wrong_name": 15, "call_error": 9, "param_halluc": 1, "failed": 25})
    assert by_candidate["wrong_args_invalid_json"]["param_type"] == 3
    assert by_candidate["wrong_args_enum"]["param_value"] == 4
    assert by_candidate["wrong_args_missing_required"]["param_halluc"] == 4
    assert by_candidate["noisy"] == Counter(
        {
            "wrong_name": 8,
            "call_error": 11,
            "refusal": 2,
            "param_type": 9,
            "param_halluc": 11,
            "param_value": 7,
            "failed": 48,
        }
    )
