"""``wtb compare RUN_A RUN_B``: the paired difference of two runs' task and session accuracy, its interval, the
minimum detectable difference and the verdict (docs/trials.md §6).

This module only parses the command line; the work is :mod:`wildtoolbench.comparison.command`, imported by the command
body (docs/cli.md §1, §6). Runs that cannot be paired (other sessions, scoring mode or language side) are refused
with exit status 2; a run folder whose score file is missing or malformed exits 1 (docs/cli.md §2).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import Scoring, app
from wildtoolbench.common.exits import exit_on_error


@app.command("compare")
def compare_command(
    run_a: Path = typer.Argument(
        ..., help="Run folder A (wtb eval --out, or wtb score --out).", exists=True, file_okay=False
    ),
    run_b: Path | None = typer.Argument(
        None, help="Run folder B, of the same sessions (omit with --scorings).", exists=True, file_okay=False
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the comparison as JSON to this file."),
    scoring: Scoring | None = typer.Option(
        None,
        "--scoring",
        case_sensitive=False,
        help="Compare the reference scores (score.jsonl) or the fixed ones (score.fixed.jsonl). Default: the mode "
        "each run folder's run.json names, else reference.",
    ),
    scorings: str | None = typer.Option(
        None,
        "--scorings",
        help="A,B: compare two scorings of the one run folder RUN_A instead (e.g. fixed,semantic): every task whose "
        "label flips, with the equivalence rule that flipped it, and the totals per rule (docs/semantic-mode.md §4).",
    ),
) -> None:
    """Compare two runs of the same sessions task by task: task and session accuracy of A and B, the difference
    A - B with its 95% interval over sessions, the minimum detectable difference (80% power) and the verdict
    (A better / B better / within noise). Runs of other sessions, scoring modes or language sides are refused
    (exit 2). With --scorings A,B and one run folder: the task labels that flip between two of its scorings,
    each with the equivalence rule that flipped it (docs/semantic-mode.md §4)."""
    from wildtoolbench.comparison.command import compare_folders

    with exit_on_error():
        compare_folders(run_a, run_b, json_out, scoring.value if scoring else None, scorings)
