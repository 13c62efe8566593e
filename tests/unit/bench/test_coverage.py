"""Coverage and diversity figures (docs/coverage.md): exact values on small hand-built datasets, each
figure planted; the public fixture sessions' figures exactly; the set beside the published and a
computed reference; contamination found against a reference and not within a set."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from tests.support.session_factory import make_session
from wildtoolbench.bench.coverage import (
    argument_diversity,
    comparison_rows,
    contamination,
    coverage_statistics,
    distinct_n,
    instruction_transitions,
    parameter_kind,
    published_figures,
    self_similarity,
    task_topology,
    tool_category,
    user_turns,
)


def _node(name, deps=(), arguments=None, **extra):
    return {
        "action": {"name": name, "arguments": arguments or {}},
        "observation": "x",
        "dependency_list": list(deps),
        **extra,
    }


# --------------------------------------------------------------------------- topology


@pytest.mark.parametrize(
    ("nodes", "shape", "depth", "width", "widths"),
    [
        ([_node("prepare_to_answer")], "none", 0, 0, []),
        ([_node("a"), _node("prepare_to_answer", [0])], "single", 1, 1, [1]),
        ([_node("a"), _node("a"), _node("b"), _node("prepare_to_answer", [0, 1, 2])], "parallel", 1, 3, [3]),
        (
            [_node("a"), _node("b", [0]), _node("c", [1]), _node("prepare_to_answer", [2])],
            "sequential",
            3,
            1,
            [1, 1, 1],
        ),
        ([_node("a"), _node("b"), _node("c", [0, 1]), _node("prepare_to_answer", [2])], "mixed", 2, 2, [2, 1]),
        ([_node("a"), _node("b", [0]), _node("c", [0]), _node("prepare_to_answer", [1, 2])], "mixed", 2, 2, [1, 2]),
        # a question in the first layer: the call after it is in layer 1, the question's layer holds no call
        (
            [_node("ask_user_for_required_parameters"), _node("a", [0]), _node("prepare_to_answer", [1])],
            "single",
            1,
            1,
            [1],
        ),
        # bad and cyclic dependencies are ignored
        ([_node("a", [7, "x"]), _node("b", [2]), _node("c", [1])], "mixed", 2, 2, [2, 1]),
    ],
)
def test_task_topology_shapes(nodes, shape, depth, width, widths):
    topology = task_topology(nodes)
    assert (topology["shape"], topology["depth"], topology["width"], topology["widths"]) == (
        shape,
        depth,
        width,
        widths,
    )
    assert topology["calls"] == sum(widths)


def test_task_topology_reads_malformed_lists():
    assert task_topology(None)["shape"] == "none"
    assert task_topology(["not a node", {"action": "x"}])["calls"] == 0


# --------------------------------------------------------------------------- sessions


def test_instruction_transitions_count_changes_of_kind():
    assert instruction_transitions(["Single-Tool", "Chat", "Clarify", "Parallel Multi-Tool"]) == 3
    assert instruction_transitions(["Single-Tool", "Parallel Multi-Tool", "Mixed Multi-Tool"]) == 0
    assert instruction_transitions(["Chat", "Chat", "Clarify", "Clarify"]) == 1
    assert instruction_transitions([]) == 0


def test_user_turns_add_the_replies_to_questions():
    session = make_session()
    assert user_turns(session) == 5
    session["english_answer_list"][1][0].pop("user_input")
    assert user_turns(session) == 4
    assert user_turns({"english_tasks": "not a list"}) == 0


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ({"type": "string"}, "string"),
        ({"type": "string", "enum": ["a"]}, "string enum"),
        ({"type": "integer"}, "integer"),
        ({"type": "integer", "enum": [1, 2]}, "integer enum"),
        ({"type": "float"}, "float"),
        ({"type": "number"}, "float"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "array", "items": {"type": "object"}}, "array"),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, "object"),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "nested object"),
        ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}}, "nested object"),
        ({"type": "null"}, "other"),
        ({}, "other"),
        ("string", "other"),
    ],
)
def test_parameter_kind(schema, kind):
    assert parameter_kind(schema) == kind


def test_tool_category_from_name_and_description():
    assert (
        tool_category({"name": "getRealtimeCity", "description": "Get the real-time weather of a city."}) == "Location"
    )
    assert tool_category({"name": "get_stock_price", "description": ""}) == "Business"
    assert tool_category({"name": "frobnicate", "description": "Does a thing."}) == "other"
    # the name counts twice: a music tool described with a city stays Entertainment
    assert tool_category({"name": "getSongLyrics", "description": "lyrics of a song sung in a city"}) == "Entertainment"
    # a tie goes to the first category in order
    assert tool_category({"name": "x", "description": "weather and code"}) == "Location"
    assert tool_category({"name": 5}) == "other"


# --------------------------------------------------------------------------- text and values


def test_distinct_n_planted():
    messages = ["the cat sat", "the cat ran", "A dog!"]
    assert distinct_n(messages, 1) == pytest.approx(6 / 8)  # the, cat, sat, ran, a, dog of 8 tokens
    assert distinct_n(messages, 2) == pytest.approx(4 / 5)  # the cat (twice), cat sat, cat ran, a dog
    assert distinct_n(messages, 3) == pytest.approx(2 / 2)
    assert distinct_n(["one"], 2) is None
    assert distinct_n(["北京天气", "北京"], 1) == pytest.approx(4 / 6)  # each CJK character a token


def test_self_similarity_planted():
    found = self_similarity(["a b c", "a b d", "x y", ""])
    # bigram sets {ab, bc}, {ab, bd}, {xy}: one pair shares 1 of 3 bigrams
    assert found["messages"] == 3 and found["compared"] == 3
    assert found["mean_pairwise"] == pytest.approx((1 / 3) / 3)
    assert found["mean_nearest"] == pytest.approx((1 / 3 + 1 / 3 + 0) / 3)
    copies = self_similarity(["same words here", "Same  words here", "other text now", "other text now"])
    assert copies["mean_nearest"] == pytest.approx(1.0)
    assert self_similarity(["alone"])["mean_pairwise"] is None


def test_self_similarity_samples_large_sets_with_a_seed():
    messages = [f"message number {i} of many" for i in range(30)]
    first = self_similarity(messages, sample=10)
    assert first["compared"] == 10 and first["messages"] == 30
    assert self_similarity(messages, sample=10) == first


def test_argument_diversity_planted():
    calls = [
        ("getWeather", {"city": "Paris", "days": 2}),
        ("getWeather", {"city": "paris", "days": 3}),
        ("getWeather", {"city": "Oslo", "days": 2}),
        ("book", {"items": [{"id": 1}, {"id": 2}]}),
    ]
    found = argument_diversity(calls, top=2)
    assert found["values"] == 8
    assert found["distinct"] == 5  # paris, oslo, 2, 3, 1 (strings normalised; 2 as a day and as an id)
    assert found["distinct_ratio"] == pytest.approx(5 / 8)
    counts = [3, 2, 1, 1, 1]  # "2" x3, "paris" x2, then 3, oslo, 1
    entropy = -sum(c / 8 * math.log2(c / 8) for c in counts)
    assert found["entropy_bits"] == pytest.approx(entropy, abs=1e-6)
    assert found["parameters"] == 3  # getWeather.city, getWeather.days, book.items[].id
    assert found["repeated_parameters"] == 3
    assert found["mean_parameter_distinct_ratio"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    assert found["most_common"] == [["2", 3], ["paris", 2]]
    assert argument_diversity([])["distinct_ratio"] is None


# --------------------------------------------------------------------------- a hand-built dataset


def test_coverage_of_a_hand_built_session():
    stats = coverage_statistics([make_session()])
    assert stats["sessions"] == 1 and stats["tasks"] == 4
    assert stats["task_types"] == {
        "Single-Tool": 0, "Parallel Multi-Tool": 1, "Sequential Multi-Tool": 1, "Mixed Multi-Tool": 0, "Clarify": 1, "Chat": 1,
    }  # fmt: skip
    assert stats["task_types_percent"]["Clarify"] == 25.0
    assert stats["turn_subtypes"] == {
        "Coreferential Reference": 1,
        "Partial Information": 1,
        "Long-Range Dependency": 1,
    }
    assert stats["topology"]["shapes"] == {
        "Parallel Multi-Tool": {"none": 0, "single": 0, "parallel": 1, "sequential": 0, "mixed": 0},
        "Clarify": {"none": 0, "single": 1, "parallel": 0, "sequential": 0, "mixed": 0},
        "Chat": {"none": 1, "single": 0, "parallel": 0, "sequential": 0, "mixed": 0},
        "Sequential Multi-Tool": {"none": 0, "single": 0, "parallel": 0, "sequential": 1, "mixed": 0},
    }
    assert stats["topology"]["depths"] == {"1": 2, "2": 1}
    assert stats["topology"]["widths"] == {"1": 2, "2": 1}
    assert stats["calls"] == 5 and stats["questions"] == 1
    assert stats["calls_per_task"] == {"1": 1, "2": 2}
    tools = stats["tools"]
    assert (tools["offered"], tools["called"], tools["tool_lists"]) == (2, 2, 1)
    assert tools["categories_offered"]["Location"] == 1  # getWeather
    assert tools["categories_offered"]["other"] == 1  # bookTable: no keyword
    assert tools["parameter_kinds"] == {
        "string": 2, "string enum": 0, "integer": 1, "integer enum": 0, "float": 1, "boolean": 0, "array": 0,
        "object": 0, "nested object": 0, "other": 0,
    }  # fmt: skip
    assert stats["transitions"] == {"3": 1}
    assert stats["user_turns"] == {"5": 1}
    # tokens: weather in seattle and paris / book chez nous / thanks / oslo weather then book
    assert stats["messages"]["distinct_1"] == pytest.approx(11 / 13)
    assert stats["messages"]["distinct_2"] == 1.0
    assert stats["messages"]["self_similarity"]["mean_nearest"] == 0.0
    assert stats["arguments"]["values"] == 8 and stats["arguments"]["distinct"] == 8
    assert stats["arguments"]["entropy_bits"] == pytest.approx(3.0)


def test_coverage_of_repeated_sessions_shows_the_repetition():
    stats = coverage_statistics([make_session("wild_tool_bench_0"), make_session("wild_tool_bench_1")])
    assert stats["arguments"]["values"] == 16 and stats["arguments"]["distinct"] == 8
    assert stats["arguments"]["mean_parameter_distinct_ratio"] == pytest.approx(0.5)
    assert stats["messages"]["self_similarity"]["mean_nearest"] == pytest.approx(1.0)
    assert stats["tools"]["tool_lists"] == 1
    assert stats["transitions"] == {"3": 2}


def test_coverage_reads_malformed_sessions_and_the_chinese_side():
    broken = {"id": "x", "english_task_types": "nope", "english_answer_list": [None, [{"action": None}]]}
    stats = coverage_statistics([broken])
    assert stats["tasks"] == 2 and stats["calls"] == 0
    assert stats["topology"]["shapes"] == {
        "(no type)": {"none": 2, "single": 0, "parallel": 0, "sequential": 0, "mixed": 0}
    }
    session = make_session()
    session["tasks"] = ["北京天气", "订位", "谢谢", "奥斯陆"]
    zh = coverage_statistics([session], "zh")
    assert zh["messages"]["distinct_1"] == pytest.approx(10 / 11)  # 11 characters, 谢 twice
    with pytest.raises(ValueError):
        coverage_statistics([session], "fr")


# --------------------------------------------------------------------------- against the official set


def test_published_figures_carry_their_source():
    published = published_figures()
    assert "80a5f42" in published["source"]
    figures = published["figures"]
    assert figures["sessions"]["value"] == 256 and figures["tasks"]["value"] == 1024
    assert sum(figures["dialogue_turns"]["value"].values()) == 256
    assert sum(figures["task_types_percent"]["value"].values()) == pytest.approx(100.0)
    assert sum(figures["tool_categories_percent"]["value"].values()) == pytest.approx(100.0)
    assert all(entry["source"] for entry in figures.values())


def test_comparison_with_the_published_figures():
    rows = comparison_rows(coverage_statistics([make_session()]))
    by = {(r["figure"], r["key"]): r for r in rows}
    assert by[("sessions", None)]["this"] == 1 and by[("sessions", None)]["official"] == 256
    assert by[("APIs (tools) offered", None)]["official"] == ">= 1600"
    clarify = by[("task type, % of tasks", "Clarify")]
    assert (clarify["this"], clarify["official"]) == (25.0, 25.0)
    assert "statistics.png" in clarify["source"]
    turns = by[("user turns per session, % of sessions", "4")]
    assert turns["this"] == 0.0 and turns["official"] == round(73 / 256 * 100, 1)
    assert by[("user turns per session, % of sessions", "5")]["this"] == 100.0
    assert by[("tool category, % of tools", "other")]["official"] is None


def test_comparison_with_a_reference_dataset():
    reference = coverage_statistics([make_session("r0"), make_session("r1")])
    rows = comparison_rows(coverage_statistics([make_session()]), reference)
    by = {(r["figure"], r["key"]): r for r in rows}
    assert by[("sessions", None)]["official"] == 2
    assert by[("task type, % of tasks", "Chat")]["official"] == 25.0
    assert all(r["source"] == "computed from the reference dataset" for r in rows)
    assert ("APIs (tools) offered", None) not in by


def test_contamination_against_a_reference():
    fresh = [make_session("wild_tool_bench_0"), make_session("wild_tool_bench_1")]
    fresh[1]["english_tasks"] = ["A new question about trains.", "Another one.", "And more?", "Done now, bye."]
    reworded = make_session("official_7")
    reworded["english_tasks"][2] = "Thank you!"  # 8 of 10 shingles shared
    other = make_session("official_8")
    other["english_tasks"] = ["Nothing alike at all here", "x y z", "q r s", "t u v"]
    other["english_tools"][0]["function"]["name"] = "somethingElse"
    found = contamination(fresh, [make_session("official_3"), reworded, other])
    assert [(f["id"], f["reference_id"], f["exact"]) for f in found] == [
        ("wild_tool_bench_0", "official_3", True),
        ("wild_tool_bench_0", "official_7", False),
    ]
    assert found[1]["similarity"] == 0.8
    # a duplicate within the fresh set is the audit's duplicate_session, not contamination
    assert contamination([make_session("a"), make_session("b")], [other]) == []


# --------------------------------------------------------------------------- the public fixtures


def test_fixture_sessions_figures(reference_dir: Path):
    sessions = [
        json.loads(line) for line in (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    stats = coverage_statistics(copy.deepcopy(sessions))
    assert (stats["sessions"], stats["tasks"], stats["calls"], stats["questions"]) == (24, 96, 131, 14)
    assert stats["task_types"] == {
        "Single-Tool": 34, "Parallel Multi-Tool": 18, "Sequential Multi-Tool": 11, "Mixed Multi-Tool": 7, "Clarify": 11, "Chat": 15,
    }  # fmt: skip
    assert stats["turn_subtypes"] == {
        "Coreferential Reference": 25,
        "Partial Information": 25,
        "Long-Range Dependency": 22,
    }
    topology = stats["topology"]
    assert topology["multi_tool"] == {"none": 0, "single": 0, "parallel": 18, "sequential": 11, "mixed": 7}
    assert topology["shapes"]["Clarify"] == {"none": 0, "single": 10, "parallel": 0, "sequential": 1, "mixed": 0}
    assert topology["shapes"]["Chat"]["none"] == 15 and topology["shapes"]["Single-Tool"]["single"] == 34
    assert topology["depths"] == {"1": 62, "2": 19}
    assert topology["widths"] == {"1": 56, "2": 19, "3": 6}
    assert topology["layer_widths"] == {"1": 75, "2": 19, "3": 6}
    assert stats["calls_per_task"] == {"1": 44, "2": 24, "3": 13}
    tools = stats["tools"]
    assert (tools["offered"], tools["called"], tools["tool_lists"]) == (96, 79, 20)
    assert tools["parameter_kinds"] == {
        "string": 142, "string enum": 20, "integer": 32, "integer enum": 0, "float": 14, "boolean": 20, "array": 17,
        "object": 8, "nested object": 1, "other": 0,
    }  # fmt: skip
    assert tools["most_called"][:2] == [["getRealtimeCity", 4], ["getTrafficAlerts", 4]]
    assert sum(tools["categories_offered"].values()) == 96
    assert stats["transitions"] == {"0": 3, "1": 10, "2": 11}
    assert stats["user_turns"] == {"4": 13, "5": 8, "6": 3}
    messages = stats["messages"]
    assert messages["distinct_1"] == pytest.approx(0.447328, abs=1e-6)
    assert messages["distinct_2"] == pytest.approx(0.835255, abs=1e-6)
    assert messages["distinct_3"] == pytest.approx(0.950805, abs=1e-6)
    assert messages["self_similarity"]["mean_pairwise"] == pytest.approx(0.003457, abs=1e-6)
    assert messages["self_similarity"]["mean_nearest"] == pytest.approx(0.083502, abs=1e-6)
    arguments = stats["arguments"]
    assert (arguments["values"], arguments["distinct"], arguments["repeated_parameters"]) == (308, 216, 78)
    assert arguments["most_common"][0] == ["true", 14]
    # the fixtures do not repeat one another
    assert contamination(sessions[:12], sessions[12:]) == []
