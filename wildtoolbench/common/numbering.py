"""The one numbering of tasks and steps that people read (docs/terms.md §1.2, §5.1).

Every human-facing output (the terminal, the report page and ``report.md``, the CSV files, ``wtb diff``,
``wtb gate`` and ``gate.md``, ``wtb audit``'s table, ``wtb review``) counts tasks 1 to 4 and steps from 1,
as the paper and the published leaderboard do ("First Turn (task 1)", columns t1-t4). The data and the
machine-read fields keep the published evaluation's 0-based indices: ``task_idx``, ``step_<s>`` keys of the
inference log, JSON fields named ``task``, ``step`` or ``failing_step``, and the ``#traj/.../<task>`` links.
"""

from __future__ import annotations

from typing import Any


def task_number(index: Any) -> Any:
    """The number people read for the task of 0-based ``index`` (``index + 1``); ``None`` or a value that is
    not a whole number is returned as it is (docs/terms.md §1.2)."""
    if isinstance(index, int) and not isinstance(index, bool):
        return index + 1
    return index


def step_number(index: Any) -> Any:
    """The number people read for the step of 0-based ``index`` (``index + 1``); ``None`` or a value that is
    not a whole number is returned as it is (docs/terms.md §5.1)."""
    return task_number(index)


__all__ = ["step_number", "task_number"]
