"""What ``wtb eval`` prints on stderr when the sessions are done: the run's summary line and its accounting
(model requests, tokens, cost, retries, infrastructure errors; docs/settings.md §7)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

import wildtoolbench.runner as runner
from wildtoolbench.bench.terms import counted
from wildtoolbench.common.numbering import step_number, task_number

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


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
                f"  {entry['id']} task {task_number(entry.get('task'))} step {step_number(entry.get('step'))}: "
                f"{entry['attempts']} tries, "
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
