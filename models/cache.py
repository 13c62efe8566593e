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
Each entry names its key and carries an HMAC under the cache's own secret; it is served only when
both match and every field is valid (:mod:`wildtoolbench.models.cache_entries`), else it is a
reported miss. No API key is hashed; replies are stored redacted as the records are; the base URL
is only inside the hash.

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.models.reply import CandidateReply

TRIAL_KEY = "wtb_trial"
"""Run-metadata key of the trial index (1, 2, ...) of the request (docs/trials.md §1)."""

CACHE_FORMAT = 2
"""Version of the key payload and the entry layout; a change of either starts a new key space (2: sealed
entries, ``wildtoolbench.models.cache_entries``)."""

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
    """Candidate replies on disk, one sealed file per key, verified before they are served (docs/trials.md §8).

    Opening the cache checks its folder (:func:`wildtoolbench.models.cache_entries.open_folder`: another user's
    folder, or one every user can write, is refused unless ``trust``; a symbolic link is resolved and
    reported in :meth:`counts`) and reads or makes its secret. An entry is served only when it is a regular
    file that names its key, whose HMAC matches under the secret and whose every field is that of a reply
    (:func:`wildtoolbench.models.cache_entries.unseal`); any other entry is a **rejected** miss: counted, and
    reported by ``warn`` with the entry's path and the rule id (the first :data:`WARNED` of them; all are
    counted), and the reply is asked again and stored over it. Replies are stored redacted exactly as the
    result records are (:func:`wildtoolbench.models.redaction.redact_record`) and in their own key order.

    Args:
        root: the cache folder (made, mode 0700, when missing).
        trust: ``--cache-trust``: accept a folder and a secret of another user, or writable by every user.
        warn: called with one line per rejected entry (default: written on ``sys.stderr``).

    Attributes:
        root: the resolved cache folder.
        given: the folder as given (differs from ``root`` when it went through a symbolic link).
        hits / misses / writes / write_errors / rejected: counts of this process, for ``summary.json``
            (``rejected`` entries are counted in ``misses`` too).

    Raises:
        wildtoolbench.models.cache_entries.CacheFolderError: (a ``ConfigurationError``, exit 2) the folder
            is not a folder, cannot be made, is not trusted, or its secret cannot be used.
    """

    WARNED = 20
    """Rejected entries named one by one on the terminal; the others are only counted."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        trust: bool = False,
        warn: Callable[[str], None] | None = None,
    ):
        from wildtoolbench.models.cache_entries import load_secret, open_folder

        folder = open_folder(root, trust=trust)
        self.root = folder.path
        self.given = folder.given
        self.link = folder.link
        self._secret = load_secret(folder.path, trust=trust)
        self._warn = warn or _warn_on_stderr
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.write_errors = 0
        self.rejected = 0
        self.rejected_entries: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        """The file of ``key``: ``root/<first 2 hex digits>/<key>.json``."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CandidateReply | None:
        """The verified reply stored under ``key`` (a hit), else ``None``: no entry (a miss) or an entry that
        fails a check of :data:`wildtoolbench.models.cache_entries.ENTRY_RULES` (a rejected miss, reported)."""
        from wildtoolbench.models.cache_entries import EntryRejected, read_entry_file, unseal

        path = self.path(key)
        try:
            data = read_entry_file(path)
            entry = None if data is None else unseal(self._secret, key, data)
        except EntryRejected as exc:
            self._reject(path, exc)
            return None
        if entry is None:
            with self._lock:
                self.misses += 1
            return None
        reply = entry["reply"]
        found = CandidateReply(
            response=reply["response"],
            input_tokens=reply["input_tokens"],
            output_tokens=reply["output_tokens"],
            model=reply["model"],
            models=tuple(reply["models"]),
            cached=True,
        )
        with self._lock:
            self.hits += 1
        return found

    def _reject(self, path: Path, exc: Any) -> None:
        with self._lock:
            self.misses += 1
            self.rejected += 1
            named = len(self.rejected_entries) < self.WARNED
            if named:
                self.rejected_entries.append({"entry": str(path), "rule": exc.rule})
        if named:
            self._warn(f"wtb: warning: cache entry {path} not served ({exc}); the request is made again")

    def put(self, key: str, reply: CandidateReply, *, trial: int, about: Mapping[str, Any] | None = None) -> None:
        """Store ``reply`` under ``key``, redacted as the records are and sealed, atomically (temporary file,
        fsync, rename).

        Args:
            key: :func:`request_key`.
            reply: the candidate's reply.
            trial: its trial index (kept in the entry for inspection).
            about: ``spec``, ``session`` and ``request_index`` of the request, kept for inspection.

        Raises:
            OSError: the folder or the file cannot be written (the message names it), or the reply is not
                one an entry can hold (not JSON, token counts out of range): it is not stored.
        """
        from wildtoolbench.models.cache_entries import EntryRejected, seal
        from wildtoolbench.models.redaction import redact_record

        about = dict(about or {})
        entry = {
            "trial": trial,
            "spec": about.get("spec"),
            "session": about.get("session"),
            "request_index": about.get("request_index"),
            "reply": redact_record(
                {
                    "response": reply.response,
                    "input_tokens": reply.input_tokens,
                    "output_tokens": reply.output_tokens,
                    "model": reply.model,
                    "models": list(reply.models),
                }
            ),
        }
        path = self.path(key)
        try:
            data = seal(self._secret, key, entry)
        except (EntryRejected, ValueError, TypeError) as exc:
            raise OSError(f"{path}: the reply cannot be cached: {exc}") from exc
        path.parent.mkdir(mode=0o700, exist_ok=True)
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
        """``{"dir", "hits", "misses", "writes", "rejected"}`` of this process (``summary.json``'s ``cache``);
        plus ``"write_errors"`` when a write failed, ``"rejected_entries"`` (path and rule id of the first
        :data:`WARNED`) when an entry was rejected, and ``"link"`` (the folder as given) when it is a symbolic
        link to ``dir``."""
        with self._lock:
            found: dict[str, Any] = {
                "dir": str(self.root),
                "hits": self.hits,
                "misses": self.misses,
                "writes": self.writes,
                "rejected": self.rejected,
            }
            if self.write_errors:
                found["write_errors"] = self.write_errors
            if self.rejected_entries:
                found["rejected_entries"] = [dict(e) for e in self.rejected_entries]
            if self.link:
                found["link"] = str(self.given)
            return found


def _warn_on_stderr(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)
