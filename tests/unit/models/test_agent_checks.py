"""The pieces of issue 37 on their own: pairing tool executions with calls, the agent error, streamed raw
messages, dict messages of a remote graph, the functional API's input (docs/evaluation.md §8.2, §8.5, §8.8)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.func import entrypoint

from tests.support.openai_stub import stream_body
from wildtoolbench.models.agent_checks import (
    AGENT_RULES,
    AgentError,
    PendingCalls,
    agent_failure,
    offered_tool_names,
)
from wildtoolbench.models.agent_tools import takes_message_list
from wildtoolbench.models.graph_contract import recorded_response, response_message
from wildtoolbench.models.raw_capture import RawReplies, StreamAssembly
from wildtoolbench.models.transport import ModelRequestError


def _calls():
    return [
        {"id": "c1", "name": "getWeather", "args": {"city": "Oslo"}},
        {"id": "c2", "name": "getWeather", "args": {"city": "Rome"}},
    ]


def test_pending_calls_pair_by_id_then_by_name_and_arguments():
    calls = PendingCalls(_calls(), ["oslo: rain", "rome: sun"])
    assert calls.take("c2", "getWeather", {"city": "Rome"}) == "rome: sun"
    assert calls.unread() == ["getWeather (call c1)"]
    assert calls.take(None, "getWeather", {"city": "Oslo"}) == "oslo: rain"  # arguments alone
    assert calls.unread() == []
    assert calls.take(None, "getWeather", {"city": "Oslo"}) is None  # each observation is handed over once


def test_pending_calls_refuse_arguments_no_call_holds():
    calls = PendingCalls(_calls(), ["oslo: rain", "rome: sun"])
    assert calls.take(None, "getWeather", {"city": "Oslo", "page": 2}) is None
    assert calls.take("c9", "getTime", {"city": "Oslo"}) is None
    # an unknown id with the arguments of a call still finds it (an agent that made up its own ids)
    assert calls.take("c9", "getWeather", {"city": "Rome"}) == "rome: sun"


def test_agent_error_keeps_the_whole_message_and_is_recorded():
    reason = "x" * 500
    error = AgentError("agent-code", reason, {"task": 1, "step": 2})
    assert str(error) == f"agent error [agent-code]: {reason} (at task 1, step 2)"
    assert error.rejected and not error.transient and error.passes_through
    assert set(AGENT_RULES) >= {"agent-code", "unmatched-tool-call", "unread-observation", "tool-not-offered"}


def test_agent_failure_classifies_errors():
    where = {"task": 0, "step": 0}
    assert agent_failure(KeyError("bug"), where).rule == "agent-code"
    timeout = TimeoutError("slow")
    assert agent_failure(timeout, where) is timeout  # the model's timeout: retried as a failed request
    infra = ModelRequestError(3, ["http 503"], True, where)
    assert agent_failure(infra, where) is infra


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"tools": [{"type": "function", "function": {"name": "a"}}, {"name": "b"}]}, {"a", "b"}),
        ({"tools": []}, set()),
        ({}, None),
        (None, None),
    ],
)
def test_offered_tool_names(params, expected):
    assert offered_tool_names(params) == expected


def _assemble(response):
    completion = {
        "id": "chatcmpl-1",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **response}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    sink = RawReplies()
    assembly = StreamAssembly(sink)
    body = stream_body(completion, include_usage=True)
    for start in range(0, len(body), 7):  # bytes arrive in pieces that cut lines
        assembly.feed(body[start : start + 7])
    return sink._streams["chatcmpl-1"]


def test_stream_assembly_keeps_arguments_as_sent_and_content_null():
    truncated = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "getBudgets", "arguments": '{"user_id": "u-4471"'},
    }
    message = _assemble({"content": None, "tool_calls": [truncated]})
    assert message["content"] is None
    assert message["tool_calls"] == [truncated]


def test_stream_assembly_keeps_text_and_an_empty_call_list():
    assert _assemble({"content": "Which city?", "tool_calls": None})["content"] == "Which city?"
    assert _assemble({"content": None, "tool_calls": []})["tool_calls"] == []
    assert "tool_calls" not in _assemble({"content": "hi"})


def test_a_streamed_raw_message_is_paired_with_the_reply_that_parsed_it():
    raw = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "getBudgets", "arguments": '{"user_id": "u-4471"'},
            }
        ],
    }
    sink = RawReplies()
    sink.keep("chatcmpl-1", raw, streamed=True)
    merged = AIMessage(content="", tool_calls=[{"name": "getBudgets", "args": {"user_id": "u-4471"}, "id": "call_1"}])
    other = AIMessage(content="", tool_calls=[{"name": "getBudgets", "args": {}, "id": "call_2"}])
    assert sink.take(merged.id, other) is None
    assert sink.take(merged.id, merged) is raw
    recorded = recorded_response(merged.model_copy(update={"additional_kwargs": {"wtb_raw_response": raw}}))
    assert recorded["tool_calls"][0]["function"]["arguments"] == '{"user_id": "u-4471"'  # as sent
    assert recorded["content"] is None


def test_a_remote_graph_message_dict_keeps_malformed_calls_and_usage():
    reply = {
        "type": "ai",
        "content": "",
        "tool_calls": [{"name": "a", "args": {"x": 1}, "id": "c1", "type": "tool_call"}],
        "invalid_tool_calls": [{"name": "b", "args": '{"x":', "id": "c2", "error": None, "type": "invalid_tool_call"}],
        "usage_metadata": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
    }
    message = response_message({"messages": [reply]})
    assert message.usage_metadata["input_tokens"] == 5
    calls = recorded_response(message)["tool_calls"]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [("a", '{"x": 1}'), ("b", '{"x":')]


def test_the_functional_api_takes_a_list_of_messages():
    @entrypoint()
    def takes_list(messages: list[BaseMessage]) -> list[BaseMessage]:
        return messages

    @entrypoint()
    def takes_state(inputs: dict) -> dict:
        return inputs

    assert takes_message_list(takes_list)
    assert not takes_message_list(takes_state)
