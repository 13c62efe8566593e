"""The result store of a run directory: ``result.jsonl`` (append + one fsync per batch of sessions, torn-line recovery, byte-range index, sorted rewrite), ``errors.jsonl`` and the run lock."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench.bench.io import loads_json
from wildtoolbench.bench.strategy import REFERENCE
from wildtoolbench.common.files import (
    STREAM_LINES_FROM,
    atomic_write_text,
    give_default_mode,
    line_chunks,
    named_os_error,
    strings_over,
)
from wildtoolbench.common.run_folder import (
    ERRORS_FILE,
    LOCK_FILE,
    RESULT_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    TRIALS_RESULT_FILE,
    UNTIL_DECIDED_FILE,
)
from wildtoolbench.runner.selection import session_sort_key


def run_file_names() -> tuple[str, ...]:
    """Every file ``wtb eval`` writes directly in its ``--out`` folder: the result store, the lock,
    ``run.json``, ``summary.json`` and the score outputs of both modes (docs/cli.md §3)."""
    from wildtoolbench.scoring.outputs import score_outputs

    return (
        RESULT_FILE,
        TRIALS_RESULT_FILE,
        ERRORS_FILE,
        LOCK_FILE,
        RUN_FILE,
        SUMMARY_FILE,
        UNTIL_DECIDED_FILE,
        *score_outputs(),
    )


def refuse_symlinks(out: str | os.PathLike[str]) -> None:
    """Refuse an output folder in which one of :func:`run_file_names` is a symbolic link (docs/cli.md §3.3).

    An append or the lock would write through the link into its target, anywhere on the disk; the run
    writes nothing instead. The folder itself may be a link.

    Raises:
        ValueError: naming the link and its target.
    """
    for name in run_file_names():
        path = Path(out) / name
        if path.is_symlink():
            raise ValueError(
                f"{path}: is a symbolic link (to {os.readlink(path)}); a run writes only plain files in its "
                "output folder: remove the link or use another --out"
            )


def remove_leftover_temp_files(out: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files a killed run left in ``out`` (docs/cli.md §3.2).

    An atomic write or the sorted rewrite of :mod:`wildtoolbench.runner.store` / :mod:`wildtoolbench.scoring.run` writes
    ``.<name>.<random>.tmp`` beside the file ``<name>`` it replaces (one of :func:`run_file_names`)
    and renames it; a kill between the two leaves it behind. Call with the run's lock held (no
    writer of this folder is running then). Links and folders of that shape are left alone.

    Returns:
        The files removed.
    """
    folder = Path(out)
    names = set(run_file_names())
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(".tmp")) or not entry.is_file(follow_symlinks=False):
            continue
        stem = name[1:-4].rsplit(".", 1)[0]  # ".result.jsonl.k3j2x.tmp" -> "result.jsonl"
        if stem in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


@dataclass
class RecordInfo:
    """What the runner keeps of one result line (the record itself stays on disk).

    Attributes:
        id / model_name: the record's identity.
        tasks / correct: tasks in the record and how many are action-name correct.
        inference_error: ``result`` is an ``"Error during inference: ..."`` string.
        usage: the record's ``"usage"`` accounting (``{}`` for records written before it existed).
        scoring: the name of the mode that made the record (``"scoring"`` key; reference when absent).
        trial: the record's trial (``"trial"`` key; 1 when absent, docs/trials.md §5).
    """

    id: str
    model_name: Any
    tasks: int
    correct: int
    inference_error: bool
    usage: dict[str, Any]
    scoring: str = REFERENCE.name
    trial: int = 1

    def __getitem__(self, key: str) -> Any:
        """Record-style access to the kept fields (``info["id"]``, ``info["model_name"]``, ``info["usage"]``)."""
        if key not in ("id", "model_name", "usage"):
            raise KeyError(key)
        return getattr(self, key)

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> RecordInfo:
        """The info of a parsed record."""
        tasks, correct = _task_counts(record)
        usage = record.get("usage")
        return cls(
            record["id"],
            record.get("model_name"),
            tasks,
            correct,
            isinstance(record.get("result"), str),
            dict(usage) if isinstance(usage, Mapping) else {},
            str(record.get("scoring", REFERENCE.name)),
            record_trial(record),
        )


class ResultFile:
    """``DIR/result.jsonl``: per-session append with fsync, torn-tail recovery, sorted final rewrite.

    Memory stays small for large runs: the file is read line by line and only
    :class:`RecordInfo` and each line's byte range are kept; the final sorted
    rewrite copies byte ranges (no parsing). The object assumes it is the only
    writer (the run's lock guarantees it).
    """

    def __init__(self, path: str | os.PathLike[str], *, trials: bool = False):
        self.path = Path(path)
        self.trials = trials  # the trials file (docs/trials.md §5): records keyed by (id, trial), trial >= 2
        self._lines: list[tuple[Any, int, int]] | None = None  # (key, offset, length) in file order
        self._infos: dict[Any, RecordInfo] = {}

    def key(self, record: Mapping[str, Any]) -> Any:
        """The key of ``record``: its ``id``; in the trials file ``(id, trial)``."""
        return (record["id"], record_trial(record)) if self.trials else record["id"]

    def _order(self, key: Any) -> tuple:
        return (key[1], session_sort_key(key[0])) if self.trials else session_sort_key(key)

    def _parse_line(self, raw: bytes, number: int) -> dict[str, Any]:
        try:
            record = loads_json(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ValueError(f"{self.path}, line {number}: not valid JSON ({message})") from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise ValueError(f"{self.path}, line {number}: field 'id' missing or not a string")
        if self.trials:
            trial = record.get("trial")
            if isinstance(trial, bool) or not isinstance(trial, int) or trial < 2:
                raise ValueError(
                    f"{self.path}, line {number}: field 'trial' must be a whole number >= 2, got {trial!r}"
                )
        return record

    def scan(self) -> dict[Any, RecordInfo]:
        """Index the file; returns the info of each record by :meth:`key` (first occurrence wins).

        A last line without its final newline is a torn write from a crash: it
        is cut off the file (truncated, fsync'd) and its session is not counted as done.

        Raises:
            ValueError: a complete line that is not a JSON object with an ``id``
                (file and line named); the file is then left untouched.
        """
        lines: list[tuple[Any, int, int]] = []
        infos: dict[Any, RecordInfo] = {}
        torn_at: int | None = None
        if self.path.exists():
            offset = 0
            with open(self.path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if not raw.endswith(b"\n"):
                        torn_at = offset
                        break
                    if raw.strip():
                        record = self._parse_line(raw, number)
                        key = self.key(record)
                        lines.append((key, offset, len(raw)))
                        if key not in infos:
                            infos[key] = RecordInfo.of(record)
                    offset += len(raw)
        if torn_at is not None:
            with open(self.path, "r+b") as handle:
                handle.truncate(torn_at)
                handle.flush()
                os.fsync(handle.fileno())
        self._lines, self._infos = lines, infos
        return dict(infos)

    def load(self) -> dict[Any, dict[str, Any]]:
        """The records in the file, parsed, by :meth:`key` (first occurrence wins); cuts a torn last line like :meth:`scan`.

        Reads everything into memory: for tools and tests; the runner uses :meth:`scan`.
        """
        self.scan()
        records: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            with open(self.path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if raw.strip():
                        record = self._parse_line(raw, number)
                        records.setdefault(self.key(record), record)
        return records

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record as one line: a single write, then flush and fsync (:meth:`append_many` of one)."""
        self.append_many([record])

    def append_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Append ``records`` as lines with one ``write`` of them all, then ONE fsync (docs/evaluation.md §5).

        The batch writer of :func:`wildtoolbench.runner.arun_eval` hands over every record that finished while the
        previous batch was being written; a record counts as done only once this returns. A crash
        in the middle of the write leaves complete lines and at most one torn last line, which
        :meth:`scan` cuts on the next start. A large record (its strings over
        :data:`wildtoolbench.common.files.STREAM_LINES_FROM` characters) is encoded and written piece by piece instead
        of whole (docs/evaluation.md §5.6).

        Args:
            records: JSON-serialisable mappings, each with a string ``"id"``; nothing happens for none.

        Raises:
            OSError: the write or the fsync failed, or the file is a symbolic link (the index is then left
                as it was); the error names the file.
            TypeError / ValueError: a record is not JSON-serialisable (nothing is written: the file is
                cut back to where it ended).
        """
        if not records:
            return
        large = [strings_over(record, STREAM_LINES_FROM) for record in records]
        small = {i: b"".join(line_chunks(r, large=False)) for i, r in enumerate(records) if not large[i]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # minus the umask, as open() does; never through a symbolic link (docs/cli.md §3.3)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        lengths: list[int] = []
        try:
            fd = os.open(self.path, flags, 0o666)
            try:
                offset = os.lseek(fd, 0, os.SEEK_END)
                if not any(large):  # one write(2) for the whole batch unless the kernel takes less
                    _write_all(fd, b"".join(small[i] for i in range(len(records))))
                    lengths = [len(small[i]) for i in range(len(records))]
                else:
                    try:
                        for index, record in enumerate(records):
                            pieces = [small[index]] if index in small else line_chunks(record, large=True)
                            lengths.append(sum(_write_all(fd, piece) for piece in pieces))
                    except (TypeError, ValueError):
                        os.ftruncate(fd, offset)  # no line of the batch stays, as when nothing was written
                        raise
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise named_os_error(exc, self.path) from None
        if self._lines is not None:
            for record, length in zip(records, lengths):
                self._lines.append((self.key(record), offset, length))
                self._infos.setdefault(self.key(record), RecordInfo.of(record))
                offset += length

    def finalize(self) -> list[RecordInfo]:
        """Rewrite the file atomically with one line per key, sorted by id (the trials file: by trial, then id;
        skipped when it already is).

        Returns:
            The records' infos in id order.
        """
        if self._lines is None:
            self.scan()
        assert self._lines is not None
        first: dict[Any, tuple[Any, int, int]] = {}
        for entry in self._lines:
            first.setdefault(entry[0], entry)
        ordered = sorted(first.values(), key=lambda e: self._order(e[0]))
        if ordered != self._lines:
            directory = self.path.parent
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
            try:
                give_default_mode(tmp)  # mkstemp's file is owner-only: the output gets a plain file's mode
                with os.fdopen(fd, "wb") as out, open(self.path, "rb") as source:
                    lines, offset = [], 0
                    for session_id, start, length in ordered:
                        source.seek(start)
                        out.write(source.read(length))
                        lines.append((session_id, offset, length))
                        offset += length
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                raise
            self._lines = lines
        elif not self.path.exists():
            atomic_write_text(self.path, "")
        return [self._infos[session_id] for session_id, _, _ in ordered]


def _write_all(fd: int, data: bytes) -> int:
    """Write all of ``data`` to ``fd`` (``write(2)`` may take less); returns ``len(data)``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return len(data)


def record_trial(record: Mapping[str, Any]) -> int:
    """The trial of a result record or ``errors.jsonl`` entry: its ``"trial"``, 1 when absent (docs/trials.md §5)."""
    trial = record.get("trial", 1)
    return trial if isinstance(trial, int) and not isinstance(trial, bool) else 1


def _latest_errors(path: Path, done: set[Any]) -> list[dict[str, Any]]:
    """Entries of ``errors.jsonl``: the latest per session and trial, only those still without a record (``done``
    holds ids, and ``(id, trial)`` for trials from 2), sorted by trial, then id."""
    if not path.exists():
        return []
    latest: dict[Any, dict[str, Any]] = {}
    text = path.read_text(encoding="utf-8")
    for line in text[: text.rfind("\n") + 1].splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            trial = record_trial(entry)
            key = entry["id"] if trial == 1 else (entry["id"], trial)
            if key not in done:
                latest[key] = entry
    return sorted(latest.values(), key=lambda e: (record_trial(e), session_sort_key(e["id"])))


def _task_counts(record: Mapping[str, Any]) -> tuple[int, int]:
    result = record.get("result")
    if not isinstance(result, list):
        return 0, 0
    return len(result), sum(1 for task in result if task.get("action_name_label") == "correct")
