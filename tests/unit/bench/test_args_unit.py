"""Unit tests for wildtoolbench.bench.args with hand-written schemas (docs/arguments.md, quirks 21-27)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import wildtoolbench.bench.args as args_module
from wildtoolbench.bench.args import (
    UnknownToolError,
    check_arguments,
    float_to_number,
    match_error,
    parameters_schema,
    schema_error,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


def tool(name: str, properties: dict, required: list | None = None, **extra) -> dict:
    parameters = {"type": "object", "properties": properties, "required": required or [], **extra}
    return {"type": "function", "function": {"name": name, "description": "t", "parameters": parameters}}


def check(properties: dict, predicted, gold, required: list | None = None, **extra) -> str:
    """Run the checker on one tool ``f``; dict/list arguments are JSON-encoded first."""
    encode = lambda value: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)  # noqa: E731
    return check_arguments([tool("f", properties, required, **extra)], "f", encode(predicted), encode(gold))


# --------------------------------------------------------------------------- float_to_number


def test_float_to_number_rewrites_every_depth_and_copies():
    tools = [
        tool(
            "f",
            {
                "lat": {"type": "float", "description": 'a "type": "float" value'},
                "points": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "float"}}}},
                "either": {"anyOf": [{"type": "float"}, {"type": "null"}]},
                "union": {"type": ["float", "null"]},
            },
        )
    ]
    original = copy.deepcopy(tools)
    rewritten = float_to_number(tools)
    assert tools == original  # input untouched
    props = rewritten[0]["function"]["parameters"]["properties"]
    assert props["lat"] == {"type": "number", "description": 'a "type": "float" value'}
    assert props["points"]["items"]["properties"]["x"] == {"type": "number"}
    assert props["either"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert props["union"] == {"type": ["float", "null"]}  # as the textual replacement would leave it
    assert rewritten[0]["type"] == "function"
    props["lat"]["type"] = "changed"
    assert tools[0]["function"]["parameters"]["properties"]["lat"]["type"] == "float"  # deep copy


def test_float_without_and_with_rewrite():
    tools = [tool("f", {"lat": {"type": "float"}})]
    # As stored, "float" accepts a Python float only.
    assert check_arguments(tools, "f", '{"lat": 48}', '{"lat": 48}') == "error_schema: nested args type inconsistent"
    assert check_arguments(tools, "f", '{"lat": 48.5}', '{"lat": 48.5}') == "correct"
    # After the rewrite "number" takes the int, and the match stage then sees 48 vs 48.0.
    rewritten = float_to_number(tools)
    assert check_arguments(rewritten, "f", '{"lat": 48}', '{"lat": 48}') == "correct"
    assert check_arguments(rewritten, "f", '{"lat": 48}', '{"lat": 48.0}') == (
        "error_match: value type inconsistent at 'lat'"
    )


# --------------------------------------------------------------------------- JSON stage


def test_invalid_json_on_either_side():
    props = {"a": {"type": "string"}}
    assert check(props, '{"a": "x"', {"a": "x"}) == "error: args invalid json format"
    assert check(props, "", {"a": "x"}) == "error: args invalid json format"
    assert check(props, {"a": "x"}, "{'a': 'x'}") == "error: args invalid json format"


def test_schema_error_in_prediction_wins_over_malformed_gold():
    # The reference parses and validates the prediction before it parses the gold.
    assert check({"a": {"type": "string"}}, {"a": 1}, "not json") == "error_schema: nested args type inconsistent"


def test_unknown_tool_raises_clear_key_error():
    with pytest.raises(UnknownToolError) as caught:
        check_arguments([tool("f", {})], "g", "{}", "{}")
    assert isinstance(caught.value, KeyError)
    assert "'g'" in str(caught.value) and "f" in str(caught.value)


def test_last_duplicate_tool_definition_wins():
    tools = [tool("f", {"a": {"type": "integer"}}), tool("f", {"a": {"type": "string"}})]
    assert check_arguments(tools, "f", '{"a": "x"}', '{"a": "x"}') == "correct"


# --------------------------------------------------------------------------- schema stage


def test_root_must_be_an_object():
    props = {"a": {"type": "string"}}
    assert check(props, '["x"]', {"a": "x"}) == "error_schema: args type inconsistent"
    assert check(props, "5", {"a": "x"}) == "error_schema: args type inconsistent"


def test_root_missing_is_checked_before_undefined():
    props = {"city": {"type": "string"}}
    assert check(props, {"town": "x"}, {"city": "x"}, required=["city"]) == "error_schema: required args missing"
    assert check(props, {"city": "x", "town": "y"}, {"city": "x"}) == "error_schema: args not defined"


def test_root_keys_are_checked_in_prediction_order():
    props = {"city": {"type": "string"}}
    assert check(props, '{"country": "FR", "city": 5}', {"city": "5"}) == "error_schema: args not defined"
    assert check(props, '{"city": 5, "country": "FR"}', {"city": "5"}) == (
        "error_schema: nested args type inconsistent"
    )


def test_root_additional_properties_is_ignored():
    props = {"a": {"type": "string"}}
    assert check(props, {"a": "x", "b": 1}, {"a": "x"}, additionalProperties=True) == "error_schema: args not defined"


def test_integer_accepts_bool_and_match_rejects_it():
    props = {"n": {"type": "integer"}}
    assert check(props, {"n": True}, {"n": True}) == "correct"
    assert check(props, {"n": True}, {"n": 1}) == "error_match: value type inconsistent at 'n'"
    assert check(props, {"n": 1.0}, {"n": 1}) == "error_schema: nested args type inconsistent"
    assert check({"n": {"type": "boolean"}}, {"n": 1}, {"n": True}) == "error_schema: nested args type inconsistent"


def test_number_accepts_int_float_and_bool_float_rejects_int():
    assert check({"x": {"type": "number"}}, {"x": False}, {"x": False}) == "correct"
    assert check({"x": {"type": "number"}}, {"x": 5}, {"x": 5.0}) == "error_match: value type inconsistent at 'x'"
    assert check({"x": {"type": "number"}}, {"x": 5.0}, {"x": 5}) == "error_match: value type inconsistent at 'x'"
    assert check({"x": {"type": "float"}}, {"x": 5}, {"x": 5}) == "error_schema: nested args type inconsistent"
    assert check({"x": {"type": "float"}}, {"x": True}, {"x": True}) == "error_schema: nested args type inconsistent"


def test_null_string_array_object_types():
    assert check({"x": {"type": "null"}}, {"x": None}, {"x": None}) == "correct"
    assert check({"x": {"type": "null"}}, {"x": 0}, {"x": 0}) == "error_schema: nested args type inconsistent"
    assert check({"x": {"type": "array"}}, {"x": "a"}, {"x": "a"}) == "error_schema: nested args type inconsistent"
    assert check({"x": {"type": "object"}}, {"x": []}, {"x": []}) == "error_schema: nested args type inconsistent"


def test_property_without_type_is_a_string_and_unknown_type_is_unchecked():
    assert check({"x": {"description": "no type"}}, {"x": "a"}, {"x": "a"}) == "correct"
    assert check({"x": {"description": "no type"}}, {"x": 3}, {"x": 3}) == "error_schema: nested args type inconsistent"
    for value in (3, "a", [1, "b"], None, 2.5):
        assert check({"x": {"type": "any"}}, {"x": value}, {"x": value}) == "correct"


def test_unknown_type_still_rejects_dict_keys():
    # Key checking follows the value being a dict, whatever the declared type.
    assert check({"x": {"type": "any"}}, {"x": {"k": 1}}, {"x": {"k": 1}}) == "error_schema: nested args not defined"
    assert check({"x": {"type": "any"}}, {"x": {}}, {"x": {}}) == "correct"


def test_type_list_is_a_union():
    props = {"x": {"type": ["string", "null"]}}
    assert check(props, {"x": None}, {"x": None}) == "correct"
    assert check(props, {"x": 1}, {"x": 1}) == "error_schema: nested args type inconsistent"


def test_enum_uses_python_equality():
    props = {"level": {"type": "integer", "enum": [1, 2]}}
    assert check(props, {"level": 3}, {"level": 3}) == "error_schema: nested args value not in enum"
    # True == 1 so the bool passes type and enum; the match stage catches it.
    assert check(props, {"level": True}, {"level": 1}) == "error_match: value type inconsistent at 'level'"
    assert check({"x": {"type": "number", "enum": [1.0]}}, {"x": 1}, {"x": 1}) == "correct"
    assert check({"u": {"type": "string", "enum": ["a"]}}, {"u": "A"}, {"u": "a"}) == (
        "error_schema: nested args value not in enum"
    )


def test_type_is_checked_before_enum():
    props = {"u": {"type": "string", "enum": ["a", "b"]}}
    assert check(props, {"u": 5}, {"u": "a"}) == "error_schema: nested args type inconsistent"


def test_schema_error_root_flag_selects_plain_or_nested_message():
    schema = {"type": "string", "enum": ["a"]}
    assert schema_error("b", schema) == "error_schema: args value not in enum"
    assert schema_error("b", schema, root=False) == "error_schema: nested args value not in enum"
    assert schema_error(1, schema) == "error_schema: args type inconsistent"
    assert schema_error(1, "not a schema") is None


def test_anyof_passes_on_any_branch_and_reports_first_branch_error():
    point = {
        "anyOf": [
            {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
            {"type": "array", "items": {"type": "number"}},
        ]
    }
    assert check({"p": point}, {"p": {"x": 1}}, {"p": {"x": 1}}) == "correct"
    assert check({"p": point}, {"p": [1, 2.5]}, {"p": [1, 2.5]}) == "correct"
    # Fails both branches: the first branch's error (missing x) is reported ...
    assert check({"p": point}, {"p": {"y": 1}}, {"p": {"y": 1}}) == "error_schema: required nested args missing"
    # ... and with the branches swapped, the array branch's type error is.
    swapped = {"anyOf": list(reversed(point["anyOf"]))}
    assert check({"p": swapped}, {"p": {"y": 1}}, {"p": {"y": 1}}) == "error_schema: nested args type inconsistent"
    assert check({"p": point}, {"p": "s"}, {"p": "s"}) == "error_schema: nested args type inconsistent"


def test_anyof_with_null_and_enum_branch():
    mode = {"anyOf": [{"type": "string", "enum": ["fast", "safe"]}, {"type": "null"}]}
    assert check({"m": mode}, {"m": None}, {"m": None}) == "correct"
    assert check({"m": mode}, {"m": "slow"}, {"m": "slow"}) == "error_schema: nested args value not in enum"


def test_object_without_properties_rejects_every_key():
    props = {"o": {"type": "object"}}
    assert check(props, {"o": {}}, {"o": {}}) == "correct"
    assert check(props, {"o": {"k": 1}}, {"o": {"k": 1}}) == "error_schema: nested args not defined"
    # Only a literal `additionalProperties: true` lets extra keys through (unchecked).
    open_props = {"o": {"type": "object", "additionalProperties": True}}
    assert check(open_props, {"o": {"k": [1]}}, {"o": {"k": [1]}}) == "correct"
    schema_props = {"o": {"type": "object", "additionalProperties": {"type": "integer"}}}
    assert check(schema_props, {"o": {"k": 1}}, {"o": {"k": 1}}) == "error_schema: nested args not defined"


def test_additional_properties_still_checks_declared_keys():
    props = {"o": {"type": "object", "additionalProperties": True, "properties": {"w": {"type": "boolean"}}}}
    assert check(props, {"o": {"w": True, "z": "x"}}, {"o": {"w": True, "z": "x"}}) == "correct"
    assert check(props, {"o": {"w": "yes"}}, {"o": {"w": True}}) == "error_schema: nested args type inconsistent"


def test_nested_errors_inside_arrays_of_objects():
    legs = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"from": {"type": "string"}, "seats": {"type": "integer", "enum": [1, 2]}},
            "required": ["from"],
        },
    }
    props = {"legs": legs}
    assert check(props, {"legs": [{"from": "A"}, {"seats": 1}]}, {"legs": []}) == (
        "error_schema: required nested args missing"
    )
    assert check(props, {"legs": [{"from": "A", "gate": 3}]}, {"legs": []}) == "error_schema: nested args not defined"
    assert check(props, {"legs": [{"from": "A", "seats": 3}]}, {"legs": []}) == (
        "error_schema: nested args value not in enum"
    )
    assert check(props, {"legs": ["A"]}, {"legs": []}) == "error_schema: nested args type inconsistent"
    # Schema passes, then the match stage reports the full path.
    assert (
        check(
            props,
            {"legs": [{"from": "A"}, {"from": "B", "seats": 1}]},
            {"legs": [{"from": "A"}, {"from": "B", "seats": 2}]},
        )
        == "error_match: value mismatch at 'legs[1].seats'"
    )


def test_parameters_schema_keeps_required_and_properties_only():
    tools = [tool("f", {"a": {"type": "string"}}, ["a"], additionalProperties=True)]
    assert parameters_schema(tools, "f") == {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string"}},
    }
    bare = [{"type": "function", "function": {"name": "g"}}]
    assert parameters_schema(bare, "g") == {"type": "object", "required": [], "properties": {}}
    assert check_arguments(bare, "g", "{}", "{}") == "correct"
    assert check_arguments(bare, "g", '{"a": 1}', '{"a": 1}') == "error_schema: args not defined"


# --------------------------------------------------------------------------- match stage


def test_keys_mismatch_messages():
    props = {k: {"type": "string"} for k in ("a", "b", "c", "d")}
    assert check(props, {"a": "x"}, {"a": "x", "b": "y"}) == "error_match: args keys mismatch (missing: ['b'])"
    assert check(props, {"a": "x", "c": "z"}, {"a": "x", "b": "y"}) == (
        "error_match: args keys mismatch (missing: ['b'], extra: ['c'])"
    )
    # Several keys: the reference's order follows the hash seed; ours is sorted.
    assert check(props, {"a": "x"}, {"a": "x", "d": "1", "b": "2", "c": "3"}) == (
        "error_match: args keys mismatch (missing: ['b', 'c', 'd'])"
    )
    nested = {"o": {"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}}}}
    assert check(nested, {"o": {"p": "1", "q": "2"}}, {"o": {"p": "1"}}) == (
        "error_match: args keys mismatch at 'o' (extra: ['q'])"
    )


def test_match_error_paths_and_root():
    assert match_error({"a": {"b": [1, 2, {"c": "Rome"}]}}, {"a": {"b": [1, 2, {"c": "Paris"}]}}) == (
        "error_match: string similarity too low at 'a.b[2].c' (edit score: 0.00)"
    )
    assert match_error([1], {"a": 1}) == "error_match: value type inconsistent"
    assert match_error({"a": [1, 2]}, {"a": [1]}) == "error_match: array length mismatch at 'a'"
    assert match_error({"a": [2, 1]}, {"a": [1, 2]}) == "error_match: value mismatch at 'a[0]'"
    assert match_error({"a": None}, {"a": None}) is None


def test_five_vs_five_point_zero_and_true_vs_one():
    props = {"x": {"type": "any"}}
    assert check(props, {"x": 5}, {"x": 5.0}) == "error_match: value type inconsistent at 'x'"
    assert check(props, {"x": True}, {"x": 1}) == "error_match: value type inconsistent at 'x'"
    assert check(props, '{"x": 1e2}', {"x": 100.0}) == "correct"
    assert check(props, {"x": 0.1 + 0.2}, {"x": 0.3}) == "error_match: value mismatch at 'x'"


def test_string_exact_and_normalised():
    props = {"s": {"type": "string"}}
    assert check(props, {"s": "New\u3000York\t"}, {"s": "new york"}) == "correct"
    assert check(props, {"s": "bringanumbrella"}, {"s": "Bring an Umbrella"}) == "correct"
    assert check(props, {"s": ""}, {"s": ""}) == "correct"


def test_short_string_edit_gate_then_rouge():
    props = {"s": {"type": "string"}}
    # ratio("Rome", "Paris") = 0 -> edit gate.
    assert check(props, {"s": "Rome"}, {"s": "Paris"}) == (
        "error_match: string similarity too low at 's' (edit score: 0.00)"
    )
    # ratio("NYC", "New York") = 2*2/11 = 0.36.
    assert check(props, {"s": "NYC"}, {"s": "New York"}) == (
        "error_match: string similarity too low at 's' (edit score: 0.36)"
    )
    # ratio("Pariss", "Paris") = 10/11 passes the edit gate, but the single tokens differ: ROUGE-L 0.
    assert check(props, {"s": "Pariss"}, {"s": "Paris"}) == (
        "error_match: string similarity too low at 's' (rouge score: 0.00)"
    )
    # Gold of exactly 10 characters skips the edit gate.
    assert check(props, {"s": "abcdefghiX"}, {"s": "abcdefghij"}) == (
        "error_match: string similarity too low at 's' (rouge score: 0.00)"
    )
    # Empty prediction against a short gold: ratio 0 comes first.
    assert check(props, {"s": ""}, {"s": "Paris"}) == (
        "error_match: string similarity too low at 's' (edit score: 0.00)"
    )


def test_long_string_rouge_threshold():
    props = {"s": {"type": "string"}}
    gold = "one two three four five six seven eight nine ten"
    # LCS 8 of 8 predicted / 10 gold words: F = 2*1*0.8/1.8 = 0.89 -> passes.
    assert check(props, {"s": "one two three four six seven eight ten"}, {"s": gold}) == "correct"
    # LCS 5: F = 2*1*0.5/1.5 = 0.67 -> fails.
    assert check(props, {"s": "one two three four five"}, {"s": gold}) == (
        "error_match: string similarity too low at 's' (rouge score: 0.67)"
    )
    # ROUGE is case-sensitive once normalisation fails: LCS 1 ("seven") of 8 / 7 words, F = 2/15.
    assert check(
        props, {"s": "ONE TWO THREE FOUR FIVE SIX seven eight"}, {"s": "one two three four five six seven"}
    ) == ("error_match: string similarity too low at 's' (rouge score: 0.13)")


def test_rouge_hypothesis_is_the_prediction():
    # rouge's summary-level ROUGE-L is not symmetric across sentences; the
    # prediction is the hypothesis and the gold the reference.
    props = {"s": {"type": "string"}}
    a = "delta echo charlie. alpha alpha delta"
    b = "charlie echo delta. echo delta alpha"
    assert check(props, {"s": a}, {"s": b}) == "error_match: string similarity too low at 's' (rouge score: 0.50)"
    assert check(props, {"s": b}, {"s": a}) == "correct"


def test_cjk_strings_are_segmented_with_jieba():
    props = {"s": {"type": "string"}}
    # Unsegmented these would be two different single tokens (ROUGE 0); jieba gives
    # 7 and 8 words with an LCS of 6, F = 0.80.
    assert check(props, {"s": "帮我查询明天北京的天气"}, {"s": "请帮我查询明天北京的天气情况"}) == "correct"
    # 9 words each, LCS 5 (我 想 预订 去 的): F = 5/9.
    assert check(props, {"s": "我想预订后天上午去广州的飞机票"}, {"s": "我想预订明天下午去上海的火车票"}) == (
        "error_match: string similarity too low at 's' (rouge score: 0.56)"
    )
    # One CJK side is enough to segment both.
    assert check(props, {"s": "三文鱼 news today"}, {"s": "salmon news today"}) == (
        "error_match: string similarity too low at 's' (rouge score: 0.67)"
    )


@pytest.mark.parametrize("hypothesis", ["", ".", "...", ".."])
def test_empty_or_dot_hypothesis_fails_rouge(hypothesis):
    props = {"s": {"type": "string"}}
    assert check(props, {"s": hypothesis}, {"s": "bring an umbrella tomorrow"}) == (
        "error_match: rouge calculation failed at 's'"
    )


def test_comparison_crash_is_reported(monkeypatch):
    def boom(*_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(args_module, "_segment", boom)
    assert check({"s": {"type": "string"}}, {"s": "北京明天的天气"}, {"s": "上海明天的天气预报情况"}) == (
        "error: comparison failed - boom"
    )


def test_jieba_is_quiet_and_caches_outside_the_repo(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    code = (
        "from wildtoolbench.bench.args import match_error;"
        "print(match_error('我想预订后天上午去广州的飞机票', '我想预订明天下午去上海的火车票'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip() == "error_match: string similarity too low (rouge score: 0.56)"
    assert (tmp_path / "jieba.cache").is_file()
    assert not list(REPO_ROOT.rglob("jieba.cache"))
