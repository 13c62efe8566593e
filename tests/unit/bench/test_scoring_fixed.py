"""Fixed mode (issue 17, docs/fixed-mode.md): one minimal session per fix where the two modes differ,
the public fixtures in fixed mode, sessions the published code crashes on, and the mode plumbing."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.fixed_sessions import (
    answer,
    ask,
    call,
    calls,
    jsonl,
    make,
    node,
    random_session,
    run,
    text,
)
from wildtoolbench.bench.args import check_arguments, float_to_number
from wildtoolbench.bench.compare import compare_run, compare_session
from wildtoolbench.bench.generation import oracle_candidate
from wildtoolbench.bench.harness import ERROR_ACTION_NAME, ERROR_EMPTY_RESPONSE, build_prompt
from wildtoolbench.bench.metrics import compute_metrics
from wildtoolbench.bench.pairing import _best_assignment, _hungarian, pair_calls
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.paths_fixed import FixedPathTracker
from wildtoolbench.bench.schema import DatasetError, load_sessions, sessions_by_id
from wildtoolbench.bench.scoring import ResultRecordError, score_session, score_task
from wildtoolbench.bench.terms import SCORING_MODES
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import run_eval
from wildtoolbench.scoring.run import score_run

REPO = Path(__file__).resolve().parents[3]
CHATS = [text("Bye."), text("Bye."), text("Bye.")]


def _steps(task: dict) -> list[str]:
    return [key for key in task["inference_log"] if key.startswith("step_")]


def _tool_messages(step: dict) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in step["inference_input"]["messages"] if m["role"] == "tool"]


def _both(tmp_path: Path, session: dict, reference: list[dict], fixed: list[dict] | None = None) -> tuple[dict, dict]:
    return run(tmp_path / "ref", [session], reference, "reference"), run(
        tmp_path / "fix", [session], fixed or reference, "fixed"
    )


# --------------------------------------------------------------------------- fix 1


def test_fix1_each_tool_message_carries_the_id_of_the_call_it_answers(tmp_path):
    session = make(
        [
            [
                node("getWeather", {"city": "Oslo"}, "cold"),
                node("bookTable", {"place": "Chez Nous", "people": 2}, {"ok": True}),
                answer("Cold; booked.", [0, 1]),
            ]
        ],
        ["Parallel Multi-Tool"],
    )
    responses = [
        calls(call("w", "getWeather", {"city": "Oslo"}), call("b", "bookTable", {"place": "Chez Nous", "people": 2})),
        text("Cold; booked."),
        *CHATS,
    ]
    ref, fix = _both(tmp_path, session, responses)
    ref_step = ref["records"][0]["result"][0]["inference_log"]["step_1"]
    fix_step = fix["records"][0]["result"][0]["inference_log"]["step_1"]
    # reference (quirk 5): observations in name order (bookTable first), ids in the model's order
    assert _tool_messages(ref_step) == [("w", '{"ok": true}'), ("b", "cold")]
    assert _tool_messages(fix_step) == [("w", "cold"), ("b", '{"ok": true}')]
    assert [t["label"] for t in fix["scores"][0]["results"]] == ["correct"] * 4
    assert fix["records"][0]["scoring"] == "fixed" and "scoring" not in ref["records"][0]


def test_fix1_same_name_calls_get_their_own_observations(tmp_path):
    session = make(
        [
            [
                node("getWeather", {"city": "Lima"}, "warm"),
                node("getWeather", {"city": "Oslo"}, "cold"),
                answer("Done.", [0, 1]),
            ]
        ],
        ["Parallel Multi-Tool"],
    )
    responses = [
        calls(call("o", "getWeather", {"city": "Oslo"}), call("l", "getWeather", {"city": "Lima"})),
        text("Done."),
        *CHATS,
    ]
    ref, fix = _both(tmp_path, session, responses)
    assert _tool_messages(ref["records"][0]["result"][0]["inference_log"]["step_1"]) == [("o", "warm"), ("l", "cold")]
    assert _tool_messages(fix["records"][0]["result"][0]["inference_log"]["step_1"]) == [("o", "cold"), ("l", "warm")]
    # the gold actions are recorded in the model's call order
    recorded = fix["records"][0]["result"][0]["inference_log"]["step_0"]["inference_answer"]
    assert [json.loads(a["arguments"])["city"] for a in recorded["candidate_0_answer_function_list"]["action"]] == [
        "Oslo",
        "Lima",
    ]


# --------------------------------------------------------------------------- fix 2


def _clarify_with_independent_call() -> dict:
    """Reference test session 5, task 0 in miniature: an independent call, a question, a call that needs it."""
    return make(
        [
            [
                node("getNews", {"topic": "rain"}, "wet"),
                ask("bookTable", ["people"], "How many people?", "Four."),
                node("bookTable", {"place": "Chez Nous", "people": 4}, {"ok": True}, [1]),
                answer("Booked.", [0, 1, 2]),
            ]
        ],
        ["Clarify"],
    )


def test_fix2_a_question_where_none_is_due_is_a_name_error(tmp_path):
    session = _clarify_with_independent_call()
    over_ask = [
        text("How many people?"),
        text("And the news topic?"),
        calls(call("b", "bookTable", {"place": "Chez Nous", "people": 4})),
        text("Booked."),
    ]
    ref, fix = _both(tmp_path, session, [*over_ask, *CHATS], [*over_ask[:2], *CHATS])
    ref_task, fix_task = ref["scores"][0]["results"][0], fix["scores"][0]["results"][0]
    assert (ref_task["label"], ref_task["is_optimal"]) == ("correct", False)  # quirk 6: asked twice, skipped getNews
    assert ref_task["inference_log"]["step_1"]["inference_output"]["current_action_name_label"] == "correct"
    assert fix_task["label"] == "error"
    assert fix_task["inference_log"]["step_1"]["inference_output"]["error_reason"] == ERROR_ACTION_NAME
    assert fix_task["first_error"] == {"kind": "name", "step": 1, "reason": ERROR_ACTION_NAME}


def test_fix2_the_question_consumes_its_node_and_the_run_goes_on(tmp_path):
    session = _clarify_with_independent_call()
    good = [
        text("How many people?"),
        calls(call("n", "getNews", {"topic": "rain"}), call("b", "bookTable", {"place": "Chez Nous", "people": 4})),
        text("Booked."),
        *CHATS,
    ]
    fix = run(tmp_path, [session], good, "fixed")
    task = fix["scores"][0]["results"][0]
    assert (task["label"], task["is_optimal"], task["first_error"]) == ("correct", True, None)


# --------------------------------------------------------------------------- fix 3 (quirk 11 sessions)


def _question_beside_call() -> list[dict]:
    """Two chains (question -> booking, weather -> booking): every 3-step path mixes the question with a call."""
    return [
        ask("bookTable", ["people"], "How many people?", "Two."),
        node("bookTable", {"place": "Chez Nous", "people": 2}, {"ok": 1}, [0]),
        node("getWeather", {"city": "Oslo"}, "cold"),
        node("bookTable", {"place": "Oslo Fish", "people": 2}, {"ok": 2}, [2]),
        answer("Two tables booked; cold in Oslo.", [0, 1, 2, 3]),
    ]


def _two_independent_questions() -> list[dict]:
    return [
        ask("bookTable", ["place"], "Where?", "Chez Nous."),
        ask("bookTable", ["people"], "How many people?", "Three."),
        node("bookTable", {"place": "Chez Nous", "people": 3}, {"ok": True}, [0, 1]),
        answer("Booked.", [0, 1, 2]),
    ]


def test_fix3_trackers_of_mixed_steps():
    mixed = PathTracker(_question_beside_call())
    assert mixed.min_length == 3 and mixed.gold_path[0] == [0, 2]  # a question beside a call
    fixed = FixedPathTracker(_question_beside_call())
    assert (fixed.min_length, fixed.gold_path) == (4, [[2], [0], [1, 3], [4]])
    questions = PathTracker(_two_independent_questions())
    assert (questions.min_length, questions.gold_path[0]) == (3, [0, 1])
    fixed = FixedPathTracker(_two_independent_questions())
    assert (fixed.min_length, fixed.gold_path) == (4, [[0], [1], [2], [3]])
    # a DAG the reference can replay keeps its reference gold path
    plain = [node("getWeather", {"city": "Oslo"}, "x"), node("getWeather", {"city": "Lima"}, "y"), answer("z", [0, 1])]
    assert FixedPathTracker(plain).gold_path == PathTracker(plain).gold_path == [[0, 1], [2]]


@pytest.mark.parametrize(
    "first_task", [_question_beside_call, _two_independent_questions], ids=["question+call", "two questions"]
)
def test_fix3_sessions_the_published_harness_cannot_run_are_evaluated_and_scored(tmp_path, first_task):
    session = make([first_task()], ["Clarify"])
    ref = run(tmp_path / "ref", [session], oracle_candidate(session)["responses"][:-1], "reference")
    assert ref["records"][0]["result"] == "Error during inference: "  # replaying task 0 as history fails (quirk 11)
    assert [t["label"] for t in ref["scores"][0]["results"]] == ["error"] * 4
    fix = run(tmp_path / "fix", [session], oracle_candidate(session, scoring="fixed")["responses"][:-1], "fixed")
    tasks = fix["scores"][0]["results"]
    assert [(t["label"], t["is_optimal"]) for t in tasks] == [("correct", True)] * 4
    history = fix["records"][0]["result"][1]["inference_log"]["step_0"]["inference_input"]["messages"]
    expected = (
        ["assistant", "tool", "assistant", "user", "assistant", "tool", "tool", "assistant"]  # [2], [0], [1, 3], [4]
        if first_task is _question_beside_call
        else ["assistant", "user", "assistant", "user", "assistant", "tool", "assistant"]  # [0], [1], [2], [3]
    )
    assert [m["role"] for m in history] == ["system", "user", *expected, "user"]


def test_fix3_min_length_counts_only_matchable_steps(tmp_path):
    """Two independent questions as the last task (no history replay): reference min_length 3 is unreachable."""
    session = make(
        [
            [answer("Hi.", kind="chat")],
            [answer("Hi.", kind="chat")],
            [answer("Hi.", kind="chat")],
            _two_independent_questions(),
        ],
        ["Chat", "Chat", "Chat", "Clarify"],
    )
    responses = [
        text("Hi."),
        text("Hi."),
        text("Hi."),
        text("Where?"),
        text("How many people?"),
        calls(call("b", "bookTable", {"place": "Chez Nous", "people": 3})),
        text("Booked."),
    ]
    ref, fix = _both(tmp_path, session, responses)
    assert (ref["scores"][0]["results"][3]["label"], ref["scores"][0]["results"][3]["is_optimal"]) == ("correct", False)
    assert (fix["scores"][0]["results"][3]["label"], fix["scores"][0]["results"][3]["is_optimal"]) == ("correct", True)


def test_fix3_an_empty_reply_and_a_mixed_gold_step_in_one_session(tmp_path):
    session = make(
        [_two_independent_questions(), [node("getWeather", {"city": "Oslo"}, "cold"), answer("Cold.", [0])]],
        ["Clarify", "Single-Tool"],
    )
    responses = oracle_candidate(session, scoring="fixed")["responses"][:-1]
    responses[4] = text("")  # task 1, step 0: an empty reply (the published scorer crashes on it)
    fix = run(tmp_path, [session], responses[:5] + responses[6:], "fixed")
    tasks = fix["scores"][0]["results"]
    assert [t["label"] for t in tasks] == ["correct", "error", "correct", "correct"]
    step = tasks[1]["inference_log"]["step_0"]
    assert "inference_answer" not in step and step["inference_output"]["error_reason"] == ERROR_EMPTY_RESPONSE
    assert tasks[1]["first_error"] == {"kind": "name", "step": 0, "reason": ERROR_EMPTY_RESPONSE}
    assert fix["metric"]["total_info"]["task"]["correct_count"] == 3


def test_fix3_random_sessions_oracle_is_perfect_in_fixed_mode(tmp_path):
    """Random valid DAGs (questions anywhere, same-name calls): the fixed oracle is correct and optimal everywhere;
    the reference harness cannot even run some of them."""
    rng = random.Random(17)
    sessions = [random_session(rng, f"wild_tool_bench_{i}") for i in range(40)]
    fix = run(
        tmp_path / "fix",
        sessions,
        {s["id"]: oracle_candidate(s, scoring="fixed")["responses"][:-1] for s in sessions},
        "fixed",
    )
    assert fix["metric"]["total_info"]["session"]["accuracy"] == 1.0
    assert fix["metric"]["optimal_info"]["Total"]["accuracy"] == 1.0
    assert fix["metric"]["progress_info"]["Total"]["rate"] == 1.0
    assert all(isinstance(r["result"], list) for r in fix["records"])
    ref = run(
        tmp_path / "ref", sessions, {s["id"]: oracle_candidate(s)["responses"][:-1] for s in sessions}, "reference"
    )
    assert sum(isinstance(r["result"], str) for r in ref["records"]) > 0


# --------------------------------------------------------------------------- fix 4


def test_fix4_history_observations_are_encoded_as_in_the_live_task():
    session = make([[node("getWeather", {"city": "Oslo"}, 'Sunny, "warm"'), answer("Sunny.", [0])]], ["Single-Tool"])
    ref = [m for m in build_prompt(session, 1) if m["role"] == "tool"]
    fix = [m for m in build_prompt(session, 1, scoring="fixed") if m["role"] == "tool"]
    assert ref[0]["content"] == '"Sunny, \\"warm\\""'  # quirk 2: quoted a second time
    assert fix[0]["content"] == 'Sunny, "warm"'


def test_fix4_a_same_name_call_is_matched_to_the_node_it_fits_best(tmp_path):
    session = make(
        [
            [
                node("getWeather", {"city": "Lima"}, "warm"),
                node("getNews", {"topic": "rain"}, "wet"),
                node("getWeather", {"city": "Oslo"}, "cold"),
                answer("Done.", [0, 1, 2]),
            ]
        ],
        ["Parallel Multi-Tool"],
    )
    responses = [
        calls(call("o", "getWeather", {"city": "Oslo"})),
        calls(call("l", "getWeather", {"city": "Lima"})),
        calls(call("n", "getNews", {"topic": "rain"})),
        text("Done."),
        *CHATS,
    ]
    ref, fix = _both(tmp_path, session, responses)
    ref_task, fix_task = ref["scores"][0]["results"][0], fix["scores"][0]["results"][0]
    # quirk 9: the lone getWeather call is matched to node 0 (Lima) and fails its argument check
    assert ref_task["label"] == "error" and ref_task["action_arguments_label"] == "error"
    assert fix_task["label"] == "correct"
    assert _tool_messages(fix["records"][0]["result"][0]["inference_log"]["step_1"]) == [("o", "cold")]
    assert _tool_messages(ref["records"][0]["result"][0]["inference_log"]["step_1"]) == [("o", "warm")]


def test_fix4_part_of_a_same_name_group_is_a_valid_step(tmp_path):
    session = make(
        [[node("getWeather", {"city": c}, c.lower()) for c in ("Lima", "Oslo", "Rome")] + [answer("Done.", [0, 1, 2])]],
        ["Parallel Multi-Tool"],
    )
    responses = [
        calls(call("a", "getWeather", {"city": "Lima"}), call("b", "getWeather", {"city": "Oslo"})),
        calls(call("c", "getWeather", {"city": "Rome"})),
        text("Done."),
        *CHATS,
    ]
    ref, fix = _both(tmp_path, session, responses, responses)
    ref_task, fix_task = ref["scores"][0]["results"][0], fix["scores"][0]["results"][0]
    assert ref_task["label"] == "error"  # quirk 10: two of three same-name calls
    assert ref_task["inference_log"]["step_0"]["inference_output"]["error_reason"] == ERROR_ACTION_NAME
    assert (fix_task["label"], fix_task["is_optimal"]) == ("correct", False)


# --------------------------------------------------------------------------- fix 5


def _key_order_session() -> tuple[dict, list[dict]]:
    session = make(
        [
            [
                node("getWeather", {"city": "Lima", "days": 2}, "warm"),
                node("getWeather", {"city": "Oslo", "days": 3}, "cold"),
                answer("Done.", [0, 1]),
            ]
        ],
        ["Parallel Multi-Tool"],
    )
    responses = [
        calls(
            call("l", "getWeather", '{"days": 2, "city": "Lima"}'), call("o", "getWeather", {"city": "Oslo", "days": 3})
        ),
        text("Done."),
        *CHATS,
    ]
    return session, responses


def test_fix5_same_name_calls_are_paired_by_an_optimal_assignment(tmp_path):
    session, responses = _key_order_session()
    ref = run(tmp_path, [session], responses, "reference")
    assert ref["scores"][0]["results"][0]["label"] == "error"  # quirk 13: {"d... sorts after {"c...
    # rescoring the same reference run: no model call, own files
    metric = score_run(ref["dataset"], ref["out"] / "result.jsonl", ref["out"], scoring="fixed")
    rescored = jsonl(ref["out"] / "score.fixed.jsonl")[0]
    assert rescored["scoring"] == "fixed"
    task = rescored["results"][0]
    assert (task["label"], task["is_optimal"]) == ("correct", True)
    step = task["inference_log"]["step_0"]
    assert [c["id"] for c in step["inference_output"]["tool_calls"]] == ["l", "o"]  # the model's order is kept
    assert [
        json.loads(a["arguments"])["city"]
        for a in step["inference_answer"]["candidate_0_answer_function_list"]["action"]
    ] == ["Lima", "Oslo"]
    assert metric["total_info"]["task"]["correct_count"] == 4
    assert jsonl(ref["out"] / "score.jsonl")[0]["results"][0]["label"] == "error"  # reference scores untouched
    flips = compare_session(session, ref["records"][0])
    assert [(f["task_idx"], f["fixes"]) for f in flips] == [(0, [5])]


def test_fix5_pairing_prefers_fewest_errors_then_similarity():
    def exact(name, p, g):
        return "correct" if json.loads(p) == json.loads(g) else "error"

    gold = [("f", '{"a": "x"}'), ("f", '{"a": "yy"}'), ("g", "{}")]
    pairing = pair_calls([("f", '{"a": "y"}'), ("f", ' {"a":"x"}'), ("g", "{}")], gold, exact)
    assert pairing.gold_index == [1, 0, 2] and pairing.errors == 1
    assert pair_calls([("f", "{}"), ("f", "{}"), ("f", "{}")], gold, exact) is None


def test_hungarian_agrees_with_exhaustive_search():
    rng = random.Random(3)
    for _ in range(200):
        rows, columns = rng.randint(1, 4), rng.randint(4, 6)
        table = [[(rng.choice(["correct", "error"]), rng.random()) for _ in range(columns)] for _ in range(rows)]
        costs = [[(cell[0] != "correct") * (rows + 1) - cell[1] for cell in line] for line in table]
        brute = _best_assignment(table)
        fast = _hungarian(costs)
        assert len(set(fast)) == rows
        assert sum(costs[r][c] for r, c in enumerate(fast)) == pytest.approx(
            sum(costs[r][c] for r, c in enumerate(brute))
        )


# --------------------------------------------------------------------------- fix 6


def test_fix6_the_log_is_kept_whole_and_the_first_error_labels_the_task(tmp_path):
    session = make(
        [
            [
                node("getWeather", {"city": "Oslo"}, "cold"),
                node("bookTable", {"place": "Oslo Fish", "people": 2}, {"ok": True}, [0]),
                node("getNews", {"topic": "rain"}, "wet", [1]),
                answer("Done.", [2]),
            ]
        ],
        ["Sequential Multi-Tool"],
    )
    responses = [
        calls(call("w", "getWeather", {"city": "Bergen"})),
        calls(call("b", "bookTable", {"place": "Oslo Fish", "people": 2})),
        calls(call("x", "getWeather", {"city": "Oslo"})),
        *CHATS,
    ]
    ref, fix = _both(tmp_path, session, responses)
    ref_task, fix_task = ref["scores"][0]["results"][0], fix["scores"][0]["results"][0]
    assert _steps(ref_task) == ["step_0", "step_2"]  # quirk 14: step_1 deleted
    assert (ref_task["action_name_label"], ref_task["action_arguments_label"]) == ("correct", "error")  # forced
    assert _steps(fix_task) == ["step_0", "step_1", "step_2"]
    assert list(fix_task)[:4] == ["label", "action_name_label", "action_arguments_label", "first_error"]
    assert (fix_task["label"], fix_task["action_name_label"], fix_task["action_arguments_label"]) == (
        "error",
        "error",
        "error",
    )
    assert fix_task["first_error"]["kind"] == "arguments" and fix_task["first_error"]["step"] == 0
    assert fix_task["first_error"]["reason"].startswith("error_match: string similarity too low at 'city'")
    assert fix_task["inference_log"]["step_1"]["inference_output"]["current_action_arguments_label"] == "correct"
    assert fix_task["is_optimal"] is False
    # the scoring fix alone (rescoring the reference record) gives the same labels
    rescored = score_session(
        ref["records"][0], sessions_by_id(load_sessions(ref["dataset"]))["wild_tool_bench_0"], scoring="fixed"
    )
    assert rescored[0]["first_error"] == fix_task["first_error"] and _steps(rescored[0]) == _steps(fix_task)


# --------------------------------------------------------------------------- fix 7


def test_fix7_objects_without_properties_and_type_lists(tmp_path):
    session = make(
        [
            [
                node(
                    "overlayData",
                    {"data": [{"name": "Lyon", "properties": {"population": 513000}}], "opacity": 1},
                    {"ok": True},
                ),
                answer("Drawn.", [0]),
            ]
        ],
        ["Single-Tool"],
    )
    responses = [*oracle_candidate(session)["responses"][:-1]]
    ref, fix = _both(tmp_path, session, responses)
    ref_task, fix_task = ref["scores"][0]["results"][0], fix["scores"][0]["results"][0]
    assert ref_task["label"] == "error"  # quirk 24: even the gold arguments fail
    assert ref_task["inference_log"]["step_0"]["inference_output"]["current_action_arguments_check_result"] == [
        "error_schema: nested args not defined"
    ]
    assert fix_task["label"] == "correct"


def test_fix7_checker_rules():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "meta": {"type": "object"},
                        "rate": {"type": ["float", "null"]},
                        "closed": {"type": "object", "additionalProperties": False},
                        "typed": {"type": "object", "additionalProperties": {"type": "integer"}},
                    },
                },
            },
        }
    ]
    ref_tools, fix_tools = float_to_number(tools), float_to_number(tools, scoring="fixed")
    assert fix_tools[0]["function"]["parameters"]["properties"]["rate"] == {"type": ["number", "null"]}

    def both(args):
        return (
            check_arguments(ref_tools, "f", json.dumps(args), json.dumps(args)),
            check_arguments(fix_tools, "f", json.dumps(args), json.dumps(args), scoring="fixed"),
        )

    assert both({"meta": {"k": 1}}) == ("error_schema: nested args not defined", "correct")
    assert both({"rate": 5}) == ("error_schema: nested args type inconsistent", "correct")
    assert both({"rate": None}) == ("correct", "correct")
    assert both({"closed": {"k": 1}})[1] == "error_schema: nested args not defined"
    assert both({"typed": {"k": "x"}})[1] == "error_schema: nested args type inconsistent"
    assert both({"typed": {"k": 2}})[1] == "correct"
    # arguments given as objects are checked, not crashed on
    with pytest.raises(TypeError):
        check_arguments(ref_tools, "f", {"meta": {}}, '{"meta": {}}')
    assert check_arguments(fix_tools, "f", {"meta": {}}, {"meta": {}}, scoring="fixed") == "correct"
    assert check_arguments(fix_tools, "f", None, "{}", scoring="fixed") == "error: args invalid json format"
    # malformed keywords are ignored, not misread
    odd = [
        {
            "type": "function",
            "function": {
                "name": "g",
                "parameters": {
                    "type": "object",
                    "properties": {"x": {"type": "object", "required": "ab", "properties": {"a": {"type": "string"}}}},
                },
            },
        }
    ]
    assert (
        check_arguments(odd, "g", '{"x": {"a": "1"}}', '{"x": {"a": "1"}}')
        == "error_schema: required nested args missing"
    )
    assert check_arguments(odd, "g", '{"x": {"a": "1"}}', '{"x": {"a": "1"}}', scoring="fixed") == "correct"


# --------------------------------------------------------------------------- fix 8


def test_fix8_accomplish_progress_counts_gold_nodes(tmp_path):
    session = make(
        [
            [
                node("getWeather", {"city": "Oslo"}, "cold"),
                node("getNews", {"topic": "rain"}, "wet"),
                node("bookTable", {"place": "Oslo Fish", "people": 2}, {"ok": True}, [0, 1]),
                answer("Done.", [0, 1, 2]),
            ]
        ],
        ["Mixed Multi-Tool"],
    )
    responses = oracle_candidate(session)["responses"][:-1]
    ref, fix = _both(tmp_path, session, responses)
    assert ref["metric"]["progress_info"]["Total"] == {"rate": 0.75, "complete_step": 3, "total_step": 4}
    assert fix["metric"]["progress_info"]["Total"] == {"rate": 1.0, "complete_step": 4, "total_step": 4}
    assert (
        ref["metric"]["optimal_info"]["Total"]["accuracy"] == fix["metric"]["optimal_info"]["Total"]["accuracy"] == 1.0
    )
    assert list(fix["metric"])[:2] == ["model_name", "scoring"] and "scoring" not in ref["metric"]


# --------------------------------------------------------------------------- public fixtures


@pytest.fixture(scope="module")
def fixture_runs(reference_dir, tmp_path_factory):
    sessions = [
        json.loads(line) for line in (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    metrics = {}
    for candidate in ("oracle", "suboptimal"):
        out = tmp_path_factory.mktemp(candidate)
        context = EvaluationContext(model=f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}", scoring="fixed")
        run_eval(sessions, context, out, progress=False, concurrency=8)
        metrics[candidate] = score_run(reference_dir / "sessions.jsonl", out / "result.jsonl", out, scoring="fixed")
    return metrics


@pytest.mark.shared
def test_public_oracle_is_perfect_in_fixed_mode(fixture_runs):
    metric = fixture_runs["oracle"]
    assert metric["total_info"]["task"] == {"accuracy": 1.0, "correct_count": 96, "total_count": 96}
    assert metric["total_info"]["session"]["accuracy"] == 1.0
    assert metric["optimal_info"]["Total"]["accuracy"] == 1.0
    assert metric["progress_info"]["Total"]["rate"] == 1.0


@pytest.mark.shared
def test_public_suboptimal_is_correct_and_never_optimal_in_fixed_mode(fixture_runs):
    metric = fixture_runs["suboptimal"]
    assert metric["total_info"]["task"]["accuracy"] == 1.0 and metric["total_info"]["session"]["accuracy"] == 1.0
    assert metric["optimal_info"]["Total"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 25}
    assert metric["progress_info"]["Total"]["rate"] == 1.0


@pytest.mark.shared
def test_rescoring_the_published_results_names_the_fix_of_every_flip(reference_dir):
    sessions = sessions_by_id(load_sessions(reference_dir / "sessions.jsonl"))
    by_candidate: dict[str, list] = defaultdict(list)
    for line in (reference_dir / "expected_results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        by_candidate[row["candidate"]].append(row)
    oracle = compare_run(sessions, by_candidate["oracle"])
    assert (oracle["reference_correct"], oracle["fixed_correct"], oracle["by_fix"]) == (95, 96, {7: 1})
    assert [(f["id"], f["task_idx"], f["reference_label"], f["fixed_label"]) for f in oracle["flips"]] == [
        ("wild_tool_bench_3", 2, "error", "correct")
    ]
    assert compare_run(sessions, by_candidate["wrong_args_key_order"])["by_fix"] == {5: 2}
    scored = [
        (sessions[r["session_id"]], score_session(r, sessions[r["session_id"]], scoring="fixed"))
        for r in by_candidate["oracle"]
    ]
    metric = compute_metrics("oracle", scored, scoring="fixed")
    assert (metric["total_info"]["session"]["accuracy"], metric["progress_info"]["Total"]["rate"]) == (1.0, 1.0)


# --------------------------------------------------------------------------- modes


def test_scoring_modes_and_the_run_setting(monkeypatch):
    assert SCORING_MODES == ("reference", "fixed", "semantic")
    assert EvaluationContext().scoring == "reference"
    monkeypatch.setenv("WTB_SCORING", "fixed")
    assert EvaluationContext().scoring == "fixed"
    monkeypatch.setenv("WTB_SCORING", "best")
    with pytest.raises(ValueError, match="unknown scoring mode 'best'"):
        EvaluationContext()


def test_a_run_directory_never_mixes_modes(tmp_path):
    session, responses = _key_order_session()
    ref = run(tmp_path, [session], responses, "reference")
    assert json.loads((ref["out"] / "run.json").read_text())["scoring"] == "reference"
    replay = tmp_path / "candidates.jsonl"
    context = EvaluationContext(model=f"replay:{replay}#cand", scoring="fixed", dataset=str(ref["dataset"]))
    with pytest.raises(ValueError, match="never mixes scoring modes"):
        run_eval([session], context, ref["out"], progress=False)
    # also without run.json (the records themselves say which mode made them)
    (ref["out"] / "run.json").unlink()
    context = EvaluationContext(model=f"replay:{replay}#cand", scoring="fixed")
    with pytest.raises(ValueError, match="--scoring reference, not --scoring fixed"):
        run_eval([session], context, ref["out"], progress=False)
    fixed = run(tmp_path / "f", [session], responses, "fixed")
    with pytest.raises(ValueError, match="--scoring fixed, not --scoring reference"):
        run_eval(
            [session],
            EvaluationContext(model=f"replay:{tmp_path / 'f' / 'candidates.jsonl'}#cand"),
            fixed["out"],
            progress=False,
        )


def test_reference_scoring_refuses_fixed_records(tmp_path):
    session, responses = _key_order_session()
    fix = run(tmp_path, [session], responses, "fixed")
    with pytest.raises(DatasetError, match="score it in fixed mode"):
        score_run(fix["dataset"], fix["out"] / "result.jsonl", fix["out"])
    with pytest.raises(ResultRecordError):
        score_session(fix["records"][0], sessions_by_id(load_sessions(fix["dataset"]))["wild_tool_bench_0"])
    with pytest.raises(ValueError):
        score_task(fix["records"][0]["result"][0], [], scoring="best")


def test_compare_a_reference_run_with_a_fixed_run(tmp_path):
    session = _clarify_with_independent_call()
    over_ask = [
        text("How many people?"),
        text("And the news topic?"),
        calls(call("b", "bookTable", {"place": "Chez Nous", "people": 4})),
        text("Booked."),
    ]
    ref, fix = _both(tmp_path, session, [*over_ask, *CHATS], [*over_ask[:2], *CHATS])
    flips = compare_session(session, ref["records"][0], fix["records"][0])
    assert [(f["task_idx"], f["reference_label"], f["fixed_label"], f["fixes"]) for f in flips] == [
        (0, "correct", "error", [2])
    ]
    assert "step_1" in flips[0]["reason"]


def test_wtb_score_cli_rescoring_a_reference_run(tmp_path):
    session, responses = _key_order_session()
    ref = run(tmp_path, [session], responses, "reference")
    out = tmp_path / "rescored"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "score",
            "--dataset",
            str(ref["dataset"]),
            "--results",
            str(ref["out"] / "result.jsonl"),
            "--out",
            str(out),
            "--scoring",
            "fixed",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "metric.fixed.json",
        "score.fixed.jsonl",
        "summary_metrics.fixed.json",
    ]
    assert "1 task label(s) flip (3 -> 4 correct of 4); by fix: fix 5: 1" in done.stdout
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "score",
            "--dataset",
            str(ref["dataset"]),
            "--results",
            str(ref["out"] / "result.jsonl"),
            "--out",
            str(out),
            "--scoring",
            "best",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (
        bad.returncode == 2 and "Invalid value for '--scoring'" in bad.stderr and "'best' is not one of" in bad.stderr
    )
