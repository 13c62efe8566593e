"""``wtb eval`` over many models in one command: repeated ``--model`` and ``--sweep FILE`` (docs/guides/sweeps.md).

Every model runs over the same sessions into ``OUT/<name>/``, a run folder exactly as ``wtb eval --model M
--out OUT/<name>`` with the same options writes it (the same files, records and resume rules; such a
command resumes a sweep's folder and the other way round). The models run at once in one event loop,
every session-trial of every model sharing the sweep's ``--concurrency`` (a model's own ``concurrency``
bounds it further) and every endpoint its one ``--rps`` budget; with ``--workers N`` the models run one
after another, each on the N worker processes. At the end each model is scored as a single run, then
the combined table and ``wtb report`` over all the models (``OUT/report/``); the exit status is the worst
of the models' (:data:`SEVERITY`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import wildtoolbench.runner as runner
from wildtoolbench.common.exits import BadConfiguration, UsageError, exit_status, resumable_run
from wildtoolbench.evaluation.command import EvalOptions  # the CLI's one import: options and the body
from wildtoolbench.evaluation.sweep_file import SweepEntry, check_unique, folder_name, sweep_entries
from wildtoolbench.models import ConfigurationError
from wildtoolbench.tracing import tracing_scope

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

SEVERITY = (0, 3, 1, 2)
"""Exit statuses from best to worst: a sweep exits with the worst of its models' (docs/guides/sweeps.md §4):
done, infrastructure errors (the same command retries them), a bad input or folder, a bad configuration."""


def worst_status(statuses: Sequence[int]) -> int:
    """The worst of ``statuses`` by :data:`SEVERITY` (an unknown status counts as worst); 0 for none."""
    rank = {status: index for index, status in enumerate(SEVERITY)}
    return max(statuses, key=lambda s: rank.get(s, len(SEVERITY)), default=0)


@dataclasses.dataclass
class ModelProgress:
    """What the shared progress display shows of one model: session-trials evaluated by this run, in flight,
    infrastructure errors, cost so far (USD, ``None`` without prices), and its exit status once finished."""

    label: str
    total: int
    done: int = 0
    running: int = 0
    errors: int = 0
    cost: float | None = None
    status: int | None = None


class SweepProgress:
    """The sweep's one progress display (docs/guides/sweeps.md §3): a table with a row per model, redrawn on a
    terminal; elsewhere one line per model when it ends. ``enabled=False`` shows nothing."""

    def __init__(self, rows: Sequence[ModelProgress], enabled: bool):
        self.rows = list(rows)
        self.enabled = enabled
        self._live: Any = None

    def table(self) -> Table:
        """The display's table: model, done/total, running, errors, cost so far."""
        table = Table(title="wtb eval sweep", title_justify="left")
        for name in ("model", "done", "running", "errors", "cost"):
            table.add_column(name, justify="left" if name == "model" else "right")
        for row in self.rows:
            cost = "-" if row.cost is None else f"${row.cost:.4f}"
            table.add_row(row.label, f"{row.done}/{row.total}", str(row.running), str(row.errors), cost)
        return table

    def __enter__(self) -> SweepProgress:
        if self.enabled and _err.is_terminal:
            from rich.live import Live

            self._live = Live(self.table(), console=_err, refresh_per_second=4, get_renderable=self.table)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def wrap(self, row: ModelProgress, invoke: runner.SessionInvoker) -> runner.SessionInvoker:
        """``invoke`` counting its session-trials into ``row``."""

        async def counted(session: Mapping[str, Any], context: Any, *, prices: Any = None) -> Any:
            row.running += 1
            try:
                outcome = await invoke(session, context, prices=prices)
            finally:
                row.running -= 1
            row.done += 1
            if outcome.record is None:
                row.errors += 1
            cost = outcome.usage.get("cost_usd")
            if isinstance(cost, (int, float)):
                row.cost = (row.cost or 0.0) + float(cost)
            return outcome

        return counted

    def finished(self, row: ModelProgress, summary: Any) -> None:
        """``row``'s model ended; without a live table, say so in one line."""
        if self.enabled and self._live is None:
            cost = "" if row.cost is None else f", cost ${row.cost:.4f}"
            _err.print(
                f"{row.label}: {summary.evaluated} session-trials evaluated, {summary.skipped} already done, "
                f"{len(summary.infrastructure_errors)} infrastructure errors{cost}",
                markup=False,
            )


def _bounded(invoke: runner.SessionInvoker, gate: asyncio.Semaphore) -> runner.SessionInvoker:
    """``invoke`` holding a place of the sweep's ``gate`` (its ``--concurrency``) while it runs."""

    async def bounded(session: Mapping[str, Any], context: Any, *, prices: Any = None) -> Any:
        async with gate:
            return await invoke(session, context, prices=prices)

    return bounded


def plan_sweep(options: Any, models: Sequence[str], sweep: Path | None) -> list[tuple[SweepEntry, Any]]:
    """Check the sweep and plan every model (``wildtoolbench.evaluation.plan.plan_eval`` with its own options and
    ``OUT/<name>``), before anything runs.

    Raises:
        UsageError: no ``--out``; a model's option out of range. SweepFileError: a broken sweep rule.
        BadConfiguration: an option a sweep does not take (``--langsmith-dataset``, ``--until-decided``), or
            two models on one endpoint with different ``rps``. As ``plan_eval`` otherwise (exit 2 or 1).
    """
    from wildtoolbench.evaluation.plan import plan_eval

    if options.out is None:
        raise UsageError("a sweep writes one folder per model under --out: give --out", "--out")
    for name, given in (("--langsmith-dataset", options.langsmith_dataset), ("--until-decided", options.until_decided)):
        if given:
            raise BadConfiguration(f"error: {name} runs one model; it cannot be combined with a sweep")
    entries = sweep_entries(models, sweep)
    plans: list[tuple[SweepEntry, Any]] = []
    for entry in entries:
        try:
            plan = plan_eval(dataclasses.replace(options, model=entry.model, out=None, **entry.settings))
        except (UsageError, ConfigurationError) as exc:
            text = exc.format_message() if isinstance(exc, UsageError) else str(exc)
            raise BadConfiguration(f"error: {entry.where}: {text}") from None
        folder = options.out / folder_name(entry, runner.recorded_model_name(plan.context))
        plans.append((entry, dataclasses.replace(plan, out=folder)))
    check_unique([(entry, str(plan.out)) for entry, plan in plans])
    _check_rate_budgets(plans)
    return plans


def _check_rate_budgets(plans: Sequence[tuple[SweepEntry, Any]]) -> None:
    """One request-rate budget per endpoint: models on one endpoint must ask for the same ``rps`` (they share
    one limiter, ``models.transport.rate_limiter``)."""
    seen: dict[str, tuple[SweepEntry, float]] = {}
    for entry, plan in plans:
        endpoint, rps = plan.context.candidate.endpoint, float(plan.context.rps or 0.0)
        if endpoint in seen and seen[endpoint][1] != rps:
            other = seen[endpoint][0]
            raise BadConfiguration(
                f"error: {other.where} and {entry.where} share the endpoint {endpoint} with different rps "
                f"({seen[endpoint][1]:g} and {rps:g}); an endpoint has one request-rate budget: give both the same"
            )
        seen.setdefault(endpoint, (entry, rps))


def evaluate_models(options: Any, models: Sequence[str], sweep: Path | None) -> None:
    """``wtb eval``'s body: one model (``wildtoolbench.evaluation.command.evaluate``), or a sweep when ``--model`` is
    repeated or ``--sweep`` is given (:func:`evaluate_sweep`; docs/guides/sweeps.md).

    Raises:
        As :func:`evaluate_sweep` or ``evaluate``.
    """
    if len(models) > 1 or sweep is not None:
        evaluate_sweep(options, models, sweep)
    else:
        from wildtoolbench.evaluation.command import evaluate

        evaluate(options)


__all__ = ["EvalOptions", "evaluate_models", "evaluate_sweep", "plan_sweep", "worst_status", "combined_table"]


def evaluate_sweep(options: Any, models: Sequence[str], sweep: Path | None) -> None:
    """Run ``wtb eval`` over every model of the sweep (module doc), then score each, print the combined table and
    write the report over all of them into ``OUT/report/``.

    Raises:
        typer.Exit: with the worst of the models' exit statuses (:data:`SEVERITY`) when it is not 0; 130 after
            Ctrl-C or SIGTERM (every model's finished session-trials are kept: the same command resumes).
        As :func:`plan_sweep` before anything runs.
    """
    import typer

    from wildtoolbench.evaluation.estimate import estimate_text, run_estimate

    plans = plan_sweep(options, models, sweep)
    if options.dry_run:
        for entry, plan in plans:
            typer.echo(f"{entry.model} -> {plan.out}")
            typer.echo(estimate_text(run_estimate(plan), plan.options, plan.context.candidate.provider))
        return
    rows = [ModelProgress(str(plan.out.name), len(plan.sessions) * max(1, plan.options.trials)) for _, plan in plans]
    kept = lambda: f"the finished session-trials of each model are in {options.out}/<model>/"  # noqa: E731
    started = time.perf_counter()
    with resumable_run(kept), tracing_scope(no_trace=options.no_trace), SweepProgress(rows, options.progress) as shown:
        from wildtoolbench.runner.loop import run

        outcomes = run(_run_all([plan for _, plan in plans], rows, shown, options))
    statuses = [_finish(plan, outcome, row) for (_, plan), outcome, row in zip(plans, outcomes, rows)]
    _err.print(f"sweep of {len(plans)} models: {time.perf_counter() - started:.1f}s", markup=False)
    Console(highlight=False, soft_wrap=True, emoji=False).print(combined_table(plans, rows))
    scored = [plan.out for (_, plan), status in zip(plans, statuses) if (plan.out / "metric.json").is_file()]
    if scored:
        from wildtoolbench.reports.command import write_report

        try:
            write_report(scored, options.out / "report")
        except Exception as exc:  # noqa: BLE001 - the report's failure is one more status, the runs are kept
            mapped = exit_status(exc)
            if mapped is None:
                raise
            _err.print("\n".join(mapped[1]) or f"error: the report failed: {exc}", markup=False)
            statuses.append(mapped[0])
    worst = worst_status(statuses)
    if worst:
        raise typer.Exit(code=worst)


async def _run_all(
    plans: Sequence[Any], rows: Sequence[ModelProgress], shown: SweepProgress, options: Any
) -> list[Any]:
    """Every model's run; returns, per model, its :class:`RunSummary` or the exception that ended it."""
    if options.workers > 1:  # each model on the N worker processes, one model after another
        results: list[Any] = []
        for plan, row in zip(plans, rows):
            try:
                results.append(await _run_one(plan, row, shown, None, None))
            except Exception as exc:  # noqa: BLE001 - this model's failure; the others run
                results.append(exc)
        return results
    places = options.concurrency or sum(plan.concurrency for plan in plans)
    gate = asyncio.Semaphore(places)
    if options.server:
        from wildtoolbench.remote.client import connect
        from wildtoolbench.remote.evaluation import RemoteEvaluation
        from wildtoolbench.remote.invoker import langsmith_project

        async with connect(options.server, concurrency=places) as client:
            project = langsmith_project(options.no_trace)
            remote = RemoteEvaluation(client, options.server, project=project, threads=options.server_threads)
            jobs = [_run_one(plan, row, shown, remote, gate) for plan, row in zip(plans, rows)]
            return await asyncio.gather(*jobs, return_exceptions=True)
    jobs = [_run_one(plan, row, shown, None, gate) for plan, row in zip(plans, rows)]
    return await asyncio.gather(*jobs, return_exceptions=True)


async def _run_one(
    plan: Any, row: ModelProgress, shown: SweepProgress, remote: Any, gate: asyncio.Semaphore | None
) -> Any:
    """One model's run: the arguments ``wtb eval`` gives the batch runner for this plan alone
    (``wildtoolbench.evaluation.run.run_sessions``), its sessions counted into ``row`` and held by ``gate``."""
    from wildtoolbench.evaluation.run import run_arguments

    arguments = run_arguments(plan)
    settings = dict(arguments.pop("settings"))
    if remote is not None:
        from wildtoolbench.remote.client import display_url

        settings["server"] = display_url(plan.options.server)
    if plan.options.workers > 1:
        arguments["progress"] = plan.options.progress  # its own bar: one model at a time
        summary = await runner.arun_eval(plan.sessions, plan.context, plan.out, settings=settings, **arguments)
    else:
        invoke = remote if remote is not None else functools.partial(runner.run_session, _graph())
        invoke = shown.wrap(row, invoke)
        invoke = _bounded(invoke, gate) if gate is not None else invoke
        arguments["progress"] = False
        summary = await runner.arun_eval(
            plan.sessions, plan.context, plan.out, settings=settings, invoke=invoke, **arguments
        )
    shown.finished(row, summary)
    return summary


@functools.cache
def _graph() -> Any:
    from wildtoolbench.graphs.evaluation import graph

    return graph


def _finish(plan: Any, outcome: Any, row: ModelProgress) -> int:
    """Score one model's run as ``wtb eval`` does (``finish_run``) and return its exit status."""
    from wildtoolbench.evaluation.run import finish_run

    if isinstance(outcome, BaseException):
        mapped = exit_status(outcome)
        if mapped is None:
            raise outcome
        _err.print(f"{row.label}: " + "; ".join(mapped[1]), markup=False)
        row.status = mapped[0]
        return mapped[0]
    _err.print(f"--- {row.label} ({plan.context.model})", markup=False)
    try:
        finish_run(plan, outcome)
    except Exception as exc:  # noqa: BLE001 - mapped to this model's status
        mapped = exit_status(exc)
        if mapped is None:
            raise
        if mapped[1]:
            _err.print("\n".join(mapped[1]), markup=False)
        row.status = mapped[0]
        return mapped[0]
    row.status = 0
    return 0


def combined_table(plans: Sequence[tuple[SweepEntry, Any]], rows: Sequence[ModelProgress]) -> Table:
    """The table a sweep ends with: per model (its folder's name) task and session accuracy (trial 1, ``metric.json``),
    the mean task accuracy over trials (``trials_summary.json``) when it ran trials, cost and exit status."""
    import json

    from wildtoolbench.scoring.run import score_files, trial_files

    table = Table(title="WildToolBench sweep", title_justify="left")
    for name in ("model", "task accuracy", "session accuracy", "mean over trials", "cost", "status"):
        table.add_column(name, justify="left" if name == "model" else "right")
    for (_, plan), row in zip(plans, rows):
        scoring = plan.context.scoring or "reference"
        metric_path = plan.out / score_files(scoring)[1]
        trials_path = plan.out / trial_files(scoring)[2]
        task = session = mean = "-"
        if metric_path.is_file():
            total = json.loads(metric_path.read_text(encoding="utf-8")).get("total_info", {})
            task = f"{total.get('task', {}).get('accuracy', 0) * 100:.2f}%"
            session = f"{total.get('session', {}).get('accuracy', 0) * 100:.2f}%"
        if trials_path.is_file():
            summary = json.loads(trials_path.read_text(encoding="utf-8"))
            mean = f"{summary['task']['mean']['value'] * 100:.2f}% ({summary['trials']} trials)"
        cost = "-" if row.cost is None else f"${row.cost:.4f}"
        table.add_row(row.label, task, session, mean, cost, str(row.status))
    return table
