"""``wtb diff``: the tasks whose label differs between two runs, each with its first divergent step, printed and
optionally written as JSON Lines (docs/diff.md §4); the exit status follows docs/cli.md §2."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from wildtoolbench.common.exits import BadConfiguration, BadInput
from wildtoolbench.common.files import atomic_write_text
from wildtoolbench.comparison.diff import DatasetNotFound, RunFolderError, RunsNotComparable, diff_lines, diff_runs

_out = Console(highlight=False, soft_wrap=True)

JSON_KEYS = ("id", "task", "a_label", "b_label", "first_divergent_step", "flip", "a_step", "b_step")
"""The keys of a ``--json`` line, in order (docs/diff.md §4)."""


def read_diff(run_a: Path, run_b: Path, dataset: Path | None, scoring: str | None) -> dict:
    """:func:`wildtoolbench.comparison.diff.diff_runs`, its failures as the exit statuses of docs/cli.md §2.

    Raises:
        BadInput: a run folder's score file is missing or malformed, or a flipped task's log cannot be read
            (exit 1). BadConfiguration: the runs cannot be paired, or no dataset file fits (exit 2).
    """
    try:
        return diff_runs(run_a, run_b, dataset=dataset, scoring=scoring)
    except RunFolderError as exc:
        raise BadInput(*exc.issues) from None
    except RunsNotComparable as exc:
        raise BadConfiguration(*(f"error: not comparable: {reason}" for reason in exc.reasons)) from None
    except DatasetNotFound as exc:
        raise BadConfiguration(*(f"error: {reason}" for reason in exc.reasons)) from None


def diff(
    run_a: Path,
    run_b: Path,
    json_out: Path | None = None,
    dataset: Path | None = None,
    scoring: str | None = None,
    flips: Sequence[str] | None = None,
) -> None:
    """Diff the runs in ``run_a`` and ``run_b`` and print the flipped tasks; with ``json_out``, also write one
    JSON line per flipped task there (atomically; keys :data:`JSON_KEYS`).

    Args:
        run_a, run_b: run folders of the same sessions.
        json_out: the JSON Lines file.
        dataset: the dataset file of the gold DAGs; ``None``: the one ``run.json`` names.
        scoring: ``"reference"`` or ``"fixed"``; ``None``: the mode each folder's ``run.json`` names.
        flips: the flip kinds to print and write (``regressed``, ``improved``); ``None``: both. The counts
            printed are always over every flipped task.

    Raises:
        BadInput, BadConfiguration: as :func:`read_diff`; BadInput also when ``json_out`` cannot be written.
    """
    result = read_diff(run_a, run_b, dataset, scoring)
    if json_out is not None:
        chosen = [task for task in result["flipped"] if flips is None or task["flip"] in flips]
        text = "".join(json.dumps({key: task[key] for key in JSON_KEYS}, ensure_ascii=False) + "\n" for task in chosen)
        try:
            atomic_write_text(json_out, text)
        except OSError as exc:
            raise BadInput(f"{json_out}: cannot write: {exc}") from None
    _out.print("\n".join(diff_lines(result, flips)), markup=False)
