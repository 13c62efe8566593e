"""Report figures drawn with matplotlib (Agg backend) as inline SVG text: no network, no files needed.

Every function returns an ``<svg ...>`` element (no XML prolog) that can be
placed straight into HTML. Text stays text (``svg.fonttype = none``) and ids are
salted with a fixed string, so the same data gives the same SVG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import mean
from typing import Any

from wildtoolbench.bench.errors import CATEGORIES, CATEGORY_LABELS
from wildtoolbench.bench.schema import TASK_TYPES
from wildtoolbench.reports.plot_style import (
    CATEGORY_COLORS,
    CATEGORY_HATCHES,
    TYPE_SHORT,
    Tips,
    direct_labels,
    dodge,
    fmt,
    legend_below,
    legend_right,
    marker_size,
    percent_axis,
    pyplot_module,
    run_color,
    run_marker,
    spread,
    svg_text,
)


def _run_line(axis: Any, index: int, runs: int, xs: Sequence[float], ys: Sequence[float], label: str) -> Any:
    """The line of run ``index`` (of ``runs``) in its color and marker, drawn above the earlier runs' lines."""
    return axis.plot(
        xs,
        ys,
        marker=run_marker(index),
        markersize=marker_size(index, runs),
        markeredgecolor="black",
        markeredgewidth=0.5,
        color=run_color(index),
        linewidth=1.6,
        label=label,
        zorder=3 + index,
    )[0]


def accuracy_by_order(
    series: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]], paper: Sequence[Sequence[float]]
) -> str:
    """Task accuracy (%) by task position 1-4: one line per run (its colour and marker, slightly dodged so that
    equal lines stay visible, labelled at the right end), the paper's models as thin grey lines. Every point has a
    tooltip with the run, value, n and interval.

    Args:
        series: ``(run label, {"t1": {"correct", "n", "interval"}, ...})`` (positions without a task left out).
        paper: the paper's ``[t1, t2, t3, t4]`` per model.
    """
    pyplot = pyplot_module()
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(7.0, 3.4))
    positions = [1, 2, 3, 4]
    for values in paper:
        axis.plot(positions, values, color="#c8c8c8", linewidth=0.6, zorder=1)
    axis.plot([], [], color="#c8c8c8", linewidth=0.8, label="paper models")
    ends: list[tuple[float, str]] = []
    for index, (label, groups) in enumerate(series):
        shift = dodge(index, len(series))
        points = [(p + shift, groups[f"t{p}"]) for p in positions if f"t{p}" in groups]
        line = _run_line(
            axis, index, len(series), [x for x, _ in points], [g["interval"].value * 100 for _, g in points], label
        )
        tips.tag(line, f"r{index}", f"{label}")
        for x, g in points:
            dot = axis.plot(
                [x],
                [g["interval"].value * 100],
                marker=run_marker(index),
                linestyle="none",
                alpha=0.0,
                markersize=10,
                zorder=10,
            )[0]
            tips.tag(
                dot,
                f"r{index}",
                f"{label}, task {int(round(x))}: {fmt(g['interval'].value * 100)} of n = {g['n']} tasks "
                f"[{fmt(g['interval'].low * 100)}, {fmt(g['interval'].high * 100)}]",
            )
        if points:
            ends.append((points[-1][1]["interval"].value * 100, label))
    if ends:
        direct_labels(axis, 4.15, [y for y, _ in ends], [label for _, label in ends], 105)
    axis.set_xticks(positions, [f"task {p}" for p in positions])
    axis.set_xlim(0.7, 4.3)
    percent_axis(axis, 105)
    axis.set_ylabel("task accuracy")
    legend_below(axis, len(series) + 1)
    return svg_text(figure, tips)


def accuracy_by_type(series: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]]) -> str:
    """Task accuracy (%) by task type: grouped bars (one colour and hatch per run) with 95% interval whiskers and
    the number of tasks printed in each bar; empty types show no bar. Tooltips give value, n and interval.

    Args:
        series: ``(run label, {task type: {"correct", "n", "interval"}})``.
    """
    pyplot = pyplot_module()
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(8.0, 3.4))
    width = 0.8 / max(len(series), 1)
    hatches = ("", "//", "..", "xx", "\\\\", "++", "oo", "--", "||", "**")
    for index, (label, groups) in enumerate(series):
        for t, name in enumerate(TASK_TYPES):
            if name not in groups:
                continue
            g = groups[name]
            x = t + (index - (len(series) - 1) / 2) * width
            value = g["interval"].value * 100
            bar = axis.bar(
                [x],
                [value],
                width=width,
                color=run_color(index),
                edgecolor="white",
                hatch=hatches[index % len(hatches)],
                label=label if t == min(TASK_TYPES.index(k) for k in groups) else None,
            )[0]
            axis.errorbar(
                [x],
                [value],
                yerr=[[value - g["interval"].low * 100], [g["interval"].high * 100 - value]],
                color="black",
                linewidth=0.7,
                capsize=1.5,
            )
            if width > 0.2:
                axis.text(
                    x, 1.5, str(g["n"]), ha="center", va="bottom", fontsize=6, color="white" if value > 8 else "black"
                )
            tips.tag(
                bar,
                f"r{index}",
                f"{label}, {name}: {fmt(value)} of n = {g['n']} tasks "
                f"[{fmt(g['interval'].low * 100)}, {fmt(g['interval'].high * 100)}]",
            )
    axis.set_xticks(range(len(TASK_TYPES)), [t.replace(" Multi-Tool", "\nMulti-Tool") for t in TASK_TYPES])
    percent_axis(axis, 105)
    axis.set_ylabel("task accuracy (n in the bar)")
    legend_right(axis)
    return svg_text(figure, tips)


def accuracy_by_transitions(
    series: Sequence[tuple[str, Mapping[int, tuple[int, int]]]], sessions: Mapping[int, int]
) -> str:
    """Task accuracy (%) by the number of instruction transitions in the session: one dodged line per run, in its
    colour and marker, labelled at the right; tooltips with value and n.

    Args:
        series: ``(run label, {transitions: (correct tasks, tasks)})``.
        sessions: ``{transitions: sessions}`` of the first run's dataset, printed under the axis.
    """
    pyplot = pyplot_module()
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(7.0, 3.4))
    keys = sorted({k for _, counts in series for k in counts})
    ends: list[tuple[float, str]] = []
    for index, (label, counts) in enumerate(series):
        shift = dodge(index, len(series))
        xs = [k for k in keys if counts.get(k, (0, 0))[1]]
        ys = [counts[k][0] / counts[k][1] * 100 for k in xs]
        line = _run_line(axis, index, len(series), [x + shift for x in xs], ys, label)
        tips.tag(line, f"r{index}", label)
        for x, y in zip(xs, ys):
            dot = axis.plot([x + shift], [y], marker="o", linestyle="none", alpha=0.0, markersize=10, zorder=10)[0]
            tips.tag(dot, f"r{index}", f"{label}, {x} transitions: {fmt(y)} of n = {counts[x][1]} tasks")
        if xs:
            ends.append((ys[-1], label))
    if ends and keys:
        direct_labels(axis, max(keys) + 0.15, [y for y, _ in ends], [label for _, label in ends], 105)
    axis.set_xticks(keys, [f"{k}\n({sessions.get(k, 0)} sessions)" for k in keys])
    if keys:
        axis.set_xlim(min(keys) - 0.3, max(keys) + 0.3)
    axis.set_xlabel("instruction transitions in the session (changes between tool task, clarify and chat)")
    percent_axis(axis, 105)
    axis.set_ylabel("task accuracy")
    legend_below(axis, len(series), 0.32)
    return svg_text(figure, tips)


def error_distribution(
    series: Sequence[tuple[str, Mapping[str, float | None], int]], paper: Sequence[Mapping[str, float]]
) -> str:
    """Share (%) of each error category: one stacked bar per run (labelled with its number of failed tasks), plus the
    paper's mean over its models; a qualitative palette (parameter categories also hatched); tooltips with share and n.

    Args:
        series: ``(run label, {category: share % or None}, failed tasks)``.
        paper: the paper's error rows (shares per category).
    """
    pyplot = pyplot_module()
    tips = Tips()
    rows = [(f"{label} (n = {failed})", values, f"r{index}") for index, (label, values, failed) in enumerate(series)]
    if paper:
        rows.append(
            (f"paper (mean of {len(paper)})", {k: mean(float(p[k]) for p in paper) for k in CATEGORIES}, "paper")
        )
    figure, axis = pyplot.subplots(figsize=(7.0, max(2.4, 0.8 + 0.45 * len(rows))))
    labels = [label for label, _, _ in rows][::-1]
    left = [0.0] * len(rows)
    for color, hatch, category in zip(CATEGORY_COLORS, CATEGORY_HATCHES, CATEGORIES):
        widths = [(values.get(category) or 0.0) for _, values, _ in rows][::-1]
        bars = axis.barh(
            labels,
            widths,
            left=left,
            color=color,
            hatch=hatch,
            label=CATEGORY_LABELS[category],
            edgecolor="white",
            linewidth=0.5,
        )
        for bar, width, (label, _, owner) in zip(bars, widths, rows[::-1]):
            if width:
                tips.tag(bar, owner, f"{label}: {CATEGORY_LABELS[category]} {fmt(width)}")
        left = [a + b for a, b in zip(left, widths)]
    axis.set_xlim(0, 100)
    axis.xaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.set_xlabel("share of failed tasks")
    axis.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return svg_text(figure, tips)


def task_vs_session(points: Sequence[tuple[str, float, float, int]], paper: Sequence[tuple[str, float, float]]) -> str:
    """Session accuracy against task accuracy (%): the paper's models in grey (tooltips with their names), each run in
    its colour and marker (earlier runs larger, so coinciding runs show as nested shapes), labelled directly.

    Args:
        points: ``(run label, task %, session %, sessions)``.
        paper: ``(model, task %, session %)``.
    """
    pyplot = pyplot_module()
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(7.0, 3.8))
    for model, task, session in paper:
        dot = axis.scatter([task], [session], s=14, color="#b0b0b0", zorder=2)
        tips.tag(dot, "paper", f"{model} (paper): task {fmt(task)}, session {fmt(session)}")
    axis.scatter([], [], s=14, color="#b0b0b0", label="paper models")
    for index, (label, task, session, sessions) in enumerate(points):
        size = marker_size(index, len(points)) ** 2
        dot = axis.scatter(
            [task],
            [session],
            s=size,
            marker=run_marker(index),
            color=run_color(index),
            label=label,
            zorder=3 + index,
            edgecolor="black",
            linewidth=0.5,
        )
        tips.tag(dot, f"r{index}", f"{label}: task {fmt(task)}, session {fmt(session)}, n = {sessions} sessions")
    top = max([p[2] for p in points] + [p[2] for p in paper] + [10.0]) * 1.15
    width = max([p[1] for p in points] + [p[1] for p in paper] + [10.0])
    # Labels beside their points; runs whose points are close (in x) get their labels spread apart vertically.
    clusters: list[list[int]] = []
    for index in sorted(range(len(points)), key=lambda i: points[i][1]):
        if clusters and points[index][1] - points[clusters[-1][-1]][1] < width * 0.12:
            clusters[-1].append(index)
        else:
            clusters.append([index])
    for cluster in clusters:
        placed = spread([points[i][2] for i in cluster], top * 0.075, top * 0.9)
        for index, y in zip(cluster, placed):
            label, task, session, _ = points[index]
            axis.annotate(
                label,
                xy=(task, session),
                xytext=(task + width * 0.04, y + top * 0.03),
                fontsize=8,
                color=run_color(index),
                va="center",
                annotation_clip=False,
                arrowprops={"arrowstyle": "-", "color": run_color(index), "linewidth": 0.5, "shrinkB": 4},
            )
    axis.set_ylim(0, top)
    axis.set_xlabel("task accuracy")
    axis.set_ylabel("session accuracy")
    axis.xaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.yaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.grid(color="#eeeeee", linewidth=0.6)
    legend_below(axis, len(points) + 1, 0.2)
    return svg_text(figure, tips)


def dataset_panels(stats: Mapping[str, Any]) -> str:
    """Four small bar charts of a dataset: task types, real calls per task, DAG layer widths, tools per session."""
    pyplot = pyplot_module()
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
    return svg_text(figure)


def pass_hat_k_curve(series: Sequence[tuple[int, str, Mapping[str, Mapping[str, Any]]]]) -> str:
    """Task pass^k (%) against k = 1..K, one line per run with trials (its colour and marker), the 95%
    interval as a band (docs/trials.md §3). Tooltips give k, the value and the interval.

    Args:
        series: ``(run index, run label, {"1": {"value", "low", "high"}, ..., "K": {...}})`` (the
            ``task.pass_hat_k`` of ``trials_summary.json``); the run index picks colour and marker.
    """
    pyplot = pyplot_module()
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(7.0, 3.4))
    most = 1
    for index, label, curve in series:
        ks = sorted(int(k) for k, e in curve.items() if e.get("value") is not None)
        if not ks:
            continue
        most = max(most, ks[-1])
        values = [curve[str(k)]["value"] * 100 for k in ks]
        banded = [k for k in ks if curve[str(k)].get("low") is not None]
        if banded:
            axis.fill_between(
                banded,
                [curve[str(k)]["low"] * 100 for k in banded],
                [curve[str(k)]["high"] * 100 for k in banded],
                color=run_color(index),
                alpha=0.15,
                linewidth=0,
            )
        line = axis.plot(
            ks, values, marker=run_marker(index), markersize=4, color=run_color(index), linewidth=1.6, label=label
        )[0]
        tips.tag(line, f"r{index}", label)
        for k, value in zip(ks, values):
            estimate = curve[str(k)]
            bounds = (
                f" [{fmt(estimate['low'] * 100)}, {fmt(estimate['high'] * 100)}]"
                if estimate.get("low") is not None
                else ""
            )
            dot = axis.plot([k], [value], marker="o", linestyle="none", alpha=0.0, markersize=10, zorder=10)[0]
            tips.tag(dot, f"r{index}", f"{label}, pass^{k}: {fmt(value)}{bounds}")
    axis.set_xlim(0.7, most + 0.3)
    axis.set_xticks(range(1, most + 1))
    axis.set_xlabel("k (all k trials correct)")
    percent_axis(axis, 105)
    axis.set_ylabel("task pass^k")
    legend_below(axis, len(series))
    return svg_text(figure, tips)
