"""The records of a review and their rules (docs/review.md §3-§6): a session under review
(:class:`SessionRow`), a verdict (:class:`Verdict`), what a reviewer's name, verdict and reason may be,
and the errors the review database raises (:class:`Stale`, :class:`StoreError`). The database that
keeps them is :mod:`wildtoolbench.review.store`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

VERDICTS: tuple[str, ...] = ("accept", "reject")
"""A reviewer's verdict on a task (docs/review.md §4)."""

REVIEWER_NAME = re.compile(r"^[^\W_][\w .@'-]{0,39}$")
"""A reviewer's name: 1-40 characters, letters, digits, spaces and ``. @ ' - _``, starting with a letter or
digit (docs/review.md §4)."""

MAX_REASON_CHARS = 2000
"""Longest reason or note kept with a verdict or an edit (docs/review.md §4)."""


class Stale(ValueError):
    """An edit or verdict made on a version of the session that is no longer the current one (docs/review.md §6).

    Attributes:
        current: the session's version now.
        by: who made the latest edit, ``at``: when (ISO 8601, UTC).
    """

    def __init__(self, sid: str | None, given: int, current: int, by: str | None, at: str | None):
        self.current, self.by, self.at = current, by, at
        who = f" by {by} at {at}" if by else ""
        super().__init__(
            f"session {sid} changed since you loaded it (you saw version {given}, it is now version {current}{who}); "
            "nothing was saved: reload the page to see the change, then make your edit or verdict again"
        )


class StoreError(ValueError):
    """The database cannot be used for this dataset: another dataset, another layout, an unknown session."""


def now() -> str:
    """The current time as ISO 8601 UTC to the second (``2026-12-02T01:23:45Z``; docs/review.md §3)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_reviewer(name: Any) -> str:
    """``name`` stripped, when it is a reviewer's name by :data:`REVIEWER_NAME` (docs/review.md §4).

    Raises:
        ValueError: anything else, with the rule.
    """
    text = name.strip() if isinstance(name, str) else ""
    if not REVIEWER_NAME.match(text):
        raise ValueError(
            "a reviewer's name is 1-40 letters, digits, spaces or . @ ' - _, starting with a letter or digit"
        )
    return text


@dataclass
class SessionRow:
    """One session of the review database (docs/review.md §3).

    Attributes:
        pos: 0-based position in the dataset file (the session's key here and in URLs).
        sid: the session's id (``None`` for a line without a string id).
        line: the dataset line (1-based).
        original: the session as read; ``current``: with the saved edits.
        version: 1 plus the number of saved edits.
        updated_at, updated_by: the latest edit's time and reviewer (``None`` before any edit).
        findings: the audit findings of the current session (``wtb audit --json`` keys plus ``field``),
            duplicates included.
        valid: the current session passes the loader (docs/dataset.md §6).
    """

    pos: int
    sid: str | None
    line: int
    original: dict[str, Any]
    current: dict[str, Any]
    version: int
    updated_at: str | None
    updated_by: str | None
    findings: list[dict[str, Any]] = field(default_factory=list)
    valid: bool = True


@dataclass(frozen=True)
class Verdict:
    """A reviewer's verdict on one task (docs/review.md §4): ``verdict`` is ``accept`` or ``reject``,
    ``version`` the session version it was given on."""

    pos: int
    task: int
    reviewer: str
    verdict: str
    reason: str
    version: int
    at: str
