"""A checked ``wtb eval``: :func:`plan_eval` turns :class:`wildtoolbench.evaluation.options.EvalOptions` into an
:class:`EvalPlan` (dataset, evaluation context, sessions, output folder, concurrency), checking the model or
the server before any session (docs/cli.md §2, docs/settings.md)."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

import wildtoolbench.runner as runner
from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.common.concurrency import default_concurrency
from wildtoolbench.common.exits import InfrastructureErrors, UsageError
from wildtoolbench.common.inputs import require_file, wanted_ids
from wildtoolbench.data.command import dataset_path, official_name, task_count
from wildtoolbench.evaluation.options import (
    EvalOptions,
    check_applied_options,
    check_option_values,
    check_setting_values,
    check_trial_options,
    check_workers,
)
from wildtoolbench.models import ConfigurationError
from wildtoolbench.nodes.evaluation.context import EvaluationContext

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@dataclass(frozen=True)
class EvalPlan:
    """A checked ``wtb eval``: what :func:`evaluate` runs.

    Attributes:
        options: the options it was made from.
        dataset: the dataset file (the bundled demo, or the official file, resolved).
        context: the evaluation context (model spec and settings, with ``$WTB_*`` applied).
        tasks: tasks per session.
        sessions: the selected sessions (unparsed, :class:`wildtoolbench.runner.DatasetSessions`).
        out: the output folder.
        concurrency: sessions in flight.
        prices: USD per million tokens, or ``None`` (no cost in the summary).
    """

    options: EvalOptions
    dataset: Path
    context: EvaluationContext
    tasks: int
    sessions: Sequence[Mapping[str, Any]]
    out: Path
    concurrency: int
    prices: runner.Prices | None


def plan_eval(options: EvalOptions) -> EvalPlan:
    """Check ``options`` and resolve them into an :class:`EvalPlan`, in this order: the dataset (name,
    default, existence), ``--ids``, the evaluation context, the task count, the dataset's lines, the
    selection, the options that cannot be combined, the model or the server, the output folder and
    the concurrency. Nothing is written.

    Raises:
        UsageError: a ``--dataset`` that is not a file, ``--ids`` naming no session or one the dataset
            does not hold, a number option out of range (click's usage format, exit 2).
        models.ConfigurationError: a bad model spec or ``$WTB_*`` setting, options that cannot be
            combined, a server that cannot run the model (exit 2).
        BadConfiguration: an option the candidate does not use (:func:`check_applied_options`, exit 2).
        InfrastructureErrors: the model's endpoint cannot be reached (:func:`preflight`, exit 3).
        wildtoolbench.bench.schema.DatasetError: the dataset file's content (exit 1).
    """
    dataset = dataset_path(options.dataset, options.pull)
    if dataset is None:
        dataset = bundled_demo_sessions()
    require_file(dataset, "--dataset")
    check_option_values(options)
    wanted = wanted_ids(options.ids)
    context = evaluation_context(options, dataset)
    check_setting_values(context)
    tasks = task_count(dataset, options.tasks)
    loaded = runner.open_dataset(dataset, tasks=tasks, language=context.language)
    for warning in loaded.warnings:  # scored as they are, with the effect each names (docs/dataset.md §7.2)
        _err.print(str(warning), markup=False)
    try:
        sessions = runner.select_sessions(loaded, wanted or None, options.limit)
    except ValueError as exc:  # an id the dataset does not hold
        raise UsageError(str(exc), "--ids") from None
    prices = (
        None
        if options.price_input is None and options.price_output is None
        else runner.Prices(options.price_input or 0.0, options.price_output or 0.0)
    )
    if options.server and options.langsmith_dataset:
        raise ConfigurationError(
            "--server and --langsmith-dataset cannot be combined (an experiment runs in this process)"
        )
    if options.workers > 1:
        check_workers(context, server=options.server, langsmith_dataset=options.langsmith_dataset)
    check_trial_options(options)
    check_applied_options(options, context)
    if options.server:  # the server runs the model: it must answer and be able to open the spec's file
        from wildtoolbench.remote import check_server  # the LangGraph SDK: only for --server

        check_server(options.server, "evaluation", [context.model], context=context)
    else:
        check_configuration(context)
        if options.preflight and not options.dry_run:  # a dry run sends nothing (docs/trials.md §9)
            preflight(context)
    out = options.out
    if out is None:
        out = default_out_dir(context, dataset, name=official_name(options.dataset))
        # a run of another mode than reference is its own run (docs/fixed-mode.md §1)
        out = out.with_name(out.name + context.strategy.folder_suffix())
    concurrency = options.concurrency if options.concurrency is not None else default_concurrency(context.model)
    if options.langsmith_dataset and not context.strategy.is_reference:
        raise ConfigurationError(
            f"--langsmith-dataset scores in reference mode only; drop it or --scoring {context.strategy}"
        )
    if options.langsmith_dataset and not (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")):
        raise ConfigurationError(
            "--langsmith-dataset needs LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a self-hosted LangSmith)"
        )
    return EvalPlan(options, dataset, context, tasks, sessions, out, concurrency, prices)


def evaluation_context(options: EvalOptions, dataset: Path) -> EvaluationContext:
    """The run's ``EvaluationContext``: the options given, ``$WTB_*`` settings and defaults for the rest
    (docs/settings.md).

    Raises:
        models.ConfigurationError: a bad value, e.g. ``$WTB_SCORING=fixd`` (the run's configuration too).
    """
    try:
        return EvaluationContext(
            model=options.model,
            base_url=options.base_url,
            temperature=options.temperature,
            timeout=options.timeout,
            max_attempts=options.max_attempts,
            backoff=options.backoff,
            max_retry_wait=options.max_retry_wait,
            rps=options.rps,
            max_steps=options.max_steps,
            scoring=options.scoring,
            language=options.language,
            dataset=str(dataset),
        )
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


def check_configuration(context: EvaluationContext) -> None:
    """Check the run's model spec before any session: provider, files, candidate, credentials, packages.

    A mistake here is the run's configuration, not a model result: ``wtb eval`` exits 2 and writes
    nothing. Errors that only a request can reveal (HTTP 401/403/404) stay infrastructure errors.
    (With ``--server`` the server runs the model: :func:`wildtoolbench.remote.check_server` checks instead.)

    Raises:
        models.ConfigurationError: the message names the problem and the fix.
    """
    context.candidate.check()


def endpoint_urls(context: EvaluationContext) -> list[str]:
    """The HTTP endpoints the run's candidate sends its requests to, as far as they are known before
    the first session: an ``openai:`` model's base URL (``--base-url``, else ``OPENAI_BASE_URL``, else
    ``https://api.openai.com/v1``) and a ``langchain:`` model's ``--base-url``; none for replays,
    scripts, local models, ``graph:`` candidates and a ``langchain:`` model on its provider's default
    (docs/settings.md §7.6)."""
    import os

    provider = context.candidate.provider
    if provider == "openai":
        return [context.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"]
    if provider == "langchain" and context.base_url:
        return [context.base_url]
    return []


def preflight(context: EvaluationContext) -> None:
    """Before the first session, check that each endpoint of :func:`endpoint_urls` answers
    (``wildtoolbench.models.transport.probe_endpoint``: one request, no retries; docs/settings.md §7.6), so that a
    dead URL is one error instead of every session's retries.

    Raises:
        InfrastructureErrors: an endpoint does not answer (exit 3, nothing written), naming it.
    """
    from wildtoolbench.models.transport import probe_endpoint, redacted_url

    timeout = min(float(context.timeout or 10.0), 10.0)
    for url in endpoint_urls(context):
        problem = probe_endpoint(url, timeout)
        if problem is not None:
            raise InfrastructureErrors(
                f"error: the model endpoint {redacted_url(url)} cannot be reached: {problem}; no session was run. "
                "Check --base-url (or OPENAI_BASE_URL) and that the server is up; --no-preflight skips this check"
            )


def default_out_dir(context: EvaluationContext, dataset: Path, *, name: str | None = None) -> Path:
    """The output folder of ``wtb eval`` without ``--out``, relative to the working directory.

    ``runs/<model name>/<dataset part>``, where the model name is the one written into the records
    (``local``, ``gpt-4o-mini``, a replay candidate ...) with characters other than letters,
    digits, ``.``, ``_`` and ``-`` made ``_``, and the dataset part is

    - ``name`` when given (the official dataset: ``wildtoolbench``), or ``demo_sessions`` for the
      bundled demo: each names one file;
    - otherwise ``<file stem>-<first 8 hex digits of the sha256 of the absolute path>``, so that
      two datasets with the same file name never share a folder (the same file, however it is
      written, always gets the same one);

    plus ``-zh`` when ``context.language`` is ``zh`` (a run directory holds one language side).
    """
    model = re.sub(r"[^A-Za-z0-9._-]+", "_", runner.recorded_model_name(context)).strip("._") or "model"
    absolute = Path(dataset).resolve()
    if name:
        part = name
    elif absolute == bundled_demo_sessions().resolve():
        part = absolute.stem
    else:
        part = f"{absolute.stem}-{hashlib.sha256(str(absolute).encode('utf-8')).hexdigest()[:8]}"
    if (context.language or "en") != "en":
        part += f"-{context.language}"
    return Path("runs") / model / part
