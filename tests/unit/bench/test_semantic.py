"""Semantic scoring (docs/semantic-mode.md): each equivalence rule flips exactly the calls it should, the near
misses stay wrong, and semantic equals fixed wherever no rule applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fixed_sessions import answer, make, node, run
from wildtoolbench.bench.equivalence import (
    BOOLEAN_STRING,
    DATE_SPELLING,
    ENUM_CASE,
    EQUIVALENCE_RULES,
    EXTRA_DEFAULT,
    EXTRA_STATED,
    NUMBER_FORM,
    OMITTED_DEFAULT,
    conversation_numbers,
    is_stated,
    semantic_check,
    stated_default,
)
from wildtoolbench.bench.strategy import FIXED, REFERENCE, SEMANTIC, scoring_strategy
from wildtoolbench.bench.terms import SCORING_MODES

REPO = Path(__file__).resolve().parents[3]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "book",
            "description": "Book something; the default is 'XML' for everything.",  # a tool description states nothing
            "parameters": {
                "type": "object",
                "properties": {
                    "count": {"type": "integer"},
                    "price": {"type": "number"},
                    "code": {"type": "string"},
                    "flexible": {"type": "boolean"},
                    "checkIn": {"type": "string", "description": "Arrival date."},
                    "when": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "format": {"type": "string", "description": "Output format, the default is 'JSON'."},
                    "limit": {"type": "integer", "description": "Rows to return, default 10"},
                    "sort": {"type": "string", "default": "asc"},
                    "verbose": {"type": "boolean", "description": "Defaults to false."},
                    "city": {"type": "string"},
                    "nights": {"type": "integer"},
                },
                "required": ["count"],
            },
        },
    }
]


def check(predicted: dict, gold: dict, conversation: str = "") -> tuple[str, list[str]]:
    return semantic_check(TOOLS, "book", json.dumps(predicted), json.dumps(gold), conversation)


# (prediction, gold, conversation, the rule that accepts it)
ACCEPTED = [
    ({"count": "15"}, {"count": 15}, "", NUMBER_FORM),
    ({"count": 1, "price": "10.0"}, {"count": 1, "price": 10}, "", NUMBER_FORM),
    ({"count": 100.0}, {"count": 100}, "", NUMBER_FORM),
    ({"count": 1, "price": 100}, {"count": 1, "price": 100.0}, "", NUMBER_FORM),
    ({"count": 1, "flexible": "true"}, {"count": 1, "flexible": True}, "", BOOLEAN_STRING),
    ({"count": 1, "flexible": "false"}, {"count": 1, "flexible": False}, "", BOOLEAN_STRING),
    ({"count": 1, "checkIn": "2024-7-13"}, {"count": 1, "checkIn": "2024-07-13"}, "", DATE_SPELLING),
    ({"count": 1, "checkIn": "2024/07/13"}, {"count": 1, "checkIn": "2024-07-13"}, "", DATE_SPELLING),
    ({"count": 1, "when": "2024-07-13T00:00:00"}, {"count": 1, "when": "2024-07-13"}, "", DATE_SPELLING),
    ({"count": 1, "unit": "Celsius"}, {"count": 1, "unit": "celsius"}, "", ENUM_CASE),
    ({"count": 1, "unit": " fahrenheit "}, {"count": 1, "unit": "fahrenheit"}, "", ENUM_CASE),
    ({"count": 1, "format": "JSON"}, {"count": 1}, "", EXTRA_DEFAULT),
    ({"count": 1, "limit": 10}, {"count": 1}, "", EXTRA_DEFAULT),
    ({"count": 1, "sort": "asc"}, {"count": 1}, "", EXTRA_DEFAULT),
    ({"count": 1, "verbose": False}, {"count": 1}, "", EXTRA_DEFAULT),
    ({"count": 1, "city": None}, {"count": 1}, "", EXTRA_DEFAULT),
    ({"count": 1}, {"count": 1, "limit": 10}, "", OMITTED_DEFAULT),
    ({"count": 1}, {"count": 1, "format": "JSON"}, "", OMITTED_DEFAULT),
    ({"count": 1, "city": "Lima"}, {"count": 1}, "I land in Lima tomorrow.", EXTRA_STATED),
    ({"count": 1, "nights": 3}, {"count": 1}, "Book it for 3 nights please.", EXTRA_STATED),
    ({"count": 1, "city": "北京"}, {"count": 1}, "我明天去北京出差", EXTRA_STATED),
]

# (prediction, gold, conversation): near misses every rule leaves wrong
REJECTED = [
    ({"count": 1, "checkIn": "2024-07-14"}, {"count": 1, "checkIn": "2024-07-13"}, ""),  # another date
    ({"count": 1, "when": "2024-07-13T09:00:00"}, {"count": 1, "when": "2024-07-13"}, ""),  # another time of day
    ({"count": 1, "checkIn": "13/07/2024"}, {"count": 1, "checkIn": "2024-07-13"}, ""),  # not ISO-like
    ({"count": "16"}, {"count": 15}, ""),  # another number
    ({"count": 1, "code": "95.0"}, {"count": 1, "code": "95"}, ""),  # a number in a string where the schema says string
    ({"count": 1, "unit": "kelvin"}, {"count": 1, "unit": "celsius"}, ""),  # outside the enum
    ({"count": "1,000"}, {"count": 1000}, ""),  # thousands separators
    ({"count": 1, "flexible": 1}, {"count": 1, "flexible": True}, ""),  # 1 is not true
    ({"count": 1, "flexible": "yes"}, {"count": 1, "flexible": True}, ""),
    ({"count": 1, "format": "XML"}, {"count": 1}, ""),  # not the default (the tool's own description says XML)
    ({"count": 1}, {"count": 1, "limit": 5}, ""),  # omitted, but the gold is not at the default
    ({"count": 1, "nights": 7}, {"count": 1}, "Book it for 3 nights please."),  # an extra value nobody said
    ({"count": 1, "nights": 13}, {"count": 1}, "Check in on 2024-07-13."),  # a number inside a date
    ({"count": 1, "nights": 10}, {"count": 1}, "Arrive at 10:30."),  # a number inside a time
    ({"count": 1, "nights": 1000}, {"count": 1}, "about 1,000 guests"),  # thousands separators are not that number
    ({"count": 1, "city": "Lim"}, {"count": 1}, "I land in Lima tomorrow."),  # only part of a word
]


@pytest.mark.parametrize(("predicted", "gold", "conversation", "rule"), ACCEPTED)
def test_each_rule_accepts_its_equivalents(predicted, gold, conversation, rule):
    from wildtoolbench.bench.args import check_arguments

    assert check(predicted, gold, conversation) == ("correct", [rule])
    # the fixed checker alone rejects every one of them: the rule is what flips it
    assert check_arguments(TOOLS, "book", json.dumps(predicted), json.dumps(gold), scoring=FIXED) != "correct"
    if rule == EXTRA_STATED:  # stated by the conversation only: without it the value is one nobody said
        assert check(predicted, gold)[1] == []


@pytest.mark.parametrize(("predicted", "gold", "conversation"), REJECTED)
def test_near_misses_stay_wrong(predicted, gold, conversation):
    from wildtoolbench.bench.args import check_arguments

    verdict, ids = check(predicted, gold, conversation)
    assert ids == []
    assert verdict == check_arguments(TOOLS, "book", json.dumps(predicted), json.dumps(gold), scoring=FIXED)
    assert verdict != "correct"


def test_every_rule_has_an_accepted_and_a_rejected_case_and_a_docs_section():
    assert {rule for *_, rule in ACCEPTED} == set(EQUIVALENCE_RULES)
    text = (REPO / "docs" / "semantic-mode.md").read_text(encoding="utf-8")
    for rule in EQUIVALENCE_RULES.values():
        assert rule.accepted and rule.rejected
        assert rule.section.startswith("docs/semantic-mode.md §2.")
        assert f"`{rule.id}`" in text
    assert [rule.id for rule in EQUIVALENCE_RULES.values() if rule.arguable] == [EXTRA_STATED]


def test_two_rules_in_one_call_are_both_named():
    assert check({"count": "2", "checkIn": "2024/7/13"}, {"count": 2, "checkIn": "2024-07-13"}) == (
        "correct",
        [NUMBER_FORM, DATE_SPELLING],
    )
    # a rule that fixes one parameter does not excuse another wrong one
    verdict, ids = check({"count": "2", "checkIn": "2024-07-14"}, {"count": 2, "checkIn": "2024-07-13"})
    assert verdict != "correct" and ids == []


def test_defaults_and_stated_values_helpers():
    assert stated_default({"description": "Rows to return, default 10"}) == (True, 10)
    assert stated_default({"description": "Defaults to false."}) == (True, False)
    assert stated_default({"description": "默认为 20"}) == (True, 20)
    assert stated_default({"description": "Rows to return."}) == (False, None)
    assert conversation_numbers("Current Date: 2024-05-03 10:12:00 Friday; 3 rooms, 1,000 guests, 2.5 km") == [3, 2.5]
    assert is_stated("seattle", "What's the weather in Seattle?") and not is_stated(True, "true")


def test_the_strategy_is_built_from_its_name_only():
    assert SCORING_MODES == ("reference", "fixed", "semantic")
    assert scoring_strategy("semantic") is SEMANTIC and scoring_strategy(None) is REFERENCE
    assert SEMANTIC.inference_fixes and SEMANTIC.equivalences and not SEMANTIC.paper_comparable
    assert SEMANTIC.file_name("score.jsonl") == "score.semantic.jsonl"
    assert SEMANTIC.file_name("metric.json") == "metric.semantic.json"
    assert SEMANTIC.record_tag() == {"scoring": "semantic"} and REFERENCE.record_tag() == {}
    with pytest.raises(ValueError, match="use one of reference, fixed, semantic"):
        scoring_strategy("loose")


def _session() -> dict:
    tool = TOOLS[0]
    session = make(
        [
            [node("book", {"count": 2, "checkIn": "2024-07-13"}, "booked"), answer("Done.", deps=[0])],
            [node("book", {"count": 1}, "booked"), answer("Done.", deps=[0])],
            [node("book", {"count": 3, "unit": "celsius"}, "booked"), answer("Done.", deps=[0])],
            [node("book", {"count": 4}, "booked"), answer("Done.", deps=[0])],
        ],
        ["Single-Tool"] * 4,
    )
    for key in ("english_tools", "tools"):
        session[key] = [tool]
    session["english_tasks"] = [
        "Book 2 rooms from July 13.",
        "One more room, in Lima.",
        "Three rooms, celsius please.",
        "Four rooms.",
    ]
    return session


def _call(arguments: dict, ident: str) -> dict:
    return {
        "content": None,
        "tool_calls": [{"id": ident, "type": "function", "function": {"name": "book", "arguments": json.dumps(arguments)}}],
        "reasoning_content": None,
    }


def _reply(text: str = "Done.") -> dict:
    return {"content": text, "tool_calls": None, "reasoning_content": None}


def test_semantic_scoring_flips_exactly_the_planted_tasks(tmp_path):
    session = _session()
    responses = [
        _call({"count": 2, "checkIn": "2024/07/13"}, "a"),  # task 0: date spelling -> flips
        _reply(),
        _call({"count": 1, "city": "Lima"}, "b"),  # task 1: an extra value the user stated -> flips (arguable)
        _reply(),
        _call({"count": 3, "unit": "kelvin"}, "c"),  # task 2: outside the enum -> stays wrong
        _reply(),
        _call({"count": 4}, "d"),  # task 3: correct in every mode
        _reply(),
    ]
    fixed = run(tmp_path / "f", [session], responses, "fixed")
    semantic = run(tmp_path / "s", [session], responses, "semantic")
    assert [t["label"] for t in fixed["scores"][0]["results"]] == ["error", "error", "error", "correct"]
    tasks = semantic["scores"][0]["results"]
    assert [t["label"] for t in tasks] == ["correct", "correct", "error", "correct"]
    assert [t["equivalences"] for t in tasks] == [[DATE_SPELLING], [EXTRA_STATED], [], []]
    assert semantic["records"][0]["scoring"] == "semantic"
    assert semantic["scores"][0]["scoring"] == "semantic" and semantic["metric"]["scoring"] == "semantic"
    assert (semantic["out"] / "metric.semantic.json").is_file() and (semantic["out"] / "summary_metrics.semantic.json").is_file()
    # the harness is fixed mode's: the same history was fed back, step for step
    for mine, theirs in zip(semantic["records"][0]["result"], fixed["records"][0]["result"]):
        assert json.dumps(mine["inference_log"]) == json.dumps(theirs["inference_log"])
