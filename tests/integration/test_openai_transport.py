"""The thin HTTP path of ``openai:`` (``wildtoolbench.models.providers.openai.RawChatOpenAI``) and the shared clients of
``wildtoolbench.models.transport``: the same bytes, headers and errors as the openai SDK's own ``post``, one
client per endpoint and event loop, a pool sized to the run, closed at the end.

The endpoint is an ``httpx.MockTransport`` (no sockets); ``tests/integration/test_http_eval.py`` and
``tests/integration/test_faults.py`` run the same path end to end against the loopback stub server.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage

from wildtoolbench.models import ModelSettings, resolve_model
from wildtoolbench.models.messages import RAW_RESPONSE_KEY, to_langchain
from wildtoolbench.models.providers.openai import RawChatOpenAI
from wildtoolbench.models.transport import (
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
    assert raised.value.response.headers["retry-after"] == "3"  # read by wildtoolbench.models.transport.retry_after
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


class _Loopback:
    """An OpenAI endpoint on 127.0.0.1 inside the test's event loop: records every raw request
    (head and body, as the wire carried them) and answers with ``replies`` in turn (default: REPLY).

    A reply is ``(status, headers, body bytes)``, or a number of seconds to stay silent (a timeout)."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[tuple[str, list[tuple[str, str]], bytes]] = []
        self.server = None

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.base_url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line, *fields = head.decode("latin-1").split("\r\n")[:-2]
                headers = [tuple(f.split(": ", 1)) for f in fields]
                length = int(next(v for k, v in headers if k.lower() == "content-length"))
                body = await reader.readexactly(length)
                self.requests.append((line, headers, body))
                reply = (
                    self.replies.pop(0)
                    if self.replies
                    else (200, [("Content-Type", "application/json")], json.dumps(REPLY).encode())
                )
                if isinstance(reply, (int, float)):
                    await asyncio.sleep(reply)
                    return
                status, extra, content = reply
                out = [f"HTTP/1.1 {status} X", f"Content-Length: {len(content)}", *(f"{k}: {v}" for k, v in extra)]
                writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + content)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def _sdk_reference(base_url: str, messages, **payload_kwargs) -> httpx.Request:
    """The request the SDK's own ``post`` builds for a ``create``d model of ``base_url`` (not sent)."""
    endpoint = _Endpoint()
    model = RawChatOpenAI(
        model="m",
        base_url=base_url,
        api_key="not-needed",
        temperature=0,
        timeout=30.0,
        max_retries=0,
        http_async_client=endpoint.client(),
    )
    payload = model._get_request_payload(messages, **payload_kwargs)
    payload.pop("stream", None)
    asyncio.run(model.root_async_client.post("/chat/completions", body=payload, cast_to=dict))
    return endpoint.requests[0]


def _create(base_url: str):
    return resolve_model("openai:m", ModelSettings(base_url=base_url, max_retries=0, timeout=30.0))


def test_models_built_by_create_share_the_loops_client(monkeypatch):
    """``openai:`` models send through one shared aiohttp client per endpoint and loop, with the SDK's request on the wire."""
    from wildtoolbench.models.providers import openai as provider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    built = []
    real = provider._new_client

    def counting(connections):
        client = real(connections)
        built.append((client, connections))
        return client

    monkeypatch.setattr(provider, "_new_client", counting)

    async def scenario():
        async with _Loopback() as server:
            first, second = _create(server.base_url), _create(server.base_url)
            async with http_clients(4):
                replies = await asyncio.gather(
                    first.bind_tools(TOOLS).ainvoke(_messages()),
                    second.bind_tools(TOOLS).ainvoke(_messages()),
                    first.bind_tools(TOOLS).ainvoke(_messages()),
                )
                assert built[0][0].session.connector.limit == 100  # the pool: max(concurrency, 100)
            return server, replies

    server, replies = asyncio.run(scenario())
    assert len(server.requests) == 3 and len(built) == 1 and built[0][0].is_closed
    assert all(r.additional_kwargs[RAW_RESPONSE_KEY]["reasoning_content"] == "noch einmal" for r in replies)
    assert (replies[0].usage_metadata["input_tokens"], replies[0].usage_metadata["output_tokens"]) == (120, 7)
    line, headers, body = server.requests[0]
    expected = _sdk_reference(server.base_url, _messages(), tools=TOOLS)
    assert line == "POST /v1/chat/completions HTTP/1.1"
    assert body == expected.content  # byte for byte: compact JSON, UTF-8 kept
    sent = {k.lower(): v for k, v in headers}
    wanted = {k.decode().lower(): v.decode() for k, v in expected.headers.raw}
    assert sent["authorization"] == "Bearer not-needed"  # loopback: any key
    # every header the SDK sends, with its value; Accept-Encoding names what aiohttp decodes
    assert {k: v for k, v in sent.items() if k != "accept-encoding"} == {
        k: v for k, v in wanted.items() if k != "accept-encoding"
    }
    assert "gzip" in sent["accept-encoding"]


def _shared_reply(*replies):
    """Invoke a ``create``d model once against a loopback endpoint answering ``replies``; returns (result or exception, requests)."""

    async def scenario():
        async with _Loopback(*replies) as server:
            model = resolve_model("openai:m", ModelSettings(base_url=server.base_url, max_retries=0, timeout=0.5))
            try:
                return await model.ainvoke(_messages()), server.requests
            except Exception as exc:  # noqa: BLE001 - the test inspects it
                return exc, server.requests

    return asyncio.run(scenario())


@pytest.mark.parametrize(
    "status, cls, transient",
    [
        (400, openai.BadRequestError, None),
        (429, openai.RateLimitError, "http 429"),
        (503, openai.InternalServerError, "http 503"),
    ],
)
def test_shared_client_status_errors_are_the_sdks(status, cls, transient, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    body = json.dumps({"error": {"message": f"refused {status}", "type": "x"}}).encode()
    error, _ = _shared_reply((status, [("Content-Type", "application/json"), ("Retry-After", "3")], body))
    expected = _sdk_error(
        httpx.Response(status, content=body, headers={"Content-Type": "application/json", "Retry-After": "3"})
    )
    assert type(error) is cls and type(expected) is cls
    assert str(error) == str(expected) == f"Error code: {status} - refused {status}"
    assert error.status_code == status and error.body == expected.body
    assert error.response.headers["retry-after"] == "3" and transient_kind(error) == transient


def test_shared_client_decodes_gzip_and_maps_timeouts_and_refused_connections(monkeypatch):
    import gzip
    import socket

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    packed = gzip.compress(json.dumps(REPLY).encode())
    reply, _ = _shared_reply((200, [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], packed))
    assert isinstance(reply, AIMessage) and reply.additional_kwargs["reasoning_content"] == "noch einmal"

    error, requests = _shared_reply(5.0)  # silent for longer than the model's 0.5 s read timeout
    assert type(error) is openai.APITimeoutError and len(requests) == 1 and transient_kind(error) == "timeout"

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def refused():
        model = resolve_model(
            "openai:m", ModelSettings(base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5.0)
        )
        with pytest.raises(openai.APIConnectionError) as raised:
            await model.ainvoke(_messages())
        return raised.value

    error = asyncio.run(refused())
    assert str(error) == "Connection error." and transient_kind(error) == "connection"
