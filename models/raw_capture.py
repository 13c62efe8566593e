"""The raw assistant messages of OpenAI-compatible chat completions, as the server sent them (docs/evaluation.md §8.5).

A LangChain chat model hands back an ``AIMessage`` that has lost part of what the server sent: a
``content`` of ``null`` becomes ``""``, the order of valid and malformed tool calls is split in two
lists, and ``arguments`` strings are parsed. The result record keeps the raw response
(docs/evaluation.md §5.3), so for a model the harness does not build itself (the model inside an
agent) the raw message is read where it passes: the HTTP response.

:func:`capturing_replies` opens a scope (a context variable, so it follows the agent's run into its tasks
and worker threads) in which every non-streamed JSON response of a ``.../chat/completions`` request
made through ``httpx`` or ``httpx2`` (the clients of the openai SDK, hence of ``langchain-openai``) is
noted by its response ``id``: :meth:`RawReplies.take` gives the ``message`` of its first choice. Their
``Client.send`` / ``AsyncClient.send`` are wrapped once per process, the first time a scope opens;
outside a scope the wrappers only call the original. Nothing is changed in any request or response.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

KEPT = 64
"""Raw messages a scope keeps at most (the oldest are dropped)."""

CLIENT_MODULES = ("httpx", "httpx2")
"""HTTP client packages whose ``send`` is watched (the openai SDK 3 uses ``httpx2``, a fork of ``httpx``)."""


class RawReplies:
    """The raw assistant messages seen in one scope, by response id."""

    def __init__(self) -> None:
        self._by_id: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, body: bytes) -> None:
        """Keep the first choice's ``message`` of a chat completion body (anything else is ignored)."""
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        message = choices[0].get("message")
        if isinstance(message, dict):
            with self._lock:
                self._by_id[data["id"]] = message
                while len(self._by_id) > KEPT:
                    self._by_id.popitem(last=False)

    def take(self, response_id: Any) -> dict[str, Any] | None:
        """The raw message of the response ``response_id`` (removed from the scope), or ``None``."""
        if not isinstance(response_id, str):
            return None
        with self._lock:
            return self._by_id.pop(response_id, None)


_scope: contextvars.ContextVar[RawReplies | None] = contextvars.ContextVar("wtb_raw_replies", default=None)
_installed = False
_install_lock = threading.Lock()


def _wanted(request: Any, response: Any) -> bool:
    return request.url.path.endswith("/chat/completions") and "json" in response.headers.get("content-type", "")


def _wrap(module: Any) -> None:
    """Wrap ``module.Client.send`` and ``module.AsyncClient.send`` (``httpx`` or its fork ``httpx2``)."""
    sync_send, async_send = module.Client.send, module.AsyncClient.send

    def send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        response = sync_send(self, request, *args, **kwargs)
        sink = _scope.get()
        if sink is not None and not kwargs.get("stream") and _wanted(request, response):
            sink.note(response.content)
        return response

    async def asend(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        response = await async_send(self, request, *args, **kwargs)
        sink = _scope.get()
        if sink is not None and not kwargs.get("stream") and _wanted(request, response):
            sink.note(response.content)
        return response

    module.Client.send = send
    module.AsyncClient.send = asend


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        for name in CLIENT_MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            _wrap(module)
        _installed = True


@contextlib.contextmanager
def capturing_replies(sink: RawReplies) -> Iterator[RawReplies]:
    """Note raw chat completion messages into ``sink`` for the code run inside (and tasks started there)."""
    _install()
    token = _scope.set(sink)
    try:
        yield sink
    finally:
        _scope.reset(token)


def raw_response(message: dict[str, Any]) -> dict[str, Any]:
    """``{"content", "tool_calls", "reasoning_content"}`` of a raw assistant message (the record's shape, §5.3)."""
    return {
        "content": message.get("content"),
        "tool_calls": message.get("tool_calls"),
        "reasoning_content": message.get("reasoning_content"),
    }
