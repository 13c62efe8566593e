"""Model providers: turn a model spec such as ``openai:gpt-4o`` into a candidate and its LangChain chat model.

A provider is one module exposing ``create(name: str, settings: ModelSettings) -> BaseChatModel``
(optionally ``check``, ``model_name``, ``MAX_CONCURRENCY``) plus one line in
:data:`BUILTIN_PROVIDERS`; the built-in ones are in :mod:`wildtoolbench.models.providers`. Other packages add
providers without touching this project: in code with :func:`register_provider`, or through the
``wildtoolbench.providers`` entry-point group (:mod:`wildtoolbench.models.registry`).

A run resolves its spec once, with :func:`resolve_candidate`, into a :class:`Candidate`
(:mod:`wildtoolbench.models.candidate`): the name it records, the concurrency it serves, its check, and the
call that sends a model request.
"""

from wildtoolbench.models.candidate import (
    Candidate,
    check_model,
    max_concurrency,
    model_name_for,
    resolve_candidate,
    resolve_model,
)
from wildtoolbench.models.registry import (
    BUILTIN_PROVIDERS,
    DEFAULT_MODEL,
    MODEL_ALIASES,
    PROVIDER_ENTRY_POINT_GROUP,
    ConfigurationError,
    Provider,
    ProviderFactory,
    _registry,  # noqa: F401  (tests monkeypatch the registry)
    get_provider,
    known_providers,
    refresh_entry_points,
    register_provider,
    split_spec,
)
from wildtoolbench.models.reply import CandidateReply
from wildtoolbench.models.settings import ModelSettings

__all__ = [
    "BUILTIN_PROVIDERS",
    "DEFAULT_MODEL",
    "PROVIDER_ENTRY_POINT_GROUP",
    "MODEL_ALIASES",
    "Candidate",
    "CandidateReply",
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
    "resolve_candidate",
    "resolve_model",
    "split_spec",
]
