"""Model providers: turn a model spec such as ``openai:gpt-4o`` into a LangChain chat model.

A provider is one module exposing ``create(name: str, settings: ModelSettings) -> BaseChatModel``
plus one line in :data:`BUILTIN_PROVIDERS`. Third-party code registers at run time with
:func:`register_provider` and never touches the graphs.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel

ProviderFactory = Callable[[str, "ModelSettings"], BaseChatModel]


@dataclass(frozen=True)
class ModelSettings:
    """Connection and sampling settings shared by every provider.

    Attributes:
        temperature: sampling temperature (default 0, as for benchmark runs).
        base_url: OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``;
            ``None`` lets the provider use its own default / ``OPENAI_BASE_URL``.
        api_key: secret key; ``None`` lets the provider read its environment variable.
        timeout: per-request timeout in seconds.
        max_retries: transport retries done inside the client.
        extra: provider-specific keyword arguments.
    """

    temperature: float = 0.0
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 2
    extra: dict[str, Any] = field(default_factory=dict)


# prefix -> "module:function"; adding a built-in provider is one module plus one line here.
BUILTIN_PROVIDERS: dict[str, str] = {
    "openai": "models.openai:create",
    "replay": "models.replay:create",
    "scripted": "models.scripted:create",
    "gguf": "models.gguf:create",
    "local": "models.gguf:create_local",
}

# Bare names accepted as specs, each standing for a full "provider:name" spec.
MODEL_ALIASES: dict[str, str] = {
    "local": "local:default",
}

# The spec used when no --model is given: the bundled local model (needs the `local` extra).
DEFAULT_MODEL = "local"

_registry: dict[str, ProviderFactory] = {}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Register ``factory`` for specs ``"<prefix>:<name>"``; a later call replaces an earlier one.

    Raises:
        ValueError: if ``prefix`` is empty or contains ``":"``.
    """
    if not prefix or ":" in prefix:
        raise ValueError(f"provider prefix must be non-empty and contain no ':', got {prefix!r}")
    _registry[prefix] = factory


def split_spec(spec: str) -> tuple[str, str]:
    """Split ``"prefix:name"`` into ``(prefix, name)``.

    Raises:
        ValueError: if the spec has no ``:`` or an empty part.
    """
    prefix, sep, name = spec.partition(":")
    if not sep or not prefix or not name:
        raise ValueError(f"model spec must look like 'provider:name' (e.g. 'openai:gpt-4o'), got {spec!r}")
    return prefix, name


def known_providers() -> list[str]:
    """Every provider prefix that :func:`resolve_model` accepts, sorted."""
    return sorted(set(BUILTIN_PROVIDERS) | set(_registry))


def max_concurrency(spec: str) -> int | None:
    """How many sessions the provider of ``spec`` usefully serves at once; ``None`` = no limit advertised.

    A built-in provider module advertises it as ``MAX_CONCURRENCY`` (``gguf:`` and ``local`` say 1:
    one llama.cpp server computes one request at a time, and interleaved conversations lose its
    prompt-prefix reuse). Batch runners use it as their default concurrency. Providers added with
    :func:`register_provider` advertise nothing. Nothing is imported beyond the provider's module
    (no model is built, no server started).

    Raises:
        ValueError: malformed spec.
    """
    prefix, _name = split_spec(MODEL_ALIASES.get(spec, spec))
    target = BUILTIN_PROVIDERS.get(prefix)
    if prefix in _registry or target is None:
        return None
    value = getattr(importlib.import_module(target.partition(":")[0]), "MAX_CONCURRENCY", None)
    return int(value) if value is not None else None


def resolve_model(spec: str, settings: ModelSettings | None = None) -> BaseChatModel:
    """Build the chat model named by ``spec``.

    Args:
        spec: ``"<provider>:<name>"``, e.g. ``openai:gpt-4o-mini``, or a bare alias from
            :data:`MODEL_ALIASES` (``local``).
        settings: connection and sampling settings (defaults: :class:`ModelSettings`).

    Returns:
        A LangChain ``BaseChatModel`` (tools are bound by the caller).

    Raises:
        ValueError: malformed spec or unknown provider prefix.
    """
    prefix, name = split_spec(MODEL_ALIASES.get(spec, spec))
    factory = _registry.get(prefix)
    if factory is None:
        target = BUILTIN_PROVIDERS.get(prefix)
        if target is None:
            raise ValueError(f"unknown model provider {prefix!r} in {spec!r}; known: {', '.join(known_providers())}")
        module_name, _, attr = target.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
    return factory(name, settings or ModelSettings())
