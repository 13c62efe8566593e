"""``wtb validate`` and ``wtb score``: check a dataset file; score a result file (docs/dataset.md, docs/scoring.md).

Bad input never produces a traceback: every problem is printed as ``file:line: field: message`` on
stderr and the command exits with code 1; a file named on the command line that does not exist is a
usage error (exit 2; docs/cli.md §2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from wildtoolbench.bench.schema import DatasetError, load_sessions, sessions_by_id, task_counts, validate_file
from wildtoolbench.bench.strategy import FIXED, REFERENCE, ScoringStrategy, record_strategy, scoring_strategy
from wildtoolbench.common.exits import BadInput, UsageError
from wildtoolbench.common.inputs import require_file
from wildtoolbench.common.table import metric_table
from wildtoolbench.data.command import dataset_path, task_count
from wildtoolbench.scoring.errata import check_errata_file, score_errata
from wildtoolbench.scoring.outputs import score_files, summary_metrics_file
from wildtoolbench.scoring.results import file_model_name, load_result_records, scan_result_records
from wildtoolbench.scoring.run import compare_run_files, score_run
from wildtoolbench.scoring.stream import score_records

_out = Console(highlight=False, soft_wrap=True, emoji=False)
_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def validate_dataset(path: Path, tasks: int | None = None, language: str | None = None, pull: bool = False) -> None:
    """``wtb validate``: check the dataset file ``path`` (or the official name) against the session
    schema (docs/dataset.md) and print a one-line summary (sessions, tasks per type, turn subtypes).

    Args:
        tasks: tasks per session; ``None``: the count the sessions share (other counts are problems).
        language: also check the ``zh`` side can be evaluated; ``None`` = ``en``.

    Raises:
        UsageError: ``path`` is not a file (exit 2).
        BadInput: the file has problems: every one (and every warning) as ``file:line: field: message``,
            then ``error: <path>: N problem(s) found`` (exit 1). Warnings alone go to stderr and the exit is 0.
    """
    path = require_file(dataset_path(path, pull), "path")
    mixed = []
    if tasks is None:  # the count the sessions share; lines of another count are problems too
        tasks, mixed = task_counts(path)
    report = validate_file(path, tasks=tasks, language=language or "en")
    report.issues = sorted([*mixed, *report.issues], key=lambda issue: issue.line or 0)
    if not report.ok:
        everything = sorted([*report.issues, *report.warnings], key=lambda issue: issue.line or 0)
        raise BadInput(*map(str, everything), f"error: {path}: {len(report.issues)} problem(s) found")
    for warning in report.warnings:  # scored as they are, with the effect each names (docs/dataset.md §7.2)
        _err.print(str(warning), markup=False)
    _out.print(report.summary(), markup=False)


def score_results(
    dataset: Path,
    results: Path,
    out: Path,
    tasks: int | None = None,
    scoring: ScoringStrategy | str | None = None,
    language: str | None = None,
    pull: bool = False,
    model_name: str | None = None,
    errata: Path | None = None,
) -> tuple[Path, int, dict[str, Any]]:
    """``wtb score``: score ``results`` against ``dataset`` into ``out`` (``score.jsonl``, ``metric.json``,
    ``summary_metrics.json``; the mode's own files outside reference mode, e.g. ``.fixed``, docs/fixed-mode.md)
    and print the table; with fixed scoring on a reference run, also the line of label flips
    (:func:`rescoring_line`). ``scoring``: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name.

    Args:
        tasks: tasks per session; ``None``: the count the dataset's sessions share.
        language: the side the results were made on; ``None``: what the records say, else ``en``.
        model_name: the model of records that name none (the published runner's error records
            ``{"id", "result": "Error during inference: ..."}``, docs/scoring.md §5.1); ``None``: the
            model the file's other records name.
        errata: an errata file (docs/audit.md §9): its content is checked against the dataset before
            anything is written; after the published scoring the run is scored again with it applied
            (:func:`wildtoolbench.scoring.errata.score_errata`: ``metric.errata.json`` and
            ``summary_metrics.errata.json``, both metrics printed side by side, docs/audit.md §9.3).

    Returns:
        The dataset file, the task count and the metric of the published format (``metric.json``).

    Raises:
        UsageError: ``dataset``, ``results`` or ``errata`` is not a file, or ``model_name`` is empty (exit 2).
        wildtoolbench.bench.schema.DatasetError: the dataset, the result file or the errata file's content, or
            an erratum that does not apply (exit 1).
        BadInput: ``out`` cannot be written (exit 1).
    """
    scoring = scoring_strategy(scoring)
    score_file, metric_file = score_files(scoring)
    summary_file = summary_metrics_file(scoring)
    dataset = require_file(dataset_path(dataset, pull), "--dataset")
    require_file(results, "--results")
    if model_name is not None and not model_name.strip():
        raise UsageError("must not be empty", "--model-name")
    if errata is not None:
        require_file(errata, "--errata")
    try:
        tasks = task_count(dataset, tasks)
        if errata is not None:  # a bad errata file stops the command before anything is written
            check_errata_file(dataset, errata, tasks=tasks)
        metric = score_run(
            dataset, results, out, tasks=tasks, scoring=scoring, language=language, model_name=model_name
        )
        flips = rescoring_flips(dataset, results, tasks, model_name) if scoring is FIXED else None
        progress = reference_progress(dataset, results, tasks, language, model_name) if flips is not None else None
    except DatasetError:
        raise
    except OSError as exc:
        raise BadInput(f"{out}: cannot write results: {exc}") from None
    Console(highlight=False, soft_wrap=True, emoji=False).print(
        metric_table(metric, _summary_language(out / summary_file))
    )
    if flips is not None:
        _out.print(rescoring_line(flips, progress, (metric.get("progress_info") or {}).get("Total")), markup=False)
    _out.print(f"wrote {out / score_file}, {out / metric_file} and {out / summary_file}", markup=False)
    if errata is not None:
        score_errata(dataset, results, errata, out, tasks=tasks, scoring=scoring, language=language, metric=metric)
    return dataset, tasks, metric


def rescoring_flips(dataset: Path, results: Path, tasks: int, model_name: str | None = None) -> dict[str, Any] | None:
    """``wildtoolbench.bench.compare.compare_run`` of a reference result file against its fixed rescoring; ``None`` for a
    fixed run (docs/fixed-mode.md §10). ``model_name``: as for :func:`score_results`.

    ``results`` has just been scored, so its records share one mode: the first record tells."""
    first = next(iter(scan_result_records(results, model_name or file_model_name(results))), None)
    if first is not None and not record_strategy(first[2][1]).is_reference:
        return None
    return compare_run_files(dataset, results, tasks=tasks, model_name=model_name)


def reference_progress(
    dataset: Path, results: Path, tasks: int, language: str | None, model_name: str | None = None
) -> dict[str, Any] | None:
    """The reference-mode accomplish progress bucket ``{"rate", "complete_step", "total_step"}`` of a
    reference result file, scored in memory (docs/metrics.md §4). ``model_name``: as for :func:`score_results`."""
    sessions = sessions_by_id(load_sessions(dataset, tasks=tasks))
    records = load_result_records(results, model_name or file_model_name(results))
    _, _, metric = score_records(sessions, records, results_file=str(results), scoring=REFERENCE, language=language)
    return (metric.get("progress_info") or {}).get("Total")


def _rate(bucket: dict) -> str:
    return f"{bucket['rate'] * 100:.2f}%"


def rescoring_line(flips: dict, reference_progress: dict | None, fixed_progress: dict | None) -> str:
    """The line ``wtb score --scoring fixed`` prints for a reference run: task labels that flip, by fix
    (docs/fixed-mode.md §10), then the accomplish progress rate, which fix 8 computes from gold nodes
    (docs/fixed-mode.md §9) and which can change when no label does.

    Args:
        flips: :func:`wildtoolbench.scoring.run.compare_run_files` of the run.
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
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("language")
    except (OSError, ValueError, AttributeError):
        return None


def score_run_folder(run_dir: Path, scoring: str, dataset: Path | None = None, pull: bool = False) -> None:
    """``wtb score RUN_FOLDER --scoring MODE``: re-grade a finished run's stored replies in ``scoring`` mode into
    the folder (``score.MODE.jsonl``, ``metric.MODE.json``), without model calls, and say whether the labels
    stand for what the model would have done (docs/semantic-mode.md §4).

    Args:
        run_dir: the run folder (``result.jsonl`` and ``run.json``).
        scoring: the mode's name.
        dataset: the dataset when ``run.json`` names none (or a moved one).

    Raises:
        UsageError: ``run_dir`` is not a folder (exit 2).
        wildtoolbench.bench.schema.DatasetError: no result file or dataset, reference scoring of a fixed-harness
            run, or the files' content (exit 1).
    """
    from wildtoolbench.scoring.rescore import check_regrading, folder_inputs, rerun_line, tasks_needing_rerun

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a run folder", "RUN_FOLDER")
    target = scoring_strategy(scoring)
    dataset_file, results, language, made_by = folder_inputs(run_dir, dataset_path(dataset, pull) if dataset else None)
    check_regrading(made_by, target, run_dir / "run.json")
    dataset_file, tasks, _ = score_results(dataset_file, results, run_dir, None, target, language)
    sessions = sessions_by_id(load_sessions(dataset_file, tasks=tasks))
    records = [record for _, record in load_result_records(results, file_model_name(results))]
    side = language or (str(records[0].get("language", "en")) if records else "en")
    needed = tasks_needing_rerun(sessions, records, target, side)
    total = sum(len(r["result"]) if isinstance(r.get("result"), list) else tasks for r in records)
    _out.print(rerun_line(needed, total, target), markup=False)


def score_command(
    run_folder: Path | None,
    dataset: Path | None,
    results: Path | None,
    out: Path | None,
    tasks: int | None,
    scoring: str,
    language: str | None,
    pull: bool,
    model_name: str | None,
    errata: Path | None,
) -> None:
    """``wtb score``: a run folder re-graded in place (:func:`score_run_folder`, docs/semantic-mode.md §4), or a
    result file scored into ``out``, with ``errata`` applied too when given (:func:`score_results`,
    docs/scoring.md, docs/audit.md §9.3).

    Raises:
        UsageError: a run folder with ``--results``/``--out``/``--errata``, or neither a run folder nor all of
            ``--dataset``, ``--results`` and ``--out`` (exit 2); otherwise what the chosen function raises.
    """
    if run_folder is not None:
        if results is not None or out is not None or errata is not None:
            raise UsageError("give a RUN_FOLDER or --results/--out, not both", "RUN_FOLDER")
        score_run_folder(run_folder, scoring, dataset, pull)
        return
    for value, name in ((dataset, "--dataset"), (results, "--results"), (out, "--out")):
        if value is None:
            raise UsageError("required (or give a RUN_FOLDER)", name)
    score_results(dataset, results, out, tasks, scoring, language, pull, model_name, errata)  # type: ignore[arg-type]
