"""The run of a checked ``wtb eval``: the sessions run into the output folder (resuming, here or on
``--server``), then the summary, the scoring and its table, the report (docs/evaluation.md, docs/scoring.md)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

import wildtoolbench.runner as runner
from wildtoolbench.bench.strategy import ScoringStrategy
from wildtoolbench.common.exits import InfrastructureErrors, resumable_run
from wildtoolbench.common.table import metric_table, trials_table
from wildtoolbench.evaluation.accounting_text import print_accounting, run_summary_line
from wildtoolbench.evaluation.plan import EvalPlan
from wildtoolbench.scoring.outputs import score_files, summary_metrics_file, trial_files
from wildtoolbench.scoring.run import score_run
from wildtoolbench.tracing import tracing_scope

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def run_sessions(plan: EvalPlan, trials: Mapping[str, int] | None = None) -> runner.RunSummary:
    """Run the plan's sessions into ``plan.out`` (resuming), here or on ``--server``, with tracing as
    configured; Ctrl-C and SIGTERM stop it with a resume hint (exit 130).

    ``trials``: trials per session (the stopping rule's choice, :func:`wildtoolbench.evaluation.until_decided.run_until_decided`); default
    ``--trials`` for every session. With ``--cache`` the requests go through the request cache.

    Returns:
        The run's :class:`wildtoolbench.runner.RunSummary`.

    Raises:
        ValueError: the folder holds another run (model, dataset, side, scoring mode) or is locked.
        OSError: the folder cannot be written.
        typer.Exit: 130 after an interruption.
    """
    options = plan.options
    with resumable_run(lambda: _kept_sessions(plan.out, plan.sessions)), tracing_scope(no_trace=options.no_trace):
        run = runner.run_eval
        if options.server:
            from wildtoolbench.remote import run_eval_remote  # the LangGraph SDK: only for --server

            run = functools.partial(
                run_eval_remote, server=options.server, no_trace=options.no_trace, threads=options.server_threads
            )
        return run(plan.sessions, plan.context, plan.out, **run_arguments(plan, trials))


def run_arguments(plan: EvalPlan, trials: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The keyword arguments :func:`run_sessions` gives the batch runner for ``plan`` (a sweep gives each model
    the same, docs/guides/sweeps.md): concurrency, overwrite, progress, prices, the recorded settings, and
    ``workers``, ``trials`` (``trials`` or ``--trials``) and the request cache when they apply.

    Raises:
        OSError: the ``--cache`` folder cannot be made.
    """
    options = plan.options
    more: dict[str, Any] = {"workers": options.workers} if options.workers > 1 else {}
    if trials is not None or options.trials > 1:
        more["trials"] = trials if trials is not None else options.trials
    if options.cache is not None:
        from wildtoolbench.evaluation.request_cache import open_request_cache

        more["cache"] = open_request_cache(options.cache, trust=options.cache_trust, candidate=plan.context.candidate)
    return {
        "concurrency": plan.concurrency,
        "overwrite": options.overwrite,
        "progress": options.progress,
        "prices": plan.prices,
        "settings": {"tasks": plan.tasks, **({"trials": options.trials} if options.trials > 1 else {})},
        **more,
    }


def finish_run(plan: EvalPlan, summary: runner.RunSummary) -> None:
    """Print the run's summary line and accounting on stderr; when any session has a record, score the
    run and print the table (:func:`score_and_print`) and, with ``--report``, write the report into
    ``OUT/report/``.

    Raises:
        InfrastructureErrors: some sessions hit infrastructure errors (exit 3, after everything else).
        wildtoolbench.bench.schema.DatasetError, wildtoolbench.reports.run_data.ReportError, OSError: the scoring or the report failed (exit 1).
    """
    context = plan.context
    _err.print(run_summary_line(summary, context.language), markup=False)
    if summary.inference_errors:
        _err.print(
            f"[yellow]inference errors[/yellow] in {len(summary.inference_errors)} sessions: {', '.join(summary.inference_errors)}"
        )
    print_accounting(summary, max_retry_wait=context.max_retry_wait)
    if summary.evaluated + summary.skipped:
        score_and_print(
            plan.dataset,
            summary.result_path,
            plan.out,
            plan.tasks,
            context.scoring,
            context.language,
            out_temporary=plan.options.out_temporary,
        )
        if plan.options.report:
            from wildtoolbench.reports.command import write_report  # the report's plotting: only for --report

            write_report([plan.out], plan.out / "report")
    if summary.infrastructure_errors:
        raise InfrastructureErrors()


def score_and_print(
    dataset: Path,
    result_path: Path,
    out: Path,
    tasks: int = 4,
    scoring: ScoringStrategy | str | None = None,
    language: str | None = "en",
    *,
    out_temporary: bool = False,
) -> None:
    """Score the run into ``out/score.jsonl``, ``out/metric.json`` and ``out/summary_metrics.json``
    (``score.fixed.jsonl``, ``metric.fixed.json`` and ``summary_metrics.fixed.json`` in fixed mode: the
    files of ``scoring``, a :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name,
    docs/fixed-mode.md) and print the table (docs/scoring.md), then the closing line :func:`outputs_line`.

    ``out_temporary``: ``out`` is removed when the run returns (the Python API's ``out=None``,
    docs/guides/scripting.md); the closing line says so.

    Raises:
        wildtoolbench.bench.schema.DatasetError: the dataset or the result file's content (exit 1).
    """
    score_file, metric_file = score_files(scoring)
    summary_file = summary_metrics_file(scoring)
    metric = score_run(dataset, result_path, out, tasks=tasks, scoring=scoring, language=language or "en")
    console = Console(highlight=False, soft_wrap=True, emoji=False)
    console.print(metric_table(metric, language))
    _err.print(f"wrote {result_path}, {out / score_file}, {out / metric_file} and {out / summary_file}", markup=False)
    _, trials_file, trials_summary_file = trial_files(scoring)
    if (out / trials_summary_file).is_file():  # a run of trials: pass^k and flip rate (docs/trials.md §5)
        import json

        summary = json.loads((out / trials_summary_file).read_text(encoding="utf-8"))
        console.print(trials_table(summary, str(metric.get("model_name", "?"))))
        _err.print(
            f"trial 1 is metric.json; all {summary['trials']} trials: {out / trials_file}, {out / trials_summary_file}",
            markup=False,
        )
    typer.echo(outputs_line(out, out_temporary))


def outputs_line(out: Path, temporary: bool = False) -> str:
    """The last line of a scored run on stdout: ``outputs in OUT/``; for a folder removed when the run returns
    (``temporary``, the Python API's ``out=None``), where to ask for files that stay (docs/guides/scripting.md)."""
    if temporary:
        return "outputs in a temporary folder, removed when the run returns: pass out=FOLDER to keep them"
    return f"outputs in {out}/"


def _kept_sessions(out: Path, sessions: Sequence[Mapping[str, Any]]) -> str:
    """How many of the selected sessions have a record in ``out/result.jsonl`` (for the resume hint)."""
    path = out / runner.RESULT_FILE
    try:
        done = runner.ResultFile(path).scan()
    except (OSError, ValueError):
        return f"the finished sessions are in {path}"
    count = sum(1 for session_id in runner.session_ids(sessions) if session_id in done)
    return f"{count} of {len(sessions)} sessions are in {path}"
