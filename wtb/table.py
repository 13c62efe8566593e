"""A compact table of a metric dict (docs/metrics.md), for the terminal.

Rows: the catalog's terminal rows (docs/metrics.md §8, :mod:`bench.catalog`): task accuracy,
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

from bench.catalog import SECTIONS, for_metric_dict
from bench.metrics import check_sections, metric_bucket

NOT_APPLICABLE = "n/a"
"""What the table shows for a group without any task."""


def _percent(ratio: float) -> str:
    return f"{ratio * 100:.2f}%"


def metric_rows(metric: Mapping[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """``(section, name, percentage, counts)`` for every row of the table, in display order (docs/metrics.md §7).

    Args:
        metric: a dict from :func:`bench.metrics.compute_metrics`, with ``"extra"`` when extra metrics were
            counted (``bench.metrics.with_extra``; their rows come last, in the section ``Extra``).

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
