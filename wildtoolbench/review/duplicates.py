"""The duplicate index of a review database: ``duplicate_session`` findings kept current one edit at a time
(docs/review.md §3, §5.3; the rule is docs/audit.md §4).

Each session's exact key (a hash of its normalised user messages and tool names) and its shingles (as
56-bit hashes) are kept in two tables, ``dup_keys`` and ``dup_shingles`` (indexed by shingle). An edit then
re-audits only what it can change: the edited session and the sessions that were or are its duplicates.
Their partners are found by SQL (equal exact keys; shingle overlaps counted per session, Jaccard
``overlap / (|a| + |b| - overlap)`` against the threshold), so an edit costs a few indexed look-ups, not a
pass over every session. The findings are those :func:`wildtoolbench.bench.audit.duplicate_findings`
gives over the whole dataset, in the same order (by the partner's position).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from wildtoolbench.bench.audit import DUPLICATE_SESSION, SEVERITY_ERROR, SEVERITY_WARNING, Finding
from wildtoolbench.bench.audit_duplicates import NEAR_DUPLICATE_THRESHOLD, exact_key, shingles
from wildtoolbench.bench.schema import fields_for

TABLES = (
    "CREATE TABLE IF NOT EXISTS dup_keys (pos INTEGER PRIMARY KEY, exact TEXT NOT NULL, size INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dup_shingles (shingle INTEGER NOT NULL, pos INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS dup_shingles_by_shingle ON dup_shingles (shingle, pos)",
    "CREATE INDEX IF NOT EXISTS dup_shingles_by_pos ON dup_shingles (pos)",
    "CREATE INDEX IF NOT EXISTS dup_keys_by_exact ON dup_keys (exact)",
)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=7).digest(), "big")


def duplicate_signature(session: Mapping[str, Any], language: str) -> tuple[str, list[int]]:
    """``(exact key hash, shingle hashes)`` of a session on ``language``'s side (docs/audit.md §4)."""
    side = fields_for(language)
    key = json.dumps(exact_key(session, side.tasks, side.tools), ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest(), sorted(
        {_hash(s) for s in shingles(session, side.tasks, side.tools)}
    )


def create_tables(db: sqlite3.Connection) -> None:
    """Make the index's tables (idempotent)."""
    for statement in TABLES:
        db.execute(statement)


def index_duplicate_keys(db: sqlite3.Connection, items: Iterable[tuple[int, str, list[int]]]) -> None:
    """Put ``(pos, exact key hash, shingle hashes)`` of sessions into the index, replacing what it held for them."""
    for pos, exact, hashes in items:
        db.execute("DELETE FROM dup_shingles WHERE pos = ?", (pos,))
        db.execute("INSERT OR REPLACE INTO dup_keys (pos, exact, size) VALUES (?, ?, ?)", (pos, exact, len(hashes)))
        db.executemany("INSERT INTO dup_shingles (shingle, pos) VALUES (?, ?)", [(h, pos) for h in hashes])


def partners(
    db: sqlite3.Connection, pos: int, threshold: float = NEAR_DUPLICATE_THRESHOLD
) -> dict[int, tuple[float, bool]]:
    """The duplicates of session ``pos`` in the index: ``{other pos: (similarity, exact)}``."""
    own = db.execute("SELECT exact, size FROM dup_keys WHERE pos = ?", (pos,)).fetchone()
    if own is None:
        return {}
    exact, size = own[0], own[1]
    overlaps = {
        other: (count, other_size)
        for other, count, other_size in db.execute(
            "SELECT s.pos, COUNT(*), k.size FROM dup_shingles s JOIN dup_keys k ON k.pos = s.pos "
            "WHERE s.shingle IN (SELECT shingle FROM dup_shingles WHERE pos = ?) AND s.pos != ? GROUP BY s.pos",
            (pos, pos),
        )
    }
    found: dict[int, tuple[float, bool]] = {}
    for other, (common, other_size) in overlaps.items():
        similarity = common / (size + other_size - common)
        if similarity >= threshold:
            found[other] = (similarity, False)
    for other, other_size in db.execute("SELECT pos, size FROM dup_keys WHERE exact = ? AND pos != ?", (exact, pos)):
        common = overlaps.get(other, (0, other_size))[0]
        union = size + other_size - common
        found[other] = (common / union if union else 1.0, True)
    return found


def findings_for(db: sqlite3.Connection, pos: int, threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[dict[str, Any]]:
    """The ``duplicate_session`` findings of session ``pos`` (as the review database keeps them), by the
    partner's position, worded as :func:`wildtoolbench.bench.audit.duplicate_findings` words them."""
    from wildtoolbench.review.checks import finding_json

    found = partners(db, pos, threshold)
    if not found:
        return []
    ids = {
        row[0]: row[1]
        for row in db.execute(
            f"SELECT pos, sid FROM sessions WHERE pos IN ({','.join('?' * (len(found) + 1))})", [pos, *found]
        )
    }
    this = ids.get(pos)
    out = []
    for other in sorted(found):
        similarity, exact = found[other]
        message = (
            f"same user messages and tools as {ids.get(other)}"
            if exact
            else f"near duplicate of {ids.get(other)} (similarity {similarity:.2f} >= {threshold})"
        )
        correction = ({"exclude": True} if pos > other else {}) if exact else None
        severity = SEVERITY_ERROR if exact else SEVERITY_WARNING
        out.append(finding_json(Finding(this, None, DUPLICATE_SESSION, severity, message, correction=correction)))
    return out


def refresh_after_edit(db: sqlite3.Connection, pos: int, edited: Mapping[str, Any], language: str) -> dict[int, list]:
    """Re-index the edited session ``pos`` and return the duplicate findings of every session the edit can
    change: ``pos`` itself and the sessions that were, or now are, its duplicates (docs/review.md §5.3).
    Before the first full audit has built the index, nothing (that audit computes them all)."""
    state = db.execute("SELECT value FROM meta WHERE key = 'audit'").fetchone()
    if state is not None and state[0] != "done":
        return {}
    before = set(partners(db, pos))
    index_duplicate_keys(db, [(pos, *duplicate_signature(edited, language))])
    after = set(partners(db, pos))
    return {affected: findings_for(db, affected) for affected in {pos} | before | after}


__all__ = [
    "create_tables",
    "duplicate_signature",
    "findings_for",
    "index_duplicate_keys",
    "partners",
    "refresh_after_edit",
]
