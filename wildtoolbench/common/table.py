"""A compact table of a metric dict (docs/metrics.md), for the terminal.

Rows: the catalog's terminal rows (docs/metrics.md §8, :mod:`wildtoolbench.bench.catalog`): task accuracy,
session accuracy, every task type (with Multi-Tool), task 1-4 (layers), every turn subtype,
optimal path rate (OP) and accomplish progress rate (AP), then the extra metrics the dict
holds (``metric["extra"]``). Each row shows a percentage with two decimals and the
``correct/total`` (or ``complete/total`` steps) counts behind it; a group
without any task shows ``n/a`` (``metric.json`` keeps the reference's 0.0 there).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from wildtoolbench.bench.catalog import SECTIONS, for_metric_dict
from wildtoolbench.bench.metrics import check_sections, metric_bucket

NOT_APPLICABLE = "n/a"
"""What the table shows for a group without any task."""


def _percent(ratio: float) -> str:
    return f"{ratio * 100:.2f}%"


def metric_rows(metric: Mapping[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """``(section, name, percentage, counts)`` for every row of the table, in display order (docs/metrics.md §7).

    Args:
        metric: a dict from :func:`wildtoolbench.bench.metrics.compute_metrics`, with ``"extra"`` when extra metrics were
            counted (``wildtoolbench.bench.metrics.with_extra``; their rows come last, in the section ``Extra``).

    Returns:
        Rows such as ``("Overall", "Task accuracy", "37.50%", "3/8")``; a group with no task (no
        gold step for a progress group) is ``(section, name, "n/a", "0 tasks")`` (``"0 steps"``),
        never ``0.00%``.

    Raises:
        KeyError: when ``metric`` lacks a section of that dict.
    """

    def bucket(section: str, name: str, data: Mapping[str, Any]) -> tuple[str, str, str, str]:
        if "rate" in data:
            if not data["total_step"]:
                return section, name, NOT_APPLICABLE, "0 steps"
            return section, name, _percent(data["rate"]), f"{data['complete_step']}/{data['total_step']} steps"
        if not data["total_count"]:
            return section, name, NOT_APPLICABLE, "0 tasks"
        return section, name, _percent(data["accuracy"]), f"{data['correct_count']}/{data['total_count']}"

    check_sections(metric)
    for entry in for_metric_dict(metric):
        if not entry.terminal:
            continue
        data = metric_bucket(metric, entry)
        if data is not None:
            yield bucket(SECTIONS[entry.section], entry.label, data)


def metric_table(metric: Mapping[str, Any], language: str | None = None) -> Table:
    """A ``rich`` table of ``metric`` (see :func:`metric_rows`), titled with the model name and, when
    given, the dataset side that ran (``"WildToolBench: m (zh)"``; docs/metrics.md §7)."""
    side = f" ({language})" if language else ""
    table = Table(title=f"WildToolBench: {metric.get('model_name', '?')}{side}", title_justify="left")
    table.add_column("Group", style="dim")
    table.add_column("Metric")
    table.add_column("Score", justify="right")
    table.add_column("Count", justify="right")
    previous = None
    for section, name, percent, counts in metric_rows(metric):
        table.add_row(section if section != previous else "", name, percent, counts, end_section=False)
        previous = section
    return table


def render_metric_table(metric: Mapping[str, Any], width: int = 100, language: str | None = None) -> str:
    """The table of ``metric`` as plain text (no colour codes), e.g. for logs and tests (docs/metrics.md §7)."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False).print(metric_table(metric, language))
    return buffer.getvalue()


SHOWN_K = 5
"""pass^k rows the terminal shows: k = 1..5, then k = K (``wtb report`` draws k = 1..K)."""


def _interval(estimate: Mapping[str, Any]) -> str:
    if estimate.get("low") is None or estimate.get("high") is None:
        return ""
    return f"[{_percent(estimate['low'])}, {_percent(estimate['high'])}]"


def trial_rows(summary: Mapping[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """``(group, metric, value, interval)`` rows of a run's trials (docs/trials.md §3-§4), in display order:
    task and session pass^k for k = 1..:data:`SHOWN_K` and k = K with their 95% intervals, pass@K, and the flip rate with the stable
    share.

    Args:
        summary: :func:`wildtoolbench.bench.trials.summarize_trials` of the run (``trials_summary.json``).

    Returns:
        Rows such as ``("Task", "pass^2", "61.46%", "[55.10%, 67.82%]")``; a value that cannot be estimated
        is ``n/a``.

    Raises:
        KeyError: ``summary`` is not a trial summary.
    """
    trials = int(summary["trials"])
    for label, kind in (("Task", "task"), ("Session", "session")):
        unit = summary[kind]
        for k, estimate in unit.get("pass_hat_k", {}).items():
            if int(k) > SHOWN_K and int(k) != trials:  # the report draws the whole curve (docs/trials.md §5)
                continue
            value = estimate.get("value")
            yield label, f"pass^{k}", _percent(value) if value is not None else NOT_APPLICABLE, _interval(estimate)
        at = unit.get("pass_at_k", {}).get(str(trials))
        if at is not None and trials > 1:
            yield label, f"pass@{trials}", _percent(at["value"]), _interval(at)
        flip = unit.get("flip_rate")
        if flip is not None:
            stable = unit.get("stable_share")
            yield label, f"flip rate ({trials} trials)", _percent(flip), f"stable {_percent(stable)}"


def trials_table(summary: Mapping[str, Any], model_name: str = "?") -> Table:
    """A ``rich`` table of :func:`trial_rows`, titled with the model and the trial count (docs/trials.md §5)."""
    table = Table(title=f"Trials: {model_name}, K = {summary['trials']}", title_justify="left")
    table.add_column("Unit", style="dim")
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    table.add_column("95% interval", justify="right")
    previous = None
    for group, name, value, interval in trial_rows(summary):
        table.add_row(group if group != previous else "", name, value, interval)
        previous = group
    return table


def render_trials_table(summary: Mapping[str, Any], model_name: str = "?", width: int = 100) -> str:
    """:func:`trials_table` as plain text (docs/trials.md §5)."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False).print(trials_table(summary, model_name))
    return buffer.getvalue()
