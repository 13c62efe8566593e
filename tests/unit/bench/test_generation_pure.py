"""Pure parts of session generation (docs/generation.md): type-path tree, plans, derivations, rule checks, parsing."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from wildtoolbench.bench.generation import (
    GenerationInputError,
    chinese_env_info,
    dependency_lists,
    derive_task_type,
    enumerate_type_paths,
    load_tool_lists,
    parse_type_path,
    pick_strategies,
    plan_sessions,
    random_env_info,
    select_type_paths,
    should_answer_vaguely,
    streamline,
)
from wildtoolbench.bench.generation_checks import extract_json, plain_text, tools_by_name
from wildtoolbench.bench.rules.decision import decision_errors, schema_errors
from wildtoolbench.bench.rules.result import results_errors
from wildtoolbench.nodes.generation.state import CheckerVerdict, PlannerDecision, ToolResults

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "getWeather",
            "description": "Weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["C", "F"]},
                    "days": {"type": "integer"},
                    "lat": {"type": "float"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "getAlerts",
            "description": "Alerts.",
            "parameters": {"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]},
        },
    },
]


def _node(name, step, deps=(), **extra):
    return {"name": name, "arguments": {}, "step": step, "depends_on": list(deps), **extra}


def test_type_tree_has_4_pow_n_paths_in_product_order():
    paths = enumerate_type_paths(3)
    assert len(paths) == 64 and len(set(paths)) == 64
    assert paths[0] == ("ST", "ST", "ST") and paths[1] == ("ST", "ST", "MT") and paths[-1] == ("CC", "CC", "CC")
    assert len(enumerate_type_paths(4)) == 256
    with pytest.raises(GenerationInputError):
        enumerate_type_paths(0)


def test_parse_and_select_paths():
    assert parse_type_path("st-mt, cq,CC", 4) == ("ST", "MT", "CQ", "CC")
    with pytest.raises(GenerationInputError, match="unknown layer type"):
        parse_type_path("ST,XX,CQ,CC", 4)
    with pytest.raises(GenerationInputError, match="3 layers, expected 4"):
        parse_type_path("ST,MT,CQ", 4)
    assert select_type_paths(2, ["ST,CC", "CC,MT"]) == [("ST", "CC"), ("CC", "MT")]
    assert select_type_paths(2, ["ST,CC"], samples=3) == [("ST", "CC")] * 3
    drawn = select_type_paths(4, samples=10, seed=5)
    assert len(drawn) == 10 and len(set(drawn)) == 10
    assert drawn == select_type_paths(4, samples=10, seed=5) != select_type_paths(4, samples=10, seed=6)
    assert len(select_type_paths(1, samples=9, seed=1)) == 9  # more samples than the 4 paths: repeats
    assert select_type_paths(2) == enumerate_type_paths(2)


def test_env_info_is_a_real_date_with_its_weekday():
    rng = random.Random(3)
    for _ in range(50):
        text = random_env_info(rng, 2023)
        date, time, weekday = text.split(" ")
        moment = dt.datetime.strptime(f"{date} {time}", "%Y-%m-%d %H:%M:%S")
        assert moment.year == 2023 and moment.strftime("%A") == weekday
    assert chinese_env_info("2024-05-03 10:12:00 Friday") == "2024-05-03 10:12:00 星期五"
    assert chinese_env_info("2024-05-05 09:00:00 Sunday") == "2024-05-05 09:00:00 星期日"


def test_strategies_long_range_only_from_layer_three():
    seen = set()
    for seed in range(200):
        strategies = pick_strategies(random.Random(seed), 4)
        assert strategies[0] == "" and "long_range" not in strategies[1:3]
        seen.add(strategies[3])
    assert seen == {"coreferential", "partial", "long_range"}


def test_plans_are_reproducible_and_deal_distinct_tool_lists():
    lists = [[{"type": "function", "function": {"name": f"tool{i}"}}] for i in range(5)]
    paths = select_type_paths(4, samples=5, seed=2)
    plans = plan_sessions(lists, paths, seed=2, language="zh", year=2025, user_models=3)
    again = plan_sessions(lists, paths, seed=2, language="zh", year=2025, user_models=3)
    assert [p.summary() for p in plans] == [p.summary() for p in again]
    assert sorted(p.tool_line for p in plans) == [0, 1, 2, 3, 4]
    for plan in plans:
        assert plan.tools == lists[plan.tool_line] and plan.env_info.startswith("2025-")
        assert [bool(v) for v in plan.mt_variants] == [t == "MT" for t in plan.type_path]
        assert plan.as_state()["language"] == "zh" and 0 <= plan.user_model_index < 3
    other = plan_sessions(lists, paths, seed=3)
    assert [p.env_info for p in other] != [p.env_info for p in plans]
    with pytest.raises(GenerationInputError, match="language"):
        plan_sessions(lists, paths, language="fr")


def test_vague_answers_are_deterministic_first_answers_only():
    flags = [should_answer_vaguely(seed, 1, 0, 0.25) for seed in range(2000)]
    assert 0.2 < sum(flags) / len(flags) < 0.3
    assert flags == [should_answer_vaguely(seed, 1, 0, 0.25) for seed in range(2000)]
    assert not any(should_answer_vaguely(seed, 1, 1, 1.0) for seed in range(50))
    assert all(should_answer_vaguely(seed, 0, 0, 1.0) for seed in range(50))
    assert not any(should_answer_vaguely(seed, 0, 0, 0.0) for seed in range(50))


def test_dependency_lists_hold_what_each_call_needs():
    # fan-in: two parallel calls, then one that names only node 1, then the answer
    nodes = [_node("a", 0), _node("b", 0), _node("c", 1, [1]), _node("prepare_to_answer", 2)]
    assert dependency_lists(nodes) == [[], [], [1], [0, 1, 2]]
    # a later call that names nothing needs nothing: the planner's second step is no dependency
    # (a candidate making a and b at once is right); c names a, so it waits for a only
    nodes = [_node("a", 0), _node("b", 1), _node("c", 2, [0]), _node("prepare_to_answer", 3)]
    assert dependency_lists(nodes) == [[], [], [0], [0, 1, 2]]
    # dependencies on the same or a later step are dropped
    nodes = [_node("a", 0, [1]), _node("b", 0), _node("prepare_to_answer", 1)]
    assert dependency_lists(nodes) == [[], [], [0, 1]]
    assert dependency_lists([_node("prepare_to_answer", 0)]) == [[]]
    # a question waits for the step before it; a call waits for every earlier question
    ask = "ask_user_for_required_parameters"
    nodes = [_node("a", 0), _node(ask, 1), _node(ask, 2), _node("b", 3), _node("prepare_to_answer", 4)]
    assert dependency_lists(nodes) == [[], [0], [1], [1, 2], [0, 1, 2, 3]]


def test_a_call_that_uses_a_result_depends_on_it():
    """A call whose argument value only an earlier result holds could not be made before it: it
    depends on that call though the planner named nothing (docs/generation.md §6.1)."""
    from wildtoolbench.bench.generation import known_texts

    search = {**_node("searchProducts", 0), "arguments": {"query": "cola"}, "observation": {"upc": "0049000028911"}}
    detail = {**_node("getProduct", 1), "arguments": {"upc": "0049000028911"}}
    other = {**_node("getStore", 1), "arguments": {"city": "Austin"}}
    nodes = [search, detail, other, _node("prepare_to_answer", 2)]
    task = {"user_message": "Find cola in Austin and its product details.", "nodes": nodes}
    known = known_texts([task], 0)
    assert dependency_lists(nodes, known) == [[], [0], [], [0, 1, 2]]
    assert derive_task_type("MT", nodes, known) == "Mixed Multi-Tool"
    # the user said the UPC: no call is needed for it
    said = known_texts([{**task, "user_message": "Details of UPC 0049000028911 and the Austin store?"}], 0)
    assert dependency_lists(nodes, said) == [[], [], [], [0, 1, 2]]
    assert derive_task_type("MT", nodes, said) == "Parallel Multi-Tool"


@pytest.mark.parametrize(
    "layer, steps, deps, expected",
    [
        ("ST", [0], [[]], "Single-Tool"),
        ("MT", [0, 0, 0], [[], [], []], "Parallel Multi-Tool"),
        ("MT", [0, 1, 2], [[], [0], [1]], "Sequential Multi-Tool"),
        ("MT", [0, 1, 2], [[], [], []], "Parallel Multi-Tool"),  # three steps, no call needs another
        ("MT", [0, 0, 1], [[], [], [0]], "Mixed Multi-Tool"),
        ("MT", [0, 1, 1], [[], [0], [0]], "Mixed Multi-Tool"),
        ("MT", [0, 1, 2], [[], [], [1]], "Mixed Multi-Tool"),
        ("CQ", [1], [[]], "Clarify"),
        ("CC", [], [], "Chat"),
    ],
)
def test_task_type_from_layer_and_dependencies(layer, steps, deps, expected):
    nodes = [_node(f"t{i}", s, d) for i, (s, d) in enumerate(zip(steps, deps))] + [_node("prepare_to_answer", 9)]
    assert derive_task_type(layer, nodes) == expected


def test_streamline_drops_checker_entries_and_rejected_attempts():
    raw = [
        {"id": "e0", "role": "user"},
        {"id": "e1", "role": "planner"},
        {"id": "e2", "role": "checker", "target": "e1", "verdict": "reject"},
        {"id": "e3", "role": "planner"},
        {"id": "e4", "role": "checker", "target": "e3", "verdict": "accept"},
        {"id": "e5", "role": "tool"},
    ]
    assert [e["id"] for e in streamline(raw)] == ["e0", "e3", "e5"]


def test_extract_json_reads_fences_prose_and_think_blocks():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Sure!\n```json\n{"a": [1, 2]}\n```\nDone.') == {"a": [1, 2]}
    assert extract_json("<think>maybe {bad</think> Result: [1, 2] then more") == [1, 2]
    assert extract_json('noise { not json } and {"b": true}') == {"b": True}
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("I would call getWeather for Paris.")
    assert plain_text('```\n"Hello there"\n```') == "Hello there"
    assert plain_text('{"message": "Hi"}') == "Hi"
    assert plain_text("<think>x</think>  ") == ""


def test_role_output_models_parse_robustly():
    decision, error = PlannerDecision.parse(
        'Plan:\n```json\n{"thought": "t", "actions": [{"name": "getWeather", "arguments": {"city": "Paris"}}]}\n```'
    )
    assert error is None and decision.actions[0].arguments == {"city": "Paris"} and decision.actions[0].depends_on == []
    bare, _ = PlannerDecision.parse('[{"name": "getAlerts", "arguments": {"region": "x"}, "depends_on": null}]')
    assert bare.actions[0].name == "getAlerts"
    bad, error = PlannerDecision.parse(
        '{"actions": [{"name": "getWeather", "arguments": "{\\"city\\": \\"Paris\\"}"}]}'
    )
    assert bad is None and "arguments must be a JSON object" in error
    none, error = PlannerDecision.parse("call the weather tool")
    assert none is None and "not valid JSON" in error
    empty, error = PlannerDecision.parse('{"thought": "x", "actions": []}')
    assert empty is None and "actions" in error
    verdict, _ = CheckerVerdict.parse('{"verdict": "Rejected", "reason": "city invented"}')
    assert verdict.verdict == "reject" and verdict.reason == "city invented"
    assert CheckerVerdict.parse('{"verdict": true}')[0].verdict == "accept"
    assert CheckerVerdict.parse('{"verdict": "maybe"}')[0] is None
    assert ToolResults.parse('[1, {"x": 2}]')[0].results == [1, {"x": 2}]


def test_schema_errors_follow_the_evaluator_rules():
    params = TOOLS[0]["function"]["parameters"]
    assert schema_errors({"city": "Paris", "unit": "C", "days": 3, "lat": 4}, params) == []
    assert schema_errors({}, params) == ["missing required parameter city"]
    assert schema_errors({"city": "x", "zip": "1"}, params) == ["parameter zip is not defined by the tool"]
    assert schema_errors({"city": "x", "unit": "K"}, params) == ["unit: 'K' is not one of ['C', 'F']"]
    assert schema_errors({"city": 5, "days": True}, params) == [
        "city: expected string, got int",
        "days: expected integer, got bool",
    ]
    assert schema_errors("city", params) == ["arguments must be a JSON object, got str"]
    assert schema_errors({"a": 1}, {"type": "object"}) == ["parameter a is not defined by the tool"]


def test_decision_rules():
    tools = tools_by_name(TOOLS)

    def errors(actions, layer="MT", nodes=()):
        return decision_errors({"actions": actions}, tools=tools, layer_type=layer, nodes=list(nodes))

    call = {"name": "getWeather", "arguments": {"city": "Paris"}, "depends_on": []}
    ask = {
        "name": "ask_user_for_required_parameters",
        "arguments": {"tool_name": "getWeather", "missing_required_parameters": ["city"]},
    }
    answer = {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}}
    assert errors([call, {**call, "arguments": {"city": "Rome"}}]) == []
    assert errors([{"name": "getWether", "arguments": {}}]) == ["unknown tool 'getWether' (not in the tool list)"]
    assert errors([call, ask], layer="CQ")[0].startswith(
        "ask_user_for_required_parameters and prepare_to_answer must be"
    )
    assert errors([{**call, "depends_on": [0]}]) == [
        "action 0 (getWeather): depends_on 0 is not the index of an earlier action (0..-1)"
    ]
    assert errors([call], layer="CC") == [
        "this task is casual chat: answer directly with prepare_to_answer (answer_type chat)"
    ]
    assert errors([ask], layer="ST") == ["this task gives every required value: call the tools instead of asking"]
    assert errors([call, call], layer="ST") == ["this task needs exactly one tool call"]
    assert errors([answer], layer="MT") == [
        "action 0 (prepare_to_answer): answer_type 'tool' needs at least one tool result first",
        "this task needs several tool calls before the answer",
    ]
    done_call = [{"name": "getWeather", "arguments": {"city": "Paris"}, "step": 0}]
    assert errors([answer], layer="CQ", nodes=done_call) == [
        "this task lacks a required value: ask the user, then call the tool, before answering"
    ]
    assert errors([ask], layer="CQ") == []
    assert errors(
        [{**ask, "arguments": {"tool_name": "getWeather", "missing_required_parameters": ["zip"]}}], layer="CQ"
    ) == ["action 0 (ask_user_for_required_parameters): ['zip'] are not parameters of getWeather"]
    assert errors([{"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}}], layer="CC") == []
    # the scorer's own schema stage also runs: a root-level extra key is rejected even when allowed by the tool
    loose = tools_by_name(
        [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
                },
            }
        ]
    )
    assert decision_errors(
        {"actions": [{"name": "f", "arguments": {"x": 1}}]}, tools=loose, layer_type="ST", nodes=[]
    ) == ["action 0 (f): error_schema: args not defined"]


def test_results_rules():
    calls = [{"name": "a"}, {"name": "b"}]
    assert results_errors([{"x": 1}, "ok"], calls) == []
    assert results_errors({"x": 1}, calls) == ["tool output must be a list with one result per call"]
    assert results_errors([{"x": 1}], calls) == ["expected 2 results (one per call), got 1"]
    assert results_errors([{}, None], calls) == ["result 0 for a is empty", "result 1 for b is empty"]


def test_load_tool_lists_names_file_and_line(tmp_path):
    good = tmp_path / "tools.jsonl"
    good.write_text(json.dumps(TOOLS) + "\n\n" + json.dumps(TOOLS[:1]) + "\n", encoding="utf-8")
    assert [len(x) for x in load_tool_lists(good)] == [2, 1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(TOOLS) + "\n" + json.dumps([{"type": "function", "function": {}}]) + "\n", encoding="utf-8"
    )
    with pytest.raises(GenerationInputError, match=r"bad.jsonl:2: tool \[0\] lacks field function.name"):
        load_tool_lists(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("[{\n", encoding="utf-8")
    with pytest.raises(GenerationInputError, match=r"broken.jsonl:1: not JSON"):
        load_tool_lists(broken)


def test_real_tool_lists_load(shared_dir):
    for name in ("tools_en.jsonl", "tools_zh.jsonl"):
        lists = load_tool_lists(shared_dir / "data" / name)
        assert len(lists) == 256
