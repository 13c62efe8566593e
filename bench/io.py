"""Reading JSON Lines files line by line, for the dataset, result and generation loaders: each line decoded
on its own, so one bad byte spoils only its line. Writing files is the application's concern
(:mod:`wtb.files`, docs/architecture.md §3.2).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any


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
