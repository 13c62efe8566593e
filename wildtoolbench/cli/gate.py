"""``wtb gate RUN --baseline RUN_B``: a regression gate for CI on the paired difference of task accuracy
(docs/diff.md §6).

This module only parses the command line; the work is :mod:`wildtoolbench.comparison.gate`, imported by the command body
(docs/cli.md §1, §6). Exit status: 0 the gate passed; 1 it failed, or a score file is bad; 2 the runs cannot be
paired or no dataset file fits (docs/cli.md §2).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import Scoring, app
from wildtoolbench.common.exits import exit_on_error


@app.command("gate")
def gate_command(
    run: Path = typer.Argument(
        ..., help="The candidate's run folder (wtb eval --out, or wtb score --out).", exists=True, file_okay=False
    ),
    baseline: Path = typer.Option(
        ..., "--baseline", help="The baseline's run folder, of the same sessions.", exists=True, file_okay=False
    ),
    max_drop: float | None = typer.Option(
        None,
        "--max-drop",
        min=0.0,
        help="Also fail when task accuracy drops by more than this many percentage points, even within noise.",
    ),
    markdown: Path | None = typer.Option(
        None, "--markdown", help="Write a Markdown summary to this file, fit for a pull-request comment."
    ),
    json_out: Path | None = typer.Option(
        None, "--json", help="Write the comparison, the flipped tasks and the decision as JSON to this file."
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        exists=True,
        dir_okay=False,
        help="The dataset file the runs were made on. Default: the file run.json names.",
    ),
    scoring: Scoring | None = typer.Option(
        None,
        "--scoring",
        case_sensitive=False,
        help="Gate on the reference scores (score.jsonl) or the fixed ones (score.fixed.jsonl). Default: the mode "
        "each run folder's run.json names, else reference.",
    ),
) -> None:
    """Fail (exit 1) when the candidate run is worse than the baseline beyond noise: the 95% interval of the paired
    difference of task accuracy (candidate minus baseline, sessions as clusters) lies below 0; with --max-drop, also
    when the drop exceeds that many points. Prints both accuracies, the flipped tasks with their first
    divergent step, and PASS or FAIL. Exit status: 0 passed, 1 failed (or a score file is bad), 2 the runs
    cannot be paired."""
    from wildtoolbench.comparison.gate import gate as gate_runs

    with exit_on_error():
        gate_runs(run, baseline, max_drop, markdown, json_out, dataset, scoring.value if scoring else None)
