"""``wtb review DIR|DATASET``: review sessions in the browser, or export the reviews (docs/review.md).

Resolves what is reviewed (a dataset file, or a folder holding ``sessions.jsonl`` such as the output
of ``wtb generate``), opens the review database (created on the first start: the dataset read, every
session audited), then either writes the export (``--export OUT``) or serves the review app on a
loopback address until Ctrl-C. Exit status (docs/cli.md §2): 0 done; 1 the dataset cannot be read, or
the database belongs to another dataset or another version of it, or an output cannot be written or
the port cannot be bound; 2 a bad command line, a non-loopback ``--host`` without ``--allow-remote``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from wildtoolbench.common.exits import BadInput, UsageError

DATABASE_NAME = "review.sqlite3"
"""The review database's file name inside a reviewed folder (docs/review.md §3)."""

SYNC_AUDIT_SESSIONS = 500
"""Up to this many sessions the audit is done before the app serves (a few seconds); a larger dataset is
audited by a child process while the app serves (docs/review.md §3)."""

DATABASE_SUFFIX = ".review.sqlite3"
"""What a reviewed dataset file's database is named after it: ``data.jsonl`` -> ``data.review.sqlite3`` (docs/review.md §3)."""


def review_paths(target: Path, db: Path | None, pull: bool = False) -> tuple[Path, Path]:
    """``(dataset file, database file)`` for ``wtb review TARGET [--db DB]`` (docs/review.md §1, §3).

    A folder is reviewed through its ``sessions.jsonl``, its database is ``review.sqlite3`` in it; a
    dataset file's database is beside it, ``<stem>.review.sqlite3``. ``db`` overrides either.

    Raises:
        UsageError: the folder holds no ``sessions.jsonl``, or the file does not exist (exit 2).
    """
    from wildtoolbench.common.inputs import require_file
    from wildtoolbench.data.command import dataset_path

    if target.is_dir():
        dataset = target / "sessions.jsonl"
        if not dataset.is_file():
            raise UsageError(f"folder {str(target)!r} holds no sessions.jsonl to review.", "DIR|DATASET")
        return dataset, db or target / DATABASE_NAME
    dataset = require_file(dataset_path(target, pull), "DIR|DATASET")
    return dataset, db or dataset.with_name(dataset.stem + DATABASE_SUFFIX)


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, hex (docs/review.md §3)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_store(dataset: Path, db: Path, *, language: str, tasks: int | None, background: bool = False):
    """The review database of ``dataset`` at ``db``, created (the dataset read leniently and audited,
    docs/audit.md §1) when it does not exist yet (docs/review.md §3). ``background``: the audit of a new
    database (or the rest of an unfinished one) is left to the caller
    (:func:`wildtoolbench.review.audit_job.start_background_audit`); else it is done before returning.

    Returns:
        ``(store, meta)``: the :class:`wildtoolbench.review.store.ReviewStore` and its meta table.

    Raises:
        BadInput: the database was made for another dataset file, another version of it (its SHA-256
            differs) or another side; it is not a review database.
        wildtoolbench.bench.schema.DatasetError: no line of the dataset can be reviewed.
    """
    from wildtoolbench.review.store import ReviewStore, StoreError

    store = ReviewStore(db)
    digest = file_digest(dataset)
    if store.exists():
        try:
            meta = store.meta()
        except StoreError as exc:
            raise BadInput(f"error: {exc}") from None
        if meta.get("digest") != digest:
            raise BadInput(
                f"error: {db} holds the reviews of {meta.get('dataset')} as it was (SHA-256 {meta.get('digest', '')[:12]}...), "
                f"and {dataset} is now another file (SHA-256 {digest[:12]}...): review the original file, "
                "or start a new review with --db NEW.sqlite3 (the export of the old one holds its corrections)"
            )
        if meta.get("language") != language:
            raise BadInput(
                f"error: {db} reviews the {meta.get('language')} side; give --lang {meta.get('language')} "
                "or another --db for this side"
            )
        if meta.get("audit", "done") != "done" and (not background or store.count() <= SYNC_AUDIT_SESSIONS):
            from wildtoolbench.review.audit_job import audit_store

            audit_store(db, language, int(meta["tasks"]))
            meta = store.meta()
        elif meta.get("audit", "done") == "done" and not store.has_duplicate_index():  # a database of before
            from wildtoolbench.review.audit_job import audit_duplicates

            audit_duplicates(store, language)
        return store, meta
    from wildtoolbench.review.audit_job import audit_store, import_dataset

    try:
        import_dataset(store, os.fspath(dataset), digest=digest, language=language, tasks=tasks)
    except OSError as exc:
        raise BadInput(f"error: cannot create the review database {db}: {exc}") from None
    meta = store.meta()
    if not background or store.count() <= SYNC_AUDIT_SESSIONS:
        audit_store(db, language, int(meta["tasks"]))
        meta = store.meta()
    return store, meta


def review(
    target: Path,
    *,
    db: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    allow_remote: bool = False,
    language: str = "en",
    tasks: int | None = None,
    export: Path | None = None,
    pull: bool = False,
) -> None:
    """``wtb review``: serve the review app for ``target``, or write its export (docs/review.md §1).

    Raises:
        UsageError: a non-loopback ``host`` without ``allow_remote``, a missing target (exit 2).
        BadInput: see :func:`open_store`; an export that cannot be written; a port that cannot be bound (exit 1).
    """
    from wildtoolbench.review.serve import check_bind

    refusal = check_bind(host, allow_remote)
    if refusal is not None and export is None:
        raise UsageError(refusal, "--host")
    dataset, database = review_paths(target, db, pull)
    store, meta = open_store(dataset, database, language=language, tasks=tasks, background=export is None)
    if export is not None:
        write_review_export(store, meta, export)
        return
    from wildtoolbench.review.app import LOOPBACK_NAMES, ReviewConfig, create_app
    from wildtoolbench.review.serve import bind_socket, serve

    config = ReviewConfig(
        store, language=language, tasks=int(meta["tasks"]), hosts=None if allow_remote else LOOPBACK_NAMES
    )
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        raise BadInput(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sessions = store.count()
    if meta.get("audit", "done") != "done":
        from wildtoolbench.review.audit_job import start_background_audit

        start_background_audit(database, language, int(meta["tasks"]))

    def ready(url: str) -> None:
        sys.stdout.write(
            f"reviewing {sessions} session(s) of {dataset} (reviews in {database})\n"
            f"review app on {url} (Ctrl-C stops it)\n"
        )
        if refusal is not None:
            sys.stdout.write("warning: serving beyond loopback (--allow-remote): the app has no login\n")
        sys.stdout.flush()

    serve(create_app(config), sock, ready)


def write_review_export(store, meta, out: Path) -> None:
    """``--export OUT``: write the export folder and print what it holds (docs/review.md §7).

    Raises:
        BadInput: a file cannot be written.
    """
    from wildtoolbench.review.export import write_export_streaming

    try:
        plan = write_export_streaming(
            out, store.sessions(light=True), store.verdicts(), store.events(), meta, store.session
        )
    except OSError as exc:
        raise BadInput(f"error: cannot write the export: {exc}") from None
    sys.stdout.write(
        f"exported {plan['exported']} of {plan['sessions']} session(s) to {out / 'sessions.jsonl'} "
        f"({plan['edited']} edited; left out: {plan['rejected']} with a rejected task, {plan['open']} with an "
        f"open task, {plan['invalid']} invalid), with replay.jsonl (oracle), review_log.jsonl, errata.jsonl "
        "and summary.json\n"
    )
