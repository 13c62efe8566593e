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
    return _moves_from_ready(names, ready)


def _moves_from_ready(names: Sequence[str], ready: Sequence[int]) -> list[list[Step]]:
    """Rules 3-7 of SPEC 3.3 for the ready nodes ``ready`` (ascending index).

    Returns the moves in reference order; each move is a list of steps (one
    step, or a full same-name run issued one node per step).

    Note on rule order: a combo's name sequence is added to ``seen`` (rule 5)
    *before* the partial/full prefix check (rule 6), so a combo dropped by
    rule 6 still hides every later combo with the same name sequence. See
    ``tests/test_paths_lazy.py::test_seen_updated_before_prefix_check``.
    """
    full: dict[tuple[int, ...], list[int]] = {}
    partial: set[tuple[int, ...]] = set()
    run: list[int] = []
    for i in list(ready) + [-1]:
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
            if size >= 2 and partial:  # no partial combo (no same-name run): rule 6 drops nothing
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


class MaterialisedPathTracker:
    """Candidates of each step of the step loop, with pruning (SPEC 3.2, 3.3).

    One tracker per task. ``candidates(s)`` gives the distinct node sets that a
    still-alive path has at position ``s``, in order of first occurrence in
    the reference enumeration order, each sorted by function name (stable).
    ``prune(s, nodes)`` keeps only the paths whose step ``s`` is ``nodes``.

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


_Move = tuple[tuple[tuple[int, ...], ...], int]
"""One move from a state: its steps (each an ascending node tuple) and the visited mask after it."""

_MOVE_CACHE_LIMIT = 100_000
"""Most moves kept in a tracker's per-state move cache (bounds memory on wide layers)."""


class PathTracker:
    """Lazy candidates of each step of the step loop, with pruning (SPEC 3.2, 3.3).

    Same answers as :class:`MaterialisedPathTracker` (the reference), without
    ever listing the paths. The enumeration of SPEC 3.3 is a depth-first search
    over *states* (the visited node set, a bit mask; in-degrees follow from it)
    where each move is one step or a full same-name run issued one node per
    step (:func:`_moves_from_ready`). A path is a sequence of moves from the
    empty state to the full one, and position ``s`` of a path is the ``s``-th
    step issued.

    Pruning is kept as constraints ``{position: node set}``; a path is alive
    when it satisfies all of them (an ask step adds none, so the constrained
    positions need not be a prefix). Every state of a DAG can be completed, so
    a partial path is alive iff it meets the constraints up to its end and some
    completion meets the later ones; that test is memoised per
    ``(state, position)`` and reset by :meth:`prune`.

    ``min_length`` is the number of nodes on the longest dependency chain:
    every path needs at least that many steps, and issuing all ready nodes in
    one step is always a move (its name sequence is the only one of its
    length, and its prefixes are partial only inside a leading run, which it
    contains in full), which reaches it. The same bound from any state gives
    the fewest remaining steps, so ``gold_path`` is found greedily: from each
    state take the first move, in reference order, after which an optimal
    completion still fits.

    Attributes:
        names: function name of every node, in index order.
        min_length: fewest steps over all paths, before any pruning (int).
        gold_path: the first optimal path in reference order (list of steps,
            each an ascending list of node indices).

    Raises:
        KeyError, IndexError: a node lacks ``action.name`` / ``dependency_list``
            or a dependency index is out of range (validate with ``bench.schema``).
        ValueError: the dependencies contain a cycle (no path exists).
    """

    def __init__(self, answer_list: Sequence[Mapping[str, Any]]):
        self.names = node_names(answer_list)
        n = len(self.names)
        successors, in_degree = _graph(answer_list)
        self._n = n
        self._full = (1 << n) - 1
        self._pred_mask = [0] * n
        self._pred_list: list[list[int]] = [[] for _ in range(n)]
        for dep, succs in enumerate(successors):
            for succ in succs:
                self._pred_mask[succ] |= 1 << dep
                self._pred_list[succ].append(dep)
        self._topo = _topological_order(successors, in_degree)
        self._move_cache: dict[int, list[_Move]] = {}
        self._cached_moves = 0
        self._remaining_cache: dict[int, int] = {}
        self._constraints: dict[int, tuple[int, ...]] = {}
        self._last_constrained = -1
        self._dead = False
        self._alive_memo: dict[tuple[int, int], bool] = {}
        self.min_length: int = self._min_remaining(0)
        self._gold_path: Path | None = None

    @property
    def gold_path(self) -> Path:
        """The first optimal path in reference order (computed on first use, then cached)."""
        if self._gold_path is None:
            path: Path = []
            mask = 0
            while mask != self._full:
                need = self._min_remaining(mask)
                for steps, nxt in self._moves(mask):
                    if len(steps) + self._min_remaining(nxt) == need:
                        path.extend(list(step) for step in steps)
                        mask = nxt
                        break
                else:  # pragma: no cover - the all-ready move always fits
                    raise AssertionError("no optimal move from a reachable state")
            self._gold_path = path
        return self._gold_path

    def candidates(self, step: int) -> list[Step]:
        """Distinct node sets at position ``step`` over alive paths (SPEC 3.2).

        Args:
            step: 0-based step index (position in a path).

        Returns:
            The node sets in order of first occurrence in the reference
            enumeration, each as a list sorted by function name (stable, from
            ascending index). Empty when no alive path has that many steps.

        Raises:
            ValueError: ``step`` is negative.
        """
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        out: list[Step] = []
        if self._dead:
            return out
        found: set[tuple[int, ...]] = set()
        explored: set[tuple[int, int]] = set()
        names = self.names

        def walk(mask: int, pos: int) -> None:
            for steps, nxt in self._moves(mask):
                if not self._meets_constraints(steps, pos):
                    continue
                end = pos + len(steps)
                if end > step:
                    node_set = steps[step - pos]
                    if node_set not in found and self._alive(nxt, end):
                        found.add(node_set)
                        out.append(sorted(node_set, key=lambda i: names[i]))
                    continue
                state = (nxt, end)
                if state in explored:
                    continue  # same subtree already walked: no new first occurrence
                explored.add(state)
                if self._alive(nxt, end):
                    walk(nxt, end)

        walk(0, 0)
        return out

    def prune(self, step: int, nodes: Sequence[int]) -> None:
        """Keep only alive paths whose step ``step`` is the node set ``nodes`` (any order).

        A set that is no candidate at ``step`` (or a second, different set for
        the same step) leaves no path alive, as in the reference.
        """
        target = tuple(sorted(nodes))
        previous = self._constraints.get(step)
        if previous is not None and previous != target:
            self._dead = True
        self._constraints[step] = target
        self._last_constrained = max(self._last_constrained, step)
        self._alive_memo.clear()

    # -- internals -------------------------------------------------------

    def _moves(self, mask: int) -> list[_Move]:
        cached = self._move_cache.get(mask)
        if cached is not None:
            return cached
        pred_mask = self._pred_mask
        ready = [
            i for i in range(self._n) if not (mask >> i) & 1 and not (pred_mask[i] & ~mask)
        ]
        moves: list[_Move] = []
        for move in _moves_from_ready(self.names, ready):
            nxt = mask
            for step in move:
                for i in step:
                    nxt |= 1 << i
            moves.append((tuple(tuple(step) for step in move), nxt))
        if self._cached_moves + len(moves) <= _MOVE_CACHE_LIMIT:
            self._move_cache[mask] = moves
            self._cached_moves += len(moves)
        return moves

    def _meets_constraints(self, steps: tuple[tuple[int, ...], ...], pos: int) -> bool:
        constraints = self._constraints
        for offset, node_set in enumerate(steps):
            wanted = constraints.get(pos + offset)
            if wanted is not None and wanted != node_set:
                return False
        return True

    def _alive(self, mask: int, pos: int) -> bool:
        """Whether some completion from state ``mask`` at position ``pos`` meets every later constraint."""
        if self._dead:
            return False
        if pos > self._last_constrained:
            return True  # every state of a DAG can be completed
        if mask == self._full:
            return False  # the path ends before a constrained position
        key = (mask, pos)
        memo = self._alive_memo.get(key)
        if memo is not None:
            return memo
        result = any(
            self._meets_constraints(steps, pos) and self._alive(nxt, pos + len(steps))
            for steps, nxt in self._moves(mask)
        )
        self._alive_memo[key] = result
        return result

    def _min_remaining(self, mask: int) -> int:
        """Fewest steps from state ``mask`` to the end: nodes on the longest unvisited chain."""
        cached = self._remaining_cache.get(mask)
        if cached is not None:
            return cached
        depth = [0] * self._n
        longest = 0
        for i in self._topo:
            if (mask >> i) & 1:
                continue
            d = 1 + max((depth[p] for p in self._pred_list[i] if not (mask >> p) & 1), default=0)
            depth[i] = d
            longest = max(longest, d)
        self._remaining_cache[mask] = longest
        return longest


def _topological_order(successors: Sequence[Sequence[int]], in_degree: Sequence[int]) -> list[int]:
    """Kahn order of the gold DAG; ValueError naming the nodes left on a cycle."""
    remaining = list(in_degree)
    order = [i for i, d in enumerate(remaining) if d == 0]
    for i in order:  # grows while iterating
        for succ in successors[i]:
            remaining[succ] -= 1
            if remaining[succ] == 0:
                order.append(succ)
    if len(order) != len(remaining):
        stuck = sorted(set(range(len(remaining))) - set(order))
        raise ValueError(f"gold dependency_list has a cycle through nodes {stuck}: no path exists")
    return order
