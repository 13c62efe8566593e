"""Report figures drawn with matplotlib (Agg backend) as inline SVG text: no network, no files needed.

Every function returns an ``<svg ...>`` element (no XML prolog) that can be
placed straight into HTML. Text stays text (``svg.fonttype = none``) and ids are
salted with a fixed string, so the same data gives the same SVG.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from statistics import mean
from typing import Any

from bench.errors import CATEGORIES, CATEGORY_LABELS
from bench.schema import TASK_TYPES

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
TYPE_SHORT = {
    "Single-Tool": "ST",
    "Parallel Multi-Tool": "MT-P",
    "Sequential Multi-Tool": "MT-S",
    "Mixed Multi-Tool": "MT-M",
    "Clarify": "CQ",
    "Chat": "CC",
}
"""Short task-type labels (the generation framework's layer names, with the multi-tool kinds)."""
CATEGORY_COLORS = ("#8c2d04", "#d94801", "#fd8d3c", "#fdae6b", "#fdd0a2", "#feedde", "#08519c", "#4292c6", "#9ecae1")


def run_color(index: int) -> str:
    """The colour of the ``index``-th run in every figure and in the page."""
    return COLORS[index % len(COLORS)]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    pyplot.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "wtb-report",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "font.family": "sans-serif",
        }
    )
    return pyplot


def _svg(figure: Any) -> str:
    pyplot = _pyplot()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    pyplot.close(figure)
    text = buffer.getvalue()
    start = text.find("<svg")
    return text[start:].strip()


def _percent_axis(axis: Any, top: float = 100.0) -> None:
    axis.set_ylim(0, top)
    axis.yaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    axis.set_axisbelow(True)


def _legend_right(axis: Any) -> None:
    axis.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def accuracy_by_order(series: Sequence[tuple[str, Sequence[float | None]]], paper: Sequence[Sequence[float]]) -> str:
    """Task accuracy (%) by task position 1-4: one line per run, the paper's models as thin grey lines.

    Args:
        series: ``(run label, [t1, t2, t3, t4])``; ``None`` where a position has no task.
        paper: the paper's ``[t1, t2, t3, t4]`` per model.
    """
    pyplot = _pyplot()
    figure, axis = pyplot.subplots(figsize=(6.0, 3.2))
    positions = [1, 2, 3, 4]
    for values in paper:
        axis.plot(positions, values, color="#c8c8c8", linewidth=0.6, zorder=1)
    axis.plot([], [], color="#c8c8c8", linewidth=0.8, label="paper models")
    for index, (label, values) in enumerate(series):
        points = [(p, v) for p, v in zip(positions, values) if v is not None]
        axis.plot(
            [p for p, _ in points],
            [v for _, v in points],
            marker="o",
            color=run_color(index),
            linewidth=2,
            label=label,
            zorder=3,
        )
    axis.set_xticks(positions, [f"task {p}" for p in positions])
    _percent_axis(axis, 105)
    axis.set_ylabel("task accuracy")
    _legend_right(axis)
    return _svg(figure)


def accuracy_by_type(series: Sequence[tuple[str, Mapping[str, float | None]]]) -> str:
    """Task accuracy (%) by task type, grouped bars (one colour per run); empty types show no bar."""
    pyplot = _pyplot()
    figure, axis = pyplot.subplots(figsize=(7.0, 3.2))
    width = 0.8 / max(len(series), 1)
    for index, (label, values) in enumerate(series):
        xs = [t + (index - (len(series) - 1) / 2) * width for t in range(len(TASK_TYPES))]
        heights = [values.get(name) for name in TASK_TYPES]
        axis.bar(
            [x for x, h in zip(xs, heights) if h is not None],
            [h for h in heights if h is not None],
            width=width,
            color=run_color(index),
            label=label,
        )
    axis.set_xticks(range(len(TASK_TYPES)), [t.replace(" Multi-Tool", "\nMulti-Tool") for t in TASK_TYPES])
    _percent_axis(axis, 105)
    axis.set_ylabel("task accuracy")
    _legend_right(axis)
    return _svg(figure)


def accuracy_by_transitions(
    series: Sequence[tuple[str, Mapping[int, tuple[int, int]]]], sessions: Mapping[int, int]
) -> str:
    """Task accuracy (%) by the number of instruction transitions in the session.

    Args:
        series: ``(run label, {transitions: (correct tasks, tasks)})``.
        sessions: ``{transitions: sessions}`` of the first run's dataset, printed under the axis.
    """
    pyplot = _pyplot()
    figure, axis = pyplot.subplots(figsize=(6.0, 3.2))
    keys = sorted({k for _, counts in series for k in counts})
    for index, (label, counts) in enumerate(series):
        xs = [k for k in keys if counts.get(k, (0, 0))[1]]
        axis.plot(
            xs,
            [counts[k][0] / counts[k][1] * 100 for k in xs],
            marker="o",
            color=run_color(index),
            linewidth=2,
            label=label,
        )
    axis.set_xticks(keys, [f"{k}\n({sessions.get(k, 0)} sessions)" for k in keys])
    axis.set_xlabel("instruction transitions in the session (changes between tool task, clarify and chat)")
    _percent_axis(axis, 105)
    axis.set_ylabel("task accuracy")
    _legend_right(axis)
    return _svg(figure)


def error_distribution(
    series: Sequence[tuple[str, Mapping[str, float | None]]], paper: Sequence[Mapping[str, float]]
) -> str:
    """Share (%) of each error category: one stacked bar per run, plus the paper's mean over its models."""
    pyplot = _pyplot()
    rows = list(series)
    if paper:
        rows.append((f"paper (mean of {len(paper)})", {k: mean(float(p[k]) for p in paper) for k in CATEGORIES}))
    figure, axis = pyplot.subplots(figsize=(6.0, max(2.4, 0.8 + 0.45 * len(rows))))
    labels = [label for label, _ in rows][::-1]
    left = [0.0] * len(rows)
    for color, category in zip(CATEGORY_COLORS, CATEGORIES):
        widths = [(values.get(category) or 0.0) for _, values in rows][::-1]
        axis.barh(
            labels, widths, left=left, color=color, label=CATEGORY_LABELS[category], edgecolor="white", linewidth=0.5
        )
        left = [a + b for a, b in zip(left, widths)]
    axis.set_xlim(0, 100)
    axis.xaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.set_xlabel("share of failed tasks")
    axis.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure)


def task_vs_session(points: Sequence[tuple[str, float, float]], paper: Sequence[tuple[str, float, float]]) -> str:
    """Session accuracy against task accuracy (%): the paper's models in grey, each run in its colour, labelled."""
    pyplot = _pyplot()
    figure, axis = pyplot.subplots(figsize=(6.0, 3.4))
    axis.scatter([p[1] for p in paper], [p[2] for p in paper], s=14, color="#b0b0b0", label="paper models", zorder=2)
    for index, (label, task, session) in enumerate(points):
        axis.scatter(
            [task], [session], s=40, color=run_color(index), label=label, zorder=3, edgecolor="black", linewidth=0.5
        )
    axis.set_xlabel("task accuracy")
    axis.set_ylabel("session accuracy")
    axis.xaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.yaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.grid(color="#eeeeee", linewidth=0.6)
    _legend_right(axis)
    return _svg(figure)


def dataset_panels(stats: Mapping[str, Any]) -> str:
    """Four small bar charts of a dataset: task types, real calls per task, DAG layer widths, tools per session."""
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(1, 4, figsize=(10.0, 2.4))
    panels = [
        ("task types", {TYPE_SHORT.get(k, k): v for k, v in stats["task_types"].items()}),
        ("real calls per task", stats["calls_per_task"]),
        ("calls per DAG layer", stats["layer_widths"]),
        ("tools per session", stats["tools_per_session"]),
    ]
    for axis, (title, counts) in zip(axes, panels):
        axis.bar(range(len(counts)), list(counts.values()), color="#4c78a8")
        axis.set_xticks(range(len(counts)), list(counts.keys()), fontsize=7)
        axis.set_title(title, fontsize=9)
        axis.grid(axis="y", color="#eeeeee", linewidth=0.6)
        axis.set_axisbelow(True)
    figure.tight_layout()
    return _svg(figure)
