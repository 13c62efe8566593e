"""The reference path enumeration, materialised (docs/paths.md §2): every path of a gold DAG, listed.

Exponential in the width of a layer, so it is not part of the installed package: the lazy
``wildtoolbench.bench.paths.PathTracker`` computes the same candidates, ``min_length`` and gold path step by step.
This module is the executable definition the differential tests (tests/unit/bench/test_paths_lazy.py,
tests/unit/bench/test_paths_reference.py) and the benchmarks compare the tracker with.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.paths import Path, Step, _moves_from_ready, node_names


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
    """Every path through a gold DAG, in the reference enumeration order (docs/paths.md).

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
            or a dependency index is out of range (validate with ``wildtoolbench.bench.schema``).
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
    node per step. Implements rules 2-7 of docs/paths.md.
    """
    ready = [i for i in range(len(names)) if not visited[i] and in_degree[i] == 0]
    return _moves_from_ready(names, ready)


def min_length(paths: Sequence[Path]) -> int:
    """Fewest steps over ``paths`` (docs/paths.md). Raises ValueError on an empty list."""
    return min(len(p) for p in paths)


def split_optimal(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """Split paths into (optimal, suboptimal), each in enumeration order (docs/paths.md)."""
    shortest = min_length(paths)
    optimal = [p for p in paths if len(p) == shortest]
    suboptimal = [p for p in paths if len(p) != shortest]
    return optimal, suboptimal


class MaterialisedPathTracker:
    """Candidates of each step of the step loop, with pruning (docs/evaluation.md §3, docs/paths.md).

    One tracker per task. ``candidates(s)`` gives the distinct node sets that a
    still-alive path has at position ``s``, in order of first occurrence in
    the reference enumeration order, each sorted by function name (stable).
    ``prune(s, nodes)`` keeps only the paths whose step ``s`` is ``nodes``.
    ``step_entries(s)`` is the reference's undeduplicated table (one entry
    per alive path that reaches ``s``) and ``count_step_entries(s)`` its
    length.

    This version materialises every path (reference behaviour); it is the
    executable definition that :class:`PathTracker` (lazy) must agree with,
    kept for differential tests and benchmarks only: it is exponential in the
    width of a layer (Fubini numbers for independent calls).
    """

    def __init__(self, answer_list: Sequence[Mapping[str, Any]]):
        self.names = node_names(answer_list)
        self._all = enumerate_paths(answer_list)
        self._alive = list(self._all)
        self.min_length = min_length(self._all)
        self.gold_path: Path = next(p for p in self._all if len(p) == self.min_length)

    def candidates(self, step: int) -> list[Step]:
        """Distinct node sets at position ``step`` over alive paths, each sorted by name (stable; docs/evaluation.md §3).

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

    def step_entries(self, step: int) -> Iterator[Step]:
        """The reference's per-step candidate table: one entry per alive path (docs/evaluation.md §3, docs/paths.md).

        Args:
            step: 0-based step index.

        Returns:
            A generator over the alive paths in enumeration order that have a
            step at position ``step``, yielding that step's node set sorted by
            function name (stable). NOT deduplicated: two alive paths with the
            same step ``step`` give two equal entries (fixture evidence:
            expected_results.jsonl, session wild_tool_bench_21, candidate
            over_ask, task 0, ``step_0`` lists ``candidate_0`` and
            ``candidate_1``, both getCityShow, because both paths start with
            ``[0]``). The distinct entries in first-occurrence order are
            :meth:`candidates`. Iterates over the alive paths as of the call;
            a later :meth:`prune` does not affect a running generator.

        Raises:
            ValueError: ``step`` is negative (raised by the call, not on iteration).
        """
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        alive = self._alive
        names = self.names

        def entries() -> Iterator[Step]:
            for path in alive:
                if step < len(path):
                    yield sorted(path[step], key=lambda i: names[i])

        return entries()

    def count_step_entries(self, step: int) -> int:
        """Number of entries :meth:`step_entries` yields: alive paths with more than ``step`` steps (docs/evaluation.md §3).

        Raises:
            ValueError: ``step`` is negative.
        """
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        return sum(1 for path in self._alive if step < len(path))

    def shortest_alive_length(self) -> int | None:
        """Fewest steps over the alive paths, or ``None`` when no path is alive (docs/evaluation.md §3)."""
        return min((len(path) for path in self._alive), default=None)

    def has_step_table(self, step: int) -> bool:
        """Whether the reference builds a candidate table for ``step``: ``0 <= step < n`` (docs/evaluation.md §3).

        At ``step >= n`` (n = number of nodes) there is no table at all and a
        tool-call step is the error ``current step: s, idx_list is None``; at
        a step ``< n`` that no alive path reaches the table exists but is empty.
        """
        return 0 <= step < len(self.names)

    def prune(self, step: int, nodes: Sequence[int]) -> None:
        """Keep only alive paths whose step ``step`` is the node set ``nodes`` (any order; docs/evaluation.md §3)."""
        target = sorted(nodes)
        self._alive = [p for p in self._alive if step < len(p) and sorted(p[step]) == target]
