"""Ctrl-C and SIGTERM during a long run: stop cleanly, say what was kept and how to resume.

Results are written per session as they finish (``result.jsonl`` of ``wtb eval``,
``sessions/<key>/outcome.json`` of ``wtb generate``), so an interrupted run loses at most the
sessions in flight; running the same command again picks up where it stopped.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

INTERRUPTED_EXIT_CODE = 130
"""Exit status after an interruption (128 + SIGINT, the shell convention)."""

_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def resumable_run(kept: Callable[[], str]) -> Iterator[None]:
    """Run the body with SIGTERM treated like Ctrl-C; on either, print a resume hint and exit 130.

    Args:
        kept: called after the interruption; returns a phrase saying what is on disk, e.g.
            ``"3 of 6 sessions are in runs/x/result.jsonl"``.

    Raises:
        typer.Exit: with code 130 after an interruption (the hint is printed to stderr first).
    """
    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    except ValueError:  # not the main thread (e.g. called from a worker): leave SIGTERM alone
        previous = None
    try:
        yield
    except KeyboardInterrupt:
        _err.print(
            f"interrupted: {kept()}; run the same command again to resume (finished sessions are kept, "
            "the ones in flight are run again).",
            markup=False,
        )
        raise typer.Exit(code=INTERRUPTED_EXIT_CODE) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
