"""The cache shared by worker processes and carried to a server (docs/trials.md §8.1): the session-trial index,
what a client sends and stores, and what the server side serves; everything carried is untrusted."""

from __future__ import annotations

from wildtoolbench.models import resolve_candidate
from wildtoolbench.models.reply import CandidateReply
from wildtoolbench.nodes.evaluation.carried_cache import CarriedCache, entry_from_reply, reply_from_entry
from wildtoolbench.remote.evaluation import keep_paid, run_input
from wildtoolbench.runner.shared_cache import IndexedCache

KEY_A, KEY_B, KEY_C = "a" * 64, "b" * 64, "c" * 64


def _reply(text: str, tokens: int = 7) -> CandidateReply:
    return CandidateReply(
        response={"content": text, "tool_calls": [], "reasoning_content": None}, input_tokens=tokens, output_tokens=2
    )


def _cache(tmp_path, spec: str = "openai:m") -> IndexedCache:
    return IndexedCache(tmp_path / "cache", resolve_candidate(spec))


def _about(session: str, index: int) -> dict:
    return {"spec": "openai:m", "session": session, "request_index": index}


def test_entries_are_indexed_by_candidate_session_and_trial(tmp_path):
    cache = _cache(tmp_path)
    cache.put(KEY_A, _reply("one"), trial=1, about=_about("s1", 0))
    cache.put(KEY_B, _reply("two"), trial=2, about=_about("s1", 0))
    cache.put(KEY_C, _reply("three"), trial=1, about=_about("s2", 0))
    assert list(cache.entries_for("s1", 1)) == [KEY_A]
    assert list(cache.entries_for("s1", 2)) == [KEY_B] and list(cache.entries_for("s2", 1)) == [KEY_C]
    assert cache.entries_for("s1", 3) == {}
    assert _cache(tmp_path, "openai:other").entries_for("s1", 1) == {}  # another candidate: its own index
    entry = cache.entries_for("s1", 1)[KEY_A]
    assert reply_from_entry(entry).response["content"] == "one" and entry["trial"] == 1


def test_a_torn_index_line_and_an_unreadable_entry_are_skipped(tmp_path):
    cache = _cache(tmp_path)
    cache.put(KEY_A, _reply("one"), trial=1, about=_about("s1", 0))
    cache.put(KEY_B, _reply("two"), trial=1, about=_about("s1", 1))
    with open(cache.index_path("s1", 1), "a", encoding="ascii") as handle:
        handle.write("abc")  # a torn last line
    cache.path(KEY_B).write_text("{not json", encoding="utf-8")
    assert cache.keys_for("s1", 1) == [KEY_A, KEY_B]
    assert list(cache.entries_for("s1", 1)) == [KEY_A]


def test_only_well_formed_entries_of_the_session_trial_are_stored(tmp_path):
    cache = _cache(tmp_path)
    good = entry_from_reply(_reply("ok"), 2, _about("s1", 3))
    paid = {
        KEY_A: good,
        "not-a-key": good,
        KEY_B: {**good, "session": "s9"},  # another session
        KEY_C: {**good, "trial": 1},  # another trial
        "d" * 64: {**good, "reply": {"response": "text", "input_tokens": 1, "output_tokens": 1}},
        "e" * 64: {**good, "reply": {**good["reply"], "input_tokens": -1}},
    }
    assert cache.store_entries(paid, "s1", 2) == 1
    assert list(cache.entries_for("s1", 2)) == [KEY_A]
    stored = cache.get(KEY_A)
    assert stored is not None and stored.cached and stored.input_tokens == 7


def test_the_carried_cache_serves_what_it_was_given_and_keeps_what_was_paid():
    carried = CarriedCache(
        {KEY_A: entry_from_reply(_reply("one", 11), 1, _about("s1", 0)), "x": {}, KEY_B: {"reply": 3}}
    )
    hit = carried.get(KEY_A)
    assert hit is not None and hit.cached and hit.response["content"] == "one"
    assert carried.get(KEY_B) is None and carried.get(KEY_C) is None
    carried.put(KEY_C, _reply("new"), trial=1, about=_about("s1", 1))
    assert carried.served == [[11, 2]] and list(carried.paid) == [KEY_C]
    assert carried.counts() == {"hits": 1, "writes": 1}


def test_a_client_sends_its_entries_and_counts_what_came_back(tmp_path):
    cache = _cache(tmp_path)
    cache.put(KEY_A, _reply("one", 11), trial=2, about=_about("s1", 0))
    payload = run_input({"id": "s1"}, 2, cache)
    assert payload["trial"] == 2 and list(payload["replies"]) == [KEY_A]
    assert run_input({"id": "s1"}, None, None) == {"session": {"id": "s1"}}
    assert run_input({"id": "s1"}, None, cache)["replies"] == {}  # trial 1 of a single run: nothing held yet
    usage = {"requests": 3, "attempts": 3, "input_tokens": 30, "output_tokens": 6}
    output = {"served": [[11, 2], "junk"], "paid": {KEY_B: entry_from_reply(_reply("two"), 2, _about("s1", 1))}}
    keep_paid(usage, cache, output, "s1", 2)
    assert usage == {"requests": 2, "attempts": 2, "input_tokens": 19, "output_tokens": 4, "cache_hits": 1}
    assert cache.keys_for("s1", 2) == [KEY_A, KEY_B]
    assert (cache.hits, cache.misses, cache.writes) == (1, 1, 2)


def test_paid_replies_streamed_during_a_run_are_stored_once(tmp_path):
    """A server run's output values come after every step with every reply paid so far: each is stored when it
    first comes, and the run's end stores only what had not come (docs/trials.md §8.1)."""
    from wildtoolbench.remote.evaluation import PaidSink

    cache = _cache(tmp_path)
    sink = PaidSink(cache, "s1", 1)
    first = {KEY_A: entry_from_reply(_reply("one"), 1, _about("s1", 0))}
    sink.take({"paid": first})
    assert cache.keys_for("s1", 1) == [KEY_A] and cache.writes == 1  # stored while the run goes on
    sink.take({"paid": first})  # the same values again (a step that paid nothing): nothing written
    assert cache.writes == 1
    both = {**first, KEY_B: entry_from_reply(_reply("two"), 1, _about("s1", 1))}
    sink.take({"paid": {**both, KEY_C: entry_from_reply(_reply("x"), 2, _about("s1", 2))}})  # C: another trial
    assert cache.keys_for("s1", 1) == [KEY_A, KEY_B] and cache.writes == 2
    usage = {"requests": 2, "attempts": 2, "input_tokens": 14, "output_tokens": 4}
    keep_paid(usage, cache, {"paid": both, "served": []}, "s1", 1, sink)
    assert (cache.writes, cache.misses, cache.hits) == (2, 2, 0)
    assert usage == {"requests": 2, "attempts": 2, "input_tokens": 14, "output_tokens": 4}
    sink.take({"record": {}})  # values without paid replies, or not a mapping: nothing
    sink.take("junk")
    assert cache.writes == 2
