"""The review database: one SQLite file holding the sessions under review, every edit and every verdict
(docs/review.md §3).

The file is opened in WAL mode with full synchronisation: every write is one transaction
(``BEGIN IMMEDIATE``), committed before the server answers, so a reload or a restart shows everything
that was answered as saved. Each session has a version, starting at 1 and raised by every edit; an
edit or a verdict names the version it was made on and is refused when the session has moved on
(:class:`Stale`), so two reviewers never overwrite each other's work unseen (docs/review.md §6).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wildtoolbench.review.records import (
    MAX_REASON_CHARS,
    VERDICTS,
    SessionRow,
    Stale,
    StoreError,
    Verdict,
    check_reviewer,
    now,
)

SCHEMA_VERSION = "1"
"""The layout of the database's tables; a file of another layout is refused (docs/review.md §3)."""

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    pos INTEGER PRIMARY KEY,
    sid TEXT,
    line INTEGER,
    original TEXT NOT NULL,
    current TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT,
    updated_by TEXT,
    findings TEXT NOT NULL DEFAULT '[]',
    duplicates TEXT NOT NULL DEFAULT '[]',
    valid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    pos INTEGER NOT NULL,
    task INTEGER NOT NULL,
    reviewer TEXT NOT NULL,
    verdict TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (pos, task, reviewer)
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    pos INTEGER NOT NULL,
    sid TEXT,
    task INTEGER,
    action TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    path TEXT,
    old TEXT,
    new TEXT,
    version INTEGER NOT NULL
);
"""


def _row(record: sqlite3.Row) -> SessionRow:
    return SessionRow(
        pos=record["pos"],
        sid=record["sid"],
        line=record["line"],
        original=json.loads(record["original"]),
        current=json.loads(record["current"]),
        version=record["version"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
        findings=json.loads(record["findings"]) + json.loads(record["duplicates"]),
        valid=bool(record["valid"]),
    )


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class ReviewStore:
    """The review database file (docs/review.md §3). Each call opens its own connection, so the store
    may be used from the server's worker threads.

    Args:
        path: the SQLite file (created by :meth:`create`).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    @contextmanager
    def connect(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection in WAL mode with full synchronisation; ``write=True`` runs the block as one
        ``BEGIN IMMEDIATE`` transaction, committed at its end and rolled back on an exception."""
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA busy_timeout=30000")
            if not write:
                yield connection
                return
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        finally:
            connection.close()

    # ------------------------------------------------------------------ creation and meta

    def create(
        self,
        *,
        dataset: str,
        digest: str,
        language: str,
        tasks: int,
        sessions: Sequence[Mapping[str, Any]],
        lines: Sequence[int],
        valid: Sequence[bool],
        findings: Sequence[Sequence[Mapping[str, Any]]],
    ) -> None:
        """Fill a new database with the dataset's sessions, their validity and their findings (docs/review.md §3).

        Raises:
            StoreError: the database already holds sessions.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect(write=True) as db:
            for statement in _TABLES.strip().split(";\n"):
                if statement.strip():
                    db.execute(statement)
            if db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]:
                raise StoreError(f"{self.path} already holds sessions")
            meta = {
                "schema": SCHEMA_VERSION,
                "dataset": dataset,
                "digest": digest,
                "language": language,
                "tasks": str(tasks),
                "created": now(),
            }
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(meta.items()))
            for pos, (session, line, ok, found) in enumerate(zip(sessions, lines, valid, findings)):
                sid = session.get("id") if isinstance(session.get("id"), str) else None
                text = _dump(session)
                own = [f for f in found if f.get("kind") != "duplicate_session"]
                dupes = [f for f in found if f.get("kind") == "duplicate_session"]
                db.execute(
                    "INSERT INTO sessions (pos, sid, line, original, current, findings, duplicates, valid) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (pos, sid, line, text, text, _dump(own), _dump(dupes), int(ok)),
                )

    def create_streaming(
        self, *, dataset: str, digest: str, language: str, rows: Iterator[tuple[Mapping[str, Any], int]]
    ) -> int:
        """Fill a new database with ``(session, line)`` rows as they come, findings empty and every session
        valid until audited (``wildtoolbench.review.audit_job``, docs/review.md §3). Returns the sessions stored.

        Raises:
            StoreError: the database already holds sessions.
        """
        from wildtoolbench.review.duplicates import create_tables

        self.path.parent.mkdir(parents=True, exist_ok=True)
        count = 0
        with self.connect(write=True) as db:
            for statement in _TABLES.strip().split(";\n"):
                if statement.strip():
                    db.execute(statement)
            create_tables(db)
            if db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]:
                raise StoreError(f"{self.path} already holds sessions")
            meta = {"schema": SCHEMA_VERSION, "dataset": dataset, "digest": digest, "language": language,
                    "tasks": "4", "created": now(), "audit": "pending", "audited": "0"}  # fmt: skip
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(meta.items()))
            for session, line in rows:
                sid = session.get("id") if isinstance(session.get("id"), str) else None
                text = _dump(session)
                db.execute(
                    "INSERT INTO sessions (pos, sid, line, original, current, findings, duplicates, valid) "
                    "VALUES (?, ?, ?, ?, ?, '[]', '[]', 1)",
                    (count, sid, line, text, text),
                )
                count += 1
        return count

    def order(self) -> list[int]:
        """Every session's position in the queue's order (docs/review.md §2.1: more error findings first, then
        more warnings, then dataset order), counted by SQLite without reading the sessions."""
        query = (
            "SELECT pos, (SELECT COUNT(*) FROM json_each(findings) WHERE json_extract(value, '$.severity') = 'error') "
            "+ (SELECT COUNT(*) FROM json_each(duplicates) WHERE json_extract(value, '$.severity') = 'error'), "
            "json_array_length(findings) + json_array_length(duplicates) FROM sessions"
        )
        with self.connect() as db:
            rows = db.execute(query).fetchall()
        return [pos for pos, _, _ in sorted(rows, key=lambda r: (-r[1], -(r[2] - r[1]), r[0]))]

    def has_duplicate_index(self) -> bool:
        """Whether the database holds the duplicate index (``wildtoolbench.review.duplicates``; databases made
        before it do not)."""
        with self.connect() as db:
            return (
                db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='dup_keys'").fetchone() is not None
            )

    def count(self) -> int:
        """How many sessions the database holds."""
        with self.connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Set keys of the meta table."""
        with self.connect(write=True) as db:
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    def exists(self) -> bool:
        """The file exists and holds the review tables."""
        if not self.path.is_file():
            return False
        try:
            with self.connect() as db:
                found = db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        except sqlite3.DatabaseError:
            return False
        return found is not None

    def meta(self) -> dict[str, str]:
        """The database's meta table: ``schema``, ``dataset``, ``digest``, ``language``, ``tasks``, ``created``.

        Raises:
            StoreError: the file is no review database, or one of another layout.
        """
        try:
            with self.connect() as db:
                found = {row["key"]: row["value"] for row in db.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a review database ({exc})") from None
        if found.get("schema") != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: review database layout {found.get('schema')!r}, expected {SCHEMA_VERSION}")
        return found

    # ------------------------------------------------------------------ reading

    def sessions(self, light: bool = False) -> list[SessionRow]:
        """Every session, in dataset order. ``light``: without the sessions' contents (``original`` is
        ``{}``, ``current`` holds only ``english_tasks``), for the queue of a large dataset."""
        if not light:
            with self.connect() as db:
                return [_row(record) for record in db.execute("SELECT * FROM sessions ORDER BY pos")]
        query = (
            "SELECT pos, sid, line, '{}' AS original, json_object('english_tasks', json_extract(current, '$.english_tasks')) "
            "AS current, version, updated_at, updated_by, findings, duplicates, valid FROM sessions ORDER BY pos"
        )
        with self.connect() as db:
            # what a light row shows changes only with an edit (a version) or the audit's progress (meta)
            key = (
                tuple(db.execute("SELECT total(version), COUNT(*) FROM sessions").fetchone()),
                tuple(tuple(r) for r in db.execute("SELECT key, value FROM meta WHERE key IN ('audit', 'audited')")),
            )
            cached = getattr(self, "_light", None)
            if cached is not None and cached[0] == key:
                return list(cached[1])
            rows = [_row(record) for record in db.execute(query)]
        self._light = (key, rows)
        return list(rows)

    def session(self, pos: int) -> SessionRow:
        """The session at position ``pos``.

        Raises:
            StoreError: no such session (also a position SQLite cannot hold, huge or negative).
        """
        if not isinstance(pos, int) or not 0 <= pos < 2**63:
            raise StoreError(f"no session at position {pos}")
        with self.connect() as db:
            record = db.execute("SELECT * FROM sessions WHERE pos = ?", (pos,)).fetchone()
        if record is None:
            raise StoreError(f"no session at position {pos}")
        return _row(record)

    def verdicts(self, pos: int | None = None) -> list[Verdict]:
        """Every verdict (of one session when ``pos`` is given), by session, task and reviewer."""
        query = "SELECT * FROM verdicts" + (" WHERE pos = ?" if pos is not None else "")
        with self.connect() as db:
            rows = db.execute(query + " ORDER BY pos, task, reviewer", () if pos is None else (pos,)).fetchall()
        return [
            Verdict(r["pos"], r["task"], r["reviewer"], r["verdict"], r["reason"], r["version"], r["at"]) for r in rows
        ]

    def events(self) -> list[dict[str, Any]]:
        """Every edit and verdict in the order they were saved: the review log (docs/review.md §7.2)."""
        with self.connect() as db:
            rows = db.execute("SELECT * FROM events ORDER BY seq").fetchall()
        out = []
        for r in rows:
            event = {
                "seq": r["seq"],
                "at": r["at"],
                "reviewer": r["reviewer"],
                "session": r["sid"],
                "position": r["pos"],
                "task": r["task"],
                "action": r["action"],
                "version": r["version"],
            }
            if r["reason"]:
                event["reason"] = r["reason"]
            if r["path"] is not None:
                event["path"] = r["path"]
                event["old"] = json.loads(r["old"]) if r["old"] is not None else None
                event["new"] = json.loads(r["new"])
            out.append(event)
        return out

    # ------------------------------------------------------------------ writing

    def _check_version(self, db: sqlite3.Connection, pos: int, version: int) -> sqlite3.Row:
        record = db.execute("SELECT * FROM sessions WHERE pos = ?", (pos,)).fetchone()
        if record is None:
            raise StoreError(f"no session at position {pos}")
        if record["version"] != version:
            raise Stale(record["sid"], version, record["version"], record["updated_by"], record["updated_at"])
        return record

    def set_verdict(self, pos: int, task: int, reviewer: str, verdict: str, reason: str, version: int) -> Verdict:
        """Save ``reviewer``'s verdict on task ``task`` of session ``pos``, replacing their earlier one on it
        (docs/review.md §4). A rejection needs a reason.

        Raises:
            Stale: the session is no longer at ``version``.
            StoreError: no such session or task.
            ValueError: a bad verdict, reviewer or reason.
        """
        reviewer = check_reviewer(reviewer)
        if verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}, got {verdict!r}")
        reason = (reason or "").strip()
        if verdict == "reject" and not reason:
            raise ValueError("a rejection needs a reason")
        if len(reason) > MAX_REASON_CHARS:
            raise ValueError(f"the reason is longer than {MAX_REASON_CHARS} characters")
        at = now()
        with self.connect(write=True) as db:
            record = self._check_version(db, pos, version)
            self._check_task(record, task)
            db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (pos, task, reviewer, verdict, reason, version, at),
            )
            db.execute(
                "INSERT INTO events (at, reviewer, pos, sid, task, action, reason, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (at, reviewer, pos, record["sid"], task, verdict, reason, version),
            )
        return Verdict(pos, task, reviewer, verdict, reason, version, at)

    @staticmethod
    def _check_task(record: sqlite3.Row, task: int) -> None:
        tasks = json.loads(record["current"]).get("english_tasks")
        count = len(tasks) if isinstance(tasks, list) else 0
        if not isinstance(task, int) or isinstance(task, bool) or not 0 <= task < count:
            raise StoreError(f"session {record['sid']} has {count} task(s); no task {task!r}")

    def save_edit(
        self,
        pos: int,
        version: int,
        reviewer: str,
        *,
        path: str,
        task: int,
        note: str,
        edit: Callable[[dict[str, Any]], tuple[dict[str, Any], Any, Any, bool, list[dict[str, Any]]]],
        duplicates: Callable[[sqlite3.Connection, dict[str, Any]], dict[int, list[dict[str, Any]]]],
    ) -> int:
        """Save one edit of session ``pos`` in one transaction (docs/review.md §5, §6): check the version,
        make the edit, store the edited session with its new findings, refresh the duplicate findings of
        the sessions the edit can change, and log it. Returns the new version.

        Args:
            edit: ``current session -> (edited session, old value, new value, valid, own findings)``;
                it raises to refuse the edit (nothing is then saved).
            duplicates: ``(connection, edited session) -> {pos: duplicate findings}`` of the sessions the edit
                changes (:func:`wildtoolbench.review.duplicates.refresh_after_edit`).

        Raises:
            Stale: the session is no longer at ``version``.
            StoreError: no such session.
            ValueError: a bad reviewer or note; whatever ``edit`` raises.
        """
        reviewer = check_reviewer(reviewer)
        note = (note or "").strip()
        if len(note) > MAX_REASON_CHARS:
            raise ValueError(f"the note is longer than {MAX_REASON_CHARS} characters")
        at = now()
        with self.connect(write=True) as db:
            record = self._check_version(db, pos, version)
            edited, old, new, valid, found = edit(json.loads(record["current"]))
            db.execute(
                "UPDATE sessions SET current = ?, version = ?, updated_at = ?, updated_by = ?, findings = ?, valid = ? "
                "WHERE pos = ?",
                (_dump(edited), version + 1, at, reviewer, _dump(found), int(valid), pos),
            )
            db.execute(
                "INSERT INTO events (at, reviewer, pos, sid, task, action, reason, path, old, new, version) "
                "VALUES (?, ?, ?, ?, ?, 'edit', ?, ?, ?, ?, ?)",
                (
                    at,
                    reviewer,
                    pos,
                    record["sid"],
                    task,
                    note,
                    path,
                    None if old is _MISSING else _dump(old),
                    _dump(new),
                    version + 1,
                ),
            )
            for other, found_duplicates in duplicates(db, edited).items():
                db.execute("UPDATE sessions SET duplicates = ? WHERE pos = ?", (_dump(found_duplicates), other))
        return version + 1


_MISSING = object()
MISSING = _MISSING
"""The old value of an edit that added an argument the gold did not have (logged as ``null``)."""


__all__ = [
    "MISSING",
    "ReviewStore",
    "SessionRow",
    "Stale",
    "StoreError",
    "Verdict",
    "VERDICTS",
    "check_reviewer",
    "now",
]
