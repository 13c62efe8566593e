"""The report's tables: leaderboard, orchestration and error analysis beside the paper's rows, and per-task rows.

The columns are the metric catalog's (:mod:`wildtoolbench.bench.catalog`, docs/metrics.md §8): its entries of
each table, in column order, then the extra metrics of the leaderboard. The paper's figures ship
as package data (``paper_leaderboard.json``, copied from the WildToolBench project page; its
``source`` field names the origin), read through each entry's ``paper`` key. A run's values come
from its ``metric.json`` (docs/metrics.md) and, for the extra metrics, its
``summary_metrics.json["extra"]``, as percentages; a value whose bucket is empty (no task of that
type, no Sequential task for AP ...) does not apply and is ``None`` (an empty CSV cell).
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

from wildtoolbench.bench.catalog import Metric, paper_columns, table_metrics
from wildtoolbench.bench.errors import CATEGORIES
from wildtoolbench.bench.schema import TASK_TYPES
from wildtoolbench.reports.escape import csv_row
from wildtoolbench.reports.run_data import Run

LEADERBOARD_KEYS = paper_columns("main")
"""The paper's leaderboard columns (the catalog's ``main`` table, docs/metrics.md §6)."""
ORCHESTRATION_KEYS = paper_columns("orchestration")
"""The paper's tool-orchestration columns (the catalog's ``orchestration`` table)."""
ERROR_KEYS = paper_columns("errors")
"""The nine error categories of the error-analysis table (``wildtoolbench.bench.errors.CATEGORIES``)."""
assert ERROR_KEYS == CATEGORIES
RUN_GROUP = "ours"
FLOOR_GROUP = "floor (no model)"
"""The group of a baseline run's row (``baseline:chat``, ``baseline:first-tool``): a floor, never ranked."""
"""The ``group`` of a run's row (the paper's rows carry the paper's model groups)."""


@lru_cache(maxsize=1)
def paper_data() -> dict[str, Any]:
    """The paper's tables (package data ``wildtoolbench/reports/paper_leaderboard.json``).

    Returns:
        ``{"source", "columns", "notes", "main", "orchestration", "errors"}``; each
        table is a list of ``{"model", "group", <keys>: percentage}`` rows.

    Raises:
        FileNotFoundError: the package was installed without its data file.
    """
    text = files("wildtoolbench.reports").joinpath("paper_leaderboard.json").read_text(encoding="utf-8")
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
        rank: the row's rank among the paper's models (:func:`paper_rank`; ties share a rank), ``None`` for a
            run that is not ranked.
        extra: further columns (the error table's counts).
        unranked: why a run's row has no rank (:meth:`wildtoolbench.reports.run_data.Run.rank_exclusions`), ``[]`` otherwise.
    """

    model: str
    source: str
    group: str
    values: dict[str, float | None]
    run: str | None = None
    rank: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    unranked: list[str] = field(default_factory=list)


def _bucket_percent(entry: Mapping[str, Any] | None, ratio: str) -> float | None:
    if not isinstance(entry, Mapping):
        return None
    denominator = entry.get("total_step" if ratio == "rate" else "total_count")
    if not denominator:
        return None
    return float(entry[ratio]) * 100.0


def metric_percent(metric: Mapping[str, Any], entry: Metric, extra: Mapping[str, Any] | None = None) -> float | None:
    """A run's value of catalog entry ``entry`` as a percentage (docs/metrics.md §8), ``None`` when it does
    not apply: its ``metric.json`` bucket, or for an extra metric ``extra[key]`` (a readable entry of
    ``summary_metrics.json["extra"]``: ``{"value", ...}`` or ``null``)."""
    if entry.bucket is not None:
        section, name = entry.bucket
        return _bucket_percent(
            (metric.get(section) or {}).get(name), "rate" if entry.kind == "progress" else "accuracy"
        )
    found = (extra or {}).get(entry.key)
    if not isinstance(found, Mapping) or found.get("value") is None:
        return None
    return float(found["value"]) * 100.0


def table_columns(table: str, runs: Sequence[Run] = ()) -> tuple[Metric, ...]:
    """The catalog entries of report table ``table`` (``"main"``, ``"orchestration"``, ``"errors"``), in column
    order: the paper's columns, then the extra metrics registered or found in the runs' summaries
    (docs/metrics.md §8).

    Raises:
        KeyError: unknown ``table``.
    """
    found = [key for run in runs for key in (run.extra_metrics or {})]
    return table_metrics(table, found)


def table_keys(table: str, runs: Sequence[Run] = ()) -> tuple[str, ...]:
    """The column keys of :func:`table_columns` (docs/metrics.md §8)."""
    return tuple(entry.key for entry in table_columns(table, runs))


def run_values(
    metric: Mapping[str, Any], table: str, extra: Mapping[str, Any] | None = None
) -> dict[str, float | None]:
    """A run's percentages for the ``"main"`` (leaderboard) or ``"orchestration"`` table (docs/metrics.md metric
    dict in; ``extra``: the run's ``summary_metrics.json["extra"]``, for the extra metrics' columns).

    Raises:
        KeyError: unknown ``table``.
    """
    if table not in ("main", "orchestration"):
        raise KeyError(table)
    columns = table_metrics(table, extra or ())
    return {entry.key: metric_percent(metric, entry, extra) for entry in columns}


def _rank(rows: list[Row], keys: Sequence[str]) -> list[Row]:
    """Sort rows best first by ``keys`` (missing values last; stable, so paper order breaks ties) and set ranks:
    every paper row and every ranked run gets :func:`paper_rank` (one definition, docs/metrics.md §10), so runs
    never move a paper model and a run's rank is the same in every table and view."""

    def key(row: Row) -> tuple:
        return tuple(-(row.values.get(k) if row.values.get(k) is not None else float("-inf")) for k in keys)

    ordered = sorted(rows, key=key)
    for row in ordered:
        row.rank = None if row.unranked else paper_rank(row, ordered, keys)
    return ordered


def paper_rank(row: Row, paper_rows: Sequence[Row], keys: Sequence[str]) -> int:
    """1 + the number of paper rows strictly better than ``row`` by ``keys`` (compared in order; missing values last).

    This is a row's place among the paper's models alone (runs do not count; docs/metrics.md §10).
    """

    def key(r: Row) -> tuple:
        return tuple(r.values.get(k) if r.values.get(k) is not None else float("-inf") for k in keys)

    mine = key(row)
    return 1 + sum(1 for r in paper_rows if r.source == "paper" and key(r) > mine)


def _paper_rows(table: str, columns: Sequence[Metric]) -> list[Row]:
    """The paper's rows of ``table``, each column read under its entry's paper key (``None`` without one)."""

    def value(row: Mapping[str, Any], entry: Metric) -> float | None:
        found = row.get(entry.paper) if entry.paper is not None else None
        return float(found) if found is not None else None

    return [
        Row(r["model"], "paper", r["group"], {entry.key: value(r, entry) for entry in columns})
        for r in paper_data()[table]
    ]


def _run_rows(runs: Sequence[Run], columns: Sequence[Metric]) -> list[Row]:
    return [
        Row(
            r.label,
            "run",
            FLOOR_GROUP if r.is_baseline() else RUN_GROUP,
            {entry.key: metric_percent(r.metric, entry, r.extra_metrics) for entry in columns},
            run=r.key,
            unranked=r.rank_exclusions(),
        )
        for r in runs
    ]


def leaderboard_rows(runs: Sequence[Run]) -> list[Row]:
    """The leaderboard: every run and the paper's 57 models, ordered by session then task accuracy (the paper's
    order); ranks as :func:`_rank` gives them."""
    columns = table_columns("main", runs)
    return _rank(_run_rows(runs, columns) + _paper_rows("main", columns), ("session", "task"))


def orchestration_rows(runs: Sequence[Run]) -> list[Row]:
    """The tool-orchestration table: runs and the paper's 58 rows, ranked by multi-tool accuracy then optimal-path rate."""
    columns = table_columns("orchestration", runs)
    return _rank(_run_rows(runs, columns) + _paper_rows("orchestration", columns), ("ta", "op"))


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
        rows.append(Row(run.label, "run", RUN_GROUP, shares, run=run.key, extra=extra, unranked=run.rank_exclusions()))
    return rows + _paper_rows("errors", table_columns("errors"))


def format_percent(value: float | None) -> str:
    """A percentage with two decimals by the project's rounding rule (docs/metrics.md §9: the binary value
    rounded to nearest, ties to even, as Python's ``format(value, ".2f")``), or ``""`` for ``None``."""
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

    ``task`` (1 to 4) and ``failing_step`` (from 1) are the numbers people read (docs/terms.md §1.2, §5.1);
    ``turn_subtype`` is ``First Turn`` for
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
                    fact.task_idx + 1,  # the numbers people read (docs/terms.md §1.2)
                    session["english_task_types"][fact.task_idx],
                    subtype,
                    "correct" if fact.correct else "error",
                    str(fact.optimal).lower(),
                    fact.steps,
                    fact.category or "",
                    "" if fact.failing_step is None else fact.failing_step + 1,
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


def trial_figures(runs: Sequence[Run]) -> tuple[list[list[str]], list[str], list[list[str]]]:
    """The repeated-trials tables of the report (docs/trials.md §3-§5), as text cells.

    Returns:
        ``(summary rows, type header, flip rows)``: one summary row per run with trials, ``[run, K, task pass^1,
        task pass^K, session pass^1, session pass^K, task flip rate, stable share]``; then the flip rate of every
        task type (rows) for each such run (columns), ``–`` where a run has no task of that type.
    """

    def percent(value: Any) -> str:
        return "–" if value is None else f"{value * 100:.2f}%"

    def passed(unit: dict[str, Any], k: Any) -> str:
        estimate = unit.get("pass_hat_k", {}).get(str(k)) or {}
        value = percent(estimate.get("value"))
        if estimate.get("low") is not None:
            value += f" [{estimate['low'] * 100:.1f}, {estimate['high'] * 100:.1f}]"
        return value

    with_trials = [run for run in runs if run.trials is not None]
    summary = []
    for run in with_trials:
        trials = run.trials or {}
        k = trials.get("trials", 1)
        task, session = trials.get("task", {}), trials.get("session", {})
        summary.append(
            [
                run.label,
                str(k),
                passed(task, 1),
                passed(task, k),
                passed(session, 1),
                passed(session, k),
                percent(task.get("flip_rate")),
                percent(task.get("stable_share")),
            ]
        )
    header = [run.label for run in with_trials]
    flips = []
    for name in TASK_TYPES:
        cells = [
            percent(((run.trials or {}).get("task_type", {}).get(name) or {}).get("flip_rate")) for run in with_trials
        ]
        if any(cell != "–" for cell in cells):
            flips.append([name, *cells])
    return summary, header, flips


TRIAL_COLUMNS = (
    "run",
    "trials K",
    "task pass^1 [95% CI]",
    "task pass^K",
    "session pass^1",
    "session pass^K",
    "task flip rate",
    "stable tasks",
)
"""Columns of the repeated-trials summary table (:func:`trial_figures`)."""
