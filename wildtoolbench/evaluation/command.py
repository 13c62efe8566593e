"""``wtb eval``: evaluate a model on WildToolBench sessions, then score the run (docs/evaluation.md, docs/scoring.md).

The command line builds an :class:`EvalOptions` from the parsed values and calls :func:`evaluate`
inside :func:`wildtoolbench.common.exits.exit_on_error`. :func:`evaluate` runs three steps, each once:

1. :func:`wildtoolbench.evaluation.plan.plan_eval`: the options checked and resolved into an :class:`EvalPlan` (the dataset file,
   the evaluation context, the selected sessions, the output folder, the concurrency), the model
   (or the server) checked before any session: every mistake here writes nothing and exits 2, or 1
   for a bad dataset file (docs/cli.md §2);
2. the run: the batch runner (:func:`wildtoolbench.runner.run_eval`), on a LangGraph Server
   (:func:`wildtoolbench.remote.run_eval_remote`) or as a LangSmith experiment (:mod:`wildtoolbench.evaluation.experiment`);
3. :func:`wildtoolbench.evaluation.run.finish_run`: the run's summary on stderr, the scoring and its table, the report; exit
   status 3 when some sessions hit infrastructure errors.
"""

from __future__ import annotations

import typer
from rich.console import Console

from wildtoolbench.common.exits import InfrastructureErrors
from wildtoolbench.evaluation.estimate import estimate_text, run_estimate
from wildtoolbench.evaluation.options import EvalOptions
from wildtoolbench.evaluation.plan import plan_eval
from wildtoolbench.evaluation.run import finish_run, run_sessions
from wildtoolbench.evaluation.sdk_logs import one_line, one_line_sdk_logs
from wildtoolbench.evaluation.until_decided import run_until_decided
from wildtoolbench.models import ConfigurationError

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def evaluate(options: EvalOptions) -> None:
    """Run ``wtb eval``: check the options (:func:`plan_eval`), run the model on the selected sessions
    (resuming an interrupted run), then score the run and print its table (:func:`finish_run`).

    Raises (mapped to exit statuses by :func:`wildtoolbench.common.exits.exit_on_error`, docs/cli.md §2):
        UsageError, models.ConfigurationError: the command line or the run's configuration (exit 2).
        wildtoolbench.bench.schema.DatasetError, OSError, ValueError, RuntimeError: a bad input file, a folder that
            holds another run (exit 1).
        InfrastructureErrors: some sessions hit infrastructure errors (exit 3; the others are scored).
        typer.Exit: 130 after Ctrl-C or SIGTERM during the run.
    """
    plan = plan_eval(options)
    if options.dry_run:  # before any request: nothing is run, nothing written (docs/trials.md §9)
        typer.echo(estimate_text(run_estimate(plan), options, plan.context.candidate.provider))
        return
    if not options.langsmith_dataset:
        try:
            text = estimate_text(run_estimate(plan), options, plan.context.candidate.provider)
        except (ConfigurationError, ValueError, KeyError, TypeError) as exc:  # never stops a real run
            text = f"estimate: not available ({one_line(str(exc))})"
        _err.print(text, markup=False)
    if options.langsmith_dataset:
        from wildtoolbench.evaluation.experiment import (
            run_langsmith_experiment,  # LangSmith's client: only for an experiment
        )

        with one_line_sdk_logs("langsmith"):
            try:
                run_langsmith_experiment(
                    plan.sessions,
                    plan.context,
                    plan.dataset,
                    plan.out,
                    options.langsmith_dataset,
                    plan.concurrency,
                    plan.tasks,
                )
            except RuntimeError as exc:
                cause = exc.__cause__
                if cause is None or not type(cause).__module__.startswith("langsmith"):
                    raise
                raise InfrastructureErrors(f"error: {one_line(str(exc))}") from None  # LangSmith unreachable
        return
    if options.until_decided:
        run_until_decided(plan)
        return
    finish_run(plan, run_sessions(plan))
