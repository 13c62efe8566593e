"""Model providers: turn a model spec such as ``openai:gpt-4o`` into a LangChain chat model.

A provider is one module exposing ``create(name: str, settings: ModelSettings) -> BaseChatModel``
(optionally ``check``, ``model_name``, ``MAX_CONCURRENCY``) plus one line in
:data:`BUILTIN_PROVIDERS`. Other packages add providers without touching this project: in code with
:func:`register_provider`, or through the ``wildtoolbench.providers`` entry-point group
(:mod:`models.registry`).
"""

from models.registry import (
    BUILTIN_PROVIDERS,
    DEFAULT_MODEL,
    ENTRY_POINT_GROUP,
    MODEL_ALIASES,
    ConfigurationError,
    Provider,
    ProviderFactory,
    _registry,  # noqa: F401  (tests monkeypatch the registry)
    check_model,
    get_provider,
    known_providers,
    max_concurrency,
    model_name_for,
    refresh_entry_points,
    register_provider,
    resolve_model,
    split_spec,
)
from models.settings import ModelSettings

__all__ = [
    "BUILTIN_PROVIDERS",
    "DEFAULT_MODEL",
    "ENTRY_POINT_GROUP",
    "MODEL_ALIASES",
    "ConfigurationError",
    "ModelSettings",
    "Provider",
    "ProviderFactory",
    "check_model",
    "get_provider",
    "known_providers",
    "max_concurrency",
    "model_name_for",
    "refresh_entry_points",
    "register_provider",
    "resolve_model",
    "split_spec",
]
