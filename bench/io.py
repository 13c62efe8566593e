"""Small file helpers shared by the CLI, the runner and the scorer: atomic writes, JSON Lines."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: temp file in the same folder, fsync, rename.

    A reader sees either the old file or the whole new one, never a torn file.
    Creates the parent folder if needed. Raises ``OSError`` on I/O failure.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
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


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each non-blank line of ``path`` (1-based line numbers).

    Parsing is left to the caller so that it can report the file, line and field at fault.
    """
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line
