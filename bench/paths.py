"""Gold-DAG path enumeration and the per-step candidate tracker (SPEC 3.3, 3.2).

A *node* is one entry of a task's gold answer list. A *step* is a list of node
indices issued together in one assistant message; a *path* is a list of steps
that covers every node exactly once.

This module is pure: it imports nothing from LangGraph and does no I/O.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Mapping, Sequence

Step = list[int]
Path = list[Step]

ASK_USER = "ask_user_for_required_parameters"
PREPARE_TO_ANSWER = "prepare_to_answer"
PSEUDO_TOOLS = frozenset({ASK_USER, PREPARE_TO_ANSWER})


def node_names(answer_list: Sequence[Mapping[str, Any]]) -> list[str]:
    """Function name of every node, in index order.

    Args:
        answer_list: gold nodes, each ``{"action": {"name", ...}, "dependency_list", ...}``.

    Returns:
        ``[name_0, ..., name_{n-1}]``.
    """
    return [node["action"]["name"] for node in answer_list]


def _graph(answer_list: Sequence[Mapping[str, Any]]) -> tuple[list[list[int]], list[int]]:
    n = len(answer_list)
    successors: list[list[int]] = [[] for _ in range(n)]
    in_degree = [0] * n
    for index, node in enumerate(answer_list):
        for dep in node["dependency_list"]:
            successors[dep].append(index)
            in_degree[index] += 1
    return successors, in_degree


def enumerate_paths(answer_list: Sequence[Mapping[str, Any]]) -> list[Path]:
    """Every path through a gold DAG, in the reference enumeration order (SPEC 3.3).

    Args:
        answer_list: the task's gold nodes (``dependency_list`` indices refer to
            the same list and must form a DAG).

    Returns:
        A list of paths; a path is a list of steps, a step a list of node
        indices in ascending order. Exponential in the width of a layer: only
        for answer lists small enough to enumerate (the step loop uses
        :class:`PathTracker`, which never needs the full list).

    Raises:
        KeyError, IndexError: if a node lacks ``action.name`` / ``dependency_list``
            or a dependency index is out of range (validate with ``bench.schema``).
    """
    names = node_names(answer_list)
    n = len(names)
    successors, start_in_degree = _graph(answer_list)
    paths: list[Path] = []

    def visit(visited: list[bool], in_degree: list[int], path: Path, count: int) -> None:
        if count == n:
            paths.append([list(step) for step in path])
            return
        for steps in _expansions(names, visited, in_degree):
            issued = [i for step in steps for i in step]
            new_visited = visited[:]
            new_in_degree = in_degree[:]
            for i in issued:
                new_visited[i] = True
                for succ in successors[i]:
                    new_in_degree[succ] -= 1
            visit(new_visited, new_in_degree, path + steps, count + len(issued))

    visit([False] * n, start_in_degree[:], [], 0)
    return paths


def _expansions(names: Sequence[str], visited: Sequence[bool], in_degree: Sequence[int]) -> list[list[Step]]:
    """The moves available from one DFS state, in reference order.

    Each move is a list of steps: one step, or a full same-name run issued one
    node per step. Implements rules 2-7 of SPEC 3.3.
    """
    ready = [i for i in range(len(names)) if not visited[i] and in_degree[i] == 0]
    full: dict[tuple[int, ...], list[int]] = {}
    partial: set[tuple[int, ...]] = set()
    run: list[int] = []
    for i in ready + [-1]:
        if run and (i == -1 or names[i] != names[run[-1]]):
            if len(run) >= 2:
                full[tuple(run)] = run[:]
                for size in range(1, len(run)):
                    partial.update(combinations(run, size))
            run = []
        if i != -1:
            run.append(i)
    first_of_full = {r[0]: r for r in full.values()}

    moves: list[list[Step]] = []
    seen: set[str] = set()
    for size in range(1, len(ready) + 1):
        for combo in combinations(ready, size):
            key = "|".join(names[i] for i in combo)
            if key in seen:
                continue
            seen.add(key)
            if size >= 2:
                prefixes = [combo[:k] for k in range(1, size + 1)]
                if any(p in partial for p in prefixes) and not any(p in full for p in prefixes):
                    continue
            if size == 1 and combo[0] in first_of_full:
                moves.append([[i] for i in first_of_full[combo[0]]])
            else:
                moves.append([list(combo)])
    return moves


def min_length(paths: Sequence[Path]) -> int:
    """Fewest steps over ``paths`` (SPEC 3.3). Raises ValueError on an empty list."""
    return min(len(p) for p in paths)


def split_optimal(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """Split paths into (optimal, suboptimal), each in enumeration order (SPEC 3.3)."""
    shortest = min_length(paths)
    optimal = [p for p in paths if len(p) == shortest]
    suboptimal = [p for p in paths if len(p) != shortest]
    return optimal, suboptimal


class PathTracker:
    """Candidates of each step of the step loop, with pruning (SPEC 3.2, 3.3).

    One tracker per task. ``candidates(s)`` gives the distinct node sets that a
    still-alive path has at position ``s``, in order of first occurrence in
    the reference enumeration order, each sorted by function name (stable).
    ``prune(s, nodes)`` keeps only the paths whose step ``s`` is ``nodes``.

    This version materialises every path (reference behaviour); it is the
    executable definition that a lazy implementation must agree with.
    """

    def __init__(self, answer_list: Sequence[Mapping[str, Any]]):
        self.names = node_names(answer_list)
        self._all = enumerate_paths(answer_list)
        self._alive = list(self._all)
        self.min_length = min_length(self._all)
        self.gold_path: Path = next(p for p in self._all if len(p) == self.min_length)

    def candidates(self, step: int) -> list[Step]:
        """Distinct node sets at position ``step`` over alive paths, each sorted by name (stable).

        Returns an empty list when no alive path has that many steps.
        """
        out: list[Step] = []
        seen: set[tuple[int, ...]] = set()
        for path in self._alive:
            if step < len(path):
                key = tuple(path[step])
                if key not in seen:
                    seen.add(key)
                    out.append(sorted(path[step], key=lambda i: self.names[i]))
        return out

    def prune(self, step: int, nodes: Sequence[int]) -> None:
        """Keep only alive paths whose step ``step`` is the node set ``nodes`` (any order)."""
        target = sorted(nodes)
        self._alive = [p for p in self._alive if step < len(p) and sorted(p[step]) == target]
