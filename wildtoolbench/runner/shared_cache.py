"""The request cache of ``wtb eval --cache DIR`` shared by worker processes and carried to a server (docs/trials.md §8.1).

:class:`IndexedCache` is the :class:`wildtoolbench.models.cache.RequestCache` of one run's candidate that also
keeps, for every session-trial, the keys of the replies stored for it: ``DIR/index/<2 hex>/<64 hex>.keys``, one
key per line, named by the SHA-256 of the candidate's identity (what the request key hashes of it: spec,
target, model, temperature, base URL, provider extras), the session id and the trial. That index is what
lets a client that does not run the model (``--server``) find the entries of a session-trial before it
runs: it sends them with the run (:meth:`IndexedCache.entries_for`) and stores what the server paid for
(:meth:`IndexedCache.store_entries`). The entries themselves stay where ``RequestCache`` puts them.

- Worker processes (``--workers N``) each open the same folder: an entry is one file written atomically,
  so processes never tear one another's entries; each index line is one ``O_APPEND`` write (a torn or
  foreign line is skipped when read).
- A server never sees the folder: a replaced or restarted server is served from the client's entries.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wildtoolbench.models.cache import RequestCache
from wildtoolbench.nodes.evaluation.carried_cache import KEY, entry_from_reply, reply_from_entry

INDEX_FOLDER = "index"
"""Sub-folder of the cache folder that holds the session-trial index."""

_LINE = re.compile(r"^[0-9a-f]{64}$")


def key_identity(candidate: Any) -> dict[str, Any]:
    """What the request key hashes of a candidate (``wildtoolbench.models.cache.request_key``): spec, target,
    model, temperature, base URL, provider extras. Never the API key."""
    settings = candidate.settings
    return {
        "spec": candidate.spec,
        "target": candidate.target,
        "model": candidate.model,
        "temperature": settings.temperature,
        "base_url": settings.base_url,
        "extra": settings.extra,
    }


class IndexedCache(RequestCache):
    """A :class:`RequestCache` for the candidate ``candidate`` that also indexes its entries by session-trial
    (module doc).

    Args:
        root: the cache folder.
        candidate: the run's :class:`models.Candidate`.

    Raises:
        ValueError: ``root`` exists and is not a folder.
    """

    def __init__(self, root: str | os.PathLike[str], candidate: Any, *, trust: bool = False):
        super().__init__(root, trust=trust)
        self.trust = trust  # worker processes open the folder as this one did
        self._identity = json.dumps(
            key_identity(candidate), sort_keys=True, default=repr, separators=(",", ":"), ensure_ascii=False
        )
        self._index_lock = threading.Lock()

    def index_path(self, session_id: str, trial: int) -> Path:
        """The index file of ``session_id``'s trial ``trial``."""
        text = json.dumps([self._identity, session_id, int(trial)], ensure_ascii=False)
        name = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return self.root / INDEX_FOLDER / name[:2] / f"{name}.keys"

    def put(self, key: str, reply: Any, *, trial: int, about: Mapping[str, Any] | None = None) -> None:
        """Store ``reply`` (:meth:`RequestCache.put`), then add ``key`` to its session-trial's index.

        Raises:
            OSError: the entry or the index cannot be written.
        """
        super().put(key, reply, trial=trial, about=about)
        session = (about or {}).get("session")
        if isinstance(session, str):
            path = self.index_path(session, trial)
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._index_lock:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, (key + "\n").encode("ascii"))
                finally:
                    os.close(fd)

    def keys_for(self, session_id: str, trial: int) -> list[str]:
        """The keys indexed for ``session_id``'s trial ``trial``, in order, each once (a torn line is skipped)."""
        try:
            text = self.index_path(session_id, trial).read_text(encoding="ascii", errors="replace")
        except OSError:
            return []
        return list(dict.fromkeys(line for line in text.splitlines() if _LINE.match(line)))

    def entries_for(self, session_id: str, trial: int) -> dict[str, Any]:
        """``{key: entry}`` of the verified entries indexed for ``session_id``'s trial ``trial`` (what a client
        carries into a server run, docs/trials.md §8.1); an entry that fails a check is left out (and reported
        as :meth:`RequestCache.get` reports it). Reading them counts no hit: the server's use of them does.
        """
        found: dict[str, Any] = {}
        for key in self.keys_for(session_id, trial):
            reply = self.get(key)
            if reply is not None:
                with self._lock:
                    self.hits -= 1
                about = {"session": session_id}
                found[key] = entry_from_reply(dataclasses.replace(reply, cached=False), trial, about)
        return found

    def store_entries(self, entries: Any, session_id: str, trial: int) -> int:
        """Store the replies a server run paid for (``{key: entry}`` from its output; untrusted: a malformed key
        or entry, or one of another session or trial, is skipped). A write that fails is counted
        (:meth:`note_write_error`) and skipped.

        Returns:
            How many entries were stored.
        """
        stored = 0
        for key, entry in entries.items() if isinstance(entries, Mapping) else ():
            reply = reply_from_entry(entry) if isinstance(key, str) and KEY.match(key) else None
            if reply is None or entry.get("session") != session_id or entry.get("trial") != trial:
                continue
            about = {"spec": entry.get("spec"), "session": session_id, "request_index": entry.get("request_index")}
            plain = dataclasses.replace(reply, cached=False)
            try:
                self.put(key, plain, trial=trial, about=about)
            except OSError:
                self.note_write_error()
                continue
            stored += 1
        return stored

    def count_remote(self, hits: int, misses: int) -> None:
        """Count the hits and misses of a server run (served from, or missing in, the entries carried to it)."""
        with self._lock:
            self.hits += hits
            self.misses += misses

    def add_counts(self, counts: Mapping[str, Any]) -> None:
        """Add the counts of another process that used this folder (a worker process's :meth:`counts`)."""
        with self._lock:
            for name in ("hits", "misses", "writes", "write_errors", "rejected"):
                value = counts.get(name, 0)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    setattr(self, name, getattr(self, name) + value)
