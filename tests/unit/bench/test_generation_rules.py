"""Decisive rule checks of planner decisions (bench/rules/decision.py, value.py, result.py; docs/generation.md §2): values from
the conversation, no repeated call, no re-proposed rejected decision."""

from __future__ import annotations

from wildtoolbench.bench.rules.decision import canonical_actions, repetition_errors
from wildtoolbench.bench.rules.value import context_errors

TOOLS = {
    "getWordDefinitions": {
        "name": "getWordDefinitions",
        "description": "Get the definitions and example usages of a word.",
        "parameters": {
            "type": "object",
            "properties": {
                "word": {"type": "string", "description": "The word to be queried."},
                "language": {"type": "string", "description": "Language code such as en, es or fr."},
                "limit": {"type": "integer", "default": 5},
            },
            "required": ["word"],
        },
    }
}


def _decision(**arguments):
    return {"thought": "", "plan": "", "actions": [{"name": "getWordDefinitions", "arguments": arguments}]}


def test_values_must_come_from_the_conversation():
    texts = ["2024-05-03 10:12:00 Friday", "What does 'apple' mean?"]
    assert context_errors(_decision(word="apple", language="es", limit=5), tools=TOOLS, texts=texts) == []
    assert context_errors(_decision(word="example"), tools=TOOLS, texts=texts) == [
        "action 0 (getWordDefinitions): word = example appears nowhere in the conversation; use the value the user gave"
    ]
    assert context_errors(_decision(word="example"), tools=TOOLS, texts=texts, can_ask=True) == [
        "action 0 (getWordDefinitions): word = example appears nowhere in the conversation; ask the user for word "
        "with ask_user_for_required_parameters"
    ]
    assert context_errors(_decision(word="apple", limit=7), tools=TOOLS, texts=texts) == [
        "action 0 (getWordDefinitions): limit = 7 appears nowhere in the conversation; leave out the optional "
        "parameter limit or use a value the user gave"
    ]


def test_a_call_is_not_repeated_and_a_rejected_decision_not_proposed_again():
    # issue 25: the planner called getWordDefinitions {"word": "apple"} eight times in a row
    done = [{"name": "getWordDefinitions", "arguments": {"word": "apple"}, "step": 0}]
    assert repetition_errors(_decision(word="apple"), nodes=done) == [
        "action 0 (getWordDefinitions): the same call was made already (action 0) and its result is shown; do not "
        "call it again: use that result (call another tool, or answer)"
    ]
    assert repetition_errors(_decision(word="pear"), nodes=done) == []
    rejected = [canonical_actions(_decision(word="pear"))]
    assert repetition_errors(_decision(word="pear"), nodes=[], rejected=rejected) == [
        "this is the same decision that was rejected before; change the tool or the arguments"
    ]
    assert canonical_actions(_decision(word="pear")) == (
        '[{"arguments": {"word": "pear"}, "depends_on": [], "name": "getWordDefinitions"}]'
    )


def test_one_step_does_not_make_the_same_call_twice():
    # the local model's parallel step held getSynonymsAntonyms {"type": "antonyms", "word": "apple"} three times
    twice = {"actions": [_decision(word="apple")["actions"][0], _decision(word="apple")["actions"][0]]}
    assert repetition_errors(twice, nodes=[]) == [
        "action 1 (getWordDefinitions): the same call was made already (action 0 of this step); make each call once"
    ]
    pair = {"actions": [_decision(word="apple")["actions"][0], _decision(word="pear")["actions"][0]]}
    assert repetition_errors(pair, nodes=[]) == []


def test_a_date_goes_only_to_a_parameter_about_dates():
    # the local model's planner gave the session's date as a product's UPC code
    tools = {
        "searchProducts": {
            "name": "searchProducts",
            "parameters": {
                "type": "object",
                "properties": {
                    "upc": {"type": "string", "description": "The Universal Product Code (UPC) of the product."},
                    "since": {"type": "string"},
                },
            },
        }
    }
    texts = ["2024-10-22 09:00:00 Tuesday", "Find lemonade at Kroger."]
    decision = {"actions": [{"name": "searchProducts", "arguments": {"upc": "2024-10-22", "since": "2024-10-22"}}]}
    assert context_errors(decision, tools=tools, texts=texts) == [
        "action 0 (searchProducts): upc = 2024-10-22 is a date, but upc is no date; use the value the user gave"
    ]


def test_a_result_copied_from_another_call_is_rejected():
    from wildtoolbench.bench.rules.result import results_errors

    earlier = [
        {"name": "getSynonymsAntonyms", "arguments": {"word": "apple"},
         "observation": {"synonyms": ["banana", "mango"], "antonyms": ["orange", "grape"]}},
    ]  # fmt: skip
    copied = [{"synonyms": ["banana", "mango"], "antonyms": ["orange", "grape"]}]
    assert results_errors(copied, [{"name": "getWordPartOfSpeech", "arguments": {"word": "apple"}}], earlier) == [
        "result 0 for getWordPartOfSpeech copies the result of getSynonymsAntonyms: write what getWordPartOfSpeech "
        "returns for these arguments"
    ]
    # the same call may give the same result again; a short result ({"ok": true}) may repeat
    assert results_errors(copied, [{"name": "getSynonymsAntonyms", "arguments": {"word": "apple"}}], earlier) == []
    assert results_errors([{"ok": True}, {"ok": True}], [{"name": "a"}, {"name": "b"}]) == []
    # within one step too
    long = {"record": "the same long record of forty and more characters", "n": 1}
    assert results_errors([long, long], [{"name": "a"}, {"name": "b"}]) == [
        "result 1 for b copies the result of a: write what b returns for these arguments"
    ]
