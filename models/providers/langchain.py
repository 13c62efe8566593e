"""``langchain:PROVIDER:MODEL``: any chat model LangChain's ``init_chat_model`` knows, from its integration package.

Examples: ``langchain:anthropic:claude-sonnet-4-5`` (``langchain-anthropic``),
``langchain:google_genai:gemini-2.5-pro`` (``langchain-google-genai``), ``langchain:ollama:qwen2.5``
(``langchain-ollama``), ``langchain:mistralai:mistral-large-latest``, ``langchain:bedrock_converse:...``.
The provider names and their packages are those of ``langchain.chat_models.init_chat_model``;
:data:`INTEGRATIONS` adds providers it does not know (``register_integration``).

Settings pass through as constructor arguments of the integration's chat model: ``temperature``,
``base_url`` (``--base-url``), ``api_key``, ``timeout`` and ``max_retries`` when the class takes them
(the harness retries, so the client's own retries follow ``max_retries``, 0 in ``wtb eval``), and every
``settings.extra`` entry as given (``max_tokens``, ``top_p``, provider-specific options).

Recorded responses: these providers hand back tool-call arguments as parsed objects, not the text the
model wrote, so the result record's ``arguments`` is ``json.dumps(args, ensure_ascii=False)`` of that
object (``wildtoolbench.models.messages.response_from_ai``): keys in the provider's order, ``", "`` / ``": "``
separators, non-ASCII kept. Arguments that were not valid JSON reach the record only as far as the
integration keeps them (usually as an invalid tool call with its raw text).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from wildtoolbench.models.registry import ConfigurationError
from wildtoolbench.models.settings import ModelSettings


@dataclass(frozen=True)
class Integration:
    """Where the chat model class of a provider lives.

    Attributes:
        module: module holding the class (``langchain_anthropic``).
        class_name: the chat model class (``ChatAnthropic``).
        package: the pip distribution to install (``langchain-anthropic``).
        via_init_chat_model: built through ``init_chat_model`` (a provider LangChain knows) rather
            than by calling the class directly.
        fallback_module: a second module to try when ``module`` is missing (``ollama``: langchain_community).
    """

    module: str
    class_name: str
    package: str
    via_init_chat_model: bool = True
    fallback_module: str | None = None


INTEGRATIONS: dict[str, Integration] = {}
"""Providers added here (:func:`register_integration`); looked up before LangChain's own table."""


def register_integration(provider: str, module: str, class_name: str, package: str | None = None) -> None:
    """Make ``langchain:<provider>:MODEL`` build ``module.class_name(model=MODEL, ...)``.

    ``package`` is the pip name shown when the module is missing (default: the module's top-level
    name with ``_`` as ``-``).
    """
    INTEGRATIONS[_normalise(provider)] = Integration(
        module, class_name, package or _package_of(module), via_init_chat_model=False
    )


def _normalise(provider: str) -> str:
    return provider.replace("-", "_").lower()


def _package_of(module: str) -> str:
    return module.split(".", 1)[0].replace("_", "-")


def _langchain_table() -> dict[str, tuple[str, str]]:
    """``provider -> (module, class name)`` of ``init_chat_model`` (empty when langchain is missing)."""
    try:
        from langchain.chat_models import base
    except ImportError:
        return {}
    table = getattr(base, "_BUILTIN_PROVIDERS", None)
    if not isinstance(table, dict):  # pragma: no cover - older langchain: the module naming rule
        return {}
    return {name: (entry[0], entry[1]) for name, entry in table.items()}


def parse_name(name: str) -> tuple[str, str]:
    """Split ``"PROVIDER:MODEL"`` into ``(provider, model)`` (provider normalised as LangChain does).

    Raises:
        ConfigurationError: no ``:`` or an empty part.
    """
    provider, sep, model = name.partition(":")
    if not sep or not provider or not model:
        raise ConfigurationError(
            f"langchain model spec must look like 'langchain:PROVIDER:MODEL' (e.g. 'langchain:anthropic:claude-sonnet-4-5'), "
            f"got 'langchain:{name}'"
        )
    return _normalise(provider), model


def integration(provider: str) -> Integration:
    """The integration of ``provider``: :data:`INTEGRATIONS`, else ``init_chat_model``'s table.

    Raises:
        ConfigurationError: LangChain is not installed, or the provider is unknown (with the closest match).
    """
    provider = _normalise(provider)
    if provider in INTEGRATIONS:
        return INTEGRATIONS[provider]
    if importlib.util.find_spec("langchain") is None:
        raise ConfigurationError("langchain: model specs need the langchain package: pip install langchain")
    table = _langchain_table()
    if provider in table:
        module, class_name = table[provider]
        fallback = "langchain_community.chat_models" if provider == "ollama" else None
        return Integration(module, class_name, _package_of(module), fallback_module=fallback)
    known = sorted(set(table) | set(INTEGRATIONS))
    close = difflib.get_close_matches(provider, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigurationError(f"unknown LangChain chat model provider {provider!r}{hint} Known: {', '.join(known)}.")


def _installed_module(found: Integration) -> str | None:
    for module in (found.module, found.fallback_module):
        if module is None:
            continue
        try:
            if importlib.util.find_spec(module.split(".", 1)[0]) is not None:
                return module
        except (ImportError, ValueError):
            continue
    return None


def chat_model_class(name: str) -> type:
    """The chat model class of ``langchain:<name>``, imported (no model is built, nothing is called).

    Raises:
        ConfigurationError: malformed spec, unknown provider, integration package not installed (the
            message is the ``pip install`` line to run), or the class missing from it.
    """
    provider, model = parse_name(name)
    found = integration(provider)
    module_name = _installed_module(found)
    if module_name is None:
        raise ConfigurationError(
            f"langchain:{provider}:{model} needs the LangChain integration package {found.package}, which is not "
            f"installed: pip install {found.package}"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"langchain:{provider}:{model}: {module_name} failed to import ({exc}); reinstall it: pip install -U {found.package}"
        ) from None
    cls = getattr(module, found.class_name, None)
    if not isinstance(cls, type):
        raise ConfigurationError(
            f"langchain:{provider}:{model}: {module_name} has no chat model {found.class_name}; upgrade it: "
            f"pip install -U {found.package}"
        )
    return cls


def accepted_arguments(cls: type) -> set[str] | None:
    """Constructor argument names of a pydantic chat model class (field names and aliases); ``None`` = unknown."""
    fields = getattr(cls, "model_fields", None)
    if not isinstance(fields, dict):
        return None
    names: set[str] = set()
    for field_name, info in fields.items():
        names.add(field_name)
        if isinstance(getattr(info, "alias", None), str):
            names.add(info.alias)
        alias = getattr(info, "validation_alias", None)
        if isinstance(alias, str):
            names.add(alias)
        for choice in getattr(alias, "choices", None) or []:
            if isinstance(choice, str):
                names.add(choice)
    return names


def model_kwargs(cls: type, settings: ModelSettings) -> dict[str, Any]:
    """Constructor arguments from ``settings`` (see the module doc): what the class takes, plus ``extra`` as given."""
    accepted = accepted_arguments(cls)

    def takes(argument: str) -> bool:
        return accepted is None or argument in accepted

    kwargs: dict[str, Any] = {}
    if takes("temperature"):
        kwargs["temperature"] = settings.temperature
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
    if settings.api_key and takes("api_key"):
        kwargs["api_key"] = settings.api_key
    if takes("timeout"):
        kwargs["timeout"] = settings.timeout
    if takes("max_retries"):
        kwargs["max_retries"] = settings.max_retries
    kwargs.update(settings.extra)
    return kwargs


def unapplied_settings(name: str, settings: ModelSettings) -> dict[str, str]:
    """The settings the chat model class of ``name`` takes no argument for: ``temperature`` and ``base_url``
    (docs/settings.md §7.8); ``{}`` when the class's arguments are not known.

    Raises:
        ConfigurationError: see :func:`chat_model_class`.
    """
    cls = chat_model_class(name)
    accepted = accepted_arguments(cls)
    if accepted is None:
        return {}
    return {
        setting: f"{cls.__name__} takes no {setting} argument"
        for setting in ("temperature", "base_url")
        if setting not in accepted
    }


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: LangChain knows the provider, its integration package is installed, a
    ``--base-url`` can be passed to it, and the chat model can be built
    (no request is made: a missing API key, which most integrations refuse when the model is built,
    stops the run here). A key the server rejects shows at the first request (HTTP 401: an
    infrastructure error, docs/guides/faults.md).

    Raises:
        ConfigurationError: see :func:`chat_model_class`; a base URL for a class that takes none, or one
            that is not a plain ``http(s)://host`` URL without credentials (docs/settings.md §7.4); the chat
            model cannot be built (the integration's message, redacted).
    """
    if settings.base_url:
        from wildtoolbench.models.transport import base_url_problem

        problem = base_url_problem(settings.base_url)
        if problem is not None:
            raise ConfigurationError(f"langchain:{name}: the base URL {problem}")
    cls = chat_model_class(name)
    accepted = accepted_arguments(cls)
    if settings.base_url and accepted is not None and "base_url" not in accepted:
        raise ConfigurationError(f"langchain:{name}: {cls.__name__} takes no base URL (drop --base-url / WTB_BASE_URL)")
    try:
        create(name, settings)
    except Exception as exc:  # noqa: BLE001 - whatever the integration refuses when the model is built
        from wildtoolbench.models.redaction import redact_text

        raise ConfigurationError(
            redact_text(f"langchain:{name}: the chat model cannot be built: {type(exc).__name__}: {exc}")
        ) from None


def create(name: str, settings: ModelSettings) -> Any:
    """The chat model of ``langchain:PROVIDER:MODEL`` through ``init_chat_model`` (or the registered class).

    Raises:
        ConfigurationError: see :func:`check`; whatever the integration raises on bad arguments.
    """
    provider, model = parse_name(name)
    cls = chat_model_class(name)
    kwargs = model_kwargs(cls, settings)
    found = integration(provider)
    if not found.via_init_chat_model:
        return cls(model=model, **kwargs)
    from langchain.chat_models import init_chat_model

    return init_chat_model(model, model_provider=provider, **kwargs)


def model_name(name: str) -> str:
    """The name written into result records: ``MODEL`` (``claude-sonnet-4-5``), as for ``openai:MODEL``."""
    try:
        return parse_name(name)[1]
    except ConfigurationError:
        return name
