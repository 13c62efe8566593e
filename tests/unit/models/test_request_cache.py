"""The request cache of ``wtb eval --cache`` (models/cache.py, docs/trials.md §8) and the prompt token counter
of ``--dry-run`` (models/tokens.py, docs/trials.md §9)."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from wildtoolbench.models import CandidateReply, ModelSettings, resolve_candidate
from wildtoolbench.models.cache import RequestCache, cache_scope, canonical_message, request_key, trial_scope
from wildtoolbench.models.tokens import APPROXIMATION, approximate_tokens, token_counter

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
META = {"wtb_session_id": "s1", "wtb_request_index": 0}


def _candidate(**settings):
    return resolve_candidate("baseline:first-tool", ModelSettings(**settings))


def test_the_key_covers_what_determines_the_reply_and_nothing_run_specific():
    candidate = _candidate()
    messages = [HumanMessage(content="weather?")]
    key = request_key(candidate, messages, TOOLS, META, 1)
    assert len(key) == 64 and key == request_key(candidate, [HumanMessage(content="weather?")], TOOLS, META, 1)
    assert key != request_key(candidate, messages, TOOLS, META, 2)  # another trial
    assert key != request_key(candidate, [HumanMessage(content="weather!")], TOOLS, META, 1)
    assert key != request_key(candidate, messages, [], META, 1)
    assert key != request_key(candidate, messages, TOOLS, {**META, "wtb_request_index": 1}, 1)
    assert key != request_key(_candidate(temperature=0.7), messages, TOOLS, META, 1)
    assert key != request_key(resolve_candidate("baseline:chat"), messages, TOOLS, META, 1)
    assert key == request_key(_candidate(api_key="sk-other", timeout=5.0), messages, TOOLS, META, 1)  # no secret
    # a reply's run-specific message id (LangChain's lc_run--...) is not part of the key
    one = AIMessage(content="", tool_calls=[{"name": "f", "args": {}, "id": "c1"}], id="lc_run--a")
    two = AIMessage(content="", tool_calls=[{"name": "f", "args": {}, "id": "c1"}], id="lc_run--b")
    assert canonical_message(one) == canonical_message(two)
    assert request_key(candidate, [one], TOOLS, META, 1) == request_key(candidate, [two], TOOLS, META, 1)


def test_entries_round_trip_atomically_and_a_bad_entry_is_a_miss(tmp_path):
    cache = RequestCache(tmp_path / "cache", warn=lambda line: None)
    reply = CandidateReply({"content": "hi", "tool_calls": None, "reasoning_content": None}, 12, 3)
    key = "ab" + "0" * 62
    assert cache.get(key) is None
    cache.put(key, reply, trial=2, about={"spec": "x", "session": "s1", "request_index": 0})
    found = cache.get(key)
    assert found == CandidateReply(reply.response, 12, 3, cached=True)
    entry = json.loads(cache.path(key).read_text())
    assert entry["entry"]["trial"] == 2 and entry["key"] == key and cache.path(key).parent.name == "ab"
    assert [p.name for p in cache.path(key).parent.iterdir()] == [f"{key}.json"]  # no temporary file left
    cache.path(key).write_text("{torn")
    assert cache.get(key) is None
    counts = cache.counts()
    assert {k: counts[k] for k in ("dir", "hits", "misses", "writes", "rejected")} == {
        "dir": str((tmp_path / "cache").resolve()),
        "hits": 1,
        "misses": 2,
        "writes": 1,
        "rejected": 1,
    }
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="not a folder"):
        RequestCache(tmp_path / "file")


def test_a_candidate_request_is_served_from_the_cache_of_its_own_trial_only(tmp_path):
    candidate = _candidate()
    cache = RequestCache(tmp_path)
    messages = [HumanMessage(content="weather?")]

    async def ask(trial: int) -> CandidateReply:
        with cache_scope(cache), trial_scope(trial):
            return await candidate.respond(messages, TOOLS, metadata=META)

    first = asyncio.run(ask(1))
    assert not first.cached and first.response["tool_calls"][0]["function"]["name"] == "get_weather"
    again = asyncio.run(ask(1))
    assert again.cached and again.response == first.response
    other = asyncio.run(ask(2))
    assert not other.cached
    assert cache.counts()["hits"] == 1 and cache.counts()["writes"] == 2
    with pytest.raises(ValueError):
        with trial_scope(0):
            pass


def test_token_counts_never_download_an_encoding(tmp_path, monkeypatch):
    assert approximate_tokens("abcdefgh") == 2 and approximate_tokens("abcdefghi") == 3
    assert approximate_tokens("天气") == 2 and approximate_tokens("ab天") == 2
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # no encoding file there
    counter = token_counter("openai", "gpt-4o-mini")
    assert counter.name == APPROXIMATION
    assert token_counter("replay", "oracle").name == APPROXIMATION
    messages = [{"role": "system", "content": "abcd"}, {"role": "user", "content": "abcdefgh", "name": "u"}]
    # 3 to prime the reply, 3 per message, 1 + 1 for the name, then the texts and the tools' JSON
    tools_tokens = approximate_tokens(json.dumps(TOOLS, ensure_ascii=False))
    assert counter.prompt(messages, TOOLS) == 3 + 3 + 1 + 3 + 2 + 1 + 1 + tools_tokens
