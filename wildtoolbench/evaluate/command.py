"""``wtb eval``: evaluate a model on WildToolBench sessions, then score the run (docs/evaluation.md, docs/scoring.md).

The command line builds an :class:`EvalOptions` from the parsed values and calls :func:`evaluate`
inside :func:`wildtoolbench.common.exits.exit_on_error`. :func:`evaluate` runs three steps, each once:

1. :func:`plan_eval`: the options checked and resolved into an :class:`EvalPlan` (the dataset file,
   the evaluation context, the selected sessions, the output folder, the concurrency), the model
   (or the server) checked before any session: every mistake here writes nothing and exits 2, or 1
   for a bad dataset file (docs/cli.md §2);
2. the run: the batch runner (:func:`wildtoolbench.runner.run_eval`), on a LangGraph Server
   (:func:`wildtoolbench.remote.run_eval_remote`) or as a LangSmith experiment (:mod:`wildtoolbench.evaluate.experiment`);
3. :func:`finish_run`: the run's summary on stderr, the scoring and its table, the report; exit
   status 3 when some sessions hit infrastructure errors.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

import wildtoolbench.runner as runner
from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.bench.terms import counted
from wildtoolbench.common.concurrency import default_concurrency
from wildtoolbench.common.exits import BadConfiguration, InfrastructureErrors, UsageError, resumable_run
from wildtoolbench.common.inputs import require_file, wanted_ids
from wildtoolbench.common.table import metric_table, trials_table
from wildtoolbench.data.command import dataset_path, official_name, task_count
from wildtoolbench.models import ConfigurationError, split_spec
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.score.run import score_files, score_run, summary_metrics_file, trial_files
from wildtoolbench.tracing import tracing_scope

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@dataclass(frozen=True)
class EvalOptions:
    """The options of one ``wtb eval`` as parsed (``None``: not given, the default applies); the
    meaning of each is its ``--help`` text. Enum options are given by value (``language="zh"``,
    ``scoring="fixed"``); ``ids`` holds the ``--ids`` values as typed (comma-separated, repeatable)."""

    dataset: Path | None = None
    model: str | None = None
    out: Path | None = None
    ids: Sequence[str] = ()
    limit: int | None = None
    tasks: int | None = None
    language: str | None = None
    pull: bool = False
    concurrency: int | None = None
    workers: int = 1
    temperature: float | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_attempts: int | None = None
    backoff: float | None = None
    max_retry_wait: float | None = None
    rps: float | None = None
    max_steps: int | None = None
    price_input: float | None = None
    price_output: float | None = None
    scoring: str | None = None
    overwrite: bool = False
    progress: bool = True
    report: bool = False
    no_trace: bool = False
    server: str | None = None
    langsmith_dataset: str | None = None
    preflight: bool = True
    trials: int = 1
    cache: Path | None = None
    dry_run: bool = False
    until_decided: bool = False
    baseline: Path | None = None
    max_trials: int | None = None


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
        from wildtoolbench.evaluate.experiment import (
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
        if context.scoring == "fixed":  # a fixed-mode run is its own run (docs/fixed-mode.md §1)
            out = out.with_name(out.name + "-fixed")
    concurrency = options.concurrency if options.concurrency is not None else default_concurrency(context.model)
    if options.langsmith_dataset and context.scoring == "fixed":
        raise ConfigurationError("--langsmith-dataset scores in reference mode only; drop it or --scoring fixed")
    if options.langsmith_dataset and not (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")):
        raise ConfigurationError(
            "--langsmith-dataset needs LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a self-hosted LangSmith)"
        )
    return EvalPlan(options, dataset, context, tasks, sessions, out, concurrency, prices)


MAX_TIMEOUT = 1_000_000.0
"""Longest ``--timeout`` in seconds (11.6 days): "no deadline" is not a value (docs/settings.md §7.3)."""


@dataclass(frozen=True)
class NumberRule:
    """What a number option or setting must be (docs/settings.md §7.3): finite, at least ``low`` (or above it
    when ``above``), at most ``high``; ``option`` / ``field`` / ``variable`` name it on the command line,
    in the context and in the environment (``None``: it has none)."""

    option: str
    field: str | None
    variable: str | None
    low: float = 0.0
    above: bool = False
    high: float | None = None
    integer: bool = False

    def problem(self, value: Any) -> str | None:
        """Why ``value`` breaks the rule (a phrase ending in the value as given), or ``None``."""
        if value is None:
            return None
        kind = "a whole number" if self.integer else "a finite number"
        bound = f"> {self.low:g}" if self.above else f">= {self.low:g}"
        if self.high is not None:
            bound += f" and <= {self.high:g}"
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        ok = math.isfinite(number) and (number > self.low if self.above else number >= self.low)
        ok = ok and (self.high is None or number <= self.high) and (not self.integer or float(number).is_integer())
        return None if ok else f"must be {kind} {bound}, got {value!r}"


NUMBER_RULES = (
    NumberRule("--temperature", "temperature", "WTB_TEMPERATURE"),
    NumberRule("--timeout", "timeout", "WTB_TIMEOUT", above=True, high=MAX_TIMEOUT),
    NumberRule("--max-attempts", "max_attempts", "WTB_MAX_ATTEMPTS", low=1, integer=True),
    NumberRule("--backoff", "backoff", "WTB_BACKOFF"),
    NumberRule("--max-retry-wait", "max_retry_wait", "WTB_MAX_RETRY_WAIT"),
    NumberRule("--rps", "rps", "WTB_RPS"),
    NumberRule("--max-steps", "max_steps", "WTB_MAX_STEPS", low=1, integer=True),
    NumberRule("--price-input", None, None),
    NumberRule("--price-output", None, None),
)
"""The number options of ``wtb eval`` and what each must be (docs/settings.md §7.3)."""


def check_option_values(options: EvalOptions) -> None:
    """Refuse number options that are not finite or out of range (:data:`NUMBER_RULES`). A ``--base-url`` is
    checked by the providers that use one (``openai:``, ``langchain:``: docs/settings.md §7.4), in
    :func:`check_configuration`, so that a replay run may carry any.

    Raises:
        UsageError: naming the option, e.g. ``--timeout: must be a finite number > 0 and <= 1e+06, got nan``
            (click's usage format, exit 2).
    """
    for rule in NUMBER_RULES:
        name = rule.option.lstrip("-").replace("-", "_")
        problem = rule.problem(getattr(options, name))
        if problem is not None:
            raise UsageError(problem, rule.option)


def check_setting_values(context: EvaluationContext) -> None:
    """The same rules for the values the context took from ``WTB_*`` variables (an option given was
    checked by :func:`check_option_values`). A ``WTB_BASE_URL`` is checked by the providers that use
    one (``openai:``, ``langchain:``), in :func:`check_configuration`.

    Raises:
        models.ConfigurationError: naming the variable, e.g. ``WTB_TIMEOUT=0: must be ... (exit 2)``.
    """
    for rule in NUMBER_RULES:
        if rule.field is None:
            continue
        problem = rule.problem(getattr(context, rule.field))
        if problem is not None:
            raise ConfigurationError(f"{rule.variable} (or the context field {rule.field}) {problem}")


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


APPLIED_OPTIONS = (("--temperature", "temperature"), ("--base-url", "base_url"))
"""The options that set a per-model setting (``models.MODEL_SETTINGS``), as ``(option, EvalOptions field)``."""


def check_applied_options(options: EvalOptions, context: EvaluationContext) -> None:
    """Refuse ``--temperature`` and ``--base-url`` when given for a candidate whose model is not built with
    them (a ``graph:`` candidate brings its own models; a ``langchain:`` class may take no temperature):
    an option either applies or is refused, never silently ignored (docs/settings.md §7.8). A ``WTB_*``
    variable for such a setting is left unused, and ``run.json`` records only the settings that applied.

    Raises:
        BadConfiguration: one ``error: --temperature does not apply to graph:...: <why>; drop it`` line per
            option (exit 2, nothing written).
        models.ConfigurationError: a malformed spec or an unknown provider (exit 2).
    """
    unapplied = context.candidate.unapplied_settings
    lines = [
        f"error: {option} does not apply to {context.model}: {unapplied[field]}; drop {option}"
        for option, field in APPLIED_OPTIONS
        if getattr(options, field) is not None and field in unapplied
    ]
    if lines:
        raise BadConfiguration(*lines)


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


#: Providers whose model is a llama.cpp server started by the process that uses it (``wildtoolbench.models.llama``).
LOCAL_SERVER_PROVIDERS = ("local", "gguf")


def check_workers(context: EvaluationContext, *, server: str | None, langsmith_dataset: str | None) -> None:
    """``--workers`` above 1 needs sessions run by this machine's evaluation graph against a shared endpoint
    (docs/settings.md §2.1).

    Raises:
        ConfigurationError: combined with ``--server`` or ``--langsmith-dataset``, or a model whose
            provider serves one request at a time (``models.max_concurrency`` 1) or is a local llama.cpp
            server (``local``, ``gguf:``: each worker process would start one more); a malformed spec.
    """
    if server:
        raise ConfigurationError("--workers > 1 runs the graph in local processes; --server runs it on the server")
    if langsmith_dataset:
        raise ConfigurationError(
            "--workers > 1 cannot be combined with --langsmith-dataset (an experiment runs in this process)"
        )
    if context.candidate.max_concurrency == 1 or split_spec(context.model)[0] in LOCAL_SERVER_PROVIDERS:
        raise ConfigurationError(
            f"--workers > 1: {context.model!r} is served by one local server and every worker process would start "
            "its own copy of it; use --workers 1 (and --concurrency for sessions at once)"
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


def check_trial_options(options: EvalOptions) -> None:
    """``--trials``, ``--cache`` and ``--until-decided`` run the sessions in this process, and
    ``--until-decided`` needs its baseline and budget (docs/trials.md §1, §7, §8).

    Raises:
        UsageError: ``--trials`` below 1, ``--max-trials`` below 2, ``--baseline`` / ``--max-trials`` without
            ``--until-decided`` (or it without them), ``--until-decided`` with ``--trials``, a ``--baseline`` that
            is not a folder (exit 2).
        models.ConfigurationError: combined with ``--server``, ``--workers`` > 1 or ``--langsmith-dataset`` (exit 2).
    """
    if options.trials < 1:
        raise UsageError(f"must be >= 1, got {options.trials}", "--trials")
    if options.until_decided:
        if options.baseline is None:
            raise UsageError(
                "--until-decided needs --baseline RUN_B (a finished run of the same sessions)", "--baseline"
            )
        if options.max_trials is None:
            raise UsageError("--until-decided needs --max-trials K (the budget: trials per session)", "--max-trials")
        if options.max_trials < 2:
            raise UsageError(f"must be >= 2, got {options.max_trials}", "--max-trials")
        if options.trials != 1:
            raise UsageError("--until-decided chooses the trials itself: drop --trials", "--trials")
        if not options.baseline.is_dir():
            raise UsageError(f"{options.baseline}: not a run folder", "--baseline")
    elif options.baseline is not None or options.max_trials is not None:
        raise UsageError("only with --until-decided", "--baseline" if options.baseline is not None else "--max-trials")
    uses = [
        name
        for name, used in (
            ("--trials", options.trials > 1),
            ("--cache", options.cache is not None),
            ("--until-decided", options.until_decided),
        )
        if used
    ]
    if not uses:
        return
    for other, given in (
        ("--server", bool(options.server)),
        ("--workers > 1", options.workers > 1),
        ("--langsmith-dataset", bool(options.langsmith_dataset)),
    ):
        if given:
            raise ConfigurationError(
                f"{uses[0]} runs the sessions in this process and cannot be combined with {other} (docs/trials.md §1)"
            )


def run_estimate(plan: EvalPlan) -> Any:
    """The plan's :class:`wildtoolbench.bench.estimate.Estimate`: sessions, model requests, tokens and cost, counted with the
    candidate's tokenizer where known (``wildtoolbench.models.tokens``), before any request (docs/trials.md §9).

    Raises:
        wildtoolbench.bench.schema.DatasetError: the dataset changed since the plan read it.
    """
    from wildtoolbench.bench.estimate import estimate_run, reply_text
    from wildtoolbench.models.tokens import token_counter

    options, context = plan.options, plan.context
    candidate = context.candidate
    counter = token_counter(candidate.provider, candidate.model)
    trials = (1, options.max_trials or 1) if options.until_decided else (options.trials, options.trials)
    prices = None if plan.prices is None else (plan.prices.input_per_million, plan.prices.output_per_million)
    return estimate_run(
        plan.sessions,
        counter.prompt,
        lambda message: counter.text(reply_text(message)),
        tokenizer=counter.name,
        trials=trials,
        language=context.language or "en",
        scoring=context.scoring or "reference",
        max_steps=context.max_steps,
        prices=prices,
    )


def _range(low: float, high: float, money: bool = False) -> str:
    text = (lambda v: f"${v:,.4f}") if money else (lambda v: f"{v:,}")
    return text(low) if low == high else f"{text(low)} - {text(high)}"


UNPRICED_PROVIDERS = frozenset({"replay", "scripted", "baseline", "local", "gguf"})
"""Providers that call no paid model: their estimate says so instead of asking for prices."""


def estimate_text(estimate: Any, options: EvalOptions, provider: str = "") -> str:
    """The lines that show :func:`run_estimate` (``wtb eval --dry-run`` prints them on stdout, a real run on
    stderr first, docs/trials.md §9): sessions and session evaluations, requests (gold path to step limit),
    prompt and reply tokens with the tokenizer that counted them, and the cost range at ``--price-*``
    (``provider``: the candidate's; one of :data:`UNPRICED_PROVIDERS` gets "cost: none" instead of the
    request for prices)."""
    from wildtoolbench.models.tokens import APPROXIMATION

    how = (
        f"{estimate.tokenizer}: an approximation, docs/trials.md §9"
        if estimate.tokenizer == APPROXIMATION
        else estimate.tokenizer
    )
    low, high = estimate.session_trials
    trials = f" ({_range(low, high)} session evaluations)" if high != estimate.sessions else ""
    lines = [
        f"estimate: {counted(estimate.sessions, 'session')}{trials}; model requests {_range(*estimate.requests)} "
        "(gold path - step limit)",
        f"  prompt tokens {_range(*estimate.prompt_tokens)}, reply tokens {_range(*estimate.reply_tokens)} "
        f"(counted with {how})",
    ]
    if estimate.cost_usd is not None:
        lines.append(
            f"  cost {_range(*estimate.cost_usd, money=True)} at ${options.price_input or 0:g} / "
            f"${options.price_output or 0:g} per million prompt / reply tokens"
        )
    elif provider in UNPRICED_PROVIDERS:
        lines.append(f"  cost: none ({provider}: no paid model is called)")
    else:
        lines.append("  cost: give --price-input and --price-output (USD per million tokens) for a cost range")
    return "\n".join(lines)


def run_sessions(plan: EvalPlan, trials: Mapping[str, int] | None = None) -> runner.RunSummary:
    """Run the plan's sessions into ``plan.out`` (resuming), here or on ``--server``, with tracing as
    configured; Ctrl-C and SIGTERM stop it with a resume hint (exit 130).

    ``trials``: trials per session (the stopping rule's choice, :func:`run_until_decided`); default
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

            run = functools.partial(run_eval_remote, server=options.server, no_trace=options.no_trace)
        more: dict[str, Any] = {"workers": options.workers} if options.workers > 1 else {}
        if trials is not None or options.trials > 1:
            more["trials"] = trials if trials is not None else options.trials
        if options.cache is not None:
            from wildtoolbench.models.cache import RequestCache

            cache = RequestCache(options.cache)
            cache.root.mkdir(parents=True, exist_ok=True)  # a cache folder that cannot be made stops the run first
            more["cache"] = cache
        return run(
            plan.sessions,
            plan.context,
            plan.out,
            concurrency=plan.concurrency,
            overwrite=options.overwrite,
            progress=options.progress,
            prices=plan.prices,
            settings={"tasks": plan.tasks, **({"trials": options.trials} if options.trials > 1 else {})},
            **more,
        )


def finish_run(plan: EvalPlan, summary: runner.RunSummary) -> None:
    """Print the run's summary line and accounting on stderr; when any session has a record, score the
    run and print the table (:func:`score_and_print`) and, with ``--report``, write the report into
    ``OUT/report/``.

    Raises:
        InfrastructureErrors: some sessions hit infrastructure errors (exit 3, after everything else).
        wildtoolbench.bench.schema.DatasetError, wildtoolbench.report.runs.ReportError, OSError: the scoring or the report failed (exit 1).
    """
    context = plan.context
    _err.print(run_summary_line(summary, context.language), markup=False)
    if summary.inference_errors:
        _err.print(
            f"[yellow]inference errors[/yellow] in {len(summary.inference_errors)} sessions: {', '.join(summary.inference_errors)}"
        )
    print_accounting(summary, max_retry_wait=context.max_retry_wait)
    if summary.evaluated + summary.skipped:
        score_and_print(plan.dataset, summary.result_path, plan.out, plan.tasks, context.scoring, context.language)
        if plan.options.report:
            from wildtoolbench.report.command import write_report  # the report's plotting: only for --report

            write_report([plan.out], plan.out / "report")
    if summary.infrastructure_errors:
        raise InfrastructureErrors()


_SECRET_IN_TEXT = re.compile(r"(API Key:\s*)\S+", re.IGNORECASE)


def one_line(text: str, limit: int = 400) -> str:
    """The first line of ``text``, an ``API Key: ...`` in it masked, cut to ``limit`` characters."""
    line = _SECRET_IN_TEXT.sub(r"\1[REDACTED]", (text.splitlines() or [""])[0].strip())
    return line if len(line) <= limit else line[:limit] + "..."


class _OneLine(logging.Filter):
    """Log records of logger ``name`` and its children as one line each, without traceback, each text once
    (see :func:`one_line_sdk_logs`); records of other loggers pass unchanged."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.prefix = name
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_wtb_one_line", False):
            return True  # already made one line (by the logger's filter, before a handler's)
        if record.name != self.prefix and not record.name.startswith(self.prefix + "."):
            return True
        text = one_line(record.getMessage())
        if text in self.seen:
            return False
        self.seen.add(text)
        record.msg, record.args, record.exc_info, record.exc_text, record.stack_info = text, (), None, None, None
        record._wtb_one_line = True
        return True


@contextlib.contextmanager
def one_line_sdk_logs(name: str) -> Iterator[None]:
    """While the block runs, what SDK logger ``name`` and its children log is one line per message, without
    traceback or repeats, credentials masked (docs/cli.md §2): also the children the SDK only creates
    inside the block (``langsmith.evaluation`` logs a target's failure with its traceback), through the
    handlers their records reach (the root logger's, or Python's last-resort handler)."""
    logger = logging.getLogger(name)
    only = _OneLine(name)
    loggers = [logger] + [
        logging.getLogger(other) for other in list(logging.root.manager.loggerDict) if other.startswith(name + ".")
    ]
    handlers = [*logging.root.handlers, *([logging.lastResort] if logging.lastResort is not None else [])]
    for each in [*loggers, *handlers]:
        each.addFilter(only)
    try:
        yield
    finally:
        for each in [*loggers, *handlers]:
            each.removeFilter(only)


def run_summary_line(summary: Any, language: str | None = "en") -> str:
    """The line ``wtb eval`` prints when the sessions are done: sessions selected, evaluated by this
    run, already done by an earlier one, the dataset side and where the records are, e.g.
    ``"6 sessions: 6 evaluated, 0 already done; en side; 1.2s -> runs/x/result.jsonl"``.

    It holds no score: the table printed next is the one place for accuracy (the count of tasks whose
    actions matched before the argument check, shown here before, read like a second accuracy).
    """
    if getattr(summary, "trials", 1) > 1:  # docs/trials.md §1: the counts are session-trials
        return (
            f"{summary.selected} sessions, up to {summary.trials} trials each: {summary.evaluated} session-trials "
            f"evaluated, {summary.skipped} already done; {language or 'en'} side; {summary.wall_time:.1f}s -> "
            f"{summary.result_path} (trial 1) and {summary.result_path.with_name('result.trials.jsonl')}"
        )
    return (
        f"{counted(summary.selected, 'session')}: {summary.evaluated} evaluated, {summary.skipped} already done; "
        f"{language or 'en'} side; {summary.wall_time:.1f}s -> {summary.result_path}"
    )


def print_accounting(summary: runner.RunSummary, limit: int = 20, max_retry_wait: float | None = None) -> None:
    """Print model requests, tokens, cost, the Retry-After waits cut to ``max_retry_wait`` seconds, replies
    whose token counts were not counted, retried requests and infrastructure errors of the run on
    stderr (docs/settings.md §7), at most ``limit`` entries of each list."""
    cost = f", cost ${summary.cost_usd:.4f}" if summary.cost_usd is not None else ""
    _err.print(
        f"model requests {summary.requests} ({summary.attempts} tries); tokens in {summary.input_tokens}, "
        f"out {summary.output_tokens}{cost}; summary -> {summary.summary_path}",
        markup=False,
    )
    if summary.capped_retry_waits:
        longest = max((max(e.get("retry_after_capped") or [0]) for e in summary.retried_requests), default=0)
        _err.print(
            f"Retry-After cut to --max-retry-wait {max_retry_wait if max_retry_wait is not None else 60:g} s in {summary.capped_retry_waits} "
            f"waits (the server asked up to {longest:g} s; see retried_requests in summary.json)",
            markup=False,
        )
    if summary.invalid_token_counts:
        _err.print(
            f"token counts not counted: {summary.invalid_token_counts} replies reported counts that cannot be "
            "token counts (negative, fractional or above 100000000); see docs/settings.md §7.5",
            markup=False,
        )
    retried = summary.retried_requests
    if retried:
        _err.print(f"retried requests: {len(retried)}", markup=False)
        for entry in retried[:limit]:
            status = "ok" if entry.get("ok") else "FAILED"
            _err.print(
                f"  {entry['id']} task {entry.get('task')} step {entry.get('step')}: {entry['attempts']} tries, "
                f"{status}; {'; '.join(entry.get('errors', []))}",
                markup=False,
            )
        if len(retried) > limit:
            _err.print(f"  ... and {len(retried) - limit} more (see summary.json)", markup=False)
    errors = summary.infrastructure_errors
    if errors:
        _err.print(
            f"infrastructure errors in {len(errors)} sessions (not scored, kept in errors.jsonl; "
            "run the same command again to retry them):",
            markup=False,
        )
        for entry in errors[:limit]:
            trial = f" (trial {entry['trial']})" if entry.get("trial") else ""
            _err.print(f"  {entry['id']}{trial}: {entry.get('error')}", markup=False)


def score_and_print(
    dataset: Path, result_path: Path, out: Path, tasks: int = 4, scoring: str = "reference", language: str | None = "en"
) -> None:
    """Score the run into ``out/score.jsonl``, ``out/metric.json`` and ``out/summary_metrics.json``
    (``score.fixed.jsonl``, ``metric.fixed.json`` and ``summary_metrics.fixed.json`` in fixed mode,
    docs/fixed-mode.md) and print the table (docs/scoring.md).

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
    typer.echo(f"outputs in {out}/")


def _kept_sessions(out: Path, sessions: Sequence[Mapping[str, Any]]) -> str:
    """How many of the selected sessions have a record in ``out/result.jsonl`` (for the resume hint)."""
    path = out / runner.RESULT_FILE
    try:
        done = runner.ResultFile(path).scan()
    except (OSError, ValueError):
        return f"the finished sessions are in {path}"
    count = sum(1 for session_id in runner.session_ids(sessions) if session_id in done)
    return f"{count} of {len(sessions)} sessions are in {path}"


def run_until_decided(plan: EvalPlan) -> dict[str, Any]:
    """``wtb eval --until-decided --baseline RUN_B --max-trials K``: add trials of this run's candidate, round
    by round, only for the sessions the stopping rule picks, until the comparison with the finished run RUN_B
    is decided or the budget is spent (``wildtoolbench.bench.sequential.sequential_decision``, docs/trials.md §7).

    Each round runs the session-trials the rule asked for (resumable like any run; the cache serves what was
    paid for), scores the run, and looks at the paired evidence. RUN_B is not run again (``rerun=("a",)``):
    a baseline with ``--trials`` of its own is compared far more sharply. At the end the run is scored and
    printed as any run, then the decision and the requests saved against ``K`` full trials, also written to
    ``OUT/until_decided.json``.

    Returns:
        The ``until_decided.json`` document: ``{"baseline", "max_trials", "decision", "estimate", "low",
        "high", "rounds": [...], "session_trials", "full_session_trials", "requests", "full_requests_estimate"}``.

    Raises:
        BadInput: RUN_B cannot be read (exit 1). BadConfiguration: RUN_B holds other sessions, another
            scoring mode or side (exit 2). InfrastructureErrors: a round left infrastructure errors (exit 3,
            after scoring). As :func:`run_sessions` otherwise.
    """
    from wildtoolbench.bench.sequential import CONTINUE, sequential_decision
    from wildtoolbench.common.exits import BadConfiguration, BadInput
    from wildtoolbench.common.files import write_json_atomic
    from wildtoolbench.common.run_folder import UNTIL_DECIDED_FILE
    from wildtoolbench.compare.runs import RunFolderError, RunsNotComparable, check_comparable, read_run

    options, context = plan.options, plan.context
    scoring = context.scoring or "reference"
    assert options.baseline is not None and options.max_trials is not None
    try:
        baseline = read_run(options.baseline, scoring)
    except RunFolderError as exc:
        raise BadInput(*exc.issues) from None
    ids = runner.session_ids(plan.sessions)
    missing = sorted(set(ids) ^ set(baseline.tasks))
    if missing:
        raise BadConfiguration(
            f"error: not comparable: the baseline {options.baseline} and this selection differ in {len(missing)} "
            f"session(s), first {missing[0]}; select the baseline's sessions (--ids / --limit)"
        )
    wanted = dict.fromkeys(ids, 1)
    rounds: list[dict[str, Any]] = []
    while True:
        summary = run_sessions(plan, wanted)
        if summary.infrastructure_errors:
            finish_run(plan, summary)  # scores what there is, lists the errors, exits 3
        score_run(
            plan.dataset, summary.result_path, plan.out, tasks=plan.tasks, scoring=scoring, language=context.language
        )
        try:
            mine = read_run(plan.out, scoring)
            check_comparable(mine, baseline)
        except RunFolderError as exc:
            raise BadInput(*exc.issues) from None
        except RunsNotComparable as exc:
            raise BadConfiguration(*(f"error: not comparable: {reason}" for reason in exc.reasons)) from None
        look = sequential_decision(mine.verdicts, baseline.verdicts, max_trials=options.max_trials, rerun=("a",))
        counts = {session_id: len(values) for (session_id, _), values in mine.verdicts.items()}
        rounds.append({"session_trials": sum(counts.values()), "requests": summary.requests, **_look(look)})
        _err.print(
            f"round {len(rounds)}: {sum(counts.values())} session-trials; task accuracy difference "
            f"{look.estimate * 100:+.2f} points, confidence sequence [{look.low * 100:+.2f}, {look.high * 100:+.2f}]: "
            f"{look.decision}"
            + (f", {len(look.rerun['a'])} sessions get another trial" if look.decision == CONTINUE else ""),
            markup=False,
        )
        if look.decision != CONTINUE:
            break
        for session_id in look.rerun["a"]:
            wanted[session_id] = counts[session_id] + 1
    if len(rounds) > 1:  # the run summary is the last round's; say so before the totals contradict it
        _err.print(
            f"round {len(rounds)} of {len(rounds)}: its run summary below counts this round's session-trials and "
            "requests; the totals of every round follow it",
            markup=False,
        )
    finish_run(plan, summary)
    paid = _paid_requests(plan.out)
    session_trials = sum(counts.values())
    per_trial = paid / session_trials if session_trials else 0.0
    full = len(ids) * options.max_trials
    document = {
        "baseline": str(options.baseline),
        "max_trials": options.max_trials,
        **_look(look),
        "rounds": rounds,
        "session_trials": session_trials,
        "full_session_trials": full,
        "requests": paid,
        "full_requests_estimate": round(per_trial * full),
    }
    write_json_atomic(plan.out / UNTIL_DECIDED_FILE, document)
    typer.echo(until_decided_text(document))
    return document


def _look(look: Any) -> dict[str, Any]:
    return {"decision": look.decision, "estimate": look.estimate, "low": look.low, "high": look.high}


def _paid_requests(out: Path) -> int:
    """Model requests the records of every trial in ``out`` paid for (their ``usage``)."""
    import json

    from wildtoolbench.common.run_folder import TRIALS_RESULT_FILE

    total = 0
    for name in (runner.RESULT_FILE, TRIALS_RESULT_FILE):
        path = out / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    usage = json.loads(line).get("usage") or {}
                    total += int(usage.get("requests", 0) or 0)
    return total


def until_decided_text(document: Mapping[str, Any]) -> str:
    """The lines ``wtb eval --until-decided`` ends with (docs/trials.md §7): the decision with its confidence
    sequence, then session-trials and model requests against ``--max-trials`` full trials."""
    saved_trials = document["full_session_trials"] - document["session_trials"]
    full = document["full_requests_estimate"]
    saved = full - document["requests"]
    share = f", {saved / full * 100:.1f}%" if full else ""
    return "\n".join(
        [
            f"until decided: {document['decision']} against {document['baseline']} after {len(document['rounds'])} "
            f"rounds (task accuracy {document['estimate'] * 100:+.2f} points, confidence sequence "
            f"[{document['low'] * 100:+.2f}, {document['high'] * 100:+.2f}]; docs/trials.md §7)",
            f"session-trials: {document['session_trials']} of {document['full_session_trials']} for "
            f"{document['max_trials']} full trials ({saved_trials} saved); model requests: {document['requests']}, "
            f"about {full} for {document['max_trials']} full trials (about {saved} saved{share})",
        ]
    )
