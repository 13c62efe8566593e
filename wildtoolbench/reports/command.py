"""``wtb report`` and ``wtb eval --report``: a static report of one or more runs beside the paper's
leaderboard (:mod:`wildtoolbench.reports`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from wildtoolbench.common.exits import BadInput, UsageError
from wildtoolbench.reports import build_report

_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _percent(value: float) -> str:
    return f"{value * 100:.2f}%"


def report(
    run_dirs: list[Path],
    out: Path,
    *,
    dataset: Path | None = None,
    seed: int = 0,
    resamples: int = 2000,
    audit: bool = False,
    errata: Path | None = None,
    full_paths: bool = False,
) -> None:
    """``wtb report``: :func:`write_report` of ``run_dirs``, each folder named once (``audit``, ``errata``:
    the audit section, docs/audit.md; ``full_paths``: keep absolute paths in the outputs, docs/cli.md §4).

    Raises:
        UsageError: a run folder is given twice (exit 2).
        wildtoolbench.reports.run_data.ReportError, BadInput: as :func:`write_report` (exit 1).
    """
    from wildtoolbench.common.shareable import full_paths as keep_full_paths

    if len({path.resolve() for path in run_dirs}) != len(run_dirs):
        raise UsageError("a run folder is given twice", "run_dirs")
    with keep_full_paths(full_paths):
        write_report(run_dirs, out, dataset=dataset, seed=seed, resamples=resamples, audit=audit, errata=errata)


def write_report(
    run_dirs: list[Path],
    out: Path,
    *,
    dataset: Path | None = None,
    seed: int = 0,
    resamples: int = 2000,
    audit: bool = False,
    errata: Path | None = None,
) -> None:
    """Build the report of ``run_dirs`` into ``out`` (``seed`` and ``resamples`` of the bootstrap; ``audit``
    and ``errata``: the audit section of docs/audit.md) and print where it went, each run's 95% intervals,
    the comparisons of the runs and, with the audit, the findings per dataset.

    Raises:
        wildtoolbench.reports.run_data.ReportError: a run folder or dataset cannot be reported on (exit 1, ``error: ...``).
        BadInput: the report folder cannot be written (exit 1).
    """
    try:
        built = build_report(run_dirs, out, dataset=dataset, seed=seed, resamples=resamples, audit=audit, errata=errata)
    except OSError as exc:
        raise BadInput(f"{out}: cannot write the report: {exc}") from None
    for run in built.runs:
        figures = built.figures[run.key]
        _err.print(
            f"{run.label}: task accuracy {_percent(figures.task.value)} [95% CI {_percent(figures.task.low)}, "
            f"{_percent(figures.task.high)}], session accuracy {_percent(figures.session.value)} "
            f"[{_percent(figures.session.low)}, {_percent(figures.session.high)}], {run.failed()} failed tasks",
            markup=False,
        )
    for comparison in built.comparisons:
        _err.print(
            f"{comparison.a.label} vs {comparison.b.label} ({comparison.difference.sessions} shared sessions): {comparison.verdict()}",
            markup=False,
        )
    for entry in (built.audit or {}).get("datasets", []):
        _err.print(
            f"audit of {entry['path']}: {entry['findings']} finding(s) in {len(entry['sessions'])} session(s)",
            markup=False,
        )
    typer.echo(
        f"report in {out}/: open {out / 'index.html'} in a browser; report.md, leaderboard.csv, orchestration.csv, errors.csv, tasks.csv"
    )
