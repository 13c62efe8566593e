"""``openai:MODEL``: any OpenAI-compatible chat endpoint through langchain-openai.

Works against OpenAI, DeepSeek, vLLM, SGLang and Ollama by pointing ``base_url``
(or ``OPENAI_BASE_URL``) at the server; the key comes from ``api_key`` or
``OPENAI_API_KEY`` (any non-empty value for local servers).

``ChatOpenAI`` drops what the benchmark record needs (docs/evaluation.md §5): it parses the
``arguments`` strings, turns ``content: null`` into ``""`` and ignores
``reasoning_content`` (DeepSeek, vLLM reasoning parsers). :class:`RawChatOpenAI`
keeps the raw assistant message of every reply in
``additional_kwargs["wtb_raw_response"]`` (read by
``models.messages.response_from_ai``) and ``reasoning_content`` in
``additional_kwargs["reasoning_content"]``, and it sends messages built by
``models.messages.to_langchain`` exactly as the reference would (raw argument
strings, generated ids, ``reasoning_content`` of earlier replies).
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI

from models.messages import RAW_RESPONSE_KEY, parse_tool_calls, to_openai
from models.settings import ModelSettings


class RawChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that keeps the provider's raw assistant message (see module doc)."""

    def _get_request_payload(self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "messages" in payload:  # Chat Completions (not the Responses API)
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
        request in ``python -m benchmarks.perf``; the body here is already exactly what
        the endpoint must get (see :meth:`_get_request_payload`), so it goes out
        through the SDK's plain ``post`` (same client: base URL, key, timeout,
        error types, no retries). ``extra_body`` is merged into the body as the
        SDK's ``create`` does (vLLM's ``chat_template_kwargs``, llama.cpp's
        ``response_format`` schema). Structured output, the Responses API, streaming
        and response headers take ``ChatOpenAI``'s own path.
        """
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        if payload.get("stream") or "response_format" in payload or self._use_responses_api(payload) or self.include_response_headers:
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        payload.pop("stream", None)
        extra_body = payload.pop("extra_body", None)
        if extra_body:
            payload.update(extra_body)
        response = await self.root_async_client.post("/chat/completions", body=payload, cast_to=dict)
        return self._create_chat_result(response if isinstance(response, dict) else dict(response), {})

    def _create_chat_result(self, response: dict | openai.BaseModel, generation_info: dict | None = None) -> ChatResult:
        """LangChain's result, built without letting malformed tool calls crash it.

        ``ChatOpenAI`` raises a pydantic ``ValidationError`` for tool-call
        arguments that decode to something other than an object (``"[1]"``, a
        double-encoded string) or that arrive as an object instead of a string;
        such a reply is model output to score, not a transport failure. So the
        raw tool calls are taken out before LangChain parses the message and
        put back with :func:`models.messages.parse_tool_calls` (lenient: anything
        undecodable becomes an ``invalid_tool_call``); the raw message is kept
        under ``additional_kwargs["wtb_raw_response"]``.
        """
        data = response if isinstance(response, dict) else response.model_dump(warnings=False)
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


def _is_loopback(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = httpx.URL(base_url).host
    return host in ("localhost", "127.0.0.1", "::1")


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: a remote endpoint needs an API key (``settings.api_key`` or ``OPENAI_API_KEY``).

    A base URL on loopback (a local vLLM, Ollama or llama.cpp server) needs none. A key the
    server rejects shows only at the first request (HTTP 401), an infrastructure error.

    Raises:
        ConfigurationError: no key for a non-loopback endpoint.
    """
    from models.registry import ConfigurationError

    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
    if settings.api_key or os.environ.get("OPENAI_API_KEY") or _is_loopback(base_url):
        return
    where = base_url or "https://api.openai.com/v1"
    raise ConfigurationError(
        f"openai:{name} needs an API key for {where}: set OPENAI_API_KEY "
        "(or point --base-url at a local OpenAI-compatible server on 127.0.0.1/localhost)"
    )


def create(name: str, settings: ModelSettings) -> RawChatOpenAI:
    """Build a :class:`RawChatOpenAI` for model ``name`` with ``settings`` (see ``ModelSettings``).

    The model gets its own ``httpx.AsyncClient`` so that models built inside
    different event loops never share connections.
    """
    kwargs: dict[str, Any] = dict(
        model=name,
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        http_async_client=httpx.AsyncClient(timeout=settings.timeout),
    )
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    elif not os.environ.get("OPENAI_API_KEY") and _is_loopback(settings.base_url):
        kwargs["api_key"] = "not-needed"  # a local OpenAI-compatible server accepts any key
    kwargs.update(settings.extra)
    return RawChatOpenAI(**kwargs)
