"""Which sessions a run evaluates: loading the dataset, selecting by id or count, ordering ids."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from wildtoolbench.bench.schema import (
    DatasetError,
    SessionIndex,
    check_language,
    index_sessions,
    load_sessions,
)
from wildtoolbench.scoring.results import natural_id_key

_ID_PATTERN = re.compile(r"^wild_tool_bench_(\d+)$")


def session_sort_key(session_id: str) -> tuple:
    """Order of ids in result files: natural order, the same as ``score.jsonl`` (``wildtoolbench.scoring.results.natural_id_key``)."""
    return natural_id_key(session_id)


def normalise_id(value: str) -> str:
    """``"3"`` -> ``"wild_tool_bench_3"``; a full id is returned unchanged."""
    value = value.strip()
    return f"wild_tool_bench_{value}" if value.isdigit() else value


def load_dataset(path: str | os.PathLike[str], *, tasks: int = 4, language: str = "en") -> list[dict[str, Any]]:
    """Sessions of a dataset JSON Lines file (docs/dataset.md) as plain dicts, validated by ``wildtoolbench.bench.schema``.

    The file is validated line by line (:func:`open_dataset`), then every session is returned as
    parsed from its line; a run needs only :func:`open_dataset`, which keeps them on disk.
    ``tasks`` is the number of tasks per session (4 in the benchmark; N for ``wtb generate --layers N``);
    ``language`` the side to be evaluated (``zh`` adds ``wildtoolbench.bench.schema.language_issues``).

    Raises:
        wildtoolbench.bench.schema.DatasetError: every malformed line (file, line and field named), a missing or empty file.
        ValueError: the file changed while it was being read.
    """
    return list(open_dataset(path, tasks=tasks, language=language))


class DatasetSessions(Sequence[dict[str, Any]]):
    """Sessions of a validated dataset file, each parsed from its line only when taken: the lazy form
    :func:`arun_eval` accepts (docs/dataset.md §6).

    Made by :func:`open_dataset`; it holds the ids of the chosen sessions and the file's index
    (``wildtoolbench.bench.schema.SessionIndex``: id -> byte range of the line), not the sessions, so a run holds
    only the sessions in flight (the whole dataset as dicts was most of a large run's memory).
    Indexing or iterating parses the line again each time and returns a new dict, equal to what
    :func:`load_dataset` gives; a slice or :meth:`subset` (and :func:`select_sessions`) gives another
    ``DatasetSessions``.

    Raises (when a session is taken):
        ValueError: the file changed since :func:`open_dataset` read it (size or modification time,
            or the line no longer holds the session), naming the file.
    """

    def __init__(self, index: SessionIndex, ids: Sequence[str], stamp: tuple[int, int]):
        self._index = index
        self._ids = list(ids)
        self._stamp = stamp
        self.warnings: list[Any] = []  # set by open_dataset: the dataset warnings of the run's side

    @property
    def path(self) -> str:
        """The dataset file."""
        return self._index.file

    @property
    def ids(self) -> list[str]:
        """The sessions' ids, in order (nothing is parsed)."""
        return list(self._ids)

    def subset(self, indices: Iterable[int]) -> DatasetSessions:
        """The sessions at ``indices`` (positions in this sequence), in that order."""
        return DatasetSessions(self._index, [self._ids[i] for i in indices], self._stamp)

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> DatasetSessions: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | DatasetSessions:
        if isinstance(index, slice):
            return self.subset(range(len(self))[index])
        session_id = self._ids[index]
        changed = f"{self.path} changed since the run read it; run the same command again"
        try:
            if _stamp(os.stat(self.path)) != self._stamp:
                raise ValueError(changed)
            session = self._index[session_id]
        except (OSError, ValueError):  # gone, shortened (not JSON any more) ...
            raise ValueError(changed) from None
        if not isinstance(session, dict) or session.get("id") != session_id:
            raise ValueError(changed)
        return session

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for position in range(len(self)):
            yield self[position]

    def __repr__(self) -> str:
        return f"DatasetSessions({self.path!r}, {len(self)} sessions)"


def _stamp(stat: os.stat_result) -> tuple[int, int]:
    return stat.st_size, stat.st_mtime_ns


def open_dataset(path: str | os.PathLike[str], *, tasks: int = 4, language: str = "en") -> DatasetSessions:
    """The sessions of a dataset file, validated as :func:`load_dataset` does but kept on disk (docs/dataset.md §6).

    The file is validated in one streaming pass (``wildtoolbench.bench.schema.index_sessions``: every malformed
    line is reported before anything runs, each validated session is dropped at once), and only each
    session's id and the byte range of its line are kept (:class:`DatasetSessions`); a session is
    parsed again when a run takes it.

    Args:
        path: the dataset file.
        tasks: tasks per session (4 in the benchmark; N for ``wtb generate --layers N``).
        language: the side to be evaluated (docs/dataset.md §2.2); ``zh`` adds ``wildtoolbench.bench.schema.language_issues``.

    Returns:
        The file's sessions in file order; their ``warnings`` attribute lists the dataset warnings of
        ``language``'s side (``wildtoolbench.bench.schema.session_warnings``, docs/dataset.md §7.2), for the caller to show.

    Raises:
        wildtoolbench.bench.schema.DatasetError: the issues ``wildtoolbench.bench.schema.load_sessions`` raises for the file and
            ``language``, in the same order.
        ValueError: an unknown ``language``; the file changed while it was being read.
    """
    check_language(language)
    try:
        before: tuple[int, int] | None = _stamp(os.stat(path))
    except OSError:
        before = None  # index_sessions reports it
    try:
        index = index_sessions(path, tasks=tasks, warnings_for=language)
    except DatasetError:
        if language != "en":  # the whole-file loader reports this side's issues among the others, in line order
            load_sessions(path, tasks=tasks, language=language)
        raise
    side_issues = index.language_issues(language)
    if side_issues:
        raise DatasetError(side_issues)
    after = _stamp(os.stat(path))
    if after != before:
        raise ValueError(f"{os.fspath(path)} changed while it was being read; run the same command again")
    sessions = DatasetSessions(index, list(index), after)
    sessions.warnings = index.warnings
    return sessions


def session_ids(sessions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ids of ``sessions`` (dataset lines, docs/dataset.md), in order: :attr:`DatasetSessions.ids`
    without parsing anything, else each dict's ``"id"``."""
    if isinstance(sessions, DatasetSessions):
        return sessions.ids
    return [session["id"] for session in sessions]


def select_sessions(
    sessions: Sequence[Mapping[str, Any]], ids: Iterable[str] | None = None, limit: int | None = None
) -> list[dict[str, Any]] | DatasetSessions:
    """The sessions to run: those named in ``ids`` (``"3"`` or ``"wild_tool_bench_3"``), else all; then the first ``limit``.

    A :class:`DatasetSessions` (from :func:`open_dataset`) gives a ``DatasetSessions`` of the chosen
    ones, still unparsed; any other sequence gives a list of copies of the chosen dicts.

    Raises:
        ValueError: an id that is not in the dataset, or a negative limit.
    """
    positions: list[int] = list(range(len(sessions)))
    if ids:
        wanted = [normalise_id(i) for i in ids if i.strip()]
        by_id = {session_id: position for position, session_id in enumerate(session_ids(sessions))}  # last wins
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise ValueError(f"session id(s) not in the dataset: {', '.join(missing)}")
        seen: set[str] = set()
        positions = [by_id[i] for i in wanted if not (i in seen or seen.add(i))]
    if limit is not None:
        if limit < 0:
            raise ValueError(f"--limit must be >= 0, got {limit}")
        positions = positions[:limit]
    if isinstance(sessions, DatasetSessions):
        return sessions.subset(positions)
    return [dict(sessions[i]) for i in positions]
