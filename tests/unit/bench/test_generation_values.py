"""The generator's own choice of request values (``wildtoolbench.bench.generation_values``, docs/generation.md §4.4)."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from wildtoolbench.bench.generation_values import (
    fallback_value,
    given_by_name,
    known_values,
    name_words,
    planned_value,
    request_phrase,
)
from wildtoolbench.bench.rules.value import placeholder_problem

TODAY = dt.date(2024, 5, 3)


def _plan(name, schema, seed=1, language="en"):
    return planned_value(name, schema, rng=random.Random(seed), today=TODAY, language=language)


def test_name_words_split_camel_and_snake_case():
    assert name_words("startDate") == ["start", "date"]
    assert name_words("start_date") == ["start", "date"]
    assert name_words("airportCode") == ["airport", "code"]
    assert name_words("userID") == ["user", "id"]


def test_the_schema_comes_first_enum_then_the_described_options():
    assert _plan("unit", {"type": "string", "enum": ["C", "F"]}) in ("C", "F")
    assert _plan("format", {"type": "string", "description": "Output format, e.g. 'JSON' or 'CSV'."}) in (
        "JSON",
        "CSV",
    )
    # a format template or a non-value is never offered as a value
    assert _plan("date", {"type": "string", "description": "The date, in the format 'YYYY-MM-DD'."}) != "YYYY-MM-DD"
    assert _plan("author", {"type": "string", "description": "Author name, default: empty."}) != "empty"


def test_dates_come_after_the_session_date_and_numbers_stay_in_range():
    for seed in range(20):
        value = _plan("startDate", {"type": "string"}, seed)
        day = dt.date.fromisoformat(value)
        assert TODAY < day <= TODAY + dt.timedelta(days=30)
    assert _plan("year", {"type": "integer"}) == 2024
    assert _plan("limit", {"type": "integer", "maximum": 4}) <= 4
    assert _plan("limit", {"type": "integer", "minimum": 50}) == 50
    assert isinstance(_plan("teamId", {"type": "integer"}), int)
    assert 1000 <= _plan("teamId", {"type": "integer"}) <= 99999


def test_string_kinds_by_name_in_both_languages():
    assert _plan("city", {"type": "string"}) in {"Paris", "Tokyo", "Chicago", "Barcelona", "Toronto", "Sydney",
                                                 "Berlin", "Seattle", "Lisbon", "Denver"}  # fmt: skip
    assert _plan("city", {"type": "string"}, language="zh") in {"北京", "上海", "杭州", "成都", "深圳", "广州",
                                                                "南京", "西安", "武汉", "厦门"}  # fmt: skip
    assert _plan("baseCurrency", {"type": "string"}) in {"USD", "EUR", "JPY", "GBP", "CAD", "CHF"}
    assert _plan("email", {"type": "string"}).count("@") == 1
    assert _plan("country", {"type": "string", "description": "Two-letter ISO code of the country"}) in {
        "US", "JP", "DE", "FR", "CA", "BR", "IT", "GB"}  # fmt: skip
    assert _plan("language", {"type": "string", "description": "Language code such as"}) in {
        "fr", "es", "de", "ja", "it", "pt"}  # fmt: skip


def test_identifiers_are_not_people_and_unknown_kinds_are_left_to_the_model():
    assert _plan("customer_id", {"type": "string"}).isdigit()
    assert _plan("room_id", {"type": "string"}).isdigit()
    assert _plan("name", {"type": "string", "description": "The user's full name."}) in {
        "Maria Lopez", "Kenji Sato", "Olivia Brown", "Ahmed Khan", "Lucas Meyer", "Emma Wilson"}  # fmt: skip
    # the name of a fish, a query, a word, a boolean: the generator does not guess
    assert _plan("fishName", {"type": "string", "description": "Name of the fish."}) is None
    assert _plan("name", {"type": "string", "description": "Name of the product."}) is None
    assert _plan("query", {"type": "string"}) is None
    assert _plan("word", {"type": "string"}) is None
    assert _plan("verbose", {"type": "boolean"}) is None
    assert _plan("cities", {"type": "array", "items": {"type": "string"}})[0] in {"Paris", "Tokyo", "Chicago",
        "Barcelona", "Toronto", "Sydney", "Berlin", "Seattle", "Lisbon", "Denver"}  # fmt: skip


def test_the_same_seed_gives_the_same_values():
    schema = {"type": "string"}
    assert [_plan("city", schema, s) for s in range(5)] == [_plan("city", schema, s) for s in range(5)]
    assert len({_plan("city", schema, s) for s in range(30)}) > 3


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_planned_value_of_the_real_tool_lists_is_a_real_value(shared_dir, language):
    """Over the 1,248 real tools: no planned value is a placeholder or a template, and most of them (the
    kinds the bank covers, about two thirds) are planned by the generator rather than left to the model."""
    planned = unplanned = 0
    for line in (shared_dir / "data" / f"tools_{language}.jsonl").read_text(encoding="utf-8").splitlines():
        for tool in json.loads(line):
            function = tool.get("function", tool)
            parameters = function.get("parameters") or {}
            for name in parameters.get("required") or []:
                schema = (parameters.get("properties") or {}).get(name)
                value = _plan(name, schema, language=language)
                if value is None:
                    unplanned += 1
                    continue
                planned += 1
                for item in value if isinstance(value, list) else [value]:
                    assert not placeholder_problem(item), (name, item)
                    assert "YYYY" not in str(item).upper(), (name, item)
    assert planned >= 0.6 * (planned + unplanned), (planned, unplanned)


def test_fallback_values_fit_the_kind_of_parameter():
    rng = random.Random(0)
    assert fallback_value("word", {"type": "string"}, rng=rng) in {"serendipity", "harbor", "gentle", "resilient",
        "lantern", "meadow", "curious", "brisk"}  # fmt: skip
    assert fallback_value("message", {"type": "string"}, rng=rng).endswith((".", "!"))
    assert fallback_value("query", {"type": "string"}, rng=rng, language="zh") in {"新能源汽车", "马拉松训练",
        "家常菜", "太阳能", "远程办公", "爵士乐历史"}  # fmt: skip
    assert fallback_value("verbose", {"type": "boolean"}, rng=rng) is True
    assert fallback_value("count", {"type": "integer"}, rng=rng) == 3
    assert fallback_value("filters", {"type": "object"}, rng=rng) is None


def test_known_values_and_given_by_name():
    values = known_values(
        [{"city": "Paris", "days": 3}, {"results": [{"temp": 21.5, "ok": True, "note": ""}]}, ["Paris", None]],
        today=TODAY,
    )
    assert values == ["2024-05-03", "Paris", 3, 21.5]
    given = given_by_name([{"city": "Paris"}, {"request_1": {"city": "Oslo"}, "request_2": {"word": "harbor"}}, None])
    assert given == {"city": ["Paris", "Oslo"], "word": ["harbor"]}


def test_request_phrase_turns_a_description_into_the_object_of_a_request():
    assert request_phrase("Get the weather of a city. Returns JSON.") == "get the weather of a city"
    assert (
        request_phrase("This tool is used to search for the latest news articles about a topic.")
        == "search for the latest news articles about a topic"
    )
    assert request_phrase("API to fetch NBA stats") == "API to fetch NBA stats"
    assert request_phrase("获取指定城市的天气信息。返回JSON。", "zh") == "获取指定城市的天气信息"
    assert request_phrase("该工具用于查询股票价格", "zh") == "查询股票价格"
