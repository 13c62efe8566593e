"""``wtb report``: a static report of one or more runs beside the paper's leaderboard (``wildtoolbench/reports/``).

The options and their help only: :mod:`wildtoolbench.reports.command` does the work (docs/cli.md §6).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import app
from wildtoolbench.common.exits import exit_on_error


@app.command("report")
def report_command(
    run_dirs: list[Path] = typer.Argument(
        ...,
        help="Run folders (wtb eval --out), each with metric.json and score.jsonl; an ablation folder (wtb ablate "
        "--out), or a folder of them, adds the Ablation view.",
        exists=True,
        file_okay=False,
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
    seed: int = typer.Option(
        0,
        "--seed",
        help="Seed of the paired bootstrap of run-against-run differences (same seed, same intervals; the runs' own intervals are Wilson intervals, docs/metrics.md §10).",
    ),
    resamples: int = typer.Option(
        2000, "--resamples", min=100, help="Bootstrap resamples of the sessions for the paired differences."
    ),
    audit: bool = typer.Option(
        False,
        "--audit",
        help="Add an Audit section: every dataset audited as wtb audit does (docs/audit.md), findings per kind "
        "and severity and per session, failed_by_all over the runs that kept result.jsonl.",
    ),
    errata: Path | None = typer.Option(
        None,
        "--errata",
        exists=True,
        dir_okay=False,
        help="An errata file (docs/audit.md §9): the Audit section also shows each run's scores without and "
        "with it (implies --audit).",
    ),
    full_paths: bool = typer.Option(
        False,
        "--full-paths",
        help="Write the absolute paths of the run folders, datasets and model files in the report (by default "
        "a path is written relative to the current or home folder, else as .../<parent>/<name>; docs/cli.md §4).",
    ),
) -> None:
    """Write a report of one or more runs: leaderboard among the paper's 57 models, orchestration, error
    analysis, 95% intervals (Wilson for each run, a paired bootstrap for differences), plots, dataset browser and trajectory viewer (OUT/index.html works
    offline), plus report.md and CSV tables.

    Exit status 2 for a folder or file named here that does not exist, or a folder named twice; 1 for a
    folder or dataset whose content cannot be reported on (docs/cli.md §2).
    """
    from wildtoolbench.reports.command import report

    with exit_on_error():
        report(
            run_dirs, out, dataset=dataset, seed=seed, resamples=resamples, audit=audit, errata=errata,
            full_paths=full_paths,
        )
