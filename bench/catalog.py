"""The metric catalog: every metric the project shows, in one list (docs/metrics.md §8).

Each :class:`Metric` names where its number lives (the ``metric.json`` bucket, the
``summary_metrics.json`` place), how it is labelled (terminal table, report column, legend),
which section it belongs to, whether the paper publishes it (and under which key of the
paper's tables), and, for a metric that is not the paper's, how it is counted. The metrics,
the terminal table, the report and its CSV files and the LangSmith feedback all read
:data:`CATALOG` (and the metrics added by :func:`register_metric`); none of them lists metric
keys or labels of its own.

Adding a metric that is not the paper's is one entry plus its count::

    from wildtoolbench.bench.catalog import register_metric

    def tool_call_tasks(session, tasks):  # (numerator, denominator) over one scored session
        called = sum(1 for task in tasks if any(...))
        return called, len(tasks)

    register_metric("tool_call_tasks", "Tasks with a tool call", tool_call_tasks, short="Calls")

Such a metric goes to the ``extra`` section: a row of the terminal table, a column of the
report's leaderboard, ``summary_metrics.json["extra"]`` and a LangSmith summary feedback; never
to ``metric.json``, which keeps the published format. Installed packages can add metrics through
the ``wildtoolbench.metrics`` entry-point group (each entry point loads a :class:`Metric` or a
module that registers some), so ``wtb eval`` and ``wtb score`` count them too.

Pure module: no I/O (the entry points are read from the installed packages' metadata).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from wildtoolbench.bench.errors import CATEGORIES, CATEGORY_LABELS
from wildtoolbench.bench.terms import FIRST_TURN, MULTI_TOOL, SUBSEQUENT_TURN, TURN_SUBTYPES

Count = Callable[[Any, Sequence[Mapping[str, Any]]], tuple[float, float]]
"""``count(session, scored_tasks) -> (numerator, denominator)`` of one scored session: ``session`` a
``wildtoolbench.bench.schema.Session`` or its dict, ``scored_tasks`` what ``wildtoolbench.bench.scoring.score_session`` returns
(one dict per task, in task order). The metric is the sum of numerators over the sum of denominators."""

Kind = Literal["accuracy", "progress", "share"]

SECTIONS: dict[str, str] = {
    "overall": "Overall",
    "task_type": "Task type",
    "task_position": "Task position",
    "turn_subtype": "Turn subtype",
    "path": "Path",
    "errors": "Errors",
    "extra": "Extra",
}
"""Section key -> the group name the terminal table shows, in display order."""

REPORT_TABLES: tuple[str, ...] = ("main", "orchestration", "errors")
"""The report's tables with metric columns, named as the paper's tables in ``paper_leaderboard.json``."""

EXTRA_SECTION = "extra"
"""Section (and ``summary_metrics.json`` key) of the metrics that are not the paper's."""

METRIC_ENTRY_POINT_GROUP = "wildtoolbench.metrics"
"""Entry-point group of installed packages that add metrics."""


@dataclass(frozen=True)
class Metric:
    """One metric (or one display of it) of the catalog (docs/metrics.md §8).

    Attributes:
        key: unique name; the report's column key (CSV header), the key under
            ``summary_metrics.json["extra"]`` of an extra metric.
        label: long label: the terminal table's row, the report's column title.
        short: short label: the report's column header.
        section: a key of :data:`SECTIONS`.
        bucket: ``(section, bucket)`` of the metric in ``metric.json`` (docs/metrics.md §5); ``None``
            when it is not there (error shares, extra metrics).
        kind: ``accuracy`` (correct / total tasks), ``progress`` (completed / gold steps) or ``share``
            (a percentage the report computes, the error table's).
        paper: the metric's key in the paper's tables (``paper_leaderboard.json``); ``None`` when the
            paper does not publish it.
        table: ``(report table, column)``: the table of :data:`REPORT_TABLES` it is a column of and its
            1-based place there (``None``: after the numbered columns, in catalog order); ``None`` when
            the report shows it in no table.
        description: what the report's legend and column tooltip say it is.
        terminal: a row of the terminal table (docs/metrics.md §7).
        summary: ``(group, name)`` in ``summary_metrics.json`` (``name`` ``None`` for a top-level
            metric); ``None`` when not there (another entry shows the same bucket, or no bucket).
        feedback: key of the LangSmith summary feedback, ``None`` for none.
        count: the computation of an extra metric (:data:`Count`); ``None`` for the paper's metrics,
            which :class:`wildtoolbench.bench.metrics.MetricsAccumulator` counts.
        fmt: how a value is shown: ``percent`` (two decimals).
    """

    key: str
    label: str
    short: str
    section: str
    bucket: tuple[str, str] | None = None
    kind: Kind = "accuracy"
    paper: str | None = None
    table: tuple[str, int | None] | None = None
    description: str = ""
    terminal: bool = True
    summary: tuple[str, str | None] | None = None
    feedback: str | None = None
    count: Count | None = field(default=None, compare=False)
    fmt: str = "percent"

    @property
    def in_paper(self) -> bool:
        """The paper publishes this metric (it has a key in the paper's tables)."""
        return self.paper is not None


def _task_type(key: str, name: str, short: str, table: tuple[str, int], description: str, **more: Any) -> Metric:
    return Metric(
        key,
        name,
        short,
        "task_type",
        ("task_type_info", name),
        paper=key,
        table=table,
        description=description,
        summary=("task_type", name),
        feedback=f"accuracy/{name}",
        **more,
    )


def layer_metric(layer: int) -> Metric:
    """The catalog entry of task position ``layer`` (0-based; ``metric.json`` ``layer_info["<layer>"]``,
    docs/metrics.md §2.4): ``t1`` ... ``t4`` are the paper's columns; a dataset with more tasks per
    session (``wtb generate --layers N``) gets ``t5`` ... with no paper value and no report column."""
    number = layer + 1
    in_paper = layer < 4
    description = "accuracy of task 1 (first in session)" if layer == 0 else f"task {number}"
    return Metric(
        f"t{number}",
        f"Task {number}",
        f"Task {number}",
        "task_position",
        ("layer_info", str(layer)),
        paper=f"t{number}" if in_paper else None,
        table=("main", 4 + number) if in_paper else None,
        description=description,
        summary=("task_position", f"Task {number}"),
    )


def _turn_subtype(key: str, name: str) -> Metric:
    return Metric(key, name, name, "turn_subtype", ("turn_subtype_info", name), summary=("turn_subtype", name))


def _error(key: str, short: str, description: str, column: int) -> Metric:
    return Metric(
        key,
        CATEGORY_LABELS[key],
        short,
        "errors",
        kind="share",
        paper=key,
        table=("errors", column),
        description=description,
        terminal=False,
    )


_ERROR_SHORT = {
    "refusal": ("Refusal", "action error: refusal"),
    "wrong_name": ("Wrong name", "action error: wrong name / missing information"),
    "wrong_refusal": ("Wrong refusal", "action error: wrong refusal"),
    "redundant": ("Redundant", "action error: redundant call"),
    "call_error": ("Call error", "action error: call error"),
    "early_term": ("Early term.", "action error: early termination"),
    "param_type": ("Param. type", "parameter error: type"),
    "param_halluc": ("Param. halluc.", "parameter error: hallucination"),
    "param_value": ("Param. value", "parameter error: value"),
}
assert tuple(_ERROR_SHORT) == CATEGORIES

CATALOG: tuple[Metric, ...] = (
    # overall (docs/metrics.md §2.1-§2.2)
    Metric(
        "task",
        "Task accuracy",
        "Task acc.",
        "overall",
        ("total_info", "task"),
        paper="task",
        table=("main", 9),
        description="task accuracy",
        summary=("task_accuracy", None),
        feedback="task_accuracy",
    ),
    Metric(
        "session",
        "Session accuracy",
        "Session acc.",
        "overall",
        ("total_info", "session"),
        paper="session",
        table=("main", 10),
        description="session accuracy (all 4 tasks correct)",
        summary=("session_accuracy", None),
        feedback="session_accuracy",
    ),
    # task types (§2.3), in metric.json order
    _task_type("single", "Single-Tool", "Single", ("main", 1), "Single-Tool task accuracy"),
    _task_type("multi", MULTI_TOOL, "Multi", ("main", 2), "Multi-Tool task accuracy"),
    _task_type("p", "Parallel Multi-Tool", "P", ("orchestration", 1), "parallel multi-tool task accuracy"),
    _task_type("s", "Sequential Multi-Tool", "S", ("orchestration", 2), "sequential multi-tool task accuracy"),
    _task_type("mix", "Mixed Multi-Tool", "Mix", ("orchestration", 3), "mixed multi-tool task accuracy"),
    _task_type("clarify", "Clarify", "Clarify", ("main", 3), "Clarify task accuracy"),
    _task_type("chat", "Chat", "Chat", ("main", 4), "Chat task accuracy"),
    # the orchestration table shows Multi-Tool accuracy once more, as TA
    Metric(
        "ta",
        MULTI_TOOL,
        "TA",
        "task_type",
        ("task_type_info", MULTI_TOOL),
        paper="ta",
        table=("orchestration", 4),
        description="multi-tool task accuracy",
        terminal=False,
    ),
    # task positions (§2.4)
    *(layer_metric(layer) for layer in range(4)),
    # turn subtypes (§2.5)
    _turn_subtype("first_turn", FIRST_TURN),
    _turn_subtype("subsequent_turn", SUBSEQUENT_TURN),
    *(_turn_subtype(name.lower().replace(" ", "_").replace("-", "_"), name) for name in TURN_SUBTYPES),
    # optimal path rate (§3) and accomplish progress rate (§4)
    Metric(
        "op",
        "Optimal path rate (OP)",
        "OP",
        "path",
        ("optimal_info", "Total"),
        paper="op",
        table=("orchestration", 10),
        description="optimal path rate",
        summary=("optimal_path_rate", "Total"),
        feedback="optimal_path_rate",
    ),
    Metric(
        "ap",
        "Accomplish progress rate (AP)",
        "AP",
        "path",
        ("progress_info", "Total"),
        kind="progress",
        paper="ap",
        table=("orchestration", 7),
        description="accomplish progress rate",
        summary=("accomplish_progress_rate", "Total"),
        feedback="accomplish_progress_rate",
    ),
    Metric(
        "op_p",
        "Optimal path rate, Parallel Multi-Tool",
        "OP P",
        "path",
        ("optimal_info", "Parallel Multi-Tool"),
        paper="op_p",
        table=("orchestration", 8),
        description="optimal path rate, parallel",
        terminal=False,
        summary=("optimal_path_rate", "Parallel Multi-Tool"),
    ),
    Metric(
        "op_mix",
        "Optimal path rate, Mixed Multi-Tool",
        "OP Mix",
        "path",
        ("optimal_info", "Mixed Multi-Tool"),
        paper="op_mix",
        table=("orchestration", 9),
        description="optimal path rate, mixed",
        terminal=False,
        summary=("optimal_path_rate", "Mixed Multi-Tool"),
    ),
    Metric(
        "ap_s",
        "Accomplish progress rate, Sequential Multi-Tool",
        "AP S",
        "path",
        ("progress_info", "Sequential Multi-Tool"),
        kind="progress",
        paper="ap_s",
        table=("orchestration", 5),
        description="accomplish progress rate, sequential",
        terminal=False,
        summary=("accomplish_progress_rate", "Sequential Multi-Tool"),
    ),
    Metric(
        "ap_mix",
        "Accomplish progress rate, Mixed Multi-Tool",
        "AP Mix",
        "path",
        ("progress_info", "Mixed Multi-Tool"),
        kind="progress",
        paper="ap_mix",
        table=("orchestration", 6),
        description="accomplish progress rate, mixed",
        terminal=False,
        summary=("accomplish_progress_rate", "Mixed Multi-Tool"),
    ),
    # error categories (docs/errors.md): shares of the failed tasks, computed by the report
    *(_error(key, short, description, n) for n, (key, (short, description)) in enumerate(_ERROR_SHORT.items(), 1)),
)
"""The project's metrics, in terminal-table order within each section (docs/metrics.md §8)."""

METRIC_SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(m.bucket[0] for m in CATALOG if m.bucket is not None))
"""The sections of the published metric dict that hold buckets, in ``metric.json`` order (docs/metrics.md §5)."""

_extra: dict[str, Metric] = {}
_entry_points_loaded = False


def _check(metric: Metric, taken: Iterable[str]) -> None:
    if not metric.key or not metric.key.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"metric key {metric.key!r}: use letters, digits, '_' and '-'")
    if metric.key in taken:
        raise ValueError(f"metric key {metric.key!r} is already in the catalog")
    if metric.section != EXTRA_SECTION or metric.bucket is not None or metric.paper is not None:
        raise ValueError(f"metric {metric.key!r}: an added metric is in the extra section, with no bucket or paper key")
    if metric.count is None or not callable(metric.count):
        raise ValueError(f"metric {metric.key!r}: count must be a function (session, scored_tasks) -> (num, den)")
    if metric.kind not in ("accuracy", "progress"):
        raise ValueError(f"metric {metric.key!r}: kind must be 'accuracy' or 'progress', got {metric.kind!r}")
    if metric.table is not None and metric.table[0] not in REPORT_TABLES:
        raise ValueError(f"metric {metric.key!r}: table {metric.table[0]!r} is not one of {REPORT_TABLES}")


def register_metric(
    key: str | Metric,
    label: str | None = None,
    count: Count | None = None,
    *,
    short: str | None = None,
    description: str | None = None,
    kind: Literal["accuracy", "progress"] = "accuracy",
    table: str | None = "main",
    feedback: bool = True,
) -> Metric:
    """Add a metric that is not the paper's to the catalog's ``extra`` section (docs/metrics.md §8).

    Args:
        key: its name (letters, digits, ``_``, ``-``; not a catalog key), or a ready :class:`Metric`
            (then the other arguments are ignored).
        label: the terminal table's row and the report's column title.
        count: ``count(session, scored_tasks) -> (numerator, denominator)`` (:data:`Count`), summed
            over the run's sessions; pure.
        short: the report's column header (default ``label``).
        description: the report's legend text (default ``label``).
        kind: ``accuracy`` (the counts are tasks) or ``progress`` (steps): how the counts are named.
        table: the report table of :data:`REPORT_TABLES` that gets its column (after the paper's
            columns), ``None`` for none.
        feedback: also a LangSmith summary feedback, keyed ``extra/<key>``.

    Returns:
        The registered :class:`Metric`. Re-registering a key replaces its earlier registration.

    Raises:
        ValueError: a key already in :data:`CATALOG`, a bad key, no ``label`` or ``count``, an unknown
            ``kind`` or ``table``.
    """
    if isinstance(key, Metric):
        metric = key if key.summary is not None else replace(key, summary=(EXTRA_SECTION, key.key))
    else:
        if not label:
            raise ValueError(f"metric {key!r}: a label is needed")
        metric = Metric(
            key,
            label,
            short or label,
            EXTRA_SECTION,
            kind=kind,
            table=(table, None) if table else None,
            description=description or label,
            summary=(EXTRA_SECTION, key),
            feedback=f"extra/{key}" if feedback else None,
            count=count,
        )
    _check(metric, {m.key for m in CATALOG})
    _extra[metric.key] = metric
    return metric


def unregister_metric(key: str) -> None:
    """Remove a metric added by :func:`register_metric` (no error when it is not registered; docs/metrics.md §8)."""
    _extra.pop(key, None)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib import metadata

    for entry_point in metadata.entry_points(group=METRIC_ENTRY_POINT_GROUP):
        try:
            loaded = entry_point.load()  # a module registers its metrics when imported
        except Exception as exc:  # noqa: BLE001 - named and re-raised
            raise ValueError(
                f"entry point {entry_point.name!r} of {METRIC_ENTRY_POINT_GROUP}: cannot load: {exc}"
            ) from exc
        if isinstance(loaded, Metric):
            register_metric(loaded)


def extra_metrics() -> tuple[Metric, ...]:
    """The metrics of the ``extra`` section, in registration order (docs/metrics.md §8): those of
    :func:`register_metric` and of the ``wildtoolbench.metrics`` entry points (loaded on the first call)."""
    _load_entry_points()
    return tuple(_extra.values())


def metrics() -> tuple[Metric, ...]:
    """The whole catalog: :data:`CATALOG` then :func:`extra_metrics` (docs/metrics.md §8)."""
    return CATALOG + extra_metrics()


def by_key() -> dict[str, Metric]:
    """Key -> :class:`Metric` of :func:`metrics` (docs/metrics.md §8)."""
    return {metric.key: metric for metric in metrics()}


def for_metric_dict(metric: Mapping[str, Any]) -> tuple[Metric, ...]:
    """The catalog entries that show a metric dict (docs/metrics.md §5, §8): :func:`metrics` in order,
    with one :func:`layer_metric` per task position of ``metric["layer_info"]`` (beyond task 4 when the
    dataset has more tasks per session) and the extra metrics the dict holds (``metric["extra"]``) that are
    not registered here (labelled with their key)."""
    layers = metric.get("layer_info") or {}
    known = metrics()
    out: list[Metric] = []
    for entry in known:
        if entry.section == "task_position" and entry.bucket is not None and entry.bucket[1] not in layers:
            continue
        out.append(entry)
        if entry.key == "t4":
            out.extend(layer_metric(int(layer)) for layer in layers if int(layer) >= 4)
    keys = {entry.key for entry in known}
    for name in metric.get(EXTRA_SECTION) or {}:
        if name not in keys:
            out.append(unregistered_extra(name))
    return tuple(out)


def unregistered_extra(key: str, kind: Kind = "accuracy") -> Metric:
    """The entry shown for an extra metric found in a file (``summary_metrics.json["extra"]``) but not
    registered in this process: labelled with its key, no computation (docs/metrics.md §8)."""
    return Metric(
        key,
        key,
        key,
        EXTRA_SECTION,
        kind=kind,
        table=("main", None),
        description=key,
        summary=(EXTRA_SECTION, key),
        feedback=f"extra/{key}",
    )


def table_metrics(table: str, extra: Iterable[str] = ()) -> tuple[Metric, ...]:
    """The columns of report table ``table`` (docs/metrics.md §8): its numbered catalog entries in column
    order, then the registered metrics it holds, then an entry for each key of ``extra`` (extra metrics
    found in the runs' files) not yet among them.

    Raises:
        KeyError: ``table`` is not one of :data:`REPORT_TABLES`.
    """
    if table not in REPORT_TABLES:
        raise KeyError(table)
    entries = [m for m in metrics() if m.table is not None and m.table[0] == table]
    numbered = sorted((m for m in entries if m.table[1] is not None), key=lambda m: m.table[1])  # type: ignore[index]
    columns = numbered + [m for m in entries if m.table[1] is None]  # type: ignore[index]
    if table == "main":
        keys = {m.key for m in columns} | {m.key for m in metrics()}
        columns += [unregistered_extra(key) for key in dict.fromkeys(extra) if key not in keys]
    return tuple(columns)


def paper_columns(table: str) -> tuple[str, ...]:
    """The keys of the paper's table ``table`` (``paper_leaderboard.json``), in column order (docs/metrics.md §6)."""
    return tuple(m.key for m in table_metrics(table) if m.in_paper)
