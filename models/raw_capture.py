"""The raw assistant messages of OpenAI-compatible chat completions, as the server sent them (docs/evaluation.md §8.5).

A LangChain chat model hands back an ``AIMessage`` that has lost part of what the server sent: a
``content`` of ``null`` becomes ``""``, the order of valid and malformed tool calls is split in two
lists, and ``arguments`` strings are parsed. The result record keeps the raw response
(docs/evaluation.md §5.3), so for a model the harness does not build itself (the model inside an
agent) the raw message is read where it passes: the HTTP response.

:func:`capturing_replies` opens a scope (a context variable, so it follows the agent's run into its tasks
and worker threads) in which every non-streamed JSON response of a ``.../chat/completions`` request
made through ``httpx`` or ``httpx2`` (the clients of the openai SDK, hence of ``langchain-openai``) is
noted by its response ``id``: :meth:`RawReplies.take` gives the ``message`` of its first choice. A
streamed response (``text/event-stream``) is read as the client reads it, and its message assembled from
the chunks as the server sent them (:class:`StreamAssembly`: ``arguments`` strings as sent, ``content``
``null`` when no content came), so a streaming model is recorded as a non-streaming one. Their
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
        self._streams: OrderedDict[str, dict[str, Any]] = OrderedDict()
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
            self.keep(data["id"], message)

    def keep(self, response_id: str, message: dict[str, Any], *, streamed: bool = False) -> None:
        """Keep ``message`` as the raw message of the response ``response_id`` (``streamed``: assembled from a
        stream, whose reply carries no response id: :meth:`take` finds it by what it holds)."""
        with self._lock:
            kept = self._streams if streamed else self._by_id
            kept[response_id] = message
            while len(kept) > KEPT:
                kept.popitem(last=False)

    def take(self, response_id: Any, reply: Any = None) -> dict[str, Any] | None:
        """The raw message of the response ``response_id`` (removed from the scope), or ``None``.

        A streamed reply carries no response id (LangChain names it ``lc_run--...``): given the ``reply``
        (an ``AIMessage``), the newest streamed message whose text and tool calls (ids and names, in any
        order: LangChain's merged chunks may have parsed a truncated ``arguments`` string) are the reply's
        is taken instead.
        """
        with self._lock:
            if isinstance(response_id, str) and response_id in self._by_id:
                return self._by_id.pop(response_id)
            if reply is None:
                return None
            wanted = _fingerprint_of_reply(reply)
            for key in reversed(self._streams):
                if _fingerprint_of_raw(self._streams[key]) == wanted:
                    return self._streams.pop(key)
        return None


def _fingerprint_of_raw(message: dict[str, Any]) -> tuple[str, list[tuple[Any, Any]]]:
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        calls.append((call.get("id") if isinstance(call, dict) else None, (function or {}).get("name")))
    return text, sorted(calls, key=repr)


def _fingerprint_of_reply(reply: Any) -> tuple[str, list[tuple[Any, Any]]]:
    content = getattr(reply, "content", "")
    text = content if isinstance(content, str) else ""
    calls = [
        (c.get("id"), c.get("name"))
        for c in [*getattr(reply, "tool_calls", []), *getattr(reply, "invalid_tool_calls", [])]
    ]
    return text, sorted(calls, key=repr)


_scope: contextvars.ContextVar[RawReplies | None] = contextvars.ContextVar("wtb_raw_replies", default=None)
_installed = False
_install_lock = threading.Lock()


def _wanted(request: Any, response: Any) -> bool:
    return request.url.path.endswith("/chat/completions") and "json" in response.headers.get("content-type", "")


def _streamed(request: Any, response: Any) -> bool:
    return request.url.path.endswith("/chat/completions") and "event-stream" in response.headers.get("content-type", "")


class StreamAssembly:
    """The raw assistant message of a streamed chat completion, assembled from its chunks as the server sent
    them: ``content`` and ``reasoning_content`` the concatenation of their deltas (``null`` when none
    came), each tool call (by its ``index``) its first ``id``, ``type`` and ``function.name``, and its
    ``function.arguments`` the concatenation of every piece, untouched (docs/evaluation.md §8.5).

    Fed the response's bytes as they arrive (:meth:`feed`); the message is kept in ``sink`` under the
    response id at ``data: [DONE]`` or when the stream closes (:meth:`finish`).
    """

    def __init__(self, sink: RawReplies):
        self.sink = sink
        self.response_id: str | None = None
        self.message: dict[str, Any] = {"role": "assistant", "content": None}
        self.calls: dict[int, dict[str, Any]] = {}
        self._buffer = b""
        self._done = False

    def feed(self, data: bytes) -> None:
        """Read the complete ``data:`` lines of ``data`` (the rest waits for the next bytes)."""
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            text = line.strip()
            if not text.startswith(b"data:"):
                continue
            payload = text[5:].strip()
            if payload == b"[DONE]":
                self.finish()
                continue
            try:
                chunk = json.loads(payload)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(chunk, dict):
                self._chunk(chunk)

    def _chunk(self, chunk: dict[str, Any]) -> None:
        if self.response_id is None and isinstance(chunk.get("id"), str):
            self.response_id = chunk["id"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0 or not isinstance(choice.get("delta"), dict):
                continue
            delta = choice["delta"]
            for key in ("content", "reasoning_content"):
                if isinstance(delta.get(key), str):
                    self.message[key] = (self.message.get(key) or "") + delta[key]
            if isinstance(delta.get("tool_calls"), list):
                self.message.setdefault("tool_calls", [])
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    self._call(call)

    def _call(self, delta: dict[str, Any]) -> None:
        index = delta.get("index") if isinstance(delta.get("index"), int) else len(self.calls)
        call = self.calls.setdefault(index, {})
        for key, value in delta.items():
            if key == "index":
                continue
            if key != "function" or not isinstance(value, dict):
                call.setdefault(key, value)
                continue
            function = call.setdefault("function", {})
            if not isinstance(function, dict):
                continue
            for name, part in value.items():
                if name == "arguments" and isinstance(part, str) and isinstance(function.get(name), str):
                    function[name] += part
                elif function.get(name) is None:
                    function[name] = part

    def finish(self) -> None:
        """Keep the assembled message (once) under the response id, when the stream named one."""
        if self._done or self.response_id is None:
            return
        self._done = True
        if self.calls or "tool_calls" in self.message:  # an empty list sent as it is stays one
            self.message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        self.sink.keep(self.response_id, self.message, streamed=True)


def _tee(module: Any, response: Any, sink: RawReplies) -> None:
    """Make ``response``'s body stream feed a :class:`StreamAssembly` as the client reads it."""
    assembly = StreamAssembly(sink)
    inner = response.stream
    if isinstance(inner, module.AsyncByteStream):

        class AsyncTee(module.AsyncByteStream):
            async def __aiter__(self) -> Any:
                async for part in inner:
                    assembly.feed(part)
                    yield part
                assembly.finish()

            async def aclose(self) -> None:
                assembly.finish()
                await inner.aclose()

        response.stream = AsyncTee()
    elif isinstance(inner, module.SyncByteStream):

        class SyncTee(module.SyncByteStream):
            def __iter__(self) -> Any:
                for part in inner:
                    assembly.feed(part)
                    yield part
                assembly.finish()

            def close(self) -> None:
                assembly.finish()
                inner.close()

        response.stream = SyncTee()


def _wrap(module: Any) -> None:
    """Wrap ``module.Client.send`` and ``module.AsyncClient.send`` (``httpx`` or its fork ``httpx2``)."""
    sync_send, async_send = module.Client.send, module.AsyncClient.send

    def send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        response = sync_send(self, request, *args, **kwargs)
        sink = _scope.get()
        if sink is not None and not kwargs.get("stream") and _wanted(request, response):
            sink.note(response.content)
        elif sink is not None and kwargs.get("stream") and _streamed(request, response):
            _tee(module, response, sink)
        return response

    async def asend(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        response = await async_send(self, request, *args, **kwargs)
        sink = _scope.get()
        if sink is not None and not kwargs.get("stream") and _wanted(request, response):
            sink.note(response.content)
        elif sink is not None and kwargs.get("stream") and _streamed(request, response):
            _tee(module, response, sink)
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
