"""The lock of a run folder around its scoring (docs/cli.md §3.2).

``wtb eval`` holds ``DIR/.wtb-eval.lock`` while it runs sessions (``wildtoolbench.runner.batch``), and a run
removes the temporary files a killed run left in its folder when it starts. Scoring writes temporary files
too (``.score.jsonl.<random>.tmp``), so it holds the same lock: a second ``wtb eval`` or ``wtb score`` on the
folder waits for it (or, for a run, stops with a clear message) instead of removing or replacing the first
one's files under it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from wildtoolbench.common.run_folder import LOCK_FILE

SCORING_WAIT = 600.0
"""Seconds a scoring waits for another command that holds the folder's lock."""


@contextlib.contextmanager
def scoring_lock(folder: str | os.PathLike[str], wait: float = SCORING_WAIT) -> Iterator[None]:
    """Hold ``folder``'s run lock (``.wtb-eval.lock``) during the block, waiting up to ``wait`` seconds for it;
    a folder that does not exist yet is not locked (nothing else writes there; it is not made here).

    Raises:
        RuntimeError: the lock stayed held for ``wait`` seconds (the message names the folder; exit 1).
    """
    from filelock import FileLock, Timeout

    path = Path(folder)
    if not path.is_dir():
        yield
        return
    lock = FileLock(str(path / LOCK_FILE))
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise RuntimeError(
            f"another `wtb` command is writing to {path} (lock {path / LOCK_FILE} held for {wait:.0f} s); "
            "try again when it has finished"
        ) from None
    try:
        yield
    finally:
        lock.release()


__all__ = ["SCORING_WAIT", "scoring_lock"]
