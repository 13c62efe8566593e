"""Counting a candidate's prompt tokens before a run (``wtb eval --dry-run``, docs/trials.md §9).

An ``openai:`` model is counted with its tiktoken encoding (``tiktoken.encoding_name_for_model``) when
the encoding file is already on this machine: tiktoken downloads it on first use, and a dry run
never touches the network, so the file must be in tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, else
``$DATA_GYM_CACHE_DIR``, else ``<temp dir>/data-gym-cache``, named by the SHA-1 of its URL). Every
other model, and an ``openai:`` model whose encoding is not cached, is counted with the documented
**approximation** ``chars/4``: one token per 4 ASCII characters plus one per other character (CJK text
is about one token per character). Messages are counted as OpenAI's chat format counts them: 3
tokens per message, 1 more for a name, 3 to prime the reply; tools as the tokens of their JSON text.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

APPROXIMATION = "chars/4"
"""Name of the approximate counter (see the module doc)."""

PER_MESSAGE = 3
"""Tokens every chat message adds (OpenAI's chat format)."""
PER_NAME = 1
"""Tokens a message's ``name`` adds."""
REPLY_PRIMING = 3
"""Tokens that prime the assistant's reply."""

_ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def approximate_tokens(text: str) -> int:
    """:data:`APPROXIMATION`: ``ceil(ASCII characters / 4) + other characters`` (docs/trials.md §9)."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def cached_encoding_file(encoding: str) -> str | None:
    """Where tiktoken keeps encoding ``encoding`` (``o200k_base``, ``cl100k_base`` ...) once downloaded, when
    the file is there; ``None`` when it is not, or tiktoken's cache is switched off (``TIKTOKEN_CACHE_DIR=""``)."""
    folder = os.environ.get("TIKTOKEN_CACHE_DIR")
    if folder is None:
        folder = os.environ.get("DATA_GYM_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not folder:
        return None
    path = os.path.join(folder, hashlib.sha1(_ENCODING_URL.format(name=encoding).encode()).hexdigest())
    return path if os.path.isfile(path) else None


@dataclass(frozen=True)
class TokenCounter:
    """A text token counter and the name it is reported by.

    Attributes:
        name: ``tiktoken:<encoding>`` or :data:`APPROXIMATION`.
        text: ``text(str) -> tokens``.
    """

    name: str
    text: Callable[[str], int]

    def prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> int:
        """Prompt tokens of one request: every message's content, tool calls and name with the chat format's
        overhead, plus the tools' JSON text (docs/trials.md §9)."""
        total = REPLY_PRIMING
        for message in messages:
            total += PER_MESSAGE
            content = message.get("content")
            if content:
                total += self.text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                total += self.text(str(function.get("name") or "")) + self.text(str(function.get("arguments") or ""))
            if message.get("name"):
                total += PER_NAME + self.text(str(message["name"]))
        if tools:
            total += self.text(json.dumps(list(tools), ensure_ascii=False))
        return total


def token_counter(provider: str, model: str) -> TokenCounter:
    """The counter of a candidate's prompts (docs/trials.md §9): tiktoken for an ``openai`` model whose encoding
    is known and cached on this machine, else :data:`APPROXIMATION`. Never downloads anything.

    Args:
        provider: the candidate's provider (``openai``, ``langchain``, ``replay`` ...).
        model: the provider's model name (``gpt-4o-mini``).
    """
    if provider == "openai":
        try:
            import tiktoken

            encoding = tiktoken.encoding_name_for_model(model)
        except (ImportError, KeyError):
            encoding = None
        if encoding is not None and cached_encoding_file(encoding) is not None:
            try:
                coder = tiktoken.get_encoding(encoding)
            except Exception:  # noqa: BLE001 - a damaged cache file: fall back rather than download
                coder = None
            if coder is not None:
                return TokenCounter(f"tiktoken:{encoding}", lambda text: len(coder.encode(text, disallowed_special=())))
    return TokenCounter(APPROXIMATION, approximate_tokens)
