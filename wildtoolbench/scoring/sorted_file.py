"""Score lines written as they come and put in place sorted by id, atomically, one line in memory at a time
(docs/evaluation.md §5)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wildtoolbench.common.files import (
    STREAM_LINES_FROM,
    atomic_write_text,
    give_default_mode,
    line_chunks,
    named_os_error,
)
from wildtoolbench.scoring.results import natural_id_key


class SortedScoreFile:
    """Score lines written as they come to a temporary file beside ``path``, then put in place sorted by
    id (natural order), atomically (docs/evaluation.md §5): one line in memory at a time.

    :meth:`commit` fsyncs and renames; :meth:`discard` (on an error) removes the temporary file and the
    folders this object created, so that nothing is left.
    """

    def __init__(self, path: Path, size_hint: Callable[[], int] | None = None) -> None:
        self.path = path
        self.size_hint = size_hint
        """The length of the line the next score line comes from (bytes): from
        :data:`wildtoolbench.common.files.STREAM_LINES_FROM` on, it is written piece by piece; ``None``: never."""
        self._tmp: str | None = None
        self._handle: Any = None
        self._made: list[Path] = []
        self._entries: list[tuple[tuple, int, int]] = []
        self._offset = 0

    def add(self, session_id: str, line: dict[str, Any], trial: int = 1) -> None:
        """Append one score line (creating the folder and the temporary file on the first call); lines are put
        in place sorted by ``trial``, then id. Raises OSError naming ``path`` (docs/cli.md §3.4)."""
        try:
            self._add(session_id, line, trial)
        except OSError as exc:
            raise named_os_error(exc, self.path) from None

    def _add(self, session_id: str, line: dict[str, Any], trial: int = 1) -> None:
        if self._handle is None:
            folder = self.path.parent
            self._made = [p for p in (folder, *folder.parents) if not p.exists()]
            folder.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
            give_default_mode(self._tmp)
            self._handle = os.fdopen(fd, "w+b")
        large = self.size_hint is not None and self.size_hint() >= STREAM_LINES_FROM
        length = 0
        try:
            for piece in line_chunks(
                line, large=large
            ):  # a large line is written piece by piece (docs/evaluation.md §5.6)
                self._handle.write(piece)
                length += len(piece)
        except (TypeError, ValueError):
            self._handle.seek(self._offset)
            self._handle.truncate()
            raise
        self._entries.append(((trial, natural_id_key(session_id)), self._offset, length))
        self._offset += length

    def commit(self) -> None:
        """Put the lines in place at ``path``, sorted by id (a byte-range copy when they came in another
        order), fsync'd, by one rename. Raises OSError naming ``path`` (docs/cli.md §3.4)."""
        try:
            self._commit()
        except OSError as exc:
            raise named_os_error(exc, self.path) from None

    def _commit(self) -> None:
        if self._handle is None:  # no line at all
            atomic_write_text(self.path, "")
            return
        ordered = sorted(self._entries, key=lambda entry: entry[0])
        if ordered != self._entries:  # a result file in another order (wtb eval writes it sorted)
            source, unsorted = self._handle, self._tmp
            fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            give_default_mode(self._tmp)
            self._handle = os.fdopen(fd, "wb")
            try:
                source.flush()
                for _, offset, length in ordered:  # byte-range copy, one line at a time
                    source.seek(offset)
                    self._handle.write(source.read(length))
            finally:
                source.close()
                os.unlink(unsorted)
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.replace(self._tmp, self.path)
        self._handle = self._tmp = None

    def discard(self) -> None:
        """Remove the temporary file(s) and the folders :meth:`add` created (innermost first, while empty;
        docs/evaluation.md §5)."""
        if self._handle is not None:
            self._handle.close()
        if self._tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)
        for folder in self._made:  # innermost first; stops at a folder someone else filled meanwhile
            try:
                folder.rmdir()
            except OSError:
                break
