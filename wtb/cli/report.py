"""``wtb report``: a static report of one or more runs beside the paper's leaderboard (``wtb/report/``)."""

from __future__ import annotations

from pathlib import Path

import typer

from wtb.cli import app
from wtb.cli._console import LazyConsole

_err = LazyConsole(stderr=True, highlight=False, soft_wrap=True)


def _percent(value: float) -> str:
    return f"{value * 100:.2f}%"


def write_report(
    run_dirs: list[Path], out: Path, *, dataset: Path | None = None, seed: int = 0, resamples: int = 2000
) -> None:
    """Build the report of ``run_dirs`` into ``out`` and print where it went, each run's intervals and comparisons.

    Raises:
        typer.Exit: code 1 when a run folder or dataset cannot be read or the folder cannot be written
            (the problem is printed on stderr, no traceback).
    """
    from wtb.report import ReportError, build_report

    try:
        report = build_report(run_dirs, out, dataset=dataset, seed=seed, resamples=resamples)
    except ReportError as exc:
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(code=1) from None
    except OSError as exc:
        _err.print(f"{out}: cannot write the report: {exc}", markup=False)
        raise typer.Exit(code=1) from None
    for run in report.runs:
        figures = report.figures[run.key]
        _err.print(
            f"{run.label}: task accuracy {_percent(figures.task.value)} [95% CI {_percent(figures.task.low)}, "
            f"{_percent(figures.task.high)}], session accuracy {_percent(figures.session.value)} "
            f"[{_percent(figures.session.low)}, {_percent(figures.session.high)}], {run.failed()} failed tasks",
            markup=False,
        )
    for comparison in report.comparisons:
        _err.print(
            f"{comparison.a.label} vs {comparison.b.label} ({comparison.difference.sessions} shared sessions): {comparison.verdict()}",
            markup=False,
        )
    typer.echo(
        f"report in {out}/: open {out / 'index.html'} in a browser; report.md, leaderboard.csv, orchestration.csv, errors.csv, tasks.csv"
    )


@app.command("report")
def report_command(
    run_dirs: list[Path] = typer.Argument(
        ..., help="Run folders (wtb eval --out), each with metric.json and score.jsonl.", exists=True, file_okay=False
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Report folder: index.html, report.md, leaderboard.csv, orchestration.csv, errors.csv, tasks.csv.",
        file_okay=False,
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        exists=True,
        dir_okay=False,
        help="Dataset file for run folders whose run.json names none (e.g. made by `wtb score`).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap (same seed, same confidence intervals)."),
    resamples: int = typer.Option(2000, "--resamples", min=100, help="Bootstrap resamples of the sessions."),
) -> None:
    """Write a report of one or more runs: leaderboard among the paper's 57 models, orchestration, error
    analysis, 95% bootstrap intervals, plots, dataset browser and trajectory viewer (OUT/index.html works
    offline), plus report.md and CSV tables.

    Exit status 2 for a folder or file named here that does not exist, or a folder named twice; 1 for a
    folder or dataset whose content cannot be reported on (docs/cli.md §2).
    """
    if len({path.resolve() for path in run_dirs}) != len(run_dirs):
        raise typer.BadParameter("a run folder is given twice", param_hint="'run_dirs'")
    write_report(run_dirs, out, dataset=dataset, seed=seed, resamples=resamples)
