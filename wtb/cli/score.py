"""``wtb validate`` and ``wtb score``: check a dataset file; score a result file (docs/dataset.md, docs/scoring.md).

Bad input never produces a traceback: every problem is printed as
``file:line: field: message`` on stderr and the command exits with code 1; a file named on the
command line that does not exist, or an unknown ``--scoring`` / ``--lang``, is a usage error (exit 2;
docs/cli.md §2). The scoring core is imported by the command bodies, not here (docs/cli.md §1).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wtb.cli import Lang, Scoring, app, lang_option, require_file, resolve_tasks, scoring_option, tasks_option
from wtb.cli._console import LazyConsole
from wtb.cli.data import named_dataset, pull_option

_err = LazyConsole(stderr=True, highlight=False, soft_wrap=True)
_out = LazyConsole(highlight=False, soft_wrap=True)


def _print_issues(issues) -> None:
    for issue in issues:
        _err.print(str(issue), markup=False)


@app.command("validate")
def validate(
    path: Path = typer.Argument(
        ..., help="Dataset file (JSON Lines, one session per line), or wildtoolbench (the official data)."
    ),
    tasks: int | None = tasks_option(),
    lang: Lang | None = lang_option(
        "Also check that the sessions can be evaluated on this side (zh: every Chinese label maps to a "
        "metric bucket), and count the tasks under its labels. Both sides are always checked field by field."
    ),
    pull: bool = pull_option(),
) -> None:
    """Check a dataset file against the session schema (docs/dataset.md).

    Prints every problem as `file:line: field: message` and exits 1, or prints a
    one-line summary (sessions, tasks per type, turn subtypes) and exits 0.
    """
    from bench.schema import task_counts, validate_file

    path = require_file(named_dataset(path, pull), "path")
    mixed = []
    if tasks is None:  # the count the sessions share; lines of another count are problems too
        tasks, mixed = task_counts(path)
    report = validate_file(path, tasks=tasks, language=lang.value if lang else "en")
    report.issues = sorted([*mixed, *report.issues], key=lambda issue: issue.line or 0)
    if not report.ok:
        _print_issues(report.issues)
        _err.print(f"{path}: {len(report.issues)} problem(s) found", markup=False)
        raise typer.Exit(code=1)
    _out.print(report.summary(), markup=False)


@app.command("score")
def score(
    dataset: Path = typer.Option(
        ..., "--dataset", help="Dataset file the run was made on (sessions, JSON Lines), or wildtoolbench."
    ),
    results: Path = typer.Option(..., "--results", help="Result file: one record per session (JSON Lines)."),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Output folder for score.jsonl, metric.json and summary_metrics.json (score.fixed.jsonl, "
        "metric.fixed.json and summary_metrics.fixed.json with --scoring fixed).",
    ),
    tasks: int | None = tasks_option(),
    scoring: Scoring = scoring_option(),
    lang: Lang | None = lang_option(
        "Side of the dataset the results were made on (en: english_* fields, zh: the Chinese ones). "
        'Default: what the records say (a `wtb eval --lang zh` record carries "language": "zh"), else en.'
    ),
    pull: bool = pull_option(),
    errata: Path | None = typer.Option(
        None,
        "--errata",
        help="An errata file (docs/audit.md §9): also score with it applied, written to OUT/metric.errata.json "
        "and OUT/summary_metrics.errata.json (metric.json stays the published score), and print both.",
    ),
) -> None:
    """Score a result file against its dataset (docs/scoring.md): writes OUT/score.jsonl, OUT/metric.json
    (the published format) and OUT/summary_metrics.json (empty groups are null), prints the table.

    With --scoring fixed (docs/fixed-mode.md) the scoring fixes 5-8 are applied, without model calls, and
    OUT/score.fixed.jsonl, OUT/metric.fixed.json and OUT/summary_metrics.fixed.json are written; on a
    reference run it also prints how many task labels flip, by fix, and how the accomplish progress
    rate changes (fix 8 counts gold nodes, docs/fixed-mode.md §9).
    """
    from bench.schema import DatasetError
    from wtb.score_run import score_files, score_run, summary_metrics_file
    from wtb.table import metric_table

    scoring = scoring.value
    score_file, metric_file = score_files(scoring)
    summary_file = summary_metrics_file(scoring)
    dataset = require_file(named_dataset(dataset, pull), "--dataset")
    require_file(results, "--results")
    if errata is not None:
        require_file(errata, "--errata")
    language = lang.value if lang else None
    try:
        tasks = resolve_tasks(dataset, tasks)
        if errata is not None:  # a bad errata file stops the command before anything is written
            from wtb.audit_run import check_errata_file

            check_errata_file(dataset, errata, tasks=tasks)
        metric = score_run(dataset, results, out, tasks=tasks, scoring=scoring, language=language)
        flips = _rescoring_flips(dataset, results, tasks) if scoring == "fixed" else None
        progress = _reference_progress(dataset, results, tasks, language) if flips is not None else None
    except DatasetError as exc:
        _print_issues(exc.issues)
        raise typer.Exit(code=1) from None
    except OSError as exc:
        _err.print(f"{out}: cannot write results: {exc}", markup=False)
        raise typer.Exit(code=1) from None
    _out.print(metric_table(metric, _summary_language(out / summary_file)))
    if flips is not None:
        _out.print(rescoring_line(flips, progress, (metric.get("progress_info") or {}).get("Total")), markup=False)
    _out.print(f"wrote {out / score_file}, {out / metric_file} and {out / summary_file}", markup=False)
    if errata is not None:
        from wtb.cli.audit import score_errata

        score_errata(dataset, results, errata, out, tasks=tasks, scoring=scoring, language=language, metric=metric)


def _rescoring_flips(dataset: Path, results: Path, tasks: int):
    """``bench.compare.compare_run`` of a reference result file against its fixed rescoring; ``None`` for a fixed run (docs/fixed-mode.md §10).

    ``results`` has just been scored, so its records share one mode: the first record tells."""
    from wtb.score_run import compare_run_files, scan_result_records

    first = next(iter(scan_result_records(results)), None)
    if first is not None and first[2][1].get("scoring") == "fixed":
        return None
    return compare_run_files(dataset, results, tasks=tasks)


def _reference_progress(dataset: Path, results: Path, tasks: int, language: str | None) -> dict | None:
    """The reference-mode accomplish progress bucket ``{"rate", "complete_step", "total_step"}`` of a
    reference result file, scored in memory (docs/metrics.md §4)."""
    from bench.schema import load_sessions, sessions_by_id
    from wtb.score_run import load_result_records, score_records

    sessions = sessions_by_id(load_sessions(dataset, tasks=tasks))
    records = load_result_records(results)
    _, _, metric = score_records(sessions, records, results_file=str(results), scoring="reference", language=language)
    return (metric.get("progress_info") or {}).get("Total")


def _rate(bucket: dict) -> str:
    return f"{bucket['rate'] * 100:.2f}%"


def rescoring_line(flips: dict, reference_progress: dict | None, fixed_progress: dict | None) -> str:
    """The line ``wtb score --scoring fixed`` prints for a reference run: task labels that flip, by fix
    (docs/fixed-mode.md §10), then the accomplish progress rate, which fix 8 computes from gold nodes
    (docs/fixed-mode.md §9) and which can change when no label does.

    Args:
        flips: :func:`wtb.score_run.compare_run_files` of the run.
        reference_progress, fixed_progress: the ``progress_info["Total"]`` buckets of the reference and
            the fixed metric (``{"rate", "complete_step", "total_step"}``); ``None``, or a bucket
            without gold steps (no Sequential or Mixed task), leaves the rate out.

    Returns:
        e.g. ``"fixed vs reference scoring: no task label flips (24 correct of 24); accomplish progress
        rate 87.50% -> 100.00% (fix 8)"`` or ``"fixed vs reference scoring: 1 task label(s) flip (3 -> 4
        correct of 4); by fix: fix 5: 1; accomplish progress rate unchanged (75.00%)"``.
    """
    if flips["flips"]:
        by_fix = ", ".join(f"fix {fix}: {count}" for fix, count in flips["by_fix"].items()) or "none"
        line = (
            f"fixed vs reference scoring: {len(flips['flips'])} task label(s) flip "
            f"({flips['reference_correct']} -> {flips['fixed_correct']} correct of {flips['tasks']}); by fix: {by_fix}"
        )
    else:
        line = f"fixed vs reference scoring: no task label flips ({flips['reference_correct']} correct of {flips['tasks']})"
    if reference_progress and fixed_progress and reference_progress["total_step"] and fixed_progress["total_step"]:
        before, after = _rate(reference_progress), _rate(fixed_progress)
        line += (
            f"; accomplish progress rate {before} -> {after} (fix 8)"
            if before != after
            else f"; accomplish progress rate unchanged ({after})"
        )
    return line


def _summary_language(path: Path) -> str | None:
    """The language written into the summary metrics file ``path`` (for the table title), or ``None``."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8")).get("language")
    except (OSError, ValueError, AttributeError):
        return None
