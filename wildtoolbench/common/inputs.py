"""Checks of command-line values that need more than click sees while parsing (docs/cli.md §2).

Light: the standard library and :mod:`wildtoolbench.common.exits` only, so ``wildtoolbench/cli`` may import it at
start-up (docs/cli.md §1).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from wildtoolbench.common.exits import UsageError


def require_file(path: Path, option: str) -> Path:
    """``path`` itself when it is an existing file, else a usage error naming ``option`` (docs/cli.md §2).

    For values that click cannot check when it parses them (``--dataset`` also takes the name
    ``wildtoolbench``): called after the name is resolved, so the message and exit status 2 are
    click's own (``Invalid value for '--dataset': File 'x.jsonl' does not exist.``).

    Raises:
        UsageError: ``path`` does not exist or is a directory.
    """
    if not path.exists():
        raise UsageError(f"File {str(path)!r} does not exist.", option)
    if path.is_dir():
        raise UsageError(f"File {str(path)!r} is a directory.", option)
    return path


def wanted_ids(values: Iterable[str] | None) -> list[str]:
    """The session ids of repeated ``--ids`` values, each comma-separated (``["0,3", "wild_tool_bench_7"]``
    -> ``["0", "3", "wild_tool_bench_7"]``, blanks dropped; docs/cli.md §2); ``[]`` when not given.

    Raises:
        UsageError: ``--ids`` was given but names no session (e.g. ``--ids ,``).
    """
    given = list(values or [])
    wanted = [part for item in given for part in item.split(",") if part.strip()]
    if given and not wanted:
        raise UsageError("names no session", "--ids")
    return wanted
