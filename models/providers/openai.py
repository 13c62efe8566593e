"""``openai:MODEL``: any OpenAI-compatible chat endpoint through langchain-openai.

Works against OpenAI, DeepSeek, vLLM, SGLang and Ollama by pointing ``base_url``
(or ``OPENAI_BASE_URL``) at the server; the key comes from ``api_key`` or
``OPENAI_API_KEY`` (any non-empty value for local servers).

``ChatOpenAI`` drops what the benchmark record needs (docs/evaluation.md §5): it parses the
``arguments`` strings, turns ``content: null`` into ``""`` and ignores
``reasoning_content`` (DeepSeek, vLLM reasoning parsers). :class:`RawChatOpenAI`
keeps the raw assistant message of every reply in
``additional_kwargs["wtb_raw_response"]`` (read by
``wildtoolbench.models.messages.response_from_ai``) and ``reasoning_content`` in
``additional_kwargs["reasoning_content"]``, and it sends messages built by
``wildtoolbench.models.messages.to_langchain`` exactly as the reference would (raw argument
strings, generated ids, ``reasoning_content`` of earlier replies).

Its Chat Completions requests take a thin path (:meth:`RawChatOpenAI._agenerate`): the body
serialised once, the headers the SDK built once per model, one shared HTTP client per endpoint
and event loop (``wildtoolbench.models.transport.shared_http_client``: an aiohttp session, :class:`SharedClient`)
whose pool is sized to the run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
from dataclasses import dataclass
from typing import Any

import aiohttp
import anyio
import httpx
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from wildtoolbench.models.messages import RAW_RESPONSE_KEY, parse_tool_calls, to_openai
from wildtoolbench.models.settings import ModelSettings
from wildtoolbench.models.transport import shared_http_client, shared_tls_context

try:
    # The HTTP client of the openai SDK since 3.0 (httpx's successor); a model given its own client of it sends through that one.
    import httpx2 as _http
except ImportError:  # pragma: no cover - older SDKs (Python 3.10) come with httpx only
    _http = httpx  # type: ignore[misc]

_TIMEOUTS = (httpx.TimeoutException, _http.TimeoutException)
"""What the openai SDK turns into ``APITimeoutError``."""
_CONNECTION_ERRORS = (httpx.RequestError, _http.RequestError, ssl.SSLError, anyio.EndOfStream)
"""What the openai SDK turns into ``APIConnectionError`` (after the timeouts, which are request errors too)."""


@dataclass(frozen=True)
class _Template:
    """The parts of a Chat Completions request that do not change between requests of one model:
    what the openai SDK would send, built once by the SDK itself (see ``RawChatOpenAI._template_for``)."""

    url: str
    headers: list[tuple[bytes, bytes]]
    extensions: dict[str, Any]
    shared: tuple[str, str] | None  # (base URL, API key) of a shared client, or None: the model's own client

    @functools.cached_property
    def aiohttp_parts(self) -> tuple[aiohttp.ClientTimeout, list[tuple[str, str]]]:
        """aiohttp's timeout and headers for this template (:class:`SharedClient`; built on first use).

        The SDK's timeout (``{"connect", "read", "write", "pool"}`` in seconds) maps to aiohttp's pool wait
        plus connect (``connect``), connect (``sock_connect``) and read (``sock_read``); writes of a request
        body are not timed by aiohttp. The headers are the SDK's without ``Accept-Encoding`` (aiohttp names
        what it decodes).
        """
        spec = self.extensions.get("timeout") or {}
        connect, read, pool = spec.get("connect"), spec.get("read"), spec.get("pool")
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=None if connect is None and pool is None else (connect or 0) + (pool or 0),
            sock_connect=connect,
            sock_read=read,
        )
        headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in self.headers if k.lower() != b"accept-encoding"
        ]
        return timeout, headers


class SharedClient:
    """The HTTP client that the ``openai:`` models of one endpoint share in one event loop: an
    ``aiohttp.ClientSession`` whose pool opens, and keeps alive, up to ``connections`` connections.

    aiohttp rather than the SDK's httpx: per request it costs about a third of the CPU (its HTTP parser
    is compiled; httpx's pool and anyio streams are Python), which is most of the harness's time per
    request against a fast server (``python -m benchmarks.perf``). What goes on the wire is the SDK's
    request: the same URL, body and headers, except ``Accept-Encoding``, which names what aiohttp
    decodes. ``is_closed`` / :meth:`aclose` are what ``wildtoolbench.models.transport.shared_http_client`` expects.
    """

    def __init__(self, connections: int):
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections, limit_per_host=0),
            timeout=aiohttp.ClientTimeout(total=None),
            skip_auto_headers=("User-Agent",),
        )

    @property
    def is_closed(self) -> bool:
        """True once :meth:`aclose` ran."""
        return self.session.closed

    async def aclose(self) -> None:
        """Close the connections."""
        await self.session.close()

    async def post(self, template: _Template, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """POST ``body`` with ``template``'s URL, headers and timeouts.

        Returns:
            ``(status, raw response headers, the body decoded as its Content-Encoding says)``.

        Raises:
            openai.APITimeoutError: the connection, a read or the pool wait timed out.
            openai.APIConnectionError: the connection failed or broke (as the SDK raises for httpx's errors).
        """
        timeout, headers = template.aiohttp_parts
        try:
            async with self.session.post(template.url, data=body, headers=headers, timeout=timeout) as response:
                return response.status, list(response.raw_headers), await response.read()
        except asyncio.TimeoutError as exc:  # aiohttp's timeouts derive from it
            raise openai.APITimeoutError(request=_request(template, body)) from exc
        except (aiohttp.ClientError, ssl.SSLError, OSError) as exc:
            raise openai.APIConnectionError(request=_request(template, body)) from exc


def _request(template: _Template, body: bytes) -> httpx.Request:
    """The request as httpx describes it (what the SDK's errors carry)."""
    return httpx.Request("POST", template.url, headers=template.headers, content=body)


def _status_response(
    template: _Template, body: bytes, status: int, headers: list[tuple[bytes, bytes]], content: bytes
) -> httpx.Response:
    """An ``httpx.Response`` for a reply aiohttp has read (its body already decoded), for the SDK's status errors."""
    plain = [
        (k, v) for k, v in headers if k.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
    ]
    return httpx.Response(status, headers=plain, content=content, request=_request(template, body))


def _new_client(connections: int) -> SharedClient:
    """A shared client keeping up to ``connections`` connections open and alive (timeouts come with each request)."""
    return SharedClient(connections)


def _body(payload: dict[str, Any]) -> bytes:
    """The request body exactly as the openai SDK serialises it (``openapi_dumps``: compact, UTF-8 kept, no NaN)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class RawChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that keeps the provider's raw assistant message (see module doc)."""

    #: Set by :func:`create`: the thin path sends through the event loop's shared client of the endpoint
    #: (``wildtoolbench.models.transport.shared_http_client``) instead of the model's own ``http_async_client``.
    _shared_pool: bool = PrivateAttr(default=False)
    #: The request template (``_Template``), ``False`` when the thin path is not possible for this client.
    _template: Any = PrivateAttr(default=None)

    def _get_request_payload(self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        # ChatOpenAI's payload without its own conversion of the messages, which is replaced anyway.
        payload = super()._get_request_payload([], stop=stop, **kwargs)
        if "messages" not in payload:  # the Responses API: its own payload, from the real messages
            return super()._get_request_payload(input_, stop=stop, **kwargs)
        payload["messages"] = [to_openai(m) for m in self._convert_input(input_).to_messages()]
        return payload

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """One Chat Completions request, the request body sent as built and the reply read as plain JSON.

        ``ChatOpenAI`` sends through ``client.chat.completions.create``, whose
        recursive typed-dict transform of the whole request (every message of the
        history, every tool schema) cost about a quarter of the harness's CPU per
        request in ``python -m benchmarks.perf``, and even the SDK's plain ``post``
        rebuilds the headers, options and URL of every request (about 1.7 ms). Here
        the body is already exactly what the endpoint must get (see
        :meth:`_get_request_payload`): it is serialised once, as the SDK does, and
        sent with the headers, URL and timeout the SDK built for this model's first
        request (:meth:`_template_for`) through one ``httpx2.AsyncClient`` (the SDK's
        own HTTP library; ``httpx`` where it is missing) per endpoint and event loop
        (``wildtoolbench.models.transport.shared_http_client``, pool sized to the run's
        concurrency); a model built with its own ``http_async_client`` (``gguf:``)
        sends through that one. Errors are the SDK's: ``APITimeoutError``,
        ``APIConnectionError`` and the status errors of
        ``_make_status_error_from_response`` (what ``wildtoolbench.models.transport`` classifies);
        no retries (``max_retries=0``). ``extra_body`` is merged into the body as the
        SDK's ``create`` does (vLLM's ``chat_template_kwargs``, llama.cpp's
        ``response_format`` schema). Structured output, the Responses API, streaming,
        response headers, client retries and the SDK's dynamic credentials (key
        providers, workload identity) take ``ChatOpenAI``'s own path.
        """
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        if (
            payload.get("stream")
            or "response_format" in payload
            or self._use_responses_api(payload)
            or self.include_response_headers
        ):
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        payload.pop("stream", None)
        extra_body = payload.pop("extra_body", None)
        if extra_body:
            payload.update(extra_body)
        template = self._template if self._template is not None else await self._template_for()
        if template:
            response = await self._send(template, payload)
        else:
            response = await self.root_async_client.post("/chat/completions", body=payload, cast_to=dict)
        return self._create_chat_result(response if isinstance(response, dict) else dict(response), {})

    async def _template_for(self) -> _Template | bool:
        """The request template of this model, or ``False`` when only the SDK can send its requests.

        Built once by the SDK itself (its ``_build_request`` for a ``POST /chat/completions``: base URL,
        default query, key header, ``User-Agent`` and ``X-Stainless-*`` headers, organisation / project,
        the client's default headers and the timeout), so every request carries what ``post`` sent.
        """
        client = self.root_async_client
        thin = (
            isinstance(self.http_async_client, (httpx.AsyncClient, _http.AsyncClient))
            and client.max_retries == 0
            and getattr(client, "_provider_runtime", None) is None
            and getattr(client, "_api_key_provider", None) is None
            and getattr(client, "workload_identity", None) is None
            and getattr(client, "_workload_identity_auth", None) is None
            and client.custom_auth is None
            and not getattr(client, "_idempotency_header", None)
            and hasattr(client, "_make_status_error_from_response")
        )
        if not thin:
            self._template = False
            return False
        from openai._base_client import get_platform
        from openai._models import FinalRequestOptions

        if client._platform is None:  # as the SDK's request(): get_platform may block on I/O
            client._platform = await anyio.to_thread.run_sync(get_platform)
        options = await client._prepare_options(
            FinalRequestOptions.construct(method="post", url="/chat/completions", json_data={})
        )
        request = client._build_request(options)
        headers = request.headers.copy()
        headers.pop("Content-Length", None)
        shared = (str(client.base_url), str(client.api_key)) if self._shared_pool else None
        self._template = _Template(str(request.url), headers.raw, dict(request.extensions), shared)
        return self._template

    async def _send(self, template: _Template, payload: dict[str, Any]) -> Any:
        """POST ``payload`` with ``template``; the decoded JSON reply (or its text when not JSON, as the SDK).

        Raises:
            openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError: as the SDK's ``post``.
        """
        if template.shared is not None:
            shared = await shared_http_client(template.shared, _new_client)
            body = _body(payload)
            status, headers, content = await shared.post(template, body)
            if not 200 <= status < 300:
                response = _status_response(template, body, status, headers, content)
                raise self.root_async_client._make_status_error_from_response(response) from None  # type: ignore[arg-type]
            content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"*").decode("latin-1")
            if not content_type.split(";")[0].strip().endswith("json"):
                return content.decode("utf-8", errors="replace")
            return json.loads(content)
        client = self.http_async_client
        make = _http.Request if isinstance(client, _http.AsyncClient) else httpx.Request
        request = make(
            "POST", template.url, headers=template.headers, content=_body(payload), extensions=dict(template.extensions)
        )
        try:
            response = await client.send(request)
        except _TIMEOUTS as exc:
            raise openai.APITimeoutError(request=request) from exc  # type: ignore[arg-type]
        except _CONNECTION_ERRORS as exc:
            raise openai.APIConnectionError(request=request) from exc  # type: ignore[arg-type]
        if not response.is_success:
            raise self.root_async_client._make_status_error_from_response(response) from None  # type: ignore[arg-type]
        content_type, *_ = response.headers.get("content-type", "*").split(";")
        if not content_type.endswith("json"):
            return response.text
        return response.json()

    def _create_chat_result(self, response: dict | openai.BaseModel, generation_info: dict | None = None) -> ChatResult:
        """LangChain's result, built without letting malformed tool calls crash it.

        ``ChatOpenAI`` raises a pydantic ``ValidationError`` for tool-call
        arguments that decode to something other than an object (``"[1]"``, a
        double-encoded string) or that arrive as an object instead of a string;
        such a reply is model output to score, not a transport failure. So the
        raw tool calls are taken out before LangChain parses the message and
        put back with :func:`wildtoolbench.models.messages.parse_tool_calls` (lenient: anything
        undecodable becomes an ``invalid_tool_call``); the raw message is kept
        under ``additional_kwargs["wtb_raw_response"]``.
        """
        data = response if isinstance(response, dict) else response.model_dump(warnings=False)
        check_choices(data)
        raws: list[dict[str, Any]] = []
        stripped = dict(data)
        if isinstance(data.get("choices"), list):
            stripped["choices"] = []
            for choice in data["choices"]:
                message = (choice.get("message") if isinstance(choice, dict) else None) or {}
                raws.append(
                    {
                        "content": message.get("content"),
                        "tool_calls": message.get("tool_calls"),
                        "reasoning_content": message.get("reasoning_content"),
                    }
                )
                if isinstance(choice, dict) and isinstance(message, dict):
                    choice = {**choice, "message": {k: v for k, v in message.items() if k != "tool_calls"}}
                stripped["choices"].append(choice)
        result = super()._create_chat_result(stripped, generation_info)
        for generation, raw in zip(result.generations, raws):
            message = generation.message
            message.additional_kwargs[RAW_RESPONSE_KEY] = raw
            if raw["reasoning_content"] is not None:
                message.additional_kwargs["reasoning_content"] = raw["reasoning_content"]
            if raw["tool_calls"] and isinstance(message, AIMessage):
                message.tool_calls, message.invalid_tool_calls = parse_tool_calls(raw["tool_calls"])
        return result


class ReplyWithoutChoice(ValueError):
    """A 200 reply whose ``choices`` is missing, not a list or empty: there is no message to score. Not retried
    (the endpoint answered); the session is an infrastructure error whose message says what the reply held."""


def check_choices(data: Any) -> None:
    """Raise :class:`ReplyWithoutChoice` unless ``data`` (a chat completion body) has a non-empty ``choices``
    list of objects (docs/settings.md §7.5)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if isinstance(choices, list) and choices and all(isinstance(c, dict) for c in choices):
        return
    if not isinstance(data, dict) or "choices" not in data:
        found = "no 'choices' field"
    elif isinstance(choices, list) and not choices:
        found = "an empty 'choices' list"
    else:
        found = f"'choices' of {type(choices).__name__} {str(choices)[:60]!r}"
    keys = ", ".join(sorted(map(str, data))[:8]) if isinstance(data, dict) else type(data).__name__
    raise ReplyWithoutChoice(
        f"the endpoint's reply holds {found}: no message to score (reply fields: {keys or 'none'})"
    )


def _is_loopback(base_url: str | None) -> bool:
    if not base_url:
        return False
    try:
        host = httpx.URL(base_url).host
    except (httpx.InvalidURL, ValueError):
        return False
    return host in ("localhost", "127.0.0.1", "::1")


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the base URL is a plain ``http(s)://host`` URL without credentials
    (``wildtoolbench.models.transport.base_url_problem``, docs/settings.md §7.4) and a remote endpoint needs an API
    key (``settings.api_key`` or ``OPENAI_API_KEY``).

    A base URL on loopback (a local vLLM, Ollama or llama.cpp server) needs none. A key the
    server rejects shows only at the first request (HTTP 401), an infrastructure error.

    Raises:
        ConfigurationError: a bad base URL; no key for a non-loopback endpoint.
    """
    from wildtoolbench.models.registry import ConfigurationError
    from wildtoolbench.models.transport import base_url_problem

    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
    problem = base_url_problem(base_url) if base_url else None
    if problem is not None:
        source = "the base URL" if settings.base_url else "OPENAI_BASE_URL"
        raise ConfigurationError(f"openai:{name}: {source} {problem}")
    if settings.api_key or os.environ.get("OPENAI_API_KEY") or _is_loopback(base_url):
        return
    where = base_url or "https://api.openai.com/v1"
    raise ConfigurationError(
        f"openai:{name} needs an API key for {where}: set OPENAI_API_KEY "
        "(or point --base-url at a local OpenAI-compatible server on 127.0.0.1/localhost)"
    )


def create(name: str, settings: ModelSettings) -> RawChatOpenAI:
    """Build a :class:`RawChatOpenAI` for model ``name`` with ``settings`` (see ``ModelSettings``).

    Its Chat Completions requests go through the running event loop's shared client of the
    endpoint (:meth:`RawChatOpenAI._agenerate`), never across loops; the model's own
    ``httpx.AsyncClient`` serves the paths left to ``ChatOpenAI`` (streaming, structured output,
    client retries when ``settings.max_retries > 0``).
    """
    kwargs: dict[str, Any] = dict(
        model=name,
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        http_async_client=httpx.AsyncClient(timeout=settings.timeout, verify=shared_tls_context()),
    )
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    elif not os.environ.get("OPENAI_API_KEY") and _is_loopback(settings.base_url):
        kwargs["api_key"] = "not-needed"  # a local OpenAI-compatible server accepts any key
    kwargs.update(settings.extra)
    model = RawChatOpenAI(**kwargs)
    model._shared_pool = "http_async_client" not in settings.extra  # a client given in extra is used as given
    return model
