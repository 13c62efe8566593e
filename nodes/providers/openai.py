"""``openai:MODEL``: any OpenAI-compatible chat endpoint through langchain-openai.

Works against OpenAI, DeepSeek, vLLM, SGLang and Ollama by pointing ``base_url``
(or ``OPENAI_BASE_URL``) at the server; the key comes from ``api_key`` or
``OPENAI_API_KEY`` (any non-empty value for local servers).
"""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from nodes.providers import ModelSettings


def create(name: str, settings: ModelSettings) -> ChatOpenAI:
    """Build a ``ChatOpenAI`` for model ``name`` with ``settings`` (see ``ModelSettings``)."""
    kwargs = dict(
        model=name,
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    kwargs.update(settings.extra)
    return ChatOpenAI(**kwargs)
