"""The rules on any dataset (bench/rules_dataset.py, docs/audit.md §12) and the derived-value matcher
(bench/rules/derived.py, docs/audit.md §5.3): a session in the official style passes ``standard``, each
planted generator defect is flagged with its rule id, and ``wtb audit --rules`` lists them."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.audit_context import CallContext
from wildtoolbench.bench.rules.derived import DerivedContext, relative_dates, word_numbers
from wildtoolbench.bench.rules_dataset import count_by_rule, rule_findings

ENV = "2024-07-10 09:30:00 Wednesday"
TODAY = dt.date(2024, 7, 10)


def _fn(name, description, properties, required):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}  # fmt: skip


TOOLS = [
    _fn("searchDebates", "Search parliamentary debates by country, topic and date range.",
        {"country": {"type": "string"}, "topic": {"type": "string"}, "start_date": {"type": "string"},
         "end_date": {"type": "string"}}, ["country", "topic"]),
    _fn("getDebate", "Get the full record of one parliamentary debate.", {"debate_id": {"type": "string"}},
        ["debate_id"]),
    _fn("bookTrain", "Book train tickets for a route on a date.",
        {"route": {"type": "string", "description": "Origin and destination as Origin-Destination."},
         "date": {"type": "string"}, "passengers": {"type": "integer"}}, ["route", "date", "passengers"]),
    _fn("getWeather", "Weather forecast for a city between two dates.",
        {"city": {"type": "string"}, "country_code": {"type": "string"}, "start": {"type": "string"},
         "end": {"type": "string"}}, ["city"]),
]  # fmt: skip
DEBATES = {"debates": [{"id": "DB-2291", "title": "Climate levy on aviation"},
                       {"id": "DB-2304", "title": "Alpine glacier water rights"}]}  # fmt: skip
DEBATE = {"id": "DB-2304", "date": "2024-06-12", "outcome": "referred to committee", "speakers": 14}
TICKETS = {"booking": "TR-88213", "route": "Madrid-Barcelona", "date": "2024-07-19", "seats": 2, "price_eur": 138}
WEATHER = {"city": "Tokyo", "days": [{"date": "2024-07-13", "high_c": 31}, {"date": "2024-07-14", "high_c": 29}]}


def _node(name, arguments, observation, deps=()):
    return {"action": {"name": name, "arguments": arguments}, "observation": observation, "dependency_list": list(deps)}


def _answer(text, deps, kind="tool"):
    return _node("prepare_to_answer", {"answer_type": kind}, text, deps)


def official_style_session():
    """Implicit references, relative dates, a demonym, a vague answer, a long-range dependency."""
    tasks = [
        "Were there any debates on environmental protection in the Swiss parliament in the past two months?",
        "Tell me more about the second one.",
        "Book me a train from Madrid to Barcelona next Friday.",
        "And what will the weather be like in Tokyo this weekend? I fly to the Japanese capital after the trip.",
        "Thanks, that's all for now!",
    ]
    answers = [
        [
            _node("searchDebates", {"country": "Switzerland", "topic": "environmental protection",
                                    "start_date": "2024-05-10", "end_date": "2024-07-10"}, DEBATES),  # fmt: skip
            _answer("Two debates: the climate levy on aviation and Alpine glacier water rights.", [0]),
        ],
        [
            _node("getDebate", {"debate_id": "DB-2304"}, DEBATE),
            _answer("The Alpine glacier water rights debate on 2024-06-12 had 14 speakers and went to committee.", [0]),
        ],
        [
            {"action": {"name": "ask_user_for_required_parameters",
                        "arguments": {"tool_name": "bookTrain", "missing_required_parameters": ["passengers"]}},
             "observation": "How many passengers should I book for?", "user_input": "Just us.",
             "dependency_list": []},
            {"action": {"name": "ask_user_for_required_parameters",
                        "arguments": {"tool_name": "bookTrain", "missing_required_parameters": ["passengers"]}},
             "observation": "How many people is that exactly?", "user_input": "Two of us.", "dependency_list": [0]},
            _node("bookTrain", {"route": "Madrid-Barcelona", "date": "2024-07-19", "passengers": 2}, TICKETS, [1]),
            _answer("Booked: two seats Madrid to Barcelona on 2024-07-19, 138 euros, booking TR-88213.", [2]),
        ],  # fmt: skip
        [
            _node("getWeather", {"city": "Tokyo", "country_code": "JP", "start": "2024-07-13", "end": "2024-07-14"},
                  WEATHER),
            _answer("Tokyo this weekend: 31 degrees on Saturday and 29 on Sunday.", [0]),
        ],
        [_answer("You're welcome, have a great trip!", [], "chat")],
    ]
    return {"id": "style_0", "english_env_info": ENV, "english_tasks": tasks, "english_answer_list": answers,
            "english_tools": TOOLS}  # fmt: skip


def test_a_session_in_the_official_style_passes_standard():
    assert rule_findings([official_style_session()], profile="standard") == []


def _planted(kind):
    session = copy.deepcopy(official_style_session())
    answers = session["english_answer_list"]
    if kind == "copied result":
        answers[3][0]["observation"] = copy.deepcopy(TICKETS)  # getWeather returns the train booking
    elif kind == "pasted definition":
        answers[1][0]["observation"] = {"result": "Get the full record of one parliamentary debate."}
    elif kind == "repeated call":
        answers[1].insert(1, copy.deepcopy(answers[1][0]))
    elif kind == "invented value":
        answers[1][0]["action"]["arguments"]["debate_id"] = "DB-2377"  # no result returned it
    return session


@pytest.mark.parametrize(
    ("kind", "standard", "small"),
    [
        ("copied result", "result.copies_other", "result.copies_other"),
        ("pasted definition", "result.copies_definition", "result.copies_definition"),
        ("repeated call", "decision.repeated_call", "decision.repeated_call"),
        ("invented value", "value.invented", "value.not_in_context"),
    ],
)
def test_each_planted_defect_is_flagged_with_its_rule(kind, standard, small):
    found = rule_findings([_planted(kind)], profile="standard")
    assert [f["rule"] for f in found] == [standard], found
    assert small in [f["rule"] for f in rule_findings([_planted(kind)], profile="small")]
    if kind == "invented value":
        assert (found[0]["id"], found[0]["task"], found[0]["step"], found[0]["value"]) == ("style_0", 1, 0, "DB-2377")


def test_derived_values_from_the_issue_and_their_near_misses():
    said = [ENV, "debates on environmental protection in the Swiss parliament in the past two months"]
    derived, literal = DerivedContext(said, today=TODAY), CallContext(said, today=TODAY)
    for value in ("Switzerland", "CH", "CHE", "2024-05-10", "2024-05"):
        assert derived.knows(value) and not literal.knows(value), value  # small's literal matching unchanged
    for value in ("Sweden", "SE", "2024-03-17", "DB-2291"):
        assert not derived.knows(value), value
    assert DerivedContext(["I want two dozen roses"]).knows(24) and not DerivedContext(["two roses"]).knows(24)
    budget = DerivedContext(["a budget of 120k to 150k for a flat in Madrid or Barcelona"])
    assert budget.knows(120000) and budget.knows("120000-150000") and budget.knows("Madrid-Barcelona")
    assert not budget.knows("120000-160000") and not budget.knows("Madrid-Valencia")
    assert DerivedContext(["a Japanese restaurant"]).knows("JP") and not DerivedContext(["a restaurant"]).knows("JP")
    assert DerivedContext(["瑞士议会过去两个月的辩论"], today=TODAY).knows("Switzerland")
    assert DerivedContext(["瑞士议会过去两个月的辩论"], today=TODAY).knows("2024-05-10")


def test_relative_dates_weekdays_and_units():
    assert {dt.date(2024, 7, 19), dt.date(2024, 7, 12)} <= relative_dates("next friday", TODAY)  # a Wednesday
    assert {dt.date(2024, 7, 13), dt.date(2024, 7, 14)} <= relative_dates("this weekend", TODAY)
    assert dt.date(2024, 7, 9) in relative_dates("yesterday", TODAY)
    assert {dt.date(2023, 1, 1), dt.date(2023, 12, 31)} <= relative_dates("last year", TODAY)
    assert {dt.date(2024, 7, 5), dt.date(2024, 7, 15)} <= relative_dates("上周五 下周一", TODAY)
    assert dt.date(2024, 7, 24) in relative_dates("in two weeks", TODAY)
    assert dt.date(2024, 5, 1) not in relative_dates("next friday", TODAY)
    tomorrow = DerivedContext(["tomorrow"], today=TODAY)
    assert tomorrow.knows("Thursday") and not DerivedContext(["a plain word"], today=TODAY).knows("Thursday")
    assert {120.0, 7200.0} <= word_numbers("2 hours") and 1500.0 in word_numbers("1.5 km")
    assert 6.0 in word_numbers("half a dozen eggs") and 300.0 in word_numbers("three hundred")


def test_wtb_audit_lists_the_findings_by_rule(tmp_path):
    from wildtoolbench.cli import app

    data = tmp_path / "set.jsonl"
    rows = [official_style_session(), {**_planted("invented value"), "id": "style_1"}]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "findings.jsonl"
    result = CliRunner().invoke(app, ["audit", str(data), "--rules", "standard", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 session(s), 1 finding(s) under --rules standard: value.invented 1" in result.output
    (written,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (written["id"], written["task"], written["step"], written["rule"]) == ("style_1", 1, 0, "value.invented")
    assert count_by_rule([written, written]) == {"value.invented": 2}
    bad = CliRunner().invoke(app, ["audit", str(data), "--rules", "off"])
    assert bad.exit_code == 2


def test_standard_generation_accepts_derived_values_and_rejects_invented_ones():
    """The planner's value rule under standard (docs/generation.md §11.2) on the issue's example: the derived
    country and date pass, an invented id and a placeholder do not, a free-text paraphrase is left to the
    Checker model; small keeps rejecting what is not said literally."""
    from wildtoolbench.bench.rules import rule_ids
    from wildtoolbench.bench.rules.value import context_errors

    tools = {t["function"]["name"]: t["function"] for t in TOOLS}
    said = [ENV, "Any debates on environmental protection in the Swiss parliament in the past two months?"]

    def found(profile, **arguments):
        decision = {"actions": [{"name": "searchDebates", "arguments": arguments}]}
        return rule_ids(context_errors(decision, tools=tools, texts=said, today=TODAY, profile=profile))

    derived = {"country": "Switzerland", "topic": "environmental protection", "start_date": "2024-05-10"}
    assert found("standard", **derived) == []
    assert found("small", **derived) == ["value.not_in_context", "value.not_in_context"]
    assert found("standard", **{**derived, "topic": "green policy"}) == []  # free text: the Checker model's
    assert found("standard", **{**derived, "end_date": "2024-02-13"}) == ["value.invented"]
    assert found("standard", **{**derived, "topic": "string"}) == ["value.placeholder"]
    assert found("off", country="Atlantis", topic="x") == []


def test_the_rule_profile_follows_the_models_unless_given(monkeypatch):
    from wildtoolbench.nodes.generation.context import Context

    monkeypatch.delenv("WTB_GEN_RULES", raising=False)
    assert Context().rule_profile(["local", "local", "", "local"]) == "small"
    assert Context().rule_profile(["local", "openai:gpt-4o", "local", "local"]) == "standard"
    assert Context(rules="off").rule_profile(["openai:gpt-4o"]) == "off"
    with pytest.raises(ValueError, match="unknown rule profile 'tiny'"):
        Context(rules="tiny").rule_profile(["local"])


def test_months_holidays_and_coordinates_are_no_invention():
    from wildtoolbench.bench.rules.value import standard_value_rule

    august = DerivedContext(["flights to Rome in August, back by Christmas"], today=TODAY)
    assert august.knows("2024-08-15") and august.knows("2024-12-25") and not august.knows("2024-09-15")
    assert DerivedContext(["8月去北京"], today=TODAY).knows("2024-08-20")
    assert DerivedContext(["lunch at noon"]).knows("12:00") and not DerivedContext(["lunch"]).knows("12:00")
    # a sum is an inference the rules do not follow: any two numbers of a context would add up to too much
    assert not DerivedContext(['{"price_eur": 69}', "two tickets"]).knows(138)
    assert standard_value_rule(48.8566, False, path="location.lat") == ""
    assert standard_value_rule(48.8566, False, path="budget") == "value.invented"
    assert standard_value_rule(1, False, path="page") == "" and standard_value_rule(7, False, path="page")
