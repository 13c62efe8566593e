"""The Ablation view's figures (docs/variants.md §6.7) as inline SVG text: the forest plot of the factor effects
and the transitions curve. Text stays text and ids are salted (:func:`wildtoolbench.reports.plot_style.svg_text`),
so the same ``ablate.json`` gives the same SVG; every row and point carries its numbers as a hover tip."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.reports.plot_style import Tips, pyplot_module, svg_text

EFFECT_COLOR = "#1f5f8b"
CONTROL_COLOR = "#d9d9d9"


def effect_label(effect: Mapping[str, Any]) -> str:
    """``factor level`` of an effect (``names``, ``transitions +1``); the control is marked as such."""
    name = f"{effect['factor']} {effect['level'] or ''}".strip()
    return f"{name} (control)" if effect["factor"] == "paraphrase" else name


def interval_text(low: float | None, high: float | None) -> str:
    """``[-100.0, -85.2]``, or ``no interval`` (fewer than two sessions)."""
    return "no interval" if low is None or high is None else f"[{low:+.1f}, {high:+.1f}]"


def effect_tip(effect: Mapping[str, Any]) -> str:
    """The hover text of a forest-plot row: label, difference, interval, p-value, pairs (the numbers of ablate.json)."""
    small = ", small cell" if effect.get("small") else ""
    return (
        f"{effect_label(effect)}: {effect['difference']:+.1f} points "
        f"{interval_text(effect['ci_low'], effect['ci_high'])}, p = {effect['p_value']:.3g}, "
        f"{effect['pairs']} pairs{small}"
    )


def forest_plot(effects: Sequence[Mapping[str, Any]]) -> str:
    """SVG: one row per effect (factor and level, in ``effects`` order, top to bottom), its difference as a dot
    and its session-clustered interval as a line, the numbers written at the right; a dashed line at 0 and, when
    the paraphrase control was run, the control's interval as a grey band.

    Args:
        effects: the ``effects`` of ``ablate.json`` (docs/variants.md §6.5).
    """
    pyplot = pyplot_module()
    with pyplot.rc_context({"text.parse_math": False}):  # a factor name is data: "$" is no formula
        return _forest(pyplot, effects)


def _forest(pyplot: Any, effects: Sequence[Mapping[str, Any]]) -> str:
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(7.6, 0.42 * max(len(effects), 1) + 1.0))
    control = next((e["control"] for e in effects if e.get("control")), None)
    if control and control.get("ci_low") is not None and control.get("ci_high") is not None:
        axis.axvspan(control["ci_low"], control["ci_high"], color=CONTROL_COLOR, label="paraphrase control, 95% interval")
        axis.legend(frameon=False, fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 1.0), borderaxespad=0.2)
    axis.axvline(0, color="0.35", linestyle="--", linewidth=0.8)
    count = len(effects)
    for row, effect in enumerate(effects):
        y = count - 1 - row
        if effect["ci_low"] is not None and effect["ci_high"] is not None:
            axis.plot([effect["ci_low"], effect["ci_high"]], [y, y], color=EFFECT_COLOR, linewidth=2.2, solid_capstyle="butt")
        (dot,) = axis.plot([effect["difference"]], [y], "o", color=EFFECT_COLOR, markersize=6)
        tips.tag(dot, "effect", effect_tip(effect))
        axis.annotate(
            f"{effect['difference']:+.1f}  {interval_text(effect['ci_low'], effect['ci_high'])}  n={effect['pairs']}"
            + ("*" if effect.get("small") else ""),
            xy=(1.02, y),
            xycoords=("axes fraction", "data"),
            fontsize=8,
            va="center",
            annotation_clip=False,
        )
    axis.set_yticks(range(count), [effect_label(e) for e in reversed(effects)])
    axis.set_ylim(-0.7, count - 0.3)
    axis.set_xlim(-105, 105)
    axis.set_xticks([-100, -50, 0, 50, 100])
    axis.grid(axis="x", color="#ececec", linewidth=0.6)
    axis.set_axisbelow(True)
    axis.set_xlabel("target-task accuracy, variant − origin (points), session-clustered 95% interval")
    return svg_text(figure, tips)


def transitions_plot(curve: Sequence[Mapping[str, Any]]) -> str:
    """SVG: target-task accuracy (%) against the change in instruction transitions before the target (level 0:
    the origins), each point with its interval and its numbers as a hover tip (docs/variants.md §6.4).

    Args:
        curve: the ``transitions_curve`` of ``ablate.json``.
    """
    pyplot = pyplot_module()
    tips = Tips()
    figure, axis = pyplot.subplots(figsize=(5.6, 3.0))
    xs = [p["level"] for p in curve]
    axis.plot(xs, [p["accuracy"] for p in curve], color=EFFECT_COLOR, linewidth=1.2)
    for point in curve:
        low = point["ci_low"] if point["ci_low"] is not None else point["accuracy"]
        high = point["ci_high"] if point["ci_high"] is not None else point["accuracy"]
        axis.plot([point["level"]] * 2, [low, high], color=EFFECT_COLOR, linewidth=2)
        (dot,) = axis.plot([point["level"]], [point["accuracy"]], "o", color=EFFECT_COLOR, markersize=6)
        tips.tag(
            dot,
            "curve",
            f"level {point['level']:+d}: {point['accuracy']:.1f}% {interval_text(point['ci_low'], point['ci_high'])}, "
            f"{point['pairs']} target tasks",
        )
    axis.set_xticks(xs, [("0 (origins)" if x == 0 else f"{x:+d}") for x in xs])
    axis.set_ylim(0, 105)
    axis.yaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.grid(axis="y", color="#ececec", linewidth=0.6)
    axis.set_xlabel("instruction transitions before the target, change from the origin")
    axis.set_ylabel("target-task accuracy")
    return svg_text(figure, tips)
