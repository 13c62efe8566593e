"""Writing the application's output files: atomic replacement (temp file, fsync, rename) with the mode a
plain ``open(path, "w")`` would give, and JSON Lines / JSON text.

The application writes the run's output files (docs/architecture.md §3.2): the result store, the scorer, the
generation runner and the report. Reading JSON Lines stays in the core (:mod:`wildtoolbench.bench.io`), where the
loaders need it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def _read_umask() -> int:
    """The process umask, read once at import (setting it briefly is not thread-safe later on)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def new_file_mode() -> int:
    """The mode a plain ``open(path, "w")`` gives a new file: ``0o666`` minus the process umask
    (read once, at import), e.g. ``0o644`` under umask 022."""
    return 0o666 & ~_UMASK


def give_default_mode(path: str | os.PathLike[str]) -> None:
    """Set ``path`` to :func:`new_file_mode` (for a temporary file from ``mkstemp``, which is owner-only,
    before it is renamed over an output). A file system without POSIX modes is left as it is."""
    try:
        os.chmod(path, new_file_mode())
    except OSError:
        pass


def named_os_error(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` with ``path`` as its file name when it names none (a failed ``write`` or ``fsync`` does not),
    so that the message says which file a full disk or a missing permission hit (docs/cli.md §3.4)."""
    if exc.filename is not None:
        return exc
    named = type(exc)(exc.errno, exc.strerror or str(exc), os.fspath(path))
    named.__cause__ = exc
    return named


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: temp file in the same folder, fsync, rename.

    A reader sees either the old file or the whole new one, never a torn file.
    The file gets the permissions a plain ``open(path, "w")`` would give
    (0o666 minus the umask; ``mkstemp`` alone would leave it owner-only).
    Creates the parent folder if needed. Raises ``OSError`` on I/O failure, naming ``path`` when the
    failed call named no file (a full disk, docs/cli.md §3.4).
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise named_os_error(exc, target) from None
    try:
        give_default_mode(tmp)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise named_os_error(exc, target) from None
        raise


def dumps_line(record: Any) -> str:
    """One JSON Lines line (no trailing newline), UTF-8 text kept as is (``ensure_ascii=False``)."""
    return json.dumps(record, ensure_ascii=False)


STREAM_LINES_FROM = 4 << 20
"""Records whose strings add up to at least this many characters are written in pieces (:func:`line_chunks`)."""

_PIECE = 1 << 20


def strings_over(value: Any, limit: int) -> bool:
    """Whether the strings (keys excluded) of the JSON value ``value`` add up to more than ``limit``
    characters; stops walking as soon as they do (docs/evaluation.md §5.6)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += len(item)
            if total > limit:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
    return False


def line_chunks(record: Any, *, large: bool | None = None) -> Iterator[bytes]:
    """``record`` as one JSON Lines line with its newline, UTF-8, in pieces (docs/evaluation.md §5.6).

    Args:
        record: a JSON-serialisable value.
        large: whether to encode it piece by piece; ``None``: when its strings add up to
            :data:`STREAM_LINES_FROM` characters or more (:func:`strings_over`). A small record is one
            piece, ``(dumps_line(record) + "\n")`` encoded; a large one is encoded as it is walked, so
            a line that repeats a 20 MB observation in seven steps never exists whole in memory.

    Returns:
        An iterator of ``bytes`` whose join is the line. The text is :func:`dumps_line`'s; a lone
        surrogate (a model's reply can hold one) is written as its ``\\uXXXX`` escape (a small record:
        the whole line with ASCII escapes), which reads back to the same string.

    Raises:
        TypeError, ValueError: ``record`` is not JSON-serialisable (possibly after pieces were given).
    """
    if large is None:
        large = strings_over(record, STREAM_LINES_FROM)
    if not large:
        text = dumps_line(record) + "\n"
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")
        del text
        yield data
        return
    pieces: list[str] = []
    size = 0
    for piece in _ENCODER.iterencode(record):
        pieces.append(piece)
        size += len(piece)
        if size >= _PIECE:
            yield "".join(pieces).encode("utf-8", "backslashreplace")
            pieces, size = [], 0
    pieces.append("\n")
    yield "".join(pieces).encode("utf-8", "backslashreplace")


_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(ensure_ascii=False)'s text, walked piece by piece


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Any]) -> None:
    """Write ``records`` as JSON Lines to ``path`` atomically (see :func:`atomic_write_text`)."""
    atomic_write_text(path, "".join(dumps_line(r) + "\n" for r in records))


class JsonlFileWriter:
    """JSON Lines written to ``path`` atomically one record at a time, so no file's whole text is ever in memory
    (docs/generation.md §12.1): a context manager whose :meth:`write` appends a record to a temp file in the same
    folder; a clean exit fsyncs it and renames it onto ``path``, an exception removes it (``path`` is untouched).

    The bytes are :func:`write_jsonl_atomic`'s for the same records (each line :func:`line_chunks`'s, so a
    record with a lone surrogate is written with its ``\\uXXXX`` escape instead of failing). The file gets the
    permissions a plain ``open(path, "w")`` would give.

    Args:
        path: the file to write (its folder is created).

    Raises:
        OSError: the temp file cannot be created, written or renamed (naming ``path``, docs/cli.md §3.4).
        TypeError, ValueError: a record is not JSON-serialisable (the temp file is removed).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.count = 0
        """Records written so far."""
        self._handle: Any = None
        self._tmp = ""

    def __enter__(self) -> JsonlFileWriter:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            give_default_mode(self._tmp)
        except OSError as exc:
            raise named_os_error(exc, self.path) from None
        self._handle = os.fdopen(fd, "wb")
        return self

    def write(self, record: Any) -> None:
        """Append ``record`` as one line."""
        try:
            for chunk in line_chunks(record):
                self._handle.write(chunk)
        except OSError as exc:
            raise named_os_error(exc, self.path) from None
        self.count += 1

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        try:
            if kind is None:
                self._handle.flush()
                os.fsync(self._handle.fileno())
            self._handle.close()
            if kind is None:
                os.replace(self._tmp, self.path)
        except OSError as exc:
            _remove(self._tmp)
            raise named_os_error(exc, self.path) from None
        if kind is not None:
            _remove(self._tmp)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_json_atomic(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as indented JSON (UTF-8, ``ensure_ascii=False``) to ``path`` atomically."""
    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")
