"""The progress display of a batch run, one API for both runners (``wtb eval``, ``wtb generate``): a rich
bar on stderr.

A runner opens one :class:`ProgressBar` for the run and, while it is open, calls

- :meth:`ProgressBar.advance` when a session finishes (``**counts`` adds to the counters the layout
  shows, e.g. ``bar.advance(tasks=4, right_tool_names=3)``; a session without a record advances with
  none; ``line`` is what a line-per-session display prints for it);
- :meth:`ProgressBar.task_done` when one task of a session in flight finishes (the bar moves per task);
- :meth:`ProgressBar.describe` to say what is being worked on now (generation: ``"s3 task 2:
  planner (request 7)"``);
- :meth:`ProgressBar.note` to print a line that stays above the bar (generation: each session's
  outcome); it is printed on stderr with the bar off too.

A :class:`Layout` says what the bar shows and when: :data:`EVALUATION` (sessions done, tasks done,
tasks whose tool names were right so far, elapsed and remaining time; cleared when the run ends, so that
only the score table reports accuracy; when stderr is not a terminal, one line per finished session
instead) and :data:`GENERATION` (a spinner, what is being asked, sessions done, elapsed time; shown only
on a terminal, kept at the end). Usage::

    with ProgressBar(EVALUATION, total=6, done=2, label="gpt-4o-mini", tasks=8, right_tool_names=7,
                     tasks_done=8, tasks_total=24) as bar:
        bar.task_done()
        ...
        bar.advance(tasks=4, right_tool_names=3, line="wild_tool_bench_3: ...")

    with ProgressBar(GENERATION, total=len(plans), label="starting", enabled=show_progress) as bar:
        bar.describe(f"{session_id} task {index + 1}: {role} (request {count})")
        bar.note(f"{key} {path} done")
        bar.advance()

rich is imported when a bar is made enabled (or a note is printed), not before.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

TASK_LISTENER: contextvars.ContextVar[Callable[[str, int], None] | None] = contextvars.ContextVar(
    "wtb_task_listener", default=None
)
"""Set by the batch runner around its sessions: called as ``listener(session_id, tasks)`` when a session
run in this process has finished ``tasks`` more of its tasks (``wildtoolbench.runner.invoke`` watches the graph's
``task_idx``), so the bar moves per task (:meth:`ProgressBar.task_done`)."""


def _evaluation_columns() -> tuple[Any, ...]:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sessions,"),
        TextColumn("{task.fields[tasks_done]}/{task.fields[tasks_total]} tasks;"),
        TextColumn("name check {task.fields[right_tool_names]}/{task.fields[tasks]} (unscored)"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )


def _generation_columns() -> tuple[Any, ...]:
    from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

    return (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


@dataclass(frozen=True)
class Layout:
    """What a :class:`ProgressBar` shows and when.

    Attributes:
        columns: builds the rich progress columns (called once per bar; it imports rich).
        transient: the bar is cleared when the run ends.
        terminal_only: the bar is shown only when stderr is a terminal.
        lines_off_terminal: when stderr is not a terminal (a log file, a CI job), no bar: each
            :meth:`ProgressBar.advance` prints its ``line`` instead, prefixed with ``[done/total]``.
        console: keyword arguments of the ``rich.console.Console`` on stderr.
    """

    columns: Callable[[], tuple[Any, ...]]
    transient: bool = False
    terminal_only: bool = False
    lines_off_terminal: bool = False
    console: Mapping[str, Any] = field(default_factory=lambda: {"stderr": True, "emoji": False})


EVALUATION = Layout(
    _evaluation_columns,
    transient=True,
    lines_off_terminal=True,
    # Off a terminal (a log, CI) each session is one line, never folded at the console's width.
    console={"stderr": True, "highlight": False, "soft_wrap": True, "emoji": False},
)
"""``wtb eval``: the model name, sessions done of those selected, tasks done of all (moving per task),
``name check X/Y (unscored)`` (tasks whose tool calls named the right tools in the right order, before the
argument check: a sign of life, not the accuracy, which the score table alone reports), elapsed and
remaining time; off a terminal, one line per session. Counters: ``tasks``, ``right_tool_names``,
``tasks_done``, ``tasks_total``."""

GENERATION = Layout(
    _generation_columns,
    terminal_only=True,
    console={"stderr": True, "highlight": False, "soft_wrap": True, "emoji": False},
)
"""``wtb generate``: a spinner, what is being asked (:meth:`ProgressBar.describe`), sessions done, elapsed
time; no counters."""


class ProgressBar:
    """One run's progress bar (a context manager: shown from ``__enter__`` to ``__exit__``).

    Args:
        layout: :data:`EVALUATION`, :data:`GENERATION` or another :class:`Layout`.
        total: sessions in the run.
        done: sessions already done (a resumed run).
        label: the first description (eval: the model name).
        enabled: ``False`` shows nothing (and imports nothing); notes are still printed.
        counters: the starting value of each counter the layout shows (eval: ``tasks``, ``correct``).

    Attributes:
        counters: the counters so far (starting values plus every :meth:`advance`).
        enabled: whether progress is shown (``False`` also when the layout wants a terminal and stderr is none).
        lines: progress is shown as one line per session (the layout's ``lines_off_terminal``, stderr
            not a terminal) rather than a bar.
        total / done: sessions in the run, and done so far.
    """

    def __init__(
        self, layout: Layout, *, total: int, done: int = 0, label: str = "", enabled: bool = True, **counters: int
    ) -> None:
        self.layout = layout
        self.counters = dict(counters)
        self.enabled = enabled
        self.total = total
        self.done = done
        self.lines = False
        self._console: Any = None
        self._progress: Any = None
        if enabled and layout.terminal_only and not self._stderr().is_terminal:
            self.enabled = False
        if self.enabled and layout.lines_off_terminal and not self._stderr().is_terminal:
            self.lines = True
        if not self.enabled or self.lines:
            return
        from rich.progress import Progress

        self._progress = Progress(*layout.columns(), console=self._stderr(), transient=layout.transient)
        self._task = self._progress.add_task(label, total=total, completed=done, **self.counters)

    def _stderr(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self.layout.console)
        return self._console

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, line: str | None = None, **counts: int) -> None:
        """One more session done; ``counts`` are added to the counters of the same names (a new name
        starts at 0). In line mode (:attr:`lines`) ``line`` is printed on stderr as
        ``[done/total] <line>``; a bar ignores it."""
        self.done += 1
        for name, value in counts.items():
            self.counters[name] = self.counters.get(name, 0) + value
        if self._progress is not None:
            self._progress.update(self._task, advance=1, **self.counters)
        elif self.lines and line is not None:
            self.note(f"[{self.done}/{self.total}] {line}")

    def task_done(self, count: int = 1) -> None:
        """``count`` more tasks of sessions in flight finished: the ``tasks_done`` counter moves on the
        bar without a session being done (nothing is printed in line mode)."""
        self.counters["tasks_done"] = self.counters.get("tasks_done", 0) + count
        if self._progress is not None:
            self._progress.update(self._task, **self.counters)

    def describe(self, text: str) -> None:
        """Show ``text`` as the bar's description (what the run is doing now)."""
        if self._progress is not None:
            self._progress.update(self._task, description=text)

    def note(self, line: str) -> None:
        """Print ``line`` on stderr as written (no markup), above the bar while it is shown."""
        self._stderr().print(line, markup=False)
