"""The provider registry: model specs ``provider:name`` to LangChain chat models, with plug-ins.

A provider is a :class:`Provider`: a factory ``create(name, settings) -> BaseChatModel`` plus,
optionally, a configuration check run before any session, the name recorded in results, and the
number of sessions it usefully serves at once. Providers come from three places, looked up in this
order:

1. code: :func:`register_provider` (``register_provider("mine", create)`` or a :class:`Provider`);
2. installed packages: entry points of the group :data:`PROVIDER_ENTRY_POINT_GROUP`
   (``wildtoolbench.providers``); the entry point's name is the prefix and its value a factory,
   a :class:`Provider`, or a module with ``create`` (and optionally ``check``, ``model_name``,
   ``MAX_CONCURRENCY``, ``unapplied_settings``), so ``wtb``, ``langgraph dev`` and the Python API find them with no change
   to this project;
3. the built-ins of :data:`BUILTIN_PROVIDERS` (one module each, imported on first use; most in
   :mod:`wildtoolbench.models.providers`).

A spec is resolved into a provider once per run, by :func:`wildtoolbench.models.candidate.resolve_candidate`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from wildtoolbench.models.settings import ModelSettings

if TYPE_CHECKING:  # langchain_core is imported by the providers themselves, not at start-up
    from langchain_core.language_models import BaseChatModel

ProviderFactory = Callable[[str, ModelSettings], "BaseChatModel"]
PROVIDER_ENTRY_POINT_GROUP = "wildtoolbench.providers"

# prefix -> module; adding a built-in provider is one module plus one line here.
BUILTIN_PROVIDERS: dict[str, str] = {
    "openai": "wildtoolbench.models.providers.openai",
    "replay": "wildtoolbench.models.providers.replay",
    "scripted": "wildtoolbench.models.providers.scripted",
    "gguf": "wildtoolbench.models.llama.gguf",
    "local": "wildtoolbench.models.llama.local",
    "graph": "wildtoolbench.models.providers.graph",
    "langchain": "wildtoolbench.models.providers.langchain",
    "baseline": "wildtoolbench.models.providers.baseline",
}

# Bare names accepted as specs, each standing for a full "provider:name" spec.
MODEL_ALIASES: dict[str, str] = {
    "local": "local:default",
}

# The spec used when no --model is given: the bundled local model (needs the `local` extra).
DEFAULT_MODEL = "local"


class ConfigurationError(ValueError):
    """A model spec that cannot work, found before any session runs (unknown provider, missing file,
    unknown candidate, missing credentials or package). ``str(error)`` names the problem and the fix."""


@dataclass(frozen=True)
class Provider:
    """One model provider.

    Attributes:
        create: ``create(name, settings) -> BaseChatModel`` for specs ``"<prefix>:<name>"``.
        check: ``check(name, settings) -> None``, raising :class:`ConfigurationError` for a spec that
            cannot work (run before the first session; it must not call the model).
        model_name: ``model_name(name) -> str``, the name recorded in results (default: ``name``).
        max_concurrency: sessions the provider usefully serves at once, the default ``--concurrency``
            of a run on it (docs/settings.md §2.1); ``None`` = no limit advertised. For a module, its
            ``MAX_CONCURRENCY``, read each time :func:`get_provider` makes the provider (``local`` and
            ``gguf:`` compute it: the llama.cpp server's slots, ``WTB_LOCAL_PARALLEL``, default 1).
        unapplied_settings: ``unapplied_settings(name, settings) -> {setting: why}``, the per-model
            settings (``temperature``, ``base_url``) that the model of ``name`` is not built with, each
            with the reason (docs/settings.md §7.8); ``None``: every setting applies.
    """

    create: ProviderFactory
    check: Callable[[str, ModelSettings], None] | None = None
    model_name: Callable[[str], str] | None = None
    max_concurrency: int | None = None
    unapplied_settings: Callable[[str, ModelSettings], dict[str, str]] | None = None


_registry: dict[str, Provider | ProviderFactory] = {}
_entry_points: dict[str, Any] | None = None


def register_provider(prefix: str, provider: Provider | ProviderFactory) -> None:
    """Register a provider (a :class:`Provider` or a bare factory) for specs ``"<prefix>:<name>"``.

    A later call replaces an earlier one, and a registered provider wins over an entry point or a
    built-in of the same prefix.

    Raises:
        ValueError: if ``prefix`` is empty or contains ``":"``.
    """
    if not prefix or ":" in prefix:
        raise ValueError(f"provider prefix must be non-empty and contain no ':', got {prefix!r}")
    _registry[prefix] = provider


def split_spec(spec: str) -> tuple[str, str]:
    """Split ``"prefix:name"`` (or a bare alias such as ``local``) into ``(prefix, name)``.

    Raises:
        ConfigurationError: the spec has no ``:`` or an empty part.
    """
    prefix, sep, name = MODEL_ALIASES.get(spec, spec).partition(":")
    if not sep or not prefix or not name:
        import difflib

        close = difflib.get_close_matches(spec, sorted(MODEL_ALIASES), n=1) if not sep else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        aliases = ", ".join(repr(a) for a in sorted(MODEL_ALIASES))
        raise ConfigurationError(
            f"model spec must look like 'provider:name' (e.g. 'openai:gpt-4o') or be one of {aliases}, "
            f"got {spec!r}{hint}"
        )
    return prefix, name


def _installed_entry_points() -> dict[str, Any]:
    global _entry_points
    if _entry_points is None:
        # scanning the installed packages costs ~50 ms: only when a provider lookup needs it
        from importlib import metadata

        _entry_points = {ep.name: ep for ep in metadata.entry_points(group=PROVIDER_ENTRY_POINT_GROUP)}
    return _entry_points


def refresh_entry_points() -> None:
    """Forget the cached entry points (after installing a provider package in a running process)."""
    global _entry_points
    _entry_points = None


def _from_module(module: ModuleType) -> Provider:
    limit = getattr(module, "MAX_CONCURRENCY", None)
    return Provider(
        create=module.create,
        check=getattr(module, "check", None),
        model_name=getattr(module, "model_name", None),
        max_concurrency=int(limit) if limit is not None else None,
        unapplied_settings=getattr(module, "unapplied_settings", None),
    )


def _as_provider(value: Any) -> Provider:
    if isinstance(value, Provider):
        return value
    if isinstance(value, ModuleType):
        return _from_module(value)
    if callable(value):
        return Provider(create=value)
    raise TypeError(f"a provider must be a Provider, a module with create(), or a factory; got {value!r}")


def known_providers() -> list[str]:
    """Every provider prefix that :func:`models.resolve_candidate` accepts (code, entry points, built-ins), sorted."""
    return sorted(set(BUILTIN_PROVIDERS) | set(_installed_entry_points()) | set(_registry))


def get_provider(prefix: str) -> Provider:
    """The provider of ``prefix``: registered in code, else an installed entry point, else a built-in.

    Raises:
        ConfigurationError: no provider has that prefix (the message lists the known ones and the
            closest match).
    """
    if prefix in _registry:
        return _as_provider(_registry[prefix])
    entry_point = _installed_entry_points().get(prefix)
    if entry_point is not None:
        return _as_provider(entry_point.load())
    module = BUILTIN_PROVIDERS.get(prefix)
    if module is not None:
        return _from_module(importlib.import_module(module))
    import difflib

    known = known_providers()
    close = difflib.get_close_matches(prefix, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigurationError(f"unknown model provider {prefix!r}{hint} (known: {', '.join(known)})")
