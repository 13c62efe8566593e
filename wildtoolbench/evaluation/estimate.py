"""The estimate of a ``wtb eval`` before any request: sessions, model requests, tokens and cost, and the
lines that show it (docs/trials.md §9)."""

from __future__ import annotations

from typing import Any

from wildtoolbench.bench.terms import counted
from wildtoolbench.evaluation.options import EvalOptions
from wildtoolbench.evaluation.plan import EvalPlan


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
        scoring=context.strategy,
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
        "(gold path - step limit; fewer when the model stops early)",
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
