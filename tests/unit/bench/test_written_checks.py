"""The checks of the model-written ``explicit`` and ``transitions +k`` (docs/variants.md §3.6): each rule
id triggered by a text that breaks it and narrowly passed by a near miss; the variants built from
checked text keep the gold and validate."""

from __future__ import annotations

import copy
import json

import pytest

from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.common import SKIP_RULES, check_variant, implicit_values
from wildtoolbench.bench.variants.turns import chat_donors
from wildtoolbench.bench.variants.written import (
    check_exchange,
    check_explicit,
    holds_value,
    mentions,
    message_of,
    model_explicit,
    model_transition,
    names_value,
)

SESSIONS = [json.loads(line) for line in bundled_demo_sessions().read_text(encoding="utf-8").splitlines()]
FLIGHTS, HOME = SESSIONS[0], SESSIONS[1]
T0 = "Find me economy flights from Lisbon to Amsterdam on the 21st."  # context value: departure_date 2025-03-21
T1 = "Actually, the bedroom one should drop to 17 at night, from 22:30 to 06:30 on weekdays."


def _rule(found):
    return None if found is None else found[0]


def test_every_new_rule_id_is_in_the_table():
    new = {"explicit_empty", "explicit_missing", "explicit_lost", "explicit_added"}
    new |= {
        "exchange_empty",
        "exchange_meta",
        "exchange_tool_call",
        "exchange_leak",
        "exchange_language",
        "explicit_meta",
    }
    assert new <= set(SKIP_RULES)


@pytest.mark.parametrize(
    ("session", "task", "text", "rule"),
    [
        (FLIGHTS, 0, "", "explicit_empty"),
        (FLIGHTS, 0, T0, "explicit_empty"),
        (FLIGHTS, 0, "Find me economy flights from Lisbon to Amsterdam on the 21st, please.", "explicit_missing"),
        (FLIGHTS, 0, "Find me economy flights from Lisbon to Amsterdam on 2025-03-12 (the 21st).", "explicit_missing"),
        (FLIGHTS, 0, "Find me economy flights to Amsterdam on 2025-03-21, the 21st.", "explicit_lost"),
        (FLIGHTS, 0, "Find me economy flights from Lisbon to Amsterdam via Porto on 2025-03-21.", "explicit_added"),
        (FLIGHTS, 0, "Find me economy flights from Lisbon to Amsterdam on 2025-03-21, 2 seats.", "explicit_added"),
        # narrow passes: only the context value added; a word of the original kept in another place
        (FLIGHTS, 0, "Find me economy flights from Lisbon to Amsterdam on 2025-03-21.", None),
        (FLIGHTS, 0, "On 2025-03-21 (the 21st), find me economy flights from Lisbon to Amsterdam.", None),
        # numbers in an equal form; weekday names that hold a context value
        (HOME, 1, T1.replace("on weekdays", "on tue, wed and thu"), None),
        (HOME, 1, T1.replace("on weekdays", "Monday to Friday, Tuesday, Wednesday and Thursday too"), "explicit_added"),
        (HOME, 1, T1.replace("on weekdays", "on Tuesday, Wednesday and Thursday"), None),
        (HOME, 1, T1.replace("on weekdays", "on tue and wed"), "explicit_missing"),
    ],
)
def test_check_explicit(session, task, text, rule):
    assert _rule(check_explicit(session, "en", task, text)) == rule


def test_names_value_numbers_and_booleans():
    assert names_value("under 180 euros", "max_price", 180.0) and not names_value("under 1800", "max_price", 180.0)
    assert names_value("green tariffs only", "green_only", True) and not names_value(
        "a green tariff", "green_only", True
    )
    assert names_value("green_only = true", "filters.green_only", True)


def test_check_explicit_on_the_chinese_side():
    session = copy.deepcopy(FLIGHTS)
    session["tasks"][0] = "帮我找21号从Lisbon飞Amsterdam的economy机票。"
    assert implicit_values(session, fields_for("zh"), 0) == [("departure_date", "2025-03-21")]
    assert check_explicit(session, "zh", 0, "帮我找2025-03-21（21号）从Lisbon飞Amsterdam的economy机票。") is None
    assert (
        _rule(check_explicit(session, "zh", 0, "帮我找21号从Lisbon飞Amsterdam的economy机票吧。")) == "explicit_missing"
    )


def test_model_explicit_keeps_the_gold_and_gives_the_other_side_its_clause():
    text = "Find me economy flights from Lisbon to Amsterdam on 2025-03-21."
    variant = model_explicit(FLIGHTS, "en", 0, text)
    assert variant["english_tasks"][0] == text and variant["id"] == "wild_tool_bench_0~explicit~t0"
    assert variant["tasks"][0] == FLIGHTS["tasks"][0] + " （明确地说：departure_date = 2025-03-21。）"
    assert variant["english_answer_list"] == FLIGHTS["english_answer_list"]
    assert check_variant(variant, "en") is None and check_variant(variant, "zh") is None


@pytest.mark.parametrize(
    ("text", "part", "calls", "rule"),
    [
        ("  ", "user turn", 0, "exchange_empty"),
        ("Sounds good.", "reply", 1, "exchange_tool_call"),
        ("You could ask listDevices about that.", "reply", 0, "exchange_tool_call"),
        ("You could list the devices of your home.", "reply", 0, None),  # plain words, not the tool's name
        ("Is it better to heat a room all day?", "user turn", 0, "exchange_leak"),  # 'heat' is needed
        ("Is a heater better than a heat pump?", "user turn", 0, "exchange_leak"),
        ("Is a heater worth it?", "user turn", 0, None),  # 'heat' only inside a word
        ("I keep mine at 17 at night.", "user turn", 0, "exchange_leak"),  # 17 is 17.0
        ("I keep mine at 17.5 at night.", "user turn", 0, None),
        ("冬天真冷。", "user turn", 0, "exchange_language"),
        ("!!! ...", "reply", 0, "exchange_language"),
        ("Winter is long here.", "user turn", 0, None),
    ],
)
def test_check_exchange_english(text, part, calls, rule):
    assert _rule(check_exchange(HOME, "en", 1, text, part=part, tool_calls=calls)) == rule


def test_check_exchange_chinese():
    assert _rule(check_exchange(HOME, "zh", 1, "Winter is long here.", part="reply")) == "exchange_language"
    assert check_exchange(HOME, "zh", 1, "冬天真长，OK。", part="reply") is None
    assert _rule(check_exchange(HOME, "zh", 1, "卧室调到17度吧。", part="user turn")) == "exchange_leak"


def test_mentions_and_holds_value():
    assert mentions("Home H-2207!", "h-2207") and not mentions("H-22070", "H-2207")
    assert mentions("去北京玩", "北京")
    assert holds_value("at 20.50 degrees", 20.5) and not holds_value("at 205 degrees", 20.5)


def test_model_transition_inserts_the_written_exchanges_and_keeps_the_target():
    exchanges = [("What season do you like?", "Autumn, for its colours."), ("Do you cook?", "I read recipes.")]
    donors = chat_donors(HOME, SESSIONS)
    variant = model_transition(HOME, "en", 1, "+2", exchanges, donors, seed=0)
    assert variant["target_task"] == 3 and variant["origin_task"] == 1
    assert variant["english_tasks"][1:4] == ["What season do you like?", "Do you cook?", HOME["english_tasks"][1]]
    assert variant["english_answer_list"][2] == [
        {
            "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}},
            "observation": "I read recipes.",
            "dependency_list": [],
        }
    ]
    assert variant["english_answer_list"][3] == HOME["english_answer_list"][1]
    assert variant["task_types"][1:3] == ["闲聊", "闲聊"] and len(variant["tasks"]) == 6
    assert check_variant(variant, "en") is None


@pytest.mark.parametrize(
    ("text", "part", "rule"),
    [
        ("Sure, here's a casual question: do you like winter?", "user turn", "exchange_meta"),
        ("I'm sorry, but I can't assist with that.", "user turn", "exchange_meta"),
        ("The assistant can control smart devices remotely.", "reply", "exchange_meta"),
        ("Here in winter it gets dark so early.", "user turn", None),  # 'here' is not 'here is'
        ("I'm sorry to hear that; cold evenings are hard.", "reply", None),  # sympathy, not a refusal
    ],
)
def test_exchange_meta(text, part, rule):
    assert _rule(check_exchange(HOME, "en", 0, text, part=part)) == rule


def test_explicit_meta():
    preface = "Here is the rewritten message: Find me economy flights from Lisbon to Amsterdam on 2025-03-21."
    assert _rule(check_explicit(FLIGHTS, "en", 0, preface)) == "explicit_meta"
    session = copy.deepcopy(FLIGHTS)
    session["english_tasks"][0] = "Here is what I need: economy flights from Lisbon to Amsterdam on the 21st."
    kept = "Here is what I need: economy flights from Lisbon to Amsterdam on 2025-03-21 (the 21st)."
    assert check_explicit(session, "en", 0, kept) is None  # the original says 'here is' itself
    assert _rule(check_exchange(HOME, "zh", 0, "以下是一条闲聊消息：冬天真冷。", part="user turn")) == "exchange_meta"


def test_message_of_removes_a_small_models_wrapping_only():
    wrapped = (
        'Sure, here\'s a casual question:\n\n"Do people sleep better in cool rooms?"\n\nThis question needs no tool.'
    )
    assert message_of(wrapped, "en") == "Do people sleep better in cool rooms?"
    assert message_of('"Do people sleep better in cool rooms?', "en") == "Do people sleep better in cool rooms?"
    assert message_of("Note: cool rooms help.", "en") == "Note: cool rooms help."  # one paragraph: kept whole
    assert message_of("好的，以下是一条消息：\n\n「冬天真冷。」", "zh") == "冬天真冷。"
    unwrapped = "Sure, here's a casual question: do you like winter?"
    assert _rule(check_exchange(HOME, "en", 0, message_of(unwrapped, "en"), part="user turn")) == "exchange_meta"


def test_exchange_repeated_and_code_blocks():
    earlier = ["Do you like winter?"]
    assert _rule(check_exchange(HOME, "en", 0, "do you like winter?", part="user turn", earlier=earlier)) == (
        "exchange_repeated"
    )
    assert check_exchange(HOME, "en", 0, "Do you like winter evenings?", part="user turn", earlier=earlier) is None
    assert _rule(check_exchange(HOME, "en", 0, "Try this:\n```bash\nls\n```", part="reply")) == "exchange_meta"
