"""The options of ``wtb eval`` (:class:`EvalOptions`) and the checks that need no dataset and no model: number
ranges (docs/settings.md §7.3), options a candidate does not use (§7.8), ``--workers`` (§2.1) and the trial
options (docs/trials.md §1, §7, §8)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench.common.exits import BadConfiguration, UsageError
from wildtoolbench.models import ConfigurationError, split_spec
from wildtoolbench.nodes.evaluation.context import EvaluationContext


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
    server_threads: bool = True
    langsmith_dataset: str | None = None
    preflight: bool = True
    trials: int = 1
    cache: Path | None = None
    cache_trust: bool = False
    dry_run: bool = False
    until_decided: bool = False
    baseline: Path | None = None
    max_trials: int | None = None
    # Not an option of the command line: the Python API's ``out=None`` runs in a temporary folder removed when
    # the call returns; the run's closing line then says so instead of pointing there (docs/guides/scripting.md).
    out_temporary: bool = False


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
    :func:`wildtoolbench.evaluation.plan.check_configuration`, so that a replay run may carry any.

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
    one (``openai:``, ``langchain:``), in :func:`wildtoolbench.evaluation.plan.check_configuration`.

    Raises:
        models.ConfigurationError: naming the variable, e.g. ``WTB_TIMEOUT=0: must be ... (exit 2)``.
    """
    for rule in NUMBER_RULES:
        if rule.field is None:
            continue
        problem = rule.problem(getattr(context, rule.field))
        if problem is not None:
            raise ConfigurationError(f"{rule.variable} (or the context field {rule.field}) {problem}")


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


def check_trial_options(options: EvalOptions) -> None:
    """``--trials``, ``--cache`` and ``--until-decided`` are checked, and ``--until-decided`` needs its baseline
    and budget (docs/trials.md §1, §7, §8).

    Raises:
        UsageError: ``--trials`` below 1, ``--max-trials`` below 2, ``--baseline`` / ``--max-trials`` without
            ``--until-decided`` (or it without them), ``--until-decided`` with ``--trials``, a ``--baseline`` that
            is not a folder (exit 2).
        models.ConfigurationError: combined with ``--langsmith-dataset`` (exit 2). With ``--server`` and
            ``--workers`` they run as in one process (docs/trials.md §8.1).
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
    if options.langsmith_dataset:  # a LangSmith experiment runs each example once, in its own harness
        raise ConfigurationError(
            f"{uses[0]} cannot be combined with --langsmith-dataset (an experiment runs each session once; "
            "docs/trials.md §1)"
        )
