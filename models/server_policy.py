"""Server mode: what the caller of a deployed graph may choose, by the deployer's configuration (docs/settings.md §8).

On a LangGraph Server (``langgraph dev``, ``langgraph up``, LangGraph Platform) anyone who can reach
the API chooses the graph's context. The context names model specs (which pick code: a ``graph:``
module is imported, a ``replay:``, ``scripted:`` or ``gguf:`` file is read), base URLs (where the
server's API keys would be sent) and a dataset file. So in **server mode** every such value is checked
against the deployment's own settings, read from the server's environment, before any request, file
or import:

- ``WTB_SERVER_MODELS``: the model specs callers may name, comma-separated. An entry is an exact spec
  (``openai:gpt-4o-mini``), a prefix ending in ``*`` (``openai:gpt-4o*``), a provider (``openai:`` or
  ``openai:*``: any of its models), or ``*`` (any spec of any provider except ``graph:``). A
  ``graph:`` spec (it imports and runs code) is accepted only when listed exactly. Default: the
  server's own models only (``$WTB_MODEL``, every ``$WTB_<ROLE>_MODEL``, ``local``, ``none``).
- ``WTB_SERVER_FILES``: directories whose files callers may name (``replay:``, ``scripted:``,
  ``gguf:`` specs and the evaluation's ``dataset``), comma-separated; a path is resolved (``..``,
  symbolic links) before it is compared. Default: none. A spec listed exactly in
  ``WTB_SERVER_MODELS`` and the server's own ``$WTB_DATASET`` need no directory.
- ``WTB_SERVER_BASE_URLS``: base URLs callers may set, comma-separated. Default: none (the provider's
  configured endpoint: ``$WTB_BASE_URL``, ``$OPENAI_BASE_URL``, or its default). An API key is only
  sent where it was configured: a listed URL other than the server's own gets no key from the
  server's environment unless its entry names the variable that holds its key (``URL|VARIABLE``, e.g.
  ``https://api.deepseek.com/v1|DEEPSEEK_API_KEY``); without one it gets the placeholder
  :data:`NO_KEY`.

Server mode is on in a process that runs LangGraph's API server (the ``langgraph_api`` package is
loaded), or where ``WTB_SERVER_MODE`` is true (any other server built around the graphs); it is off
inside :func:`trusted` (code that builds its own contexts). The ``wtb`` command line never runs in a
server process, so its runs are not checked. Refusals are :class:`PolicyError` (a
:class:`ConfigurationError`, so a ``ValueError``: LangGraph Server shows its message to the caller).

Errors carried to the caller: LangGraph Server shows the message of only a few exception classes and
replaces the others' by "An internal error occurred". :func:`carry_errors` wraps a graph's nodes so
that, in server mode, any exception leaves the node as one whose class has the original's name and
whose message is the original's, redacted (:mod:`wildtoolbench.models.redaction`): the caller sees
``OpenAIError: The api_key client option must be set ...``, never a key an endpoint echoed.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench.models.redaction import redact_text
from wildtoolbench.models.registry import DEFAULT_MODEL, MODEL_ALIASES, ConfigurationError
from wildtoolbench.models.settings import ModelSettings, env_value

SERVER_MODE_ENV = "WTB_SERVER_MODE"
"""Variable that turns server mode on in a process that is not a LangGraph Server (``1``, ``true``)."""
MODELS_ENV = "WTB_SERVER_MODELS"
"""Variable listing the model specs callers may name (see the module doc)."""
FILES_ENV = "WTB_SERVER_FILES"
"""Variable listing the directories whose files callers may name."""
BASE_URLS_ENV = "WTB_SERVER_BASE_URLS"
"""Variable listing the base URLs callers may set (``URL`` or ``URL|KEY_VARIABLE``)."""

NO_KEY = "no-key-configured-for-this-endpoint"
"""The API key sent to a listed base URL that no key was configured for (never one of the server's)."""

FILE_PROVIDERS = ("replay", "scripted", "gguf")
"""Providers whose spec target is a file the server reads (``graph:`` is code, listed exactly)."""

NO_MODEL = "none"
"""The generation graph's spec for a role that calls no model."""

_TRUSTED: contextvars.ContextVar[bool] = contextvars.ContextVar("wtb_trusted_context", default=False)


class PolicyError(ConfigurationError):
    """A context value that server mode refuses; ``str(error)`` names the field, the value (credentials
    redacted) and the server variable that would allow it."""


@contextlib.contextmanager
def trusted() -> Iterator[None]:
    """Within the block (and the tasks it starts), contexts are built and models resolved without the
    server-mode checks: for code that chose its settings itself, not from a caller."""
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def server_mode(environ: Mapping[str, str] | None = None) -> bool:
    """Whether values of a graph context come from callers of a server and must pass the policy.

    True when this process runs LangGraph's API server (``langgraph_api`` loaded) or ``$WTB_SERVER_MODE``
    is true, unless inside :func:`trusted`.

    Raises:
        ValueError: ``$WTB_SERVER_MODE`` is not a boolean.
    """
    if _TRUSTED.get():
        return False
    return "langgraph_api" in sys.modules or bool(env_value(SERVER_MODE_ENV, bool, environ))


def _entries(raw: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (raw or "").split(",") if part.strip())


def _real(path: str) -> Path:
    """``path`` with ``..`` and symbolic links resolved (``os.path.realpath``). Inside a running event loop the
    file system is asked from a worker thread: a server's loop is not blocked (``langgraph dev`` refuses
    blocking calls such as ``os.readlink`` there)."""
    import asyncio  # not at start-up (docs/cli.md §1)
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return Path(os.path.realpath(path))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="wtb-policy") as pool:
        return Path(pool.submit(os.path.realpath, path).result())


def _normal_url(url: str) -> str:
    return url.strip().rstrip("/")


def _shown(value: str) -> str:
    return repr(redact_text(value))


@dataclass(frozen=True)
class ServerPolicy:
    """The deployer's settings of server mode (see the module doc), read by :meth:`from_env`.

    Attributes:
        models: entries of ``WTB_SERVER_MODELS`` (empty: only ``own_models``).
        own_models: the server's own specs (its ``WTB_MODEL``, ``WTB_<ROLE>_MODEL``, ``local``, ``none``).
        files: resolved directories of ``WTB_SERVER_FILES``.
        own_files: resolved files the server itself names (its ``WTB_DATASET``).
        base_urls: ``{normalised URL: key variable or None}`` of ``WTB_SERVER_BASE_URLS``.
        own_base_urls: the endpoints the server's keys are configured for (``WTB_BASE_URL``, ``OPENAI_BASE_URL``).
    """

    models: tuple[str, ...]
    own_models: frozenset[str]
    files: tuple[Path, ...]
    own_files: frozenset[Path]
    base_urls: Mapping[str, str | None]
    own_base_urls: frozenset[str]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerPolicy:
        """The policy of the server's environment (default ``os.environ``)."""
        env = os.environ if environ is None else environ
        own = {DEFAULT_MODEL, NO_MODEL}
        for name, value in env.items():
            if name.startswith("WTB_") and name.endswith("_MODEL") and value.strip():
                own.update(spec.strip() for spec in value.split(",") if spec.strip())
        base_urls: dict[str, str | None] = {}
        for entry in _entries(env.get(BASE_URLS_ENV)):
            url, _, variable = entry.partition("|")
            base_urls[_normal_url(url)] = variable.strip() or None
        own_urls = {_normal_url(env[name]) for name in ("WTB_BASE_URL", "OPENAI_BASE_URL") if env.get(name, "").strip()}
        dataset = env.get("WTB_DATASET", "").strip()
        return cls(
            models=_entries(env.get(MODELS_ENV)),
            own_models=frozenset(own),
            files=tuple(_real(d) for d in _entries(env.get(FILES_ENV))),
            own_files=frozenset({_real(dataset)} if dataset else set()),
            base_urls=base_urls,
            own_base_urls=frozenset(own_urls),
        )

    # ------------------------------------------------------------------ model specs

    def _listed(self, spec: str) -> bool:
        """Whether an entry of ``WTB_SERVER_MODELS`` (or the server's own models) names ``spec``."""
        if spec in self.own_models or spec in self.models:
            return True
        provider = MODEL_ALIASES.get(spec, spec).partition(":")[0]
        if provider == "graph":
            return False  # code: exact entries only
        for entry in self.models:
            if entry == "*":
                return True
            if entry.endswith(":") and provider == entry[:-1]:
                return True
            if entry.endswith("*") and spec.startswith(entry[:-1]):
                return True
        return False

    def check_model(self, spec: str, field: str = "model") -> None:
        """Refuse ``spec`` unless the deployment accepts it (and, for a file spec, its file).

        Raises:
            PolicyError: the spec is not accepted, or names a file outside ``WTB_SERVER_FILES``.
        """
        spec = spec.strip()
        if not spec:
            return
        exact = spec in self.own_models or spec in self.models
        if not self._listed(spec):
            graph = MODEL_ALIASES.get(spec, spec).startswith("graph:")
            why = (
                "a graph: spec imports and runs code, and is accepted only when listed exactly"
                if graph
                else "not among the deployment's models"
            )
            raise PolicyError(
                f"this server refuses the model spec {_shown(spec)} of context field {field!r} ({why}); "
                f"the deployer allows specs with {MODELS_ENV} on the server (docs/settings.md §8)"
            )
        provider, _, target = MODEL_ALIASES.get(spec, spec).partition(":")
        if provider in FILE_PROVIDERS and not exact:
            self.check_file(_spec_path(provider, target), f"{field} ({spec.split(':', 1)[0]}: file)")

    # ------------------------------------------------------------------ files

    def check_file(self, path: str, field: str = "dataset") -> None:
        """Refuse ``path`` unless it resolves inside a directory of ``WTB_SERVER_FILES`` (or is the server's own dataset).

        Raises:
            PolicyError: the path is outside every allowed directory (nothing is opened).
        """
        if not path:
            return
        resolved = _real(path)
        if resolved in self.own_files:
            return
        if any(resolved == root or root in resolved.parents for root in self.files):
            return
        raise PolicyError(
            f"this server refuses the file {_shown(path)} of context field {field!r}: it is not inside a "
            f"directory the deployment allows; the deployer lists those with {FILES_ENV} on the server "
            "(docs/settings.md §8)"
        )

    # ------------------------------------------------------------------ base URLs

    def check_base_url(self, url: str | None, field: str = "base_url") -> None:
        """Refuse a base URL that is neither the server's own endpoint nor listed in ``WTB_SERVER_BASE_URLS``.

        Raises:
            PolicyError: the URL is not accepted (no request is made to it).
        """
        if not url or not url.strip():
            return
        normal = _normal_url(url)
        if normal in self.own_base_urls or normal in self.base_urls:
            return
        raise PolicyError(
            f"this server refuses the base URL {_shown(url)} of context field {field!r}: callers cannot choose "
            f"where the server's requests (and its API keys) go; the deployer lists accepted endpoints with "
            f"{BASE_URLS_ENV} on the server (docs/settings.md §8)"
        )

    def api_key_for(self, url: str | None, environ: Mapping[str, str] | None = None) -> str | None:
        """The API key to send to ``url``: ``None`` (the provider's configured key) for the server's own
        endpoint, the value of the entry's variable for a listed URL that names one, else :data:`NO_KEY`."""
        if not url or not url.strip():
            return None
        normal = _normal_url(url)
        if normal in self.own_base_urls:
            return None
        variable = self.base_urls.get(normal)
        if variable:
            env = os.environ if environ is None else environ
            return env.get(variable) or NO_KEY
        return NO_KEY


def _spec_path(provider: str, target: str) -> str:
    if provider == "replay":
        return target.rpartition("#")[0] or target
    return target.partition("#")[0]


@functools.lru_cache(maxsize=8)
def _policy_of(items: tuple[tuple[str, str], ...]) -> ServerPolicy:
    return ServerPolicy.from_env(dict(items))


def current_policy() -> ServerPolicy:
    """The :class:`ServerPolicy` of the process environment (cached while the environment does not change)."""
    names = (MODELS_ENV, FILES_ENV, BASE_URLS_ENV, "WTB_DATASET", "WTB_BASE_URL", "OPENAI_BASE_URL")
    items = tuple(
        sorted((k, v) for k, v in os.environ.items() if k in names or (k.startswith("WTB_") and k.endswith("_MODEL")))
    )
    return _policy_of(items)


# ---------------------------------------------------------------------- the hooks of the graph contexts


def check_evaluation_context(model: str | None, base_url: str | None, dataset: str | None) -> None:
    """In server mode, refuse an evaluation context whose model spec, base URL or dataset the deployment
    does not accept (called by ``EvaluationContext.__post_init__``, before any request or file).

    Raises:
        PolicyError: a refused value.
    """
    if not server_mode():
        return
    policy = current_policy()
    policy.check_model(model or "")
    policy.check_base_url(base_url)
    policy.check_file(dataset or "")


def check_generation_context(models: Mapping[str, str], base_url: str | None, base_urls: Mapping[str, str]) -> None:
    """In server mode, refuse a generation context whose role model specs or base URLs the deployment
    does not accept (called by ``Context.__post_init__``; a ``user`` entry may hold several specs).

    Raises:
        PolicyError: a refused value.
    """
    if not server_mode():
        return
    policy = current_policy()
    for role, value in models.items():
        for spec in str(value).split(","):
            policy.check_model(spec, f"models.{role}")
    policy.check_base_url(base_url)
    for role, url in base_urls.items():
        policy.check_base_url(url, f"base_urls.{role}")


def server_settings(settings: ModelSettings) -> ModelSettings:
    """In server mode, the settings a provider is built with (``models.resolve_candidate`` calls this):
    a base URL the deployment does not accept is refused, and the API key is the one configured for
    the base URL (:meth:`ServerPolicy.api_key_for`: a listed endpoint without its own key variable gets
    :data:`NO_KEY`, never the server's key). Outside server mode, or with an explicit ``api_key``,
    ``settings`` as given.

    Raises:
        PolicyError: a refused base URL.
    """
    if not server_mode():
        return settings
    policy = current_policy()
    policy.check_base_url(settings.base_url)
    key = policy.api_key_for(settings.base_url)
    if key is None or settings.api_key is not None:
        return settings
    return dataclasses.replace(settings, api_key=key)


# ---------------------------------------------------------------------- errors carried to the caller


class CarriedError(RuntimeError):
    """Base of the exceptions :func:`carry_errors` raises in server mode (each subclass is named after the
    original exception's class; LangGraph Server shows a ``RuntimeError``'s message to the caller)."""


@functools.lru_cache(maxsize=256)
def _carried_class(name: str) -> type[CarriedError]:
    return type(name, (CarriedError,), {"__module__": __name__})


def carried(exc: BaseException) -> BaseException:
    """The exception to let out of a node in server mode: ``exc`` itself for LangGraph's control flow
    (interrupts, commands to a parent graph) and for one already carried, else a :class:`CarriedError`
    named like ``exc``'s class whose message is ``str(exc)`` redacted."""
    if isinstance(exc, CarriedError) or _is_control_flow(exc):
        return exc
    return _carried_class(type(exc).__name__)(redact_text(str(exc)))


def _is_control_flow(exc: BaseException) -> bool:
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:  # pragma: no cover - LangGraph is installed wherever a graph runs
        return False
    return isinstance(exc, GraphBubbleUp)


def carry_errors(node: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a graph node so that, in server mode, an exception leaves it as :func:`carried` makes it.

    The wrapper has the node's signature (LangGraph passes ``config`` / ``runtime`` as it would to the
    node) and is a coroutine function when the node is one. Outside server mode it changes nothing.
    """
    if inspect.iscoroutinefunction(node):

        @functools.wraps(node)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await node(*args, **kwargs)
            except Exception as exc:
                out = carried(exc) if server_mode() else exc
                if out is exc:
                    raise
                raise out from exc

        return async_wrapper

    @functools.wraps(node)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return node(*args, **kwargs)
        except Exception as exc:
            out = carried(exc) if server_mode() else exc
            if out is exc:
                raise
            raise out from exc

    return wrapper
