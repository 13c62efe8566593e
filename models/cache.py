"""The request cache of ``wtb eval --cache DIR`` and the trial a request belongs to (docs/trials.md §8).

A cache entry is one candidate reply, stored under the SHA-256 of everything that determines it
(:func:`request_key`): the candidate (spec, target, model, temperature, base URL, provider extras
such as a seed), the request's messages in a canonical form, its tools, the session and the
session-wide request index the run metadata carries (``replay:`` candidates answer by them), and
the **trial index**. So a resumed or repeated run makes no request it already paid for, and a reply
is never served to another trial: trials are independent calls by definition (docs/trials.md §1).

One file per key, ``DIR/<2 hex>/<64 hex>.json``, written atomically (a temporary file beside it,
fsync, rename): a run killed mid-write leaves at most a ``.tmp`` file, never a torn entry, and two
runs or sessions writing the same key at once each leave a complete entry (the last rename wins).
An entry that cannot be read is a miss. Nothing secret is hashed or stored: no API key, and the
base URL only inside the hash.

The trial index is a context variable set by the batch runner around each session-trial
(:func:`trial_scope`), read here and by the evaluation node (run metadata ``wtb_trial``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.models.reply import CandidateReply

TRIAL_KEY = "wtb_trial"
"""Run-metadata key of the trial index (1, 2, ...) of the request (docs/trials.md §1)."""

CACHE_FORMAT = 1
"""Version of the key payload and the entry layout; a change of either starts a new key space."""

_trial: contextvars.ContextVar[int | None] = contextvars.ContextVar("wtb_trial", default=None)
_cache: contextvars.ContextVar[RequestCache | None] = contextvars.ContextVar("wtb_request_cache", default=None)


@contextlib.contextmanager
def trial_scope(trial: int) -> Iterator[int]:
    """Mark the model requests made inside the block (and the tasks it starts) as trial ``trial``
    (docs/trials.md §1).

    Raises:
        ValueError: ``trial < 1``.
    """
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 1:
        raise ValueError(f"a trial index is a whole number >= 1, got {trial!r}")
    token = _trial.set(trial)
    try:
        yield trial
    finally:
        _trial.reset(token)


def current_trial() -> int | None:
    """The trial index of the enclosing :func:`trial_scope`, or ``None`` outside one (a single-trial run)."""
    return _trial.get()


@contextlib.contextmanager
def cache_scope(cache: RequestCache | None) -> Iterator[RequestCache | None]:
    """Serve the candidate requests made inside the block from ``cache`` (``None``: no cache) (docs/trials.md §8)."""
    token = _cache.set(cache)
    try:
        yield cache
    finally:
        _cache.reset(token)


def current_cache() -> RequestCache | None:
    """The :class:`RequestCache` of the enclosing :func:`cache_scope`, or ``None``."""
    return _cache.get()


def canonical_message(message: Any) -> dict[str, Any]:
    """A message as the cache key sees it: its role, content, tool calls (name, arguments, id) and tool call id,
    without the run-specific ids and metadata a LangChain message carries (docs/trials.md §8).

    Args:
        message: an OpenAI dict message, or a LangChain message (the OpenAI dict it was built from is used
            when it keeps one, ``wildtoolbench.models.messages.OPENAI_MESSAGE_KEY``).
    """
    from wildtoolbench.models.messages import OPENAI_MESSAGE_KEY, RAW_RESPONSE_KEY

    if isinstance(message, Mapping):
        return {k: message[k] for k in sorted(message) if k != "id"}
    extra = getattr(message, "additional_kwargs", None) or {}
    kept = extra.get(OPENAI_MESSAGE_KEY)
    if isinstance(kept, Mapping):
        return {k: kept[k] for k in sorted(kept) if k != "id"}
    made: dict[str, Any] = {"type": getattr(message, "type", type(message).__name__)}
    raw = extra.get(RAW_RESPONSE_KEY)
    if isinstance(raw, Mapping):
        made["raw"] = dict(raw)
        return made
    made["content"] = getattr(message, "content", None)
    calls = getattr(message, "tool_calls", None)
    if calls:
        made["tool_calls"] = [{"name": c.get("name"), "args": c.get("args"), "id": c.get("id")} for c in calls]
    for name in ("tool_call_id", "name"):
        value = getattr(message, name, None)
        if value is not None:
            made[name] = value
    return made


def request_key(
    candidate: Any,
    messages: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    metadata: Mapping[str, Any] | None,
    trial: int,
) -> str:
    """The cache key of one candidate request: 64 hex digits of SHA-256 (docs/trials.md §8).

    Args:
        candidate: the :class:`models.Candidate` (spec, target, model and settings are read; never the API key).
        messages: the request's messages (:func:`canonical_message` of each).
        tools: the session's tools (OpenAI function schemas).
        metadata: the request's run metadata: ``wtb_session_id`` and ``wtb_request_index`` are part of the key.
        trial: the trial index (1, 2, ...): requests of different trials never share a key.
    """
    from wildtoolbench.models.providers.replay import REQUEST_INDEX_KEY, SESSION_KEY

    settings = candidate.settings
    meta = metadata or {}
    payload = {
        "format": CACHE_FORMAT,
        "spec": candidate.spec,
        "target": candidate.target,
        "model": candidate.model,
        "temperature": settings.temperature,
        "base_url": settings.base_url,
        "extra": settings.extra,
        "session": meta.get(SESSION_KEY),
        "request_index": meta.get(REQUEST_INDEX_KEY),
        "trial": trial,
        "messages": [canonical_message(m) for m in messages],
        "tools": list(tools),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RequestCache:
    """Candidate replies on disk, one file per key (docs/trials.md §8; see the module doc).

    Attributes:
        root: the cache folder (created on the first write).
        hits / misses / writes / write_errors: counts of this process, for ``summary.json`` (a write that failed
            leaves the reply out of the cache and the run goes on).
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ValueError(f"--cache {self.root}: exists and is not a folder")
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.write_errors = 0
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        """The file of ``key``: ``root/<first 2 hex digits>/<key>.json``."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CandidateReply | None:
        """The reply stored under ``key`` (counted as a hit), else ``None`` (a miss); an unreadable entry is a miss."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
            reply = entry["reply"]
            found = CandidateReply(
                response=dict(reply["response"]),
                input_tokens=int(reply["input_tokens"]),
                output_tokens=int(reply["output_tokens"]),
                model=reply.get("model"),
                models=tuple(reply.get("models") or ()),
                cached=True,
            )
        except (OSError, ValueError, KeyError, TypeError):
            with self._lock:
                self.misses += 1
            return None
        with self._lock:
            self.hits += 1
        return found

    def put(self, key: str, reply: CandidateReply, *, trial: int, about: Mapping[str, Any] | None = None) -> None:
        """Store ``reply`` under ``key`` atomically (temporary file, fsync, rename).

        Args:
            key: :func:`request_key`.
            reply: the candidate's reply.
            trial: its trial index (kept in the entry for inspection).
            about: what the entry is for, kept for inspection (spec, session, request index; nothing secret).

        Raises:
            OSError: the folder or the file cannot be written (the message names it).
        """
        path = self.path(key)
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "trial": trial,
            **dict(about or {}),
            "reply": {
                "response": reply.response,
                "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens,
                "model": reply.model,
                "models": list(reply.models),
            },
        }
        data = json.dumps(entry, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        with self._lock:
            self.writes += 1

    def note_write_error(self) -> None:
        """Count a :meth:`put` that failed (the caller goes on without caching the reply)."""
        with self._lock:
            self.write_errors += 1

    def counts(self) -> dict[str, Any]:
        """``{"dir", "hits", "misses", "writes"}`` of this process (``summary.json``'s ``cache``), plus
        ``"write_errors"`` when a write failed."""
        with self._lock:
            found = {"dir": str(self.root), "hits": self.hits, "misses": self.misses, "writes": self.writes}
            if self.write_errors:
                found["write_errors"] = self.write_errors
            return found
