"""A review database made in two stages, so the app answers at once on a large dataset (docs/review.md §3).

1. :func:`import_dataset` streams the dataset into the database (one line at a time: each JSON object
   line becomes a session, its findings still to come) and marks the audit ``pending``.
2. :func:`audit_store` audits every session on its own (:func:`wildtoolbench.review.checks.own_findings`:
   validation, tools, context, observations, the scorer), a chunk of sessions per transaction (the meta
   key ``audited`` says how far it got, so a stopped audit resumes there), then builds the duplicate index
   (:mod:`wildtoolbench.review.duplicates`) and every session's ``duplicate_session`` findings in one
   transaction, and marks the audit ``done``. ``wtb review`` runs it in a child process while it serves
   pages (:func:`start_background_audit`); ``--export`` runs it first when it is not done. A session
   edited meanwhile keeps the findings its edit computed.

Memory does not grow with the dataset beyond the duplicate signatures (hashes).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

CHUNK = 200
"""Sessions audited per transaction."""


def import_dataset(store: Any, dataset: str, *, digest: str, language: str, tasks: int | None) -> None:
    """Stage 1: every JSON object line of ``dataset`` as a session of ``store`` (a new
    :class:`wildtoolbench.review.store.ReviewStore`), findings empty, the audit ``pending``.

    Raises:
        wildtoolbench.bench.schema.DatasetError: the file cannot be read or holds no JSON object line.
        OSError: the database cannot be written.
    """
    from wildtoolbench.bench.io import UndecodableLine, iter_jsonl
    from wildtoolbench.bench.schema import DatasetError, DatasetIssue

    counts: Counter[int] = Counter()

    def rows():
        try:
            for number, text in iter_jsonl(dataset):
                if isinstance(text, UndecodableLine):
                    continue
                try:
                    raw = json.loads(text)
                except ValueError:
                    continue
                if isinstance(raw, dict):
                    found = raw.get("english_tasks")  # as wildtoolbench.bench.schema.task_counts counts
                    if isinstance(found, list) and found:
                        counts[len(found)] += 1
                    yield raw, number
        except OSError as exc:
            raise DatasetError([DatasetIssue(dataset, None, None, f"cannot read: {exc.strerror or exc}")]) from None

    made = store.create_streaming(dataset=dataset, digest=digest, language=language, rows=rows())
    if not made:
        raise DatasetError([DatasetIssue(dataset, None, None, "file holds no session")])
    count = tasks if tasks is not None else (counts.most_common(1)[0][0] if counts else 4)
    store.set_meta({"tasks": str(count), "audit": "pending", "audited": "0"})


def audit_store(
    db_path: str | os.PathLike[str], language: str, tasks: int, chunk: int = CHUNK, parent: int | None = None
) -> None:
    """Stage 2: audit every session of the database at ``db_path`` not audited yet, then its duplicates (see
    the module doc). Safe to run while the app serves and saves edits. ``parent``: the process id of the
    server it works for; when that process is gone, it stops after the current chunk (the next start
    resumes)."""
    from wildtoolbench.review.checks import finding_json, own_findings
    from wildtoolbench.review.store import ReviewStore, _dump

    store = ReviewStore(db_path)
    position = int(store.meta().get("audited") or 0)
    while True:
        with store.connect() as db:
            rows = db.execute(
                "SELECT pos, version, current FROM sessions WHERE pos >= ? ORDER BY pos LIMIT ?", (position, chunk)
            ).fetchall()
        if not rows:
            break
        if parent is not None and os.getppid() != parent:
            return  # the server stopped: the next start resumes from meta "audited"
        updates = []
        for row in rows:
            if row["version"] != 1:
                continue  # edited: its own findings were made by the edit
            found = own_findings(json.loads(row["current"]), tasks=tasks, language=language)
            valid = not any(f.kind == "invalid_session" for f in found)
            updates.append((_dump([finding_json(f) for f in found]), int(valid), row["pos"]))
        position = rows[-1]["pos"] + 1
        with store.connect(write=True) as db:
            db.executemany("UPDATE sessions SET findings = ?, valid = ? WHERE pos = ? AND version = 1", updates)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('audited', ?)", (str(position),))
    if parent is not None and os.getppid() != parent:
        return
    audit_duplicates(store, language)


def audit_duplicates(store: Any, language: str) -> None:
    """Build the duplicate index over the sessions as they stand and write every session's
    ``duplicate_session`` findings, in one transaction; then mark the audit ``done``."""
    from wildtoolbench.bench.audit import _duplicate_findings
    from wildtoolbench.bench.audit_duplicates import NEAR_DUPLICATE_THRESHOLD
    from wildtoolbench.bench.schema import fields_for
    from wildtoolbench.review.checks import finding_json
    from wildtoolbench.review.duplicates import create_tables, duplicate_signature, index_duplicate_keys
    from wildtoolbench.review.store import _dump

    side = fields_for(language)
    with store.connect(write=True) as db:
        create_tables(db)
        db.execute("DELETE FROM dup_keys")
        db.execute("DELETE FROM dup_shingles")
        light: list[dict[str, Any]] = []
        positions: list[int] = []
        for row in db.execute("SELECT pos, current FROM sessions ORDER BY pos"):
            session = json.loads(row["current"])
            index_duplicate_keys(db, [(row["pos"], *duplicate_signature(session, language))])
            tools = session.get(side.tools)
            names = [
                {"function": {"name": t["function"]["name"]}}
                for t in (tools if isinstance(tools, list) else [])
                if isinstance(t, dict)
                and isinstance(t.get("function"), dict)
                and isinstance(t["function"].get("name"), str)
            ]
            light.append({"id": session.get("id"), side.tasks: session.get(side.tasks), side.tools: names})
            positions.append(row["pos"])
        found: dict[int, list[dict[str, Any]]] = {}
        for index, finding in _duplicate_findings(light, language, NEAR_DUPLICATE_THRESHOLD):
            found.setdefault(positions[index], []).append(finding_json(finding))
        db.executemany(
            "UPDATE sessions SET duplicates = ? WHERE pos = ?", [(_dump(found.get(p, [])), p) for p in positions]
        )
        db.execute("INSERT OR REPLACE INTO meta VALUES ('audit', 'done')")


def start_background_audit(db_path: str | os.PathLike[str], language: str, tasks: int) -> Any:
    """Run :func:`audit_store` in a child process (the app keeps the other core); returns the process."""
    import multiprocessing

    process = multiprocessing.get_context("spawn").Process(
        target=audit_store,
        args=(os.fspath(db_path), language, tasks, CHUNK, os.getpid()),
        name="wtb-review-audit",
        daemon=True,
    )
    process.start()
    return process


__all__ = ["CHUNK", "audit_duplicates", "audit_store", "import_dataset", "start_background_audit"]
