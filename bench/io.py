"""Small file helpers shared by the CLI, the runner and the scorer: atomic writes, JSON Lines."""

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


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Any]) -> None:
    """Write ``records`` as JSON Lines to ``path`` atomically (see :func:`atomic_write_text`)."""
    atomic_write_text(path, "".join(dumps_line(r) + "\n" for r in records))


def write_json_atomic(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as indented JSON (UTF-8, ``ensure_ascii=False``) to ``path`` atomically."""
    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")


class UndecodableLine(ValueError):
    """A line of a JSON Lines file that is not UTF-8 text.

    Attributes:
        line: 1-based line number.
        message: what is wrong, e.g. ``not UTF-8 text (byte 12 of the line is 0xe9)``.
    """

    def __init__(self, line: int, message: str):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, str | UndecodableLine]]:
    """Yield ``(line_number, text)`` for each non-blank line of ``path`` (1-based line numbers).

    The file is read as bytes and each line decoded as UTF-8 on its own, so a
    bad byte spoils only its line: for such a line the second item is an
    :class:`UndecodableLine` (not raised) and reading goes on. Lines end at
    ``\n`` (``\r\n`` works: JSON ignores the ``\r``). Parsing is left to the
    caller so that it can report the file, line and field at fault.

    Raises:
        OSError: the file cannot be opened or read (missing, a directory, no permission).
    """
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = raw[exc.start : exc.start + 1].hex()
                yield number, UndecodableLine(number, f"not UTF-8 text (byte {exc.start + 1} of the line is 0x{bad})")
                continue
            if line.strip():
                yield number, line


def json_lines(path: str | os.PathLike[str], error: type[Exception] = ValueError) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line of the JSON Lines file ``path``.

    For callers that stop at the first bad line (the dataset and result loaders
    collect every problem with :func:`iter_jsonl` instead).

    Raises:
        error: a line that is not UTF-8 or not JSON, as ``"<path>:<line>: not JSON (<reason>)"``.
        OSError: the file cannot be opened or read.
    """
    for number, text in iter_jsonl(path):
        if isinstance(text, UndecodableLine):
            raise error(f"{path}:{number}: {text.message}")
        try:
            yield number, json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: not JSON ({exc.msg})") from None


def iter_jsonl_spans(path: str | os.PathLike[str]) -> Iterator[tuple[int, int, int, str | UndecodableLine]]:
    """Yield ``(line_number, offset, length, text)`` for each non-blank line of ``path``: :func:`iter_jsonl`
    plus where the line's bytes are (``offset`` from the start of the file, ``length`` including the
    line end), so that a caller can read one line again later (``seek(offset)``, ``read(length)``)
    instead of keeping it in memory.

    Raises:
        OSError: the file cannot be opened or read (missing, a directory, no permission).
    """
    offset = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = raw[exc.start : exc.start + 1].hex()
                message = f"not UTF-8 text (byte {exc.start + 1} of the line is 0x{bad})"
                yield number, start, len(raw), UndecodableLine(number, message)
                continue
            if line.strip():
                yield number, start, len(raw), line


def read_span(path: str | os.PathLike[str], offset: int, length: int) -> bytes:
    """The ``length`` bytes of ``path`` at ``offset`` (a line found by :func:`iter_jsonl_spans`).

    Raises:
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)
