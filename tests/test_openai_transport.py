"""The thin HTTP path of ``openai:`` (``models.openai.RawChatOpenAI``) and the shared clients of
``models.transport``: the same bytes, headers and errors as the openai SDK's own ``post``, one
client per endpoint and event loop, a pool sized to the run, closed at the end.

The endpoint is an ``httpx.MockTransport`` (no sockets); ``tests/test_http_eval.py`` and
``tests/test_faults.py`` run the same path end to end against the loopback stub server.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage

from models import ModelSettings, resolve_model
from models.messages import RAW_RESPONSE_KEY, to_langchain
from models.openai import RawChatOpenAI
from models.transport import (
    DEFAULT_CONNECTIONS,
    ModelRequestError,
    RetryPolicy,
    http_clients,
    pool_size,
    request_with_retries,
    shared_http_client,
    transient_kind,
)

BASE_URL = "http://127.0.0.1:9/v1"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Wetter für eine Stadt",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
HISTORY = [
    {"role": "system", "content": "Current Date: 2025-01-01"},
    {"role": "user", "content": "Wie ist das Wetter in Köln? 天气"},
    {
        "role": "assistant",
        "reasoning_content": "denke nach",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Köln"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"t": 21.5}'},
]
REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_content": "noch einmal",
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Bonn"}'},
                    },
                    {"id": "c3", "type": "function", "function": {"name": "get_weather", "arguments": "[1]"}},
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127},
}


class _Endpoint:
    """A mock OpenAI endpoint: records every request, answers with ``replies`` in turn (default: REPLY)."""

    def __init__(self, *replies, http=httpx):
        self.requests: list[httpx.Request] = []
        self.replies = list(replies)
        self.http = http  # httpx or httpx2: the library of the client it serves

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else self.http.Response(200, json=REPLY)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self), timeout=30.0)


def _model(endpoint: _Endpoint, **kwargs) -> RawChatOpenAI:
    settings = {
        "model": "m",
        "base_url": BASE_URL,
        "api_key": "sk-test",
        "temperature": 0,
        "timeout": 30.0,
        "max_retries": 0,
    }
    return RawChatOpenAI(**{**settings, **kwargs, "http_async_client": endpoint.client()})


def _messages():
    return [to_langchain(m) for m in HISTORY]


def test_thin_path_sends_what_the_sdk_post_sends():
    thin, sdk = _Endpoint(), _Endpoint()

    async def scenario():
        model = _model(thin)
        reply = await model.bind_tools(TOOLS).ainvoke(_messages())
        # the same request through the SDK's own post, as the previous implementation sent it
        reference = _model(sdk)
        payload = reference._get_request_payload(_messages(), tools=TOOLS)
        payload.pop("stream", None)
        await reference.root_async_client.post("/chat/completions", body=payload, cast_to=dict)
        return model, reply

    model, reply = asyncio.run(scenario())
    (sent,), (expected,) = thin.requests, sdk.requests
    assert sent.method == expected.method == "POST"
    assert sent.url == expected.url == httpx.URL(f"{BASE_URL}/chat/completions")
    assert sent.content == expected.content  # byte for byte: compact JSON, UTF-8 kept
    assert sent.headers.raw == expected.headers.raw  # same headers in the same order (key, SDK and client headers)
    assert sent.extensions["timeout"] == expected.extensions["timeout"]
    assert sent.headers["authorization"] == "Bearer sk-test"
    body = json.loads(sent.content)
    assert body["messages"] == HISTORY and body["tools"] == TOOLS and body["model"] == "m"
    assert "Köln" in sent.content.decode("utf-8")
    assert model._template  # built once, reused
    # the reply: raw message kept, reasoning kept, lenient tool-call parsing, token counts
    assert isinstance(reply, AIMessage)
    assert reply.additional_kwargs[RAW_RESPONSE_KEY] == {
        "content": None,
        "tool_calls": REPLY["choices"][0]["message"]["tool_calls"],
        "reasoning_content": "noch einmal",
    }
    assert reply.additional_kwargs["reasoning_content"] == "noch einmal"
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("get_weather", {"city": "Bonn"})]
    assert [c["args"] for c in reply.invalid_tool_calls] == ["[1]"]
    assert (reply.usage_metadata["input_tokens"], reply.usage_metadata["output_tokens"]) == (120, 7)


def test_extra_body_is_merged_into_the_body():
    endpoint = _Endpoint()
    model = _model(endpoint, extra_body={"chat_template_kwargs": {"thinking": False}})
    asyncio.run(model.ainvoke(_messages()))
    body = json.loads(endpoint.requests[0].content)
    assert body["chat_template_kwargs"] == {"thinking": False} and "extra_body" not in body


def _failing(*replies):
    endpoint = _Endpoint(*replies)

    async def send():
        return await _model(endpoint).ainvoke(_messages())

    return endpoint, send


def _sdk_error(response: httpx.Response):
    """The exception the SDK's post raises for ``response`` (reference for the thin path)."""
    endpoint = _Endpoint(response)
    model = _model(endpoint)
    with pytest.raises(openai.APIError) as raised:
        asyncio.run(model.root_async_client.post("/chat/completions", body={}, cast_to=dict))
    return raised.value


@pytest.mark.parametrize(
    "status, cls, transient",
    [
        (400, openai.BadRequestError, None),
        (401, openai.AuthenticationError, None),
        (422, openai.UnprocessableEntityError, None),
        (429, openai.RateLimitError, "http 429"),
        (503, openai.InternalServerError, "http 503"),
    ],
)
def test_status_errors_are_the_sdks(status, cls, transient):
    def response():
        body = {"error": {"message": f"refused {status}", "type": "x"}}
        return httpx.Response(status, json=body, headers={"Retry-After": "3"})

    _, send = _failing(response())
    with pytest.raises(cls) as raised:
        asyncio.run(send())
    expected = _sdk_error(response())
    assert type(raised.value) is type(expected)
    assert str(raised.value) == str(expected) == f"Error code: {status} - refused {status}"
    assert raised.value.status_code == status and raised.value.body == expected.body
    assert raised.value.response.headers["retry-after"] == "3"  # read by models.transport.retry_after
    assert transient_kind(raised.value) == transient


def test_timeouts_and_connection_errors_are_the_sdks():
    _, timing_out = _failing(httpx.ReadTimeout("slow"))
    with pytest.raises(openai.APITimeoutError):
        asyncio.run(timing_out())
    _, refused = _failing(httpx.ConnectError("refused"))
    with pytest.raises(openai.APIConnectionError) as raised:
        asyncio.run(refused())
    assert str(raised.value) == "Connection error." and transient_kind(raised.value) == "connection"


def test_rejected_request_through_request_with_retries():
    _, send = _failing(httpx.Response(400, json={"error": {"message": "context too long"}}))

    async def scenario():
        return await request_with_retries(send, RetryPolicy(max_attempts=3, backoff=0))

    with pytest.raises(ModelRequestError) as raised:
        asyncio.run(scenario())
    assert raised.value.rejected and raised.value.attempts == 1
    assert (
        str(raised.value)
        == "model request failed (not retried): http 400: BadRequestError: Error code: 400 - context too long"
    )


def test_non_json_reply_fails_as_before():
    _, send = _failing(httpx.Response(200, text="<html>proxy</html>", headers={"content-type": "text/html"}))
    with pytest.raises(ValueError):
        asyncio.run(send())


def test_client_retries_and_dynamic_keys_take_the_sdk_path():
    endpoint = _Endpoint(httpx.Response(503, json={"error": {"message": "busy"}}))
    model = _model(endpoint, max_retries=1)
    reply = asyncio.run(model.ainvoke(_messages()))
    assert model._template is False  # the SDK retried (its own backoff), then answered
    assert len(endpoint.requests) == 2 and endpoint.requests[1].headers["x-stainless-retry-count"] == "1"
    assert reply.additional_kwargs[RAW_RESPONSE_KEY]["reasoning_content"] == "noch einmal"


# --------------------------------------------------------------------------- shared clients


def test_one_client_per_endpoint_and_loop_closed_when_the_loop_ends():
    built: list[tuple[str, int]] = []

    def factory(name):
        def build(connections):
            built.append((name, connections))
            return httpx.AsyncClient()

        return build

    async def scenario():
        a = await shared_http_client(("http://a/v1", "k"), factory("a"))
        again = await shared_http_client(("http://a/v1", "k"), factory("a"))
        b = await shared_http_client(("http://b/v1", "k"), factory("b"))
        return a, again, b

    first = asyncio.run(scenario())
    second = asyncio.run(scenario())
    assert first[0] is first[1] and first[0] is not first[2]
    assert second[0] is not first[0]  # another loop, another client
    assert [name for name, _ in built] == ["a", "b", "a", "b"]
    assert all(client.is_closed for client in (*first, *second))  # closed by asyncio.run's shutdown
    assert built[0][1] == DEFAULT_CONNECTIONS


def test_http_clients_scope_sizes_the_pool_and_closes_at_its_end():
    sizes: list[int] = []

    def build(connections):
        sizes.append(connections)
        return httpx.AsyncClient()

    async def scenario():
        assert pool_size() == DEFAULT_CONNECTIONS
        async with http_clients(256):
            assert pool_size() == 256
            inside = await shared_http_client("endpoint", build)
            async with http_clients(8):  # a nested run: never below the default
                assert pool_size() == DEFAULT_CONNECTIONS
            assert not inside.is_closed  # the outer scope is still running
            in_task = await asyncio.create_task(shared_http_client("endpoint", build))
        assert inside.is_closed and in_task is inside
        after = await shared_http_client("endpoint", build)
        assert after is not inside and not after.is_closed
        return after

    after = asyncio.run(scenario())
    assert sizes == [256, DEFAULT_CONNECTIONS] and after.is_closed


def test_models_built_by_create_share_the_loops_client(monkeypatch):
    """``openai:`` models send through one shared client (httpx2 where installed) with the SDK's exact request."""
    from models import openai as provider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    shared, reference = _Endpoint(http=provider._http), _Endpoint()
    clients = []
    real = provider._new_client

    def fake_client(timeout, connections):
        client = real(timeout, connections)
        assert client._transport._pool._max_keepalive_connections == connections == 100  # sized, all kept alive
        client = type(client)(transport=provider._http.MockTransport(shared), timeout=timeout)
        clients.append(client)
        return client

    settings = ModelSettings(base_url=BASE_URL, max_retries=0, timeout=30.0)
    first, second = resolve_model("openai:m", settings), resolve_model("openai:m", settings)
    monkeypatch.setattr(provider, "_new_client", fake_client)

    async def scenario():
        async with http_clients(4):
            await asyncio.gather(first.ainvoke(_messages()), second.ainvoke(_messages()), first.ainvoke(_messages()))
        # what the SDK's own post sends for a model with the same settings
        same = _model(reference, api_key="not-needed")
        payload = same._get_request_payload(_messages())
        payload.pop("stream", None)
        await same.root_async_client.post("/chat/completions", body=payload, cast_to=dict)

    asyncio.run(scenario())
    assert len(shared.requests) == 3 and len(clients) == 1 and clients[0].is_closed
    sent, (expected,) = shared.requests[0], reference.requests
    assert sent.headers["authorization"] == "Bearer not-needed"  # loopback: any key
    assert str(sent.url) == str(expected.url) and sent.content == expected.content
    assert sent.headers.raw == expected.headers.raw
