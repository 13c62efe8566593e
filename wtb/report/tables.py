"""The report's tables: leaderboard, orchestration and error analysis beside the paper's rows, and per-task rows.

The paper's figures ship as package data (``paper_leaderboard.json``, copied
from the WildToolBench project page; its ``source`` field names the origin).
A run's values come from its ``metric.json`` (docs/metrics.md) as percentages; a
value whose bucket is empty (no task of that type, no Sequential task for AP
...) does not apply and is ``None`` (an empty CSV cell).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import Any

from bench.errors import CATEGORIES
from wtb.report.escape import csv_row
from wtb.report.runs import Run

LEADERBOARD_KEYS = ("single", "multi", "clarify", "chat", "t1", "t2", "t3", "t4", "task", "session")
ORCHESTRATION_KEYS = ("p", "s", "mix", "ta", "ap_s", "ap_mix", "ap", "op_p", "op_mix", "op")
ERROR_KEYS = CATEGORIES
RUN_GROUP = "ours"
"""The ``group`` of a run's row (the paper's rows carry the paper's model groups)."""

# key -> (metric section, bucket, ratio field)
_LEADERBOARD_SOURCE = {
    "single": ("task_type_info", "Single-Tool", "accuracy"),
    "multi": ("task_type_info", "Multi-Tool", "accuracy"),
    "clarify": ("task_type_info", "Clarify", "accuracy"),
    "chat": ("task_type_info", "Chat", "accuracy"),
    "t1": ("layer_info", "0", "accuracy"),
    "t2": ("layer_info", "1", "accuracy"),
    "t3": ("layer_info", "2", "accuracy"),
    "t4": ("layer_info", "3", "accuracy"),
    "task": ("total_info", "task", "accuracy"),
    "session": ("total_info", "session", "accuracy"),
}
_ORCHESTRATION_SOURCE = {
    "p": ("task_type_info", "Parallel Multi-Tool", "accuracy"),
    "s": ("task_type_info", "Sequential Multi-Tool", "accuracy"),
    "mix": ("task_type_info", "Mixed Multi-Tool", "accuracy"),
    "ta": ("task_type_info", "Multi-Tool", "accuracy"),
    "ap_s": ("progress_info", "Sequential Multi-Tool", "rate"),
    "ap_mix": ("progress_info", "Mixed Multi-Tool", "rate"),
    "ap": ("progress_info", "Total", "rate"),
    "op_p": ("optimal_info", "Parallel Multi-Tool", "accuracy"),
    "op_mix": ("optimal_info", "Mixed Multi-Tool", "accuracy"),
    "op": ("optimal_info", "Total", "accuracy"),
}


@lru_cache(maxsize=1)
def paper_data() -> dict[str, Any]:
    """The paper's tables (package data ``wtb/report/paper_leaderboard.json``).

    Returns:
        ``{"source", "columns", "notes", "main", "orchestration", "errors"}``; each
        table is a list of ``{"model", "group", <keys>: percentage}`` rows.

    Raises:
        FileNotFoundError: the package was installed without its data file.
    """
    text = files("wtb.report").joinpath("paper_leaderboard.json").read_text(encoding="utf-8")
    return json.loads(text)


@dataclass
class Row:
    """One table row: a run or a paper model.

    Attributes:
        model: display name.
        source: ``"run"`` or ``"paper"``.
        group: the paper's model group, or :data:`RUN_GROUP` for a run.
        values: key -> percentage, ``None`` where it does not apply.
        run: the run's key (``r0`` ...) for a run row, else ``None``.
        rank: 1-based rank in the table's order (ties share a rank), ``None`` when unranked.
        extra: further columns (the error table's counts).
    """

    model: str
    source: str
    group: str
    values: dict[str, float | None]
    run: str | None = None
    rank: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _metric_value(metric: Mapping[str, Any], section: str, bucket: str, ratio: str) -> float | None:
    entry = (metric.get(section) or {}).get(bucket)
    if not isinstance(entry, Mapping):
        return None
    denominator = entry.get("total_step" if ratio == "rate" else "total_count")
    if not denominator:
        return None
    return float(entry[ratio]) * 100.0


def run_values(metric: Mapping[str, Any], table: str) -> dict[str, float | None]:
    """A run's percentages for the ``"main"`` (leaderboard) or ``"orchestration"`` table (docs/metrics.md metric dict in).

    Raises:
        KeyError: unknown ``table``.
    """
    source = {"main": _LEADERBOARD_SOURCE, "orchestration": _ORCHESTRATION_SOURCE}[table]
    return {key: _metric_value(metric, *where) for key, where in source.items()}


def _rank(rows: list[Row], keys: Sequence[str]) -> list[Row]:
    """Sort rows best first by ``keys`` (missing values last; stable, so paper order breaks ties) and set ranks."""

    def key(row: Row) -> tuple:
        return tuple(-(row.values.get(k) if row.values.get(k) is not None else float("-inf")) for k in keys)

    ordered = sorted(rows, key=key)
    previous = None
    for position, row in enumerate(ordered, 1):
        current = key(row)
        row.rank = previous[1] if previous is not None and previous[0] == current else position
        previous = (current, row.rank)
    return ordered


def paper_rank(row: Row, paper_rows: Sequence[Row], keys: Sequence[str]) -> int:
    """1 + the number of paper rows strictly better than ``row`` by ``keys`` (compared in order; missing values last).

    This is the run's place among the paper's models alone (other runs do not count).
    """

    def key(r: Row) -> tuple:
        return tuple(r.values.get(k) if r.values.get(k) is not None else float("-inf") for k in keys)

    mine = key(row)
    return 1 + sum(1 for r in paper_rows if r.source == "paper" and key(r) > mine)


def _paper_rows(table: str, keys: Sequence[str]) -> list[Row]:
    return [
        Row(r["model"], "paper", r["group"], {k: (float(r[k]) if r.get(k) is not None else None) for k in keys})
        for r in paper_data()[table]
    ]


def leaderboard_rows(runs: Sequence[Run]) -> list[Row]:
    """The leaderboard: every run and the paper's 57 models, ranked by session then task accuracy (the paper's order)."""
    rows = [Row(r.label, "run", RUN_GROUP, run_values(r.metric, "main"), run=r.key) for r in runs]
    return _rank(rows + _paper_rows("main", LEADERBOARD_KEYS), ("session", "task"))


def orchestration_rows(runs: Sequence[Run]) -> list[Row]:
    """The tool-orchestration table: runs and the paper's 58 rows, ranked by multi-tool accuracy then optimal-path rate."""
    rows = [Row(r.label, "run", RUN_GROUP, run_values(r.metric, "orchestration"), run=r.key) for r in runs]
    return _rank(rows + _paper_rows("orchestration", ORCHESTRATION_KEYS), ("ta", "op"))


def error_rows(runs: Sequence[Run]) -> list[Row]:
    """The error-analysis table: runs first (shares of their failed tasks, plus counts), then the paper's rows (shares).

    A run's ``extra`` holds ``failed_tasks`` and ``<category>_count``; its shares are
    ``None`` when it has no failed task.
    """
    rows = []
    for run in runs:
        counts = run.error_counts()
        failed = run.failed()
        shares = {k: (counts[k] / failed * 100.0 if failed else None) for k in ERROR_KEYS}
        extra = {"failed_tasks": failed, **{f"{k}_count": counts[k] for k in ERROR_KEYS}}
        rows.append(Row(run.label, "run", RUN_GROUP, shares, run=run.key, extra=extra))
    return rows + _paper_rows("errors", ERROR_KEYS)


def format_percent(value: float | None) -> str:
    """A percentage with two decimals, or ``""`` for ``None``."""
    return "" if value is None else f"{value:.2f}"


def rows_csv(rows: Sequence[Row], keys: Sequence[str], extra_keys: Sequence[str] = ()) -> str:
    """CSV text: ``model, source, group``, then ``keys`` (percentages, two decimals, empty when ``None``),
    then ``extra_keys`` taken from each row's ``extra`` (empty when absent)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model", "source", "group", *keys, *extra_keys])
    for row in rows:
        writer.writerow(
            csv_row(
                [
                    row.model,
                    row.source,
                    row.group,
                    *(format_percent(row.values.get(k)) for k in keys),
                    *(row.extra.get(k, "") for k in extra_keys),
                ]
            )
        )
    return buffer.getvalue()


ERROR_EXTRA_KEYS = ("failed_tasks", *(f"{k}_count" for k in ERROR_KEYS))
"""Columns of ``errors.csv`` after the nine shares: failed tasks and the count per category (runs only)."""

TASK_COLUMNS = (
    "run",
    "model",
    "session_id",
    "task",
    "task_type",
    "turn_subtype",
    "label",
    "optimal",
    "steps",
    "error_category",
    "failing_step",
    "reason",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "trajectory",
)


def task_rows(runs: Sequence[Run]) -> list[list[Any]]:
    """One row per scored task of every run, in :data:`TASK_COLUMNS` order.

    ``task`` and ``failing_step`` are 0-based; ``turn_subtype`` is ``First Turn`` for
    task 0; ``trajectory`` is the page link (``index.html#traj/<run>/<session>/<task>``).
    """
    rows = []
    for run in runs:
        dataset = run.dataset
        for fact in run.tasks:
            position = dataset.index[fact.session_id]
            session = dataset.sessions[position]
            subtype = "First Turn" if fact.task_idx == 0 else session["english_turn_subtypes"][fact.task_idx - 1]
            rows.append(
                [
                    run.key,
                    run.label,
                    fact.session_id,
                    fact.task_idx,
                    session["english_task_types"][fact.task_idx],
                    subtype,
                    "correct" if fact.correct else "error",
                    str(fact.optimal).lower(),
                    fact.steps,
                    fact.category or "",
                    "" if fact.failing_step is None else fact.failing_step,
                    fact.reason or "",
                    f"{fact.latency:.3f}",
                    fact.input_tokens,
                    fact.output_tokens,
                    f"index.html#traj/{run.key}/{dataset.offset + position}/{fact.task_idx}",
                ]
            )
    return rows


def tasks_csv(runs: Sequence[Run]) -> str:
    """``tasks.csv`` text: a header of :data:`TASK_COLUMNS`, then :func:`task_rows`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TASK_COLUMNS)
    writer.writerows(csv_row(row) for row in task_rows(runs))  # no cell a spreadsheet would evaluate
    return buffer.getvalue()
