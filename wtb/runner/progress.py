"""The progress bar of ``wtb eval`` (rich, on stderr)."""

from __future__ import annotations

from typing import Any


class _Progress:
    """Rich progress bar: sessions done, tasks whose actions matched so far (before the argument check:
    a live sign of life, not the accuracy), elapsed / remaining time. The bar is cleared when the run
    ends, so that only the score table reports accuracy."""

    def __init__(self, enabled: bool, total: int, done: int, tasks: int, correct: int, label: str):
        self.enabled = enabled
        self.tasks, self.correct = tasks, correct
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("sessions"),
            TextColumn("right actions {task.fields[correct]}/{task.fields[tasks]} tasks"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task(label, total=total, completed=done, correct=correct, tasks=tasks)

    def __enter__(self) -> _Progress:
        if self.enabled:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            self._progress.stop()

    def advance(self, tasks: int, correct: int) -> None:
        self.tasks += tasks
        self.correct += correct
        if self.enabled:
            self._progress.update(self._task, advance=1, tasks=self.tasks, correct=self.correct)
