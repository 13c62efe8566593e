"""Paths in shareable outputs (docs/cli.md §4): the report folder (``index.html``, ``report.md``,
``report.json``), ``gate.md`` and the exports name files without the absolute paths of the user's machine,
unless the user asks for them (``wtb report --full-paths``).

A path under the current folder is written relative to it, one under the home folder as ``~/...``, and
any other absolute path as ``.../<parent>/<name>``. :func:`shareable_text` applies the same to every
absolute path inside a text (a model spec such as ``replay:/home/me/c.jsonl#m``).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_full: contextvars.ContextVar[bool] = contextvars.ContextVar("wtb_full_paths", default=False)

_ABSOLUTE = re.compile(r"(?<![\w./~-])(/(?!/)[^\s#:;,'\"`<>|()\[\]{}]+|[A-Za-z]:\\[^\s#;,'\"`<>|()\[\]{}]+)")


@contextlib.contextmanager
def full_paths(enabled: bool = True) -> Iterator[None]:
    """Within the block, :func:`shareable_path` and :func:`shareable_text` keep paths as they are
    (``--full-paths``)."""
    token = _full.set(enabled)
    try:
        yield
    finally:
        _full.reset(token)


def shareable_path(path: Any) -> str:
    """``path`` as a shareable output names it (see the module doc); ``""`` for ``None``.

    Args:
        path: a path or text; a relative path is returned as it is.
    """
    if path is None:
        return ""
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    if _full.get() or not os.path.isabs(text):
        return text
    found = Path(text)
    for base, shown in ((Path.cwd(), None), (Path.home(), "~")):
        with contextlib.suppress(ValueError, OSError, RuntimeError):
            inner = found.relative_to(base)
            if shown is None:
                return str(inner) if str(inner) != "." else "."
            return f"~/{inner}" if str(inner) != "." else "~"
    parts = found.parts[1:]
    return ".../" + "/".join(parts[-2:]) if parts else "/"


def shareable_text(text: Any) -> Any:
    """``text`` with every absolute path in it written by :func:`shareable_path`; a value that is not a
    string is returned as it is."""
    if not isinstance(text, str) or _full.get():
        return text
    return _ABSOLUTE.sub(lambda m: shareable_path(m.group(1)), text)


__all__ = ["full_paths", "shareable_path", "shareable_text"]
