"""The ``baseline:`` model provider: candidates that need no model (docs/evaluation.md §9)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from wildtoolbench.models import ConfigurationError, check_model, max_concurrency, model_name_for, resolve_model
from wildtoolbench.models.candidate import resolve_candidate
from wildtoolbench.models.messages import response_from_ai
from wildtoolbench.models.providers.baseline import CHAT_REPLY

TOOLS = [
    {"type": "function", "function": {"name": "searchFlights", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "getWeather", "parameters": {"type": "object", "properties": {}}}},
]


def _ask(spec, messages, tools=TOOLS):
    return resolve_model(spec).bind_tools(tools).invoke(messages)


def test_chat_always_answers_the_fixed_text():
    for messages in (["hello"], [SystemMessage("Current Date: x"), HumanMessage("book a flight")]):
        reply = _ask("baseline:chat", messages)
        assert reply.content == CHAT_REPLY == "I can help with that."
        assert reply.tool_calls == []
        assert response_from_ai(reply) == {"content": CHAT_REPLY, "tool_calls": None, "reasoning_content": None}


def test_first_tool_calls_the_first_listed_tool_with_empty_arguments():
    reply = _ask("baseline:first-tool", [HumanMessage("weather in Paris?")])
    assert reply.content == ""
    assert reply.tool_calls == [{"name": "searchFlights", "args": {}, "id": "call_baseline_0", "type": "tool_call"}]
    assert response_from_ai(reply)["tool_calls"] == [
        {"id": "call_baseline_0", "type": "function", "function": {"name": "searchFlights", "arguments": "{}"}}
    ]
    assert response_from_ai(reply)["content"] is None
    # the first tool of this request's list, whatever the earlier ones were
    assert _ask("baseline:first-tool", ["x"], TOOLS[::-1]).tool_calls[0]["name"] == "getWeather"


def test_first_tool_ids_count_the_assistant_messages_so_far():
    history = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[{"name": "searchFlights", "args": {}, "id": "call_baseline_0"}]),
        ToolMessage("{}", tool_call_id="call_baseline_0"),
        AIMessage("asked"),
        HumanMessage("answer"),
    ]
    first = _ask("baseline:first-tool", history)
    assert first.tool_calls[0]["id"] == "call_baseline_2"
    # deterministic: the same request gets the same reply
    assert _ask("baseline:first-tool", history).tool_calls == first.tool_calls


def test_first_tool_without_tools_answers_in_text_and_takes_langchain_tools():
    assert _ask("baseline:first-tool", ["hi"], tools=[]).content == CHAT_REPLY

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    assert _ask("baseline:first-tool", ["hi"], tools=[lookup]).tool_calls[0]["name"] == "lookup"


def test_async_replies_match_the_sync_ones():
    model = resolve_model("baseline:first-tool").bind_tools(TOOLS)
    reply = asyncio.run(model.ainvoke(["hi"]))
    assert reply.tool_calls[0]["name"] == "searchFlights"
    assert reply.tool_calls[0]["id"] == "call_baseline_0"


def test_recorded_name_and_concurrency():
    assert model_name_for("baseline:chat") == "baseline:chat"
    assert model_name_for("baseline:first-tool") == "baseline:first-tool"
    candidate = resolve_candidate("baseline:first-tool")
    assert (candidate.provider, candidate.target, candidate.name) == ("baseline", "first-tool", "baseline:first-tool")
    assert candidate.describe() == {"kind": "chat_model", "spec": "baseline:first-tool", "model": "baseline:first-tool"}
    assert max_concurrency("baseline:chat") is None


def test_unknown_target_is_a_configuration_error_naming_both_baselines():
    message = "unknown baseline 'tool' in model spec 'baseline:tool'; valid: baseline:chat, baseline:first-tool"
    with pytest.raises(ConfigurationError) as raised:
        check_model("baseline:tool")
    assert str(raised.value) == message
    with pytest.raises(ConfigurationError, match="valid: baseline:chat, baseline:first-tool"):
        resolve_model("baseline:Chat")
    check_model("baseline:chat")  # no error
