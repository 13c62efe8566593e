"""``gguf:PATH`` and ``local``: a GGUF model served by llama.cpp, reached through langchain-openai.

``gguf:/path/to/model.gguf`` starts llama-cpp-python's OpenAI-compatible server (the ``local``
extra) for that file on a free loopback port, once per process per model file and server options,
and returns a :class:`LocalChatOpenAI` pointed at it: every session and role shares one server and
talks the same chat-completions protocol as any remote endpoint. ``local`` (alias
``local:default``) is the bundled Qwen2.5-Coder-0.5B-Instruct Q4_K_M file, assembled once into the
cache (:mod:`models.bundled`).

Chat format: the server renders prompts with the chat template stored in the GGUF file. For the
bundled model that is Qwen2.5's own tool format (tools listed in the system turn, calls written as
``{"name": ..., "arguments": {...}}`` JSON, observations as ``tool`` turns), which the model was
trained on; the adapter lifts those JSON calls into real tool calls. llama-cpp-python 0.3.36's
``chatml-function-calling`` format was tried first and rejected: with ``tool_choice="auto"`` its
plain-text branch is constrained by a grammar that only admits ``functions.<name>:`` or end of
turn, so every text reply came back as e.g. ``"functions.get_weather:"``, and its template drops
``tool`` messages. It stays selectable (``chat_format``), with the two request fixes applied.

The server's supervision is :mod:`models.llama_server`; the chat model is :mod:`models.local_chat`.
Per request, ``WTB_LOCAL_MAX_TOKENS`` (default 1024) caps the generated tokens and the timeout is
at least ``WTB_LOCAL_MIN_TIMEOUT`` (default 600 s); requests to one server are serialised client-side.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx

from models.bundled import LocalModelUnavailable
from models.llama_server import SERVER_KEYS, LocalServer, _env_int, get_server, require_llama_server, server_options
from models.local_chat import LocalChatOpenAI
from models.settings import ModelSettings

#: Default cap on generated tokens per request (a small model can otherwise ramble to ``n_ctx``).
DEFAULT_MAX_TOKENS = 1024
#: Least per-request timeout for a local server in seconds: a slow CPU is not a dead endpoint.
DEFAULT_MIN_TIMEOUT = 600.0
#: Sessions a local server usefully serves at once (see :func:`models.max_concurrency`):
#: it computes one request at a time, and interleaving conversations defeats its prompt-prefix reuse.
MAX_CONCURRENCY = 1


def chat_model_for_server(server: LocalServer, settings: ModelSettings) -> LocalChatOpenAI:
    """A :class:`LocalChatOpenAI` talking to ``server`` with ``settings`` (sampling, timeout, retries).

    ``settings.base_url`` and ``settings.api_key`` are ignored (the server is local and keyless);
    ``settings.extra`` minus the server keys goes to ``ChatOpenAI``. ``max_tokens`` defaults to
    ``WTB_LOCAL_MAX_TOKENS`` or :data:`DEFAULT_MAX_TOKENS` (``extra["max_tokens"]`` overrides);
    the timeout is at least ``WTB_LOCAL_MIN_TIMEOUT`` or :data:`DEFAULT_MIN_TIMEOUT` seconds.
    """
    kwargs: dict[str, Any] = dict(
        model=server.model_path.stem,
        base_url=server.base_url,
        api_key="local-no-key",
        temperature=settings.temperature,
        timeout=max(settings.timeout, float(os.environ.get("WTB_LOCAL_MIN_TIMEOUT") or DEFAULT_MIN_TIMEOUT)),
        max_retries=settings.max_retries,
        max_tokens=_env_int("WTB_LOCAL_MAX_TOKENS", DEFAULT_MAX_TOKENS),
        # Loopback only: never route through a proxy from the environment.
        http_client=httpx.Client(trust_env=False),
        http_async_client=httpx.AsyncClient(trust_env=False),
    )
    kwargs.update({k: v for k, v in settings.extra.items() if k not in SERVER_KEYS})
    model = LocalChatOpenAI(**kwargs)
    model._server = server
    return model


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the GGUF file exists and llama-cpp-python's server is installed.

    Raises:
        ConfigurationError: no such file, or the ``local`` extra is missing (with the install line).
    """
    from models.registry import ConfigurationError

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
