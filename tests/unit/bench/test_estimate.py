"""The run estimate of ``wtb eval --dry-run`` (bench/estimate.py, docs/trials.md §9)."""

from __future__ import annotations

import random

import pytest

from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.bench.estimate import estimate_run, reply_text, task_requests
from wildtoolbench.bench.harness import build_prompt, gold_history
from wildtoolbench.bench.io import json_lines


def _sessions():
    return [row for _, row in json_lines(str(bundled_demo_sessions()))]


def _ones(messages, tools):
    return 1000 * len(messages) + len(tools)


def test_one_request_per_gold_assistant_message_each_with_the_messages_before_it():
    session = _sessions()[0]
    tasks = task_requests(session, _ones, lambda message: 1, max_steps=32)
    assert len(tasks) == 4
    for index, task in enumerate(tasks):
        gold = gold_history(session["english_tasks"][index], session["english_answer_list"][index], random.Random(0))
        replies = [i for i, m in enumerate(gold) if m["role"] == "assistant"]
        prompt = len(build_prompt(session, index))
        tools = len(session["english_tools"])
        # request j sees the prompt plus the gold messages before the j-th assistant message
        assert task.prompts == [1000 * (prompt + position - 1) + tools for position in replies]
        assert task.replies == [1] * len(replies)
        assert task.limit == max(32, len(session["english_answer_list"][index]) + 1)


def test_the_estimate_scales_with_trials_and_prices():
    sessions = _sessions()
    one = estimate_run(sessions, _ones, lambda m: 10, tokenizer="t", max_steps=32)
    assert one.sessions == 6 and one.session_trials == (6, 6)
    assert one.requests[0] == sum(len(t.prompts) for s in sessions for t in task_requests(s, _ones, lambda m: 10))
    assert one.requests[1] == sum(t.limit for s in sessions for t in task_requests(s, _ones, lambda m: 10))
    assert one.reply_tokens[0] == 10 * one.requests[0] and one.cost_usd is None
    three = estimate_run(sessions, _ones, lambda m: 10, tokenizer="t", trials=(3, 3), prices=(1.0, 2.0))
    assert three.requests == (3 * one.requests[0], 3 * one.requests[1])
    assert three.prompt_tokens == (3 * one.prompt_tokens[0], 3 * one.prompt_tokens[1])
    assert three.cost_usd == pytest.approx(
        (
            (three.prompt_tokens[0] + 2 * three.reply_tokens[0]) / 1e6,
            (three.prompt_tokens[1] + 2 * three.reply_tokens[1]) / 1e6,
        )
    )
    assert three.as_dict()["requests"] == list(three.requests)


def test_reply_text_counts_the_content_and_the_calls():
    message = {"content": "ok", "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}
    assert reply_text(message) == 'okf{"a": 1}'
    assert (
        reply_text({"content": None, "tool_calls": [{"function": {"name": "g", "arguments": {"b": 2}}}]}) == 'g{"b": 2}'
    )
