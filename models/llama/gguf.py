"""``gguf:PATH``: any GGUF model file served by llama.cpp, reached through langchain-openai.

``gguf:/path/to/model.gguf`` starts llama.cpp's OpenAI-compatible C++ server (the prebuilt
``xllamacpp`` wheel of the ``local`` extra) for that file on a free loopback port, once per process
per model file and server options (:mod:`wildtoolbench.models.llama.server`), and returns a
:class:`~wildtoolbench.models.llama.chat.LocalChatOpenAI` pointed at it: every session and role shares one
server and talks the same chat-completions protocol as any remote endpoint. ``local`` (alias
``local:default``, :mod:`wildtoolbench.models.llama.local`) is the bundled model served the same way.

Chat format: the server renders prompts with the chat template stored in the GGUF file (Jinja).
For the bundled model that is Qwen2.5's own tool format (tools listed in the system turn, calls
written as ``{"name": ..., "arguments": {...}}`` JSON, observations as ``tool`` turns), which the
model was trained on; the server returns the reply text as written and the adapter lifts those
JSON calls into real tool calls. ``chat_template`` (``WTB_LOCAL_CHAT_TEMPLATE``) overrides it.

Per request, ``WTB_LOCAL_MAX_TOKENS`` (default 512) caps the generated tokens and the timeout is
at least ``WTB_LOCAL_MIN_TIMEOUT`` (default 600 s). Each request goes to the server slot of its
conversation (:mod:`wildtoolbench.models.llama.slots`: an evaluation session, a generation role), at most one per
slot at a time (the rest wait client-side).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx

from wildtoolbench.models.llama.bundled import LocalModelUnavailable
from wildtoolbench.models.llama.chat import LocalChatOpenAI
from wildtoolbench.models.llama.server import (
    DEFAULT_PARALLEL,
    SERVER_KEYS,
    LocalServer,
    _env_int,
    get_server,
    local_parallel,
    require_llama_server,
    server_options,
)
from wildtoolbench.models.settings import ModelSettings
from wildtoolbench.models.transport import shared_tls_context

#: Default cap on generated tokens per request (a small model can otherwise ramble to ``n_ctx``).
DEFAULT_MAX_TOKENS = 512
#: Least per-request timeout for a local server in seconds: a slow CPU is not a dead endpoint.
DEFAULT_MIN_TIMEOUT = 600.0


def __getattr__(name: str) -> Any:
    """``MAX_CONCURRENCY``: sessions a local server usefully serves at once (:func:`models.max_concurrency`).

    ``WTB_LOCAL_PARALLEL`` when set to a valid count, else :data:`DEFAULT_PARALLEL` (a run's default
    ``--concurrency``: the fastest measured on 2 cores, docs/guides/performance.md); each session
    in flight gets a slot of its own (:func:`wildtoolbench.models.llama.server.default_slots`).
    """
    if name == "MAX_CONCURRENCY":
        try:
            return local_parallel()
        except ValueError:
            return DEFAULT_PARALLEL
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def chat_model_for_server(server: LocalServer, settings: ModelSettings) -> LocalChatOpenAI:
    """A :class:`LocalChatOpenAI` talking to ``server`` with ``settings`` (sampling, timeout, retries).

    ``settings.base_url`` and ``settings.api_key`` are ignored (the server is local and keyless);
    ``settings.extra`` minus the server keys goes to ``ChatOpenAI``. ``max_tokens`` defaults to
    ``WTB_LOCAL_MAX_TOKENS`` or :data:`DEFAULT_MAX_TOKENS` (``extra["max_tokens"]`` overrides);
    the timeout is at least ``WTB_LOCAL_MIN_TIMEOUT`` or :data:`DEFAULT_MIN_TIMEOUT` seconds.
    """
    kwargs: dict[str, Any] = dict(
        model=server.model_name,
        base_url=server.base_url,
        api_key="local-no-key",
        temperature=settings.temperature,
        timeout=max(settings.timeout, float(os.environ.get("WTB_LOCAL_MIN_TIMEOUT") or DEFAULT_MIN_TIMEOUT)),
        max_retries=settings.max_retries,
        max_tokens=_env_int("WTB_LOCAL_MAX_TOKENS", DEFAULT_MAX_TOKENS),
        # Loopback only: never route through a proxy from the environment.
        http_client=httpx.Client(trust_env=False, verify=shared_tls_context()),
        http_async_client=httpx.AsyncClient(trust_env=False, verify=shared_tls_context()),
    )
    kwargs.update({k: v for k, v in settings.extra.items() if k not in SERVER_KEYS})
    model = LocalChatOpenAI(**kwargs)
    model._server = server
    return model


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the GGUF file exists and the llama.cpp runtime is installed.

    Raises:
        ConfigurationError: no such file, or the ``local`` extra is missing (with the install line).
    """
    from wildtoolbench.models.registry import ConfigurationError

    if not Path(name).expanduser().is_file():
        raise ConfigurationError(f"GGUF file not found: {name} (model spec 'gguf:{name}')")
    try:
        require_llama_server()
    except LocalModelUnavailable as exc:
        raise ConfigurationError(str(exc)) from None


def create(name: str, settings: ModelSettings) -> LocalChatOpenAI:
    """``gguf:PATH``: serve the GGUF file at ``PATH`` (``~`` expanded) and return a chat model for it.

    Raises:
        FileNotFoundError, LocalModelUnavailable, LocalServerError: see :func:`get_server`.
    """
    server = get_server(name, server_options(settings.extra))
    return chat_model_for_server(server, settings)
