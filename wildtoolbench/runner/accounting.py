"""Accounting of a run: model requests, tries, tokens, cost, and the content of ``summary.json``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.runner.store import RecordInfo
from wildtoolbench.tracing.redaction import redact


@dataclass(frozen=True)
class Prices:
    """Model prices in USD per million tokens (``--price-input`` / ``--price-output``)."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for the given token counts, rounded to 1e-6."""
        return round((input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1e6, 6)


@dataclass
class RunSummary:
    """What :func:`arun_eval` did.

    Attributes:
        result_path: the result file.
        selected: sessions asked for.
        skipped: of those, already in the result file (resume).
        evaluated: sessions run now that got a record.
        inference_errors: ids whose record is ``"Error during inference: ..."`` (this run and earlier ones).
        infrastructure_errors: ``errors.jsonl`` entries of this run (sessions without a record, re-run on resume).
        retried_requests: requests of this run that needed more than one try, each
            ``{"id", "task", "step", "attempts", "errors", "waited", "ok"}`` (redacted: an endpoint may
            echo the request's headers into its errors; docs/settings.md §8).
        tasks / tasks_right_tool_names: tasks in the selected sessions' records and how many of them
            called the right tools in the right order (``action_name_label`` correct), before the
            argument check: not the accuracy, which only the score table reports (docs/settings.md §7.7).
        requests / attempts / input_tokens / output_tokens: model requests of this run (all sessions run now,
            infrastructure errors included), their tries, and provider-reported tokens.
        capped_retry_waits: retry waits of this run whose ``Retry-After`` asked for more than
            ``--max-retry-wait`` (cut to it; docs/settings.md §7.2).
        invalid_token_counts: replies of this run whose token counts were not counted (docs/settings.md §7.5).
        cost_usd: cost of this run when prices were given, else ``None``.
        wall_time: seconds.
        summary_path: ``DIR/summary.json``.
        trials: the most trials any selected session is to have (``--trials``; 1 for a plain run). With
            more than 1, ``skipped`` and ``evaluated`` count session-trials (docs/trials.md §1).
        session_trials: session-trials the run is to hold (``selected`` for a plain run).
        cache_hits: replies of this run served by the request cache (``--cache``, docs/trials.md §8).
    """

    result_path: Path
    selected: int = 0
    skipped: int = 0
    evaluated: int = 0
    inference_errors: list[str] = field(default_factory=list)
    infrastructure_errors: list[dict[str, Any]] = field(default_factory=list)
    retried_requests: list[dict[str, Any]] = field(default_factory=list)
    tasks: int = 0
    tasks_right_tool_names: int = 0
    requests: int = 0
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    capped_retry_waits: int = 0
    invalid_token_counts: int = 0
    cost_usd: float | None = None
    wall_time: float = 0.0
    summary_path: Path | None = None
    trials: int = 1
    session_trials: int = 0
    cache_hits: int = 0
    agent_internal: list[int] = field(default_factory=lambda: [0, 0, 0])
    """An agent candidate's internal requests and their input and output tokens (docs/evaluation.md §8.9)."""

    def add_usage(self, session_id: str, usage: Mapping[str, Any]) -> None:
        """Add one session's accounting (this run)."""
        self.requests += int(usage.get("requests", 0))
        self.attempts += int(usage.get("attempts", 0))
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))
        self.capped_retry_waits += int(usage.get("capped_retry_waits", 0))
        self.invalid_token_counts += int(usage.get("invalid_token_counts", 0))
        self.cache_hits += int(usage.get("cache_hits", 0))
        internal = usage.get("agent_internal") or {}
        for index, key in enumerate(("requests", "input_tokens", "output_tokens")):
            self.agent_internal[index] += int(internal.get(key, 0) or 0)
        self.retried_requests.extend(redact({"id": session_id, **entry}) for entry in usage.get("retried_requests", []))


def _usage_totals(usages: Iterable[Mapping[str, Any]], prices: Prices | None) -> dict[str, Any]:
    totals = {"sessions": 0, "requests": 0, "attempts": 0, "failed_requests": 0, "input_tokens": 0, "output_tokens": 0}
    for usage in usages:
        totals["sessions"] += 1
        for key in ("requests", "attempts", "failed_requests", "input_tokens", "output_tokens"):
            totals[key] += int(usage.get(key, 0) or 0)
        internal = usage.get("agent_internal") or {}
        if internal:
            kept = totals.setdefault("agent_internal", {"requests": 0, "input_tokens": 0, "output_tokens": 0})
            for key in kept:
                kept[key] += int(internal.get(key, 0) or 0)
    if prices is not None:
        internal = totals.get("agent_internal") or {}
        totals["cost_usd"] = prices.cost(
            totals["input_tokens"] + internal.get("input_tokens", 0),
            totals["output_tokens"] + internal.get("output_tokens", 0),
        )
    return totals


def summary_json(
    summary: RunSummary,
    model_name: str,
    records: Sequence[RecordInfo],
    selected_ids: Iterable[str],
    prices: Prices | None,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The content of ``DIR/summary.json``.

    ``this_run`` counts the sessions run by this invocation (infrastructure
    errors included); ``selected_sessions`` sums the ``usage`` of every record
    of the selected sessions in the result file, earlier runs included (cost at
    this run's prices). ``selected_ids`` are the ids of the selected sessions
    (:func:`wildtoolbench.runner.selection.session_ids`); ``records`` the infos of the result file's records.
    The whole content is redacted (:func:`wildtoolbench.tracing.redaction.redact`, docs/settings.md §8): errors,
    settings and paths carry no secret.
    """
    selected = set(selected_ids)
    this_run = {
        "sessions": summary.evaluated + len(summary.infrastructure_errors),
        "requests": summary.requests,
        "attempts": summary.attempts,
        "input_tokens": summary.input_tokens,
        "output_tokens": summary.output_tokens,
        "capped_retry_waits": summary.capped_retry_waits,
        "invalid_token_counts": summary.invalid_token_counts,
        "cache_hits": summary.cache_hits,
    }
    if summary.agent_internal[0]:  # an agent's internal requests, beside the steps' (docs/evaluation.md §8.9)
        this_run["agent_internal"] = dict(zip(("requests", "input_tokens", "output_tokens"), summary.agent_internal))
    if summary.cost_usd is not None:
        this_run["cost_usd"] = summary.cost_usd
    return redact(
        {
            "model_name": model_name,
            "settings": dict(settings or {}),
            "result_file": str(summary.result_path),
            "selected": summary.selected,
            "evaluated": summary.evaluated,
            "skipped": summary.skipped,
            "tasks": summary.tasks,
            "tasks_right_tool_names": summary.tasks_right_tool_names,
            "wall_time": round(summary.wall_time, 3),
            "prices_usd_per_million_tokens": (
                {"input": prices.input_per_million, "output": prices.output_per_million} if prices is not None else None
            ),
            "this_run": this_run,
            "selected_sessions": _usage_totals((r.usage for r in records if r.id in selected), prices),
            "inference_errors": summary.inference_errors,
            "infrastructure_errors": [
                {k: e.get(k) for k in ("id", "error", "attempts", "where")} for e in summary.infrastructure_errors
            ],
            "retried_requests": summary.retried_requests,
        }
    )
