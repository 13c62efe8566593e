"""``wtb diff RUN_A RUN_B``: the tasks whose label differs between two runs, each with the first step where the
two trajectories diverge, aligned through the gold DAG (docs/diff.md).

This module only parses the command line; the work is :mod:`wildtoolbench.comparison.diff_command`, imported by the command body
(docs/cli.md §1, §6). Runs that cannot be paired, or a dataset file that does not fit, exit 2; a run folder
whose score file is missing or malformed exits 1 (docs/cli.md §2).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from wildtoolbench.cli import Scoring, app
from wildtoolbench.common.exits import exit_on_error


class Flip(str, Enum):
    """``--flip`` values: the flip kinds of docs/diff.md §4."""

    regressed = "regressed"
    improved = "improved"


@app.command("diff")
def diff_command(
    run_a: Path = typer.Argument(
        ..., help="Run folder A (wtb eval --out, or wtb score --out).", exists=True, file_okay=False
    ),
    run_b: Path = typer.Argument(..., help="Run folder B, of the same sessions.", exists=True, file_okay=False),
    json_out: Path | None = typer.Option(
        None,
        "--json",
        help="Also write one JSON line per flipped task to this file: id, task, a_label, b_label, "
        "first_divergent_step ({a, b} step indices), flip, a_step, b_step.",
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        exists=True,
        dir_okay=False,
        help="The dataset file the runs were made on (its gold DAGs align the steps). Default: the file run.json "
        "names.",
    ),
    scoring: Scoring | None = typer.Option(
        None,
        "--scoring",
        case_sensitive=False,
        help="Diff the reference scores (score.jsonl) or the fixed ones (score.fixed.jsonl). Default: the mode "
        "each run folder's run.json names, else reference.",
    ),
    flip: Flip | None = typer.Option(
        None,
        "--flip",
        case_sensitive=False,
        help="Only list the tasks of this kind: regressed (correct in A, wrong in B) or improved (wrong in A, "
        "correct in B). The counts cover both.",
    ),
) -> None:
    """List the tasks whose label differs between two runs of the same sessions, with counts by flip kind, and
    for each the first divergent step (a parallel step matches the same calls made one per step) and both
    sides' calls and arguments at that step. Runs of other sessions, scoring modes or language sides are
    refused (exit 2)."""
    from wildtoolbench.comparison.diff_command import diff as diff_folders

    with exit_on_error():
        diff_folders(
            run_a,
            run_b,
            json_out,
            dataset,
            scoring.value if scoring else None,
            [flip.value] if flip else None,
        )
