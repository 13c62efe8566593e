"""``wtb validate`` and ``wtb score``: check a dataset file; score a result file (docs/dataset.md, docs/scoring.md).

Bad input never produces a traceback: every problem is printed as
``file:line: field: message`` on stderr and the command exits with code 1.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from bench.schema import DatasetError, validate_file
from wtb.cli import app, scoring_option, tasks_option
from wtb.cli.data import named_dataset, pull_option
from wtb.score_run import (
    METRIC_FILE,
    SCORE_FILE,
    compare_run_files,
    score_files,
    score_run,
)
from wtb.table import metric_table

_err = Console(stderr=True, highlight=False, soft_wrap=True)
_out = Console(highlight=False, soft_wrap=True)


def _print_issues(issues) -> None:
    for issue in issues:
        _err.print(str(issue), markup=False)


@app.command("validate")
def validate(
    path: Path = typer.Argument(..., help="Dataset file (JSON Lines, one session per line), or wildtoolbench (the official data)."),
    tasks: int = tasks_option(),
    pull: bool = pull_option(),
) -> None:
    """Check a dataset file against the session schema (docs/dataset.md).

    Prints every problem as `file:line: field: message` and exits 1, or prints a
    one-line summary (sessions, tasks per type, turn subtypes) and exits 0.
    """
    path = named_dataset(path, pull)
    report = validate_file(path, tasks=tasks)
    if not report.ok:
        _print_issues(report.issues)
        _err.print(f"{path}: {len(report.issues)} problem(s) found", markup=False)
        raise typer.Exit(code=1)
    _out.print(report.summary(), markup=False)


@app.command("score")
def score(
    dataset: Path = typer.Option(..., "--dataset", help="Dataset file the run was made on (sessions, JSON Lines), or wildtoolbench."),
    results: Path = typer.Option(..., "--results", help="Result file: one record per session (JSON Lines)."),
    out: Path = typer.Option(
        ..., "--out", help=f"Output folder for {SCORE_FILE} and {METRIC_FILE} (score.fixed.jsonl, metric.fixed.json with --scoring fixed)."
    ),
    tasks: int = tasks_option(),
    scoring: str = scoring_option(),
    pull: bool = pull_option(),
) -> None:
    """Score a result file against its dataset (docs/scoring.md): writes OUT/score.jsonl and OUT/metric.json, prints the table.

    With --scoring fixed (docs/fixed-mode.md) the scoring fixes 5-8 are applied, without model calls, and
    OUT/score.fixed.jsonl and OUT/metric.fixed.json are written; on a reference run it also prints how many
    task labels flip, by fix.
    """
    if scoring not in ("reference", "fixed"):
        _err.print(f"--scoring: unknown mode {scoring!r}: use reference or fixed", markup=False)
        raise typer.Exit(code=2)
    score_file, metric_file = score_files(scoring)
    dataset = named_dataset(dataset, pull)
    try:
        metric = score_run(dataset, results, out, tasks=tasks, scoring=scoring)
        flips = _rescoring_flips(dataset, results, tasks) if scoring == "fixed" else None
    except DatasetError as exc:
        _print_issues(exc.issues)
        raise typer.Exit(code=1) from None
    except OSError as exc:
        _err.print(f"{out}: cannot write results: {exc}", markup=False)
        raise typer.Exit(code=1) from None
    _out.print(metric_table(metric))
    if flips is not None:
        by_fix = ", ".join(f"fix {fix}: {count}" for fix, count in flips["by_fix"].items()) or "none"
        _out.print(
            f"fixed vs reference scoring: {len(flips['flips'])} task label(s) flip "
            f"({flips['reference_correct']} -> {flips['fixed_correct']} correct of {flips['tasks']}); by fix: {by_fix}",
            markup=False,
        )
    _out.print(f"wrote {out / score_file} and {out / metric_file}", markup=False)


def _rescoring_flips(dataset: Path, results: Path, tasks: int):
    """``bench.compare.compare_run`` of a reference result file against its fixed rescoring; ``None`` for a fixed run (docs/fixed-mode.md §10)."""
    from wtb.score_run import load_result_records

    if any(record.get("scoring") == "fixed" for _, record in load_result_records(results)):
        return None
    return compare_run_files(dataset, results, tasks=tasks)
