"""The conversation a model request continues, for providers that keep a prompt cache per conversation.

A caller that sends a run of requests sharing a growing prompt prefix (the steps of one evaluation
session, the requests of one generation role) names that run with :func:`continuing`; a provider
that keeps the model state of recent prompts in places it can choose between reads
:func:`current_prefix_key` and sends requests of the same key to the same place. The local
llama.cpp server does: each key is pinned to one of its slots (:mod:`wildtoolbench.models.llama.slots`), so a
request only pays for the tokens its slot has not seen (docs/guides/performance.md, "The local
model"). Other providers ignore it; nothing about a request's content depends on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_PREFIX_KEY: ContextVar[str | None] = ContextVar("wtb_prompt_prefix_key", default=None)


def current_prefix_key() -> str | None:
    """The key set by the innermost :func:`continuing` around this call, else ``None`` (no conversation named)."""
    return _PREFIX_KEY.get()


@contextmanager
def continuing(key: str | None) -> Iterator[None]:
    """Within the block, model requests continue the conversation ``key`` (e.g. ``"session:wild_tool_bench_3"``
    or ``"role:planner"``); ``None`` clears it. Nested blocks override, leaving restores the outer key.

    The key follows the context (tasks created inside the block inherit it); see the module docstring
    for who reads it (docs/guides/performance.md, "The local model").
    """
    token = _PREFIX_KEY.set(key)
    try:
        yield
    finally:
        _PREFIX_KEY.reset(token)
