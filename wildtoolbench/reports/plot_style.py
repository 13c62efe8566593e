"""The look shared by the report's figures: run colours and markers (the same in every figure and in the page),
task type and error category styles, hover tips, label spreading, matplotlib's settings (Agg backend, text kept
as text, salted ids: the same data gives the same SVG) and the SVG text of a figure."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")
"""One marker shape per run (with :data:`COLORS`), so runs differ by more than colour."""
MARKER_NAMES = {
    "o": "circle",
    "s": "square",
    "^": "triangle",
    "D": "diamond",
    "v": "triangle down",
    "P": "plus",
    "X": "cross",
    "*": "star",
    "h": "hexagon",
    "<": "triangle left",
}
TYPE_SHORT = {
    "Single-Tool": "ST",
    "Parallel Multi-Tool": "MT-P",
    "Sequential Multi-Tool": "MT-S",
    "Mixed Multi-Tool": "MT-M",
    "Clarify": "CQ",
    "Chat": "CC",
}
"""Short task-type labels (the generation framework's layer names, with the multi-tool kinds)."""
CATEGORY_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#999999")
"""A qualitative palette (Okabe-Ito, then grey) for the nine error categories, which differ in kind."""
CATEGORY_HATCHES = ("", "", "", "", "", "", "//", "..", "xx")
"""Parameter categories (the last three) are hatched as well, apart from the six action categories."""


def run_color(index: int) -> str:
    """The colour of the ``index``-th run in every figure and in the page."""
    return COLORS[index % len(COLORS)]


def run_marker(index: int) -> str:
    """The matplotlib marker of the ``index``-th run (distinct for the first ten runs)."""
    return MARKERS[index % len(MARKERS)]


def run_marker_name(index: int) -> str:
    """The name of :func:`run_marker` (the page's legend shows it)."""
    return MARKER_NAMES[run_marker(index)]


def marker_size(index: int, count: int) -> float:
    """Marker size (points) of the ``index``-th of ``count`` runs: earlier runs larger, so coinciding points
    show as nested shapes."""
    return max(5.0, 11.0 - 6.0 * index / max(count - 1, 1)) if count > 1 else 8.0


class Tips:
    """Tooltips for SVG elements: an artist gets a gid, and after saving a ``<title>`` goes into its group."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def tag(self, artist: Any, run: int | str, text: str) -> None:
        """Give ``artist`` a gid of run ``run`` and remember its hover tip ``text``."""
        gid = f"wtb-{run}-{len(self.texts)}"
        artist.set_gid(gid)
        self.texts[gid] = text

    def apply(self, svg: str) -> str:
        """The SVG text with each registered artist's tip added as a ``<title>`` element."""
        from html import escape

        for gid, text in self.texts.items():
            svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}" class="tip"><title>{escape(text)}</title>', 1)
        return svg


def spread(values: Sequence[float], gap: float, top: float | None = None) -> list[float]:
    """Label positions near ``values`` with at least ``gap`` between neighbours (order kept), shifted down so
    that none is above ``top``."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed = [0.0] * len(values)
    last = None
    for i in order:
        y = values[i] if last is None else max(values[i], last + gap)
        placed[i] = y
        last = y
    if top is not None and placed and max(placed) > top:
        shift = max(placed) - top
        placed = [y - shift for y in placed]
    return placed


def fmt(value: float) -> str:
    """A percentage as the figures label it: two decimals and ``%``."""
    return f"{value:.2f}%"


def pyplot_module():
    """matplotlib's pyplot on the Agg backend, with the report's settings (text as text, salted ids)."""
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


def svg_text(figure: Any, tips: Tips | None = None) -> str:
    """The ``<svg>`` element of ``figure`` (no XML prolog, no date), with ``tips`` applied; closes the figure."""
    pyplot = pyplot_module()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    pyplot.close(figure)
    text = buffer.getvalue()
    start = text.find("<svg")
    text = text[start:].strip()
    return tips.apply(text) if tips is not None else text


def percent_axis(axis: Any, top: float = 100.0) -> None:
    """Make ``axis``'s y axis a 0 to ``top`` percent scale."""
    axis.set_ylim(0, top)
    axis.yaxis.set_major_formatter(lambda value, _: f"{value:.0f}%")
    axis.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    axis.set_axisbelow(True)


def legend_below(axis: Any, entries: int, drop: float = 0.16) -> None:
    """Put ``axis``'s legend below the plot, in columns for ``entries`` entries (``drop``: how far below)."""
    axis.legend(
        frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -drop), ncol=min(max(entries, 1), 4)
    )


def legend_right(axis: Any) -> None:
    """Put ``axis``'s legend to the right of the plot."""
    axis.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def direct_labels(axis: Any, x: float, ys: Sequence[float], labels: Sequence[str], top: float) -> None:
    """Run labels at the right of the plot, spread apart, each with a thin leader to its last point."""
    placed = spread(list(ys), top * 0.06, top * 0.97)
    for index, (y, shown, label) in enumerate(zip(ys, placed, labels)):
        axis.annotate(
            label,
            xy=(x, y),
            xytext=(x + 0.35, shown),
            textcoords="data",
            fontsize=8,
            color=run_color(index),
            va="center",
            annotation_clip=False,
            arrowprops={"arrowstyle": "-", "color": run_color(index), "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3},
        )


def dodge(index: int, count: int, width: float = 0.16) -> float:
    """The x offset of series ``index`` of ``count`` drawn side by side, ``width`` apart."""
    return 0.0 if count < 2 else (index - (count - 1) / 2) * width / (count - 1)
