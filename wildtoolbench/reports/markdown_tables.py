"""The pieces ``report.md`` is written with: Markdown tables (cells escaped), percentages, column legends,
ranks and ranked rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wildtoolbench.bench.catalog import Metric
from wildtoolbench.reports.escape import markdown_text
from wildtoolbench.reports.tables import Row, format_percent


def cell(text: Any) -> str:
    """A table cell's text: ``|`` escaped, newlines as spaces."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], right: int = 0) -> list[str]:
    """A Markdown table's lines; the last ``right`` columns are right-aligned."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" if i < len(header) - right else "---:" for i in range(len(header))) + "|")
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
    return lines


def percent(ratio: float) -> str:
    """A ratio as a percentage with two decimals."""
    return f"{ratio * 100:.2f}%"


def legend(columns: Sequence[Metric]) -> list[str]:
    """The line naming each column's short header and description, and a blank line."""
    return ["Columns: " + "; ".join(f"{c.short} = {c.description}" for c in columns) + ".", ""]


SIDES = {"en": "English", "zh": "Chinese"}


def rank_text(rank: int | None, unranked: Sequence[str], models: int) -> str:
    """A run's rank as the report writes it: ``"43 of 58"`` (among the paper's ``models`` and the run), or
    ``"unranked (why)"`` (docs/metrics.md §10)."""
    if rank is None:
        return f"unranked ({', '.join(unranked)})" if unranked else "unranked"
    return f"{rank} of {models + 1}"


def ranked(rows: Sequence[Row], keys: Sequence[str]) -> list[list[Any]]:
    """Leaderboard rows as table rows: rank, model (ours in bold, why unranked), group, the ``keys`` values."""
    out = []
    for row in rows:
        name = f"**{markdown_text(row.model)}** (ours)" if row.source == "run" else markdown_text(row.model)
        if row.unranked:
            name += " (unranked: " + markdown_text(", ".join(row.unranked)) + ")"
        out.append(
            [
                row.rank if row.rank is not None else "–",
                name,
                markdown_text(row.group),
                *(format_percent(row.values.get(k)) for k in keys),
            ]
        )
    return out
