"""A task's gold DAG drawn as inline SVG, built on the server (docs/review.md §2.2).

Each gold node is a box in the column of its depth (0 for a node without dependencies, else one more
than the deepest node it depends on) and the row of its order within the column; an arrow goes from
each dependency to the node that waits for it. Boxes are coloured by what the node is (a tool call, a
question to the user, the final answer) and outlined when an audit finding names the node. Every text
is escaped; a dependency list that is malformed or forms a cycle is drawn as far as it goes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape
from typing import Any

from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER

BOX_WIDTH = 168
BOX_HEIGHT = 40
GAP_X = 44
GAP_Y = 14
PAD = 8


def drawn_depths(answer_list: Sequence[Any]) -> list[int]:
    """The depth of every node of a gold answer list (docs/review.md §2.2): 0 without dependencies, else
    1 + the deepest dependency; a dependency that is out of range, not an integer or on a cycle is ignored."""
    count = len(answer_list)
    depth: list[int | None] = [None] * count
    visiting: set[int] = set()

    def deps(index: int) -> list[int]:
        node = answer_list[index]
        found = node.get("dependency_list") if isinstance(node, Mapping) else None
        if not isinstance(found, list):
            return []
        return [d for d in found if isinstance(d, int) and not isinstance(d, bool) and 0 <= d < count and d != index]

    def visit(index: int) -> int:
        stack = [(index, iter(deps(index)))]
        visiting.add(index)
        best: dict[int, int] = {index: 0}
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                visiting.discard(current)
                depth[current] = best[current]
                if stack:
                    parent = stack[-1][0]
                    best[parent] = max(best[parent], best[current] + 1)
                continue
            if depth[child] is not None:
                best[current] = max(best[current], depth[child] + 1)  # type: ignore[operator]
            elif child not in visiting:
                visiting.add(child)
                best[child] = 0
                stack.append((child, iter(deps(child))))
        return depth[index]  # type: ignore[return-value]

    for index in range(count):
        if depth[index] is None:
            visit(index)
    return [d or 0 for d in depth]


def _label(node: Any) -> tuple[str, str]:
    action = node.get("action") if isinstance(node, Mapping) else None
    name = action.get("name") if isinstance(action, Mapping) else None
    name = name if isinstance(name, str) else "?"
    kind = "answer" if name == PREPARE_TO_ANSWER else "ask" if name == ASK_USER else "call"
    return name, kind


def dag_svg(answer_list: Sequence[Any], task: int, flagged: Collection[int] = ()) -> str:
    """The SVG element drawing one task's gold DAG (docs/review.md §2.2).

    Args:
        answer_list: the task's gold nodes.
        task: the task index (used in the element ids and the links to each node's row, ``#t<task>n<i>``).
        flagged: indices of the nodes an audit finding names (outlined).

    Returns:
        ``<svg ...>...</svg>`` text, every label escaped.
    """
    depths = drawn_depths(answer_list)
    columns: dict[int, list[int]] = {}
    for index, depth in enumerate(depths):
        columns.setdefault(depth, []).append(index)
    where: dict[int, tuple[int, int]] = {}
    for depth, members in columns.items():
        for row, index in enumerate(members):
            where[index] = (PAD + depth * (BOX_WIDTH + GAP_X), PAD + row * (BOX_HEIGHT + GAP_Y))
    width = PAD * 2 + (max(columns, default=0) + 1) * (BOX_WIDTH + GAP_X) - GAP_X
    boxes_height = PAD * 2 + max((len(m) for m in columns.values()), default=1) * (BOX_HEIGHT + GAP_Y) - GAP_Y
    edges = []
    lanes = 0
    for index, node in enumerate(answer_list):
        found = node.get("dependency_list") if isinstance(node, Mapping) else None
        for dep in found if isinstance(found, list) else []:
            if isinstance(dep, int) and not isinstance(dep, bool) and dep in where and dep != index:
                edges.append((dep, index))
    marker = f"arrow-{task}"
    paths = []
    for dep, index in edges:
        x1, y1 = where[dep][0] + BOX_WIDTH, where[dep][1] + BOX_HEIGHT // 2
        x2, y2 = where[index][0], where[index][1] + BOX_HEIGHT // 2
        bend = GAP_X // 2
        if depths[index] - depths[dep] <= 1:
            shape = f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"
        else:  # it skips a column: go round the boxes in between, along a lane below them
            lanes += 1
            lane = boxes_height + lanes * 10 - PAD // 2
            shape = (
                f"M{x1},{y1} C{x1 + bend},{y1} {x1 + bend},{lane} {x1 + GAP_X},{lane} "
                f"L{x2 - GAP_X},{lane} C{x2 - bend},{lane} {x2 - bend},{y2} {x2},{y2}"
            )
        paths.append(f'<path class="dag-edge" d="{shape}" marker-end="url(#{marker})"/>')
    height = boxes_height + (lanes * 10 + PAD if lanes else 0)
    parts = [
        f'<svg class="dag" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="gold DAG of task {task + 1}">',
        f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="dag-head"/></marker></defs>',
        *paths,
    ]
    for index, node in enumerate(answer_list):
        x, y = where[index]
        name, kind = _label(node)
        short = name if len(name) <= 20 else name[:19] + "\u2026"
        flag = " dag-flag" if index in flagged else ""
        parts.append(
            f'<a href="#t{task}n{index}"><g class="dag-node dag-{kind}{flag}"><title>{escape(f"node {index}: {name}")}</title>'
            f'<rect x="{x}" y="{y}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="6"/>'
            f'<text x="{x + 8}" y="{y + 16}" class="dag-index">#{index} {escape(kind)}</text>'
            f'<text x="{x + 8}" y="{y + 32}" class="dag-name">{escape(short)}</text></g></a>'
        )
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["dag_svg", "drawn_depths"]
