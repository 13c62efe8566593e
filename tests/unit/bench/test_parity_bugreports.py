"""Parity fixes from public bug reports (issue 10, parts 1-2): the published evaluation's values, as tests.

1. Same-name pairing keys: the gold calls of a step are sorted by their arguments text as
   ``json.dumps(arguments, ensure_ascii=False)`` (docs/scoring.md §2), so non-ASCII text sorts raw.
2. The step limit never changes a score: a task may always use its gold node count + 1 requests.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tests.support.session_factory import make_session
from wildtoolbench.bench.args import check_arguments
from wildtoolbench.bench.generation import oracle_candidate
from wildtoolbench.bench.harness import effective_step_limit
from wildtoolbench.bench.scoring import gold_arguments_text, score_task
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import run_eval
from wildtoolbench.scoring.run import score_run


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(tmp_path: Path, sessions: list[dict], candidates: list[dict], candidate: str, **context) -> tuple[list, list]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions), encoding="utf-8")
    replay = tmp_path / "candidates.jsonl"
    replay.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in candidates), encoding="utf-8")
    out = tmp_path / "run"
    run_eval(sessions, EvaluationContext(model=f"replay:{replay}#{candidate}", **context), out, progress=False)
    score_run(dataset, out / "result.jsonl", out)
    return _jsonl(out / "result.jsonl"), _jsonl(out / "score.jsonl")


# --------------------------------------------------------------------------- 1. pairing keys


def test_public_bug_report_nonascii_pairing_scores_correct(shared_dir, tmp_path):
    folder = shared_dir / "fixtures" / "bugreports" / "nonascii-pairing"
    sessions = _jsonl(folder / "sessions.jsonl")
    records, scores = _run(tmp_path, sessions, _jsonl(folder / "candidates.jsonl"), "cand")
    task0 = scores[0]["results"][0]
    assert (task0["label"], task0["action_arguments_label"], task0["is_optimal"]) == ("correct", "correct", True)
    # Both sides sorted with "São Paulo" after "Santiago" (raw UTF-8 text), so each call met its own gold.
    step0 = task0["inference_log"]["step_0"]
    assert [json.loads(c["function"]["arguments"])["city"] for c in step0["inference_output"]["tool_calls"]] == [
        "Santiago",
        "São Paulo",
    ]
    gold = step0["inference_answer"]["candidate_0_answer_function_list"]["action"]
    assert [json.loads(a["arguments"])["city"] for a in gold] == ["Santiago", "São Paulo"]
    assert records[0]["result"][0]["action_name_label"] == "correct"


def test_gold_arguments_text_keeps_non_ascii_raw_and_the_dataset_key_order():
    assert gold_arguments_text({"city": "São Paulo", "a": 1}) == '{"city": "São Paulo", "a": 1}'
    assert gold_arguments_text('{"city":"北京","a":1}') == '{"city": "北京", "a": 1}'
    assert gold_arguments_text("not json") == "not json"
    assert sorted(["Santiago", "São Paulo"], key=lambda c: gold_arguments_text({"city": c})) == [
        "Santiago",
        "São Paulo",
    ]


def _city_session() -> dict:
    session = make_session()
    tool = {
        "type": "function",
        "function": {
            "name": "getCity",
            "description": "Facts about a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
    session["english_tools"].append(tool)
    session["tools"].append(copy.deepcopy(tool))

    def node(city):
        return {
            "action": {"name": "getCity", "arguments": {"city": city}},
            "observation": {"ok": city},
            "dependency_list": [],
        }

    answer = [
        node("berlin"),
        node("北京"),
        {
            "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}},
            "observation": "Done.",
            "dependency_list": [0, 1],
        },
    ]
    session["english_answer_list"][0] = answer
    session["answer_list"][0] = copy.deepcopy(answer)
    session["english_tasks"][0] = session["tasks"][0] = "Tell me about berlin and 北京."
    return session


def _two_city_task(arguments: list[str]) -> dict:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "getCity", "arguments": a}}
        for i, a in enumerate(arguments)
    ]
    gold = [{"arguments": json.dumps({"city": c}, ensure_ascii=False), "name": "getCity"} for c in ("berlin", "北京")]
    return {
        "action_name_label": "correct",
        "is_optimal": True,
        "inference_log": {
            "task_idx": 0,
            "step_0": {
                "inference_output": {"content": None, "tool_calls": calls, "current_action_name_label": "correct"},
                "inference_answer": {"candidate_0_answer_function_list": {"action": gold}},
            },
        },
    }


def test_escaped_cjk_prediction_is_paired_as_the_published_evaluation_pairs_it():
    """``\\u5317\\u4eac`` sorts before "berlin" on the predicted side, "北京" after it on the gold side."""
    tools = _city_session()["english_tools"]
    escaped = [json.dumps({"city": "berlin"}), json.dumps({"city": "北京"})]  # ASCII escapes
    assert escaped[1] == '{"city": "\\u5317\\u4eac"}'
    scored = score_task(_two_city_task(escaped), tools)
    step = scored["inference_log"]["step_0"]
    # Predicted side sorted by raw text: the escaped 北京 first; gold side: berlin first -> mis-paired.
    assert [c["function"]["arguments"] for c in step["inference_output"]["tool_calls"]] == [escaped[1], escaped[0]]
    expected = [
        check_arguments(tools, "getCity", escaped[1], '{"city": "berlin"}'),
        check_arguments(tools, "getCity", escaped[0], '{"city": "北京"}'),
    ]
    assert expected[0].startswith("error_match: string similarity too low at 'city'")
    assert step["inference_output"]["current_action_arguments_check_result"] == expected
    assert (scored["label"], scored["action_arguments_label"], scored["is_optimal"]) == ("error", "error", False)
    # The same values as raw UTF-8 text pair up and pass.
    raw = [json.dumps({"city": "berlin"}), json.dumps({"city": "北京"}, ensure_ascii=False)]
    assert score_task(_two_city_task(raw), tools)["label"] == "correct"


def test_escaped_cjk_prediction_through_wtb_eval(tmp_path):
    session = _city_session()
    oracle = oracle_candidate(session)
    escaped = copy.deepcopy(oracle)
    escaped["candidate"] = "escaped"
    for call in escaped["responses"][0]["tool_calls"]:
        call["function"]["arguments"] = json.dumps(json.loads(call["function"]["arguments"]))
    _, scores = _run(tmp_path / "oracle", [session], [oracle], "oracle")
    assert [t["label"] for t in scores[0]["results"]] == ["correct"] * 4
    _, scores = _run(tmp_path / "escaped", [session], [escaped], "escaped")
    assert [t["label"] for t in scores[0]["results"]] == ["error", "correct", "correct", "correct"]


# --------------------------------------------------------------------------- 2. step limit


def _chain_session(calls: int) -> dict:
    session = make_session()
    answer = [
        {
            "action": {"name": "getWeather", "arguments": {"city": f"City {i}"}},
            "observation": f"obs {i}",
            "dependency_list": [i - 1] if i else [],
        }
        for i in range(calls)
    ]
    answer.append(
        {
            "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}},
            "observation": "All done.",
            "dependency_list": [calls - 1],
        }
    )
    session["english_answer_list"][0] = answer
    session["answer_list"][0] = copy.deepcopy(answer)
    session["english_task_types"][0] = "Sequential Multi-Tool"
    return session


def test_effective_step_limit_is_at_least_the_gold_node_count_plus_one():
    assert effective_step_limit(32, 34) == 35
    assert effective_step_limit(32, 5) == 32
    assert effective_step_limit(2, 3) == 4
    assert effective_step_limit(None, 3) is None


def test_a_33_call_chain_oracle_is_correct_and_optimal_at_the_default_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("WTB_MAX_STEPS", raising=False)
    session = _chain_session(33)
    records, scores = _run(tmp_path, [session], [oracle_candidate(session)], "oracle")
    task0 = records[0]["result"][0]
    assert len([k for k in task0["inference_log"] if k.startswith("step_")]) == 34
    assert "error_reason" not in task0
    assert (scores[0]["results"][0]["label"], scores[0]["results"][0]["is_optimal"]) == ("correct", True)
    assert [t["label"] for t in scores[0]["results"]] == ["correct"] * 4


def test_a_small_max_steps_never_cuts_a_task_short(tmp_path):
    """``max_steps=2`` on a 3-node task: still 3 requests and correct (the limit is raised to 4)."""
    session = make_session()
    records, scores = _run(tmp_path, [session], [oracle_candidate(session)], "oracle", max_steps=2)
    assert [t.get("error_reason") for t in records[0]["result"]] == [None] * 4
    assert [t["label"] for t in scores[0]["results"]] == ["correct"] * 4
