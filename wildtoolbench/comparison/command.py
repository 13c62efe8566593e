"""``wtb compare``: the paired comparison of two run folders, printed and optionally written as JSON
(docs/trials.md §6); the exit status follows docs/cli.md §2."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from wildtoolbench.common.exits import BadConfiguration, BadInput
from wildtoolbench.common.files import atomic_write_text
from wildtoolbench.comparison.runs import RunFolderError, RunsNotComparable, compare_runs, comparison_text

_out = Console(highlight=False, soft_wrap=True)


def compare(run_a: Path, run_b: Path, json_out: Path | None = None, scoring: str | None = None) -> None:
    """Compare the runs in ``run_a`` and ``run_b`` task by task and print the comparison; with ``json_out``,
    also write it there as JSON (atomically).

    Args:
        run_a, run_b: run folders (``wtb eval --out`` or ``wtb score --out``) of the same sessions.
        scoring: ``"reference"`` or ``"fixed"``; ``None``: the mode each folder's ``run.json`` names.

    Raises:
        BadInput: a score file is missing or malformed (every problem as ``file:line: field: message``)
            or ``json_out`` cannot be written (exit 1).
        BadConfiguration: the runs cannot be paired (other sessions, scoring mode or side; exit 2).
    """
    try:
        comparison = compare_runs(run_a, run_b, scoring=scoring)
    except RunFolderError as exc:
        raise BadInput(*exc.issues) from None
    except RunsNotComparable as exc:
        raise BadConfiguration(*(f"error: not comparable: {reason}" for reason in exc.reasons)) from None
    if json_out is not None:
        try:
            atomic_write_text(json_out, json.dumps(comparison, indent=2) + "\n")
        except OSError as exc:
            raise BadInput(f"{json_out}: cannot write: {exc}") from None
    _out.print(comparison_text(comparison), markup=False)


def compare_scorings_of(run_dir: Path, scorings: str, json_out: Path | None = None) -> None:
    """``wtb compare RUN_FOLDER --scorings A,B``: print the task labels that flip between two scorings of one run
    folder with the equivalence rules behind each, and the totals per rule; with ``json_out`` also write them
    as JSON (docs/semantic-mode.md §4).

    Raises:
        UsageError: ``scorings`` is not two different mode names (exit 2).
        BadInput: a score file is missing or malformed, or ``json_out`` cannot be written (exit 1).
    """
    from wildtoolbench.common.exits import UsageError
    from wildtoolbench.comparison.scorings import compare_scorings, scorings_text

    names = [name.strip() for name in scorings.split(",") if name.strip()]
    if len(names) != 2:
        raise UsageError(f"expected two scorings A,B, got {scorings!r}", "--scorings")
    try:
        comparison = compare_scorings(run_dir, names[0], names[1])
    except RunFolderError as exc:
        raise BadInput(*exc.issues) from None
    except ValueError as exc:
        raise UsageError(str(exc), "--scorings") from None
    if json_out is not None:
        try:
            atomic_write_text(json_out, json.dumps(comparison, indent=2) + "\n")
        except OSError as exc:
            raise BadInput(f"{json_out}: cannot write: {exc}") from None
    _out.print(scorings_text(comparison), markup=False)


def compare_folders(
    run_a: Path, run_b: Path | None, json_out: Path | None, scoring: str | None, scorings: str | None
) -> None:
    """``wtb compare``: two run folders (:func:`compare`), or two scorings of one (:func:`compare_scorings_of`,
    with ``--scorings``; docs/semantic-mode.md §4).

    Raises:
        UsageError: ``--scorings`` with a second folder or ``--scoring``, or one folder without ``--scorings``
            (exit 2); otherwise what the chosen function raises.
    """
    from wildtoolbench.common.exits import UsageError

    if scorings is not None:
        if run_b is not None or scoring is not None:
            raise UsageError("with --scorings give one run folder and no --scoring", "--scorings")
        compare_scorings_of(run_a, scorings, json_out)
        return
    if run_b is None:
        raise UsageError("missing: give two run folders, or one with --scorings A,B", "RUN_B")
    compare(run_a, run_b, json_out, scoring)
