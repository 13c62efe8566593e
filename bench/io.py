"""Reading JSON Lines files line by line, for the dataset, result and generation loaders: each line decoded
on its own, so one bad byte spoils only its line. Writing files is the application's concern
(:mod:`wildtoolbench.common.files`, docs/architecture.md §3.2).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

SHARE_LINES_FROM = 1 << 20
"""Lines at least this long (characters) are parsed by :func:`loads_json` with equal long strings shared."""

SHARED_STRING_FROM = 1 << 16
"""Strings at least this long (characters) are held once per line when they are equal (:func:`loads_json`)."""


def loads_json(text: str | bytes) -> Any:
    """``json.loads(text)``, holding equal long strings of a long line once (docs/evaluation.md §5.6).

    A result line repeats each tool observation in every later step's ``inference_input``: a line of
    :data:`SHARE_LINES_FROM` characters or more is parsed with an ``object_hook`` that makes every
    string value of :data:`SHARED_STRING_FROM` characters or more (of an object, or of an array held by
    an object) the one object of its text, so a 20 MB observation seen in seven steps is held once,
    not seven times. The value is equal to ``json.loads(text)``'s (strings are immutable).

    Raises:
        json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError: as ``json.loads``.
    """
    if len(text) < SHARE_LINES_FROM:
        return json.loads(text)
    seen: dict[str, str] = {}

    def share(value: Any) -> Any:
        if type(value) is str and len(value) >= SHARED_STRING_FROM:
            return seen.setdefault(value, value)
        if type(value) is list:
            for index, item in enumerate(value):
                if type(item) is str and len(item) >= SHARED_STRING_FROM:
                    value[index] = seen.setdefault(item, item)
        return value

    def hook(obj: dict[str, Any]) -> dict[str, Any]:
        for key, value in obj.items():
            obj[key] = share(value)
        return obj

    return json.loads(text, object_hook=hook)


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
    for number, _, _, text in iter_jsonl_spans(path):
        held = [text]
        del text
        yield number, held.pop()  # the line is the caller's alone (a 100 MB line is not held twice)


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
            value = loads_json(text)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: not JSON ({exc.msg})") from None
        del text  # not held while the caller has the value
        yield number, value


def iter_jsonl_spans(path: str | os.PathLike[str]) -> Iterator[tuple[int, int, int, str | UndecodableLine]]:
    """Yield ``(line_number, offset, length, text)`` for each non-blank line of ``path``: :func:`iter_jsonl`
    plus where the line's bytes are (``offset`` from the start of the file, ``length`` including the
    line end), so that a caller can read one line again later (``seek(offset)``, ``read(length)``)
    instead of keeping it in memory.

    Raises:
        OSError: the file cannot be opened or read (missing, a directory, no permission).
    """
    offset = number = 0
    with open(path, "rb") as handle:
        for raw in handle:  # not enumerate(): its cached result tuple would hold the last line's bytes
            number += 1
            start, length = offset, len(raw)
            offset += length
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = raw[exc.start : exc.start + 1].hex()
                message = f"not UTF-8 text (byte {exc.start + 1} of the line is 0x{bad})"
                yield number, start, length, UndecodableLine(number, message)
                continue
            del raw  # the bytes are not held beside the text while the caller parses it
            if not text.isspace():  # not strip(): that copies the line
                held = [text]
                del text
                yield number, start, length, held.pop()  # the line is the caller's alone


def read_span(path: str | os.PathLike[str], offset: int, length: int) -> bytes:
    """The ``length`` bytes of ``path`` at ``offset`` (a line found by :func:`iter_jsonl_spans`).

    Raises:
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)
