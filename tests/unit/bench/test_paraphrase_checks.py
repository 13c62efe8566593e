"""The checks of the paraphrase control (docs/variants.md §3.5): each rule triggered and narrowly passed."""

from __future__ import annotations

import json

import pytest

from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.bench.variants.paraphrase import check_paraphrase, entities, kept_terms, paraphrase_variant


@pytest.fixture(scope="module")
def session() -> dict:
    return json.loads(bundled_demo_sessions().read_text(encoding="utf-8").splitlines()[0])


def test_entities_skip_sentence_starts():
    text = "Find me flights from Lisbon to Amsterdam on the 21st. Then book 'TP662' for 2 people."
    assert entities(text) == {"Lisbon", "Amsterdam", "21", "'TP662'", "TP662", "2"}


def test_kept_terms_hold_the_gold_values_said_in_the_message(session):
    terms = kept_terms(session, "en", 0)
    assert {"Lisbon", "Amsterdam", "economy", "21"} <= set(terms)


def test_each_rule_triggers_and_narrowly_passes(session):
    original = session["english_tasks"][0]  # Find me economy flights from Lisbon to Amsterdam on the 21st.
    assert check_paraphrase(session, "en", 0, original)[0] == "paraphrase_empty"
    assert check_paraphrase(session, "en", 0, "  ")[0] == "paraphrase_empty"
    assert check_paraphrase(session, "en", 0, original + " ")[0] == "paraphrase_empty"
    lost = "Find me cheap flights from Lisbon to Amsterdam on the 21st."  # economy dropped
    assert check_paraphrase(session, "en", 0, lost)[0] == "paraphrase_lost"
    added = "Search economy flights from Lisbon to Amsterdam on the 21st with KLM."
    assert check_paraphrase(session, "en", 0, added)[0] == "paraphrase_added"
    added_number = "Search economy flights from Lisbon to Amsterdam on the 21st, 2 seats."
    assert check_paraphrase(session, "en", 0, added_number)[0] == "paraphrase_added"
    # narrow passes: other case, a new lowercase word, a capitalised word that starts a sentence
    ok = "Please search ECONOMY flights from lisbon to Amsterdam on the 21st. Thanks."
    assert check_paraphrase(session, "en", 0, ok) is None
    variant = paraphrase_variant(session, "en", 0, ok)
    assert variant["english_tasks"][0] == ok and variant["tasks"][0] == session["tasks"][0]
    assert variant["english_answer_list"] == session["english_answer_list"]
    assert (variant["factor"], variant["target_task"], variant["origin_task"]) == ("paraphrase", 0, 0)
