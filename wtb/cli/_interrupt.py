"""Ctrl-C and SIGTERM during a long run: :func:`wtb.commands.exits.resumable_run` (docs/cli.md §2).

Kept for ``wtb/cli/generate.py``, which imports :func:`resumable_run` from here; the rule and its
exit status 130 are defined once, in :mod:`wtb.commands.exits`.
"""

from wtb.commands.exits import INTERRUPTED as INTERRUPTED_EXIT_CODE
from wtb.commands.exits import resumable_run

__all__ = ["INTERRUPTED_EXIT_CODE", "resumable_run"]
