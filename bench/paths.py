"""Gold-DAG path enumeration and the per-step candidate tracker (docs/paths.md, docs/evaluation.md §3).

A *node* is one entry of a task's gold answer list. A *step* is a list of node
indices issued together in one assistant message; a *path* is a list of steps
that covers every node exactly once.

This module is pure: it imports nothing from LangGraph and does no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any

Step = list[int]
Path = list[Step]


def node_names(answer_list: Sequence[Mapping[str, Any]]) -> list[str]:
    """Function name of every node, in index order (docs/terms.md).

    Args:
        answer_list: gold nodes, each ``{"action": {"name", ...}, "dependency_list", ...}``.

    Returns:
        ``[name_0, ..., name_{n-1}]``.
    """
    return [node["action"]["name"] for node in answer_list]


def _same_name_runs(
    names: Sequence[str], ready: Sequence[int]
) -> tuple[dict[tuple[int, ...], list[int]], set[tuple[int, ...]], dict[int, list[int]]]:
    """The same-name runs among the ready nodes (rules 3-4 of docs/paths.md), as the prefix rule needs them.

    A run is a maximal stretch of two or more consecutive ready nodes (ascending
    index) with one name.

    Returns:
        ``(full, partial, first_of_full)``: ``full`` maps each run (a tuple of node
        indices) to itself as a list; ``partial`` holds every proper sub-combination
        of a run; ``first_of_full`` maps a run's first node to the whole run.
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
    return full, partial, first_of_full


def _moves_from_ready(names: Sequence[str], ready: Sequence[int]) -> list[list[Step]]:
    """Rules 3-7 of docs/paths.md for the ready nodes ``ready`` (ascending index).

    Returns the moves in reference order; each move is a list of steps (one
    step, or a full same-name run issued one node per step).

    Note on rule order: a combo's name sequence is added to ``seen`` (rule 5)
    *before* the partial/full prefix check (rule 6), so a combo dropped by
    rule 6 still hides every later combo with the same name sequence. See
    ``tests/unit/bench/test_paths_lazy.py::test_seen_updated_before_prefix_check``.
    """
    full, partial, first_of_full = _same_name_runs(names, ready)

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


_Move = tuple[tuple[tuple[int, ...], ...], int]
"""One move from a state: its steps (each an ascending node tuple) and the visited mask after it."""

_MOVE_CACHE_LIMIT = 100_000
"""Most moves kept in a gold DAG's per-state move cache (bounds memory on wide layers)."""

_SHAPE_CACHE_SIZE = 32
"""Distinct gold DAGs whose prune-independent caches are kept (least recently used dropped first)."""


class _DagShape:
    """What a :class:`PathTracker` knows about a gold DAG before any pruning, shared by every tracker of
    the same DAG (same names, same dependency lists): the dependency bit masks, and the caches of moves
    per state, fewest remaining steps per state, unconstrained completion counts and the gold path.

    The evaluation loop builds a fresh tracker at every step (its state carries only the prunes) and
    one per earlier task for the gold history of every request; sharing these caches makes that cheap.
    Every cached value is a pure function of the DAG, so sharing cannot change an answer.
    """

    def __init__(self, names: tuple[str, ...], dependencies: tuple[tuple[int, ...], ...]):
        n = len(names)
        successors: list[list[int]] = [[] for _ in range(n)]
        in_degree = [0] * n
        for index, deps in enumerate(dependencies):
            for dep in deps:
                successors[dep].append(index)
                in_degree[index] += 1
        self.names = names
        self.n = n
        self.full = (1 << n) - 1
        self.pred_mask = [0] * n
        self.pred_list: list[list[int]] = [[] for _ in range(n)]
        for dep, succs in enumerate(successors):
            for succ in succs:
                self.pred_mask[succ] |= 1 << dep
                self.pred_list[succ].append(dep)
        self.topo = _topological_order(successors, in_degree)
        self.move_cache: dict[int, list[_Move]] = {}
        self.cached_moves = 0
        self.remaining_cache: dict[int, int] = {}
        self.at_least_memo: dict[tuple[int, int], int] = {}
        self.distinct_ready_cache: dict[int, int | None] = {}
        self.pipe_free = all("|" not in name for name in names)
        self.gold_path: tuple[tuple[int, ...], ...] | None = None


@functools.lru_cache(maxsize=_SHAPE_CACHE_SIZE)
def _shape_for(names: tuple[str, ...], dependencies: tuple[tuple[int, ...], ...]) -> _DagShape:
    return _DagShape(names, dependencies)


def dag_of(answer_list: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    """``(names, dependency lists)`` of a gold answer list, the key both path trackers cache a DAG's facts by
    (docs/paths.md §1; docs/fixed-mode.md §3).

    Raises:
        KeyError: a node lacks ``action.name`` or ``dependency_list``.
        IndexError: a dependency index is out of range (a negative one would wrap around in the bit masks).
    """
    names = tuple(node_names(answer_list))
    dependencies = tuple(tuple(node["dependency_list"]) for node in answer_list)
    n = len(names)
    for deps in dependencies:
        for dep in deps:
            if not 0 <= dep < n:  # a negative index would silently wrap around in the bit masks
                raise IndexError(f"dependency index {dep} out of range for {n} nodes")
    return names, dependencies


def _shape_of(answer_list: Sequence[Mapping[str, Any]]) -> _DagShape:
    """The shared :class:`_DagShape` of ``answer_list`` (KeyError / IndexError / ValueError as :class:`PathTracker`)."""
    return _shape_for(*dag_of(answer_list))


class PathTracker:
    """Lazy candidates of each step of the step loop, with pruning (docs/evaluation.md §3, docs/paths.md).

    Same answers as :class:`MaterialisedPathTracker` (the reference), without
    ever listing the paths. The enumeration of docs/paths.md is a depth-first search
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

    The reference's per-step table is not deduplicated (one entry per alive
    path, :meth:`step_entries`); its length is counted by a DP over
    ``(state, position)`` (:meth:`count_step_entries`), whose values also
    steer the lazy walk of :meth:`step_entries` away from dead subtrees.

    ``min_length`` is the number of nodes on the longest dependency chain:
    every path needs at least that many steps, and issuing all ready nodes in
    one step is always a move (its name sequence is the only one of its
    length, and its prefixes are partial only inside a leading run, which it
    contains in full), which reaches it. The same bound from any state gives
    the fewest remaining steps, so ``gold_path`` is found greedily: from each
    state take the first move, in reference order, after which an optimal
    completion still fits.

    Everything that does not depend on the prunes (moves per state, fewest
    remaining steps, unconstrained path counts, the gold path) is cached on a
    :class:`_DagShape` shared by all trackers of the same gold DAG (a small
    LRU keyed by names and dependency lists), so building a fresh tracker per
    step, as the evaluation loop does, costs only the prunes.
    :meth:`shortest_alive_length` answers "is some alive path shorter than
    step s" without counting paths.

    Attributes:
        names: function name of every node, in index order.
        min_length: fewest steps over all paths, before any pruning (int).
        gold_path: the first optimal path in reference order (list of steps,
            each an ascending list of node indices).

    Raises:
        KeyError, IndexError: a node lacks ``action.name`` / ``dependency_list``
            or a dependency index is out of range (validate with ``wildtoolbench.bench.schema``).
        ValueError: the dependencies contain a cycle (no path exists).
    """

    def __init__(self, answer_list: Sequence[Mapping[str, Any]]):
        shape = _shape_of(answer_list)
        self._shape = shape
        self.names = list(shape.names)
        self._n = shape.n
        self._full = shape.full
        self._pred_mask = shape.pred_mask
        self._pred_list = shape.pred_list
        self._topo = shape.topo
        # prune-independent caches live on the shared shape (one per distinct gold DAG, see _shape_of)
        self._move_cache = shape.move_cache
        self._remaining_cache = shape.remaining_cache
        self._at_least_memo = shape.at_least_memo  # (mask, r) -> count; never reset
        self._distinct_ready_cache = shape.distinct_ready_cache
        self._pipe_free = shape.pipe_free
        self._constraints: dict[int, tuple[int, ...]] = {}
        self._last_constrained = -1
        self._dead = False
        self._alive_memo: dict[tuple[int, int], bool] = {}
        self._version = 0  # bumped by prune; a running step_entries generator checks it
        self._count_memo: dict[tuple[int, int, int], int] = {}  # (mask, pos, step) -> count; reset by prune
        self._shortest_memo: dict[tuple[int, int], int | None] = {}  # (mask, pos) -> steps; reset by prune
        self.min_length: int = self._min_remaining(0)

    @property
    def gold_path(self) -> Path:
        """The first optimal path in reference order (docs/evaluation.md §2, docs/paths.md); computed once per gold DAG, a fresh copy per access."""
        shape = self._shape
        if shape.gold_path is None:
            path: list[tuple[int, ...]] = []
            mask = 0
            while mask != self._full:
                need = self._min_remaining(mask)
                for steps, nxt in self._moves(mask):
                    if len(steps) + self._min_remaining(nxt) == need:
                        path.extend(steps)
                        mask = nxt
                        break
                else:  # pragma: no cover - the all-ready move always fits
                    raise AssertionError("no optimal move from a reachable state")
            shape.gold_path = tuple(path)
        return [list(step) for step in shape.gold_path]

    def candidates(self, step: int) -> list[Step]:
        """Distinct node sets at position ``step`` over alive paths (docs/evaluation.md §3).

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

    def step_entries(self, step: int) -> Iterator[Step]:
        """The reference's per-step candidate table, lazily: one entry per alive path (docs/evaluation.md §3, docs/paths.md).

        The published evaluation does not deduplicate the candidates of a
        step: its table holds, for every still-alive path that has a step at
        position ``step``, that step's node set, in path (enumeration) order.
        Matching takes the first entry that matches, so it only needs the
        distinct :meth:`candidates` (same first-occurrence order); but an
        error step's record lists every entry as
        ``candidate_<i>_answer_function_list``, duplicates included (fixture
        evidence: expected_results.jsonl, session wild_tool_bench_21,
        candidate over_ask, task 0, ``step_0`` has ``candidate_0`` and
        ``candidate_1``, both getCityShow: the gold DAG getCityShow -> two
        getShowDetail -> prepare_to_answer has two paths, both starting
        ``[0]``).

        No path list is built: a depth-first walk over (state, position) in
        reference move order descends only into states that have an alive
        completion reaching ``step`` (counted by :meth:`count_step_entries`'s
        DP), and a move that covers position ``step`` yields its node set
        once per alive completion after it (those paths are consecutive in
        enumeration order and share that step). Work is proportional to the
        entries produced times the path length.

        Args:
            step: 0-based step index.

        Returns:
            A generator of node lists, each sorted by function name (stable,
            from ascending index); a fresh list per entry. Empty when no alive
            path has that many steps (see :meth:`has_step_table` for the
            ``step >= n`` case, which the reference treats as an error).

        Raises:
            ValueError: ``step`` is negative (raised by the call itself).
            RuntimeError: on iteration, if :meth:`prune` was called after the
                generator was created (the alive set changed under it).
        """
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        version = self._version
        names = self.names

        def walk(mask: int, pos: int) -> Iterator[Step]:
            for steps, nxt in self._moves(mask):
                if version != self._version:
                    raise RuntimeError("PathTracker was pruned while step_entries was being iterated")
                if not self._meets_constraints(steps, pos):
                    continue
                end = pos + len(steps)
                count = self._count(nxt, end, step)
                if not count:
                    continue
                if end > step:
                    ordered = sorted(steps[step - pos], key=lambda i: names[i])
                    for _ in range(count):
                        yield list(ordered)
                        if version != self._version:
                            raise RuntimeError("PathTracker was pruned while step_entries was being iterated")
                else:
                    yield from walk(nxt, end)

        return walk(0, 0)

    def count_step_entries(self, step: int) -> int:
        """Number of entries :meth:`step_entries` yields, without enumerating them (docs/evaluation.md §3, docs/paths.md).

        It is the number of alive paths (those meeting every prune
        constraint) with more than ``step`` steps. Computed by a DP over
        (state, position): from a state at a position, sum over the moves
        that meet the constraints; once past the last constrained position
        only the remaining length matters, counted by a prune-independent DP
        over (state, steps still needed). Python int, exact however large
        (for n independent calls with distinct names every ordered set
        partition of the calls is a path, so ``count_step_entries(0)`` is
        the Fubini number a(n); a(12) = 28091567595).

        Args:
            step: 0-based step index.

        Returns:
            The count (int >= 0); 0 when no alive path reaches ``step``.

        Raises:
            ValueError: ``step`` is negative.
        """
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        return self._count(0, 0, step)

    def shortest_alive_length(self) -> int | None:
        """Fewest steps over the alive paths (those meeting every prune), or ``None`` when none is alive.

        ``shortest_alive_length() <= s`` exactly when ``count_step_entries(0) !=
        count_step_entries(s)`` (some alive path has no step ``s``), but it is
        found by a min-DP over (state, position) instead of counting paths, so
        it stays cheap on wide layers (docs/evaluation.md §3: pruning at step ``s`` while
        such a path is alive is where the reference crashes).
        """
        return self._shortest(0, 0)

    def has_step_table(self, step: int) -> bool:
        """Whether the reference builds a candidate table for ``step``: ``0 <= step < n`` (docs/evaluation.md §3).

        The reference builds its per-step tables only for step indices
        ``0..n-1`` (n = number of nodes). At ``step >= n`` there is no table
        and a tool-call step is the error ``current step: s, idx_list is
        None``; at a step ``< n`` that no alive path reaches, the table exists
        and is empty (so such a step is the ``action name not in
        candidate_answer_function_list`` error).
        """
        return 0 <= step < self._n

    def prune(self, step: int, nodes: Sequence[int]) -> None:
        """Keep only alive paths whose step ``step`` is the node set ``nodes`` (any order; docs/evaluation.md §3).

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
        self._count_memo.clear()
        self._shortest_memo.clear()
        self._version += 1

    # -- internals -------------------------------------------------------

    def _moves(self, mask: int) -> list[_Move]:
        cached = self._move_cache.get(mask)
        if cached is not None:
            return cached
        pred_mask = self._pred_mask
        ready = [i for i in range(self._n) if not (mask >> i) & 1 and not (pred_mask[i] & ~mask)]
        moves: list[_Move] = []
        for move in _moves_from_ready(self.names, ready):
            nxt = mask
            for step in move:
                for i in step:
                    nxt |= 1 << i
            moves.append((tuple(tuple(step) for step in move), nxt))
        shape = self._shape
        if shape.cached_moves + len(moves) <= _MOVE_CACHE_LIMIT:
            self._move_cache[mask] = moves
            shape.cached_moves += len(moves)
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

    def _shortest(self, mask: int, pos: int) -> int | None:
        """Length of the shortest alive completion from state ``mask`` at position ``pos`` (None: no alive one)."""
        if self._dead:
            return None
        if pos > self._last_constrained:
            return pos + self._min_remaining(mask)
        if mask == self._full:
            return None  # the path ends before a constrained position
        key = (mask, pos)
        memo = self._shortest_memo
        if key in memo:
            return memo[key]
        best: int | None = None
        for steps, nxt in self._moves(mask):
            if self._meets_constraints(steps, pos):
                length = self._shortest(nxt, pos + len(steps))
                if length is not None and (best is None or length < best):
                    best = length
        memo[key] = best
        return best

    def _distinct_ready(self, mask: int) -> int | None:
        """Ready-node bit mask of state ``mask`` when every subset of it is a move, else None.

        That holds when the ready nodes have pairwise distinct names none of
        which contains ``|``: then there is no same-name run (rule 6 drops
        nothing, no run move) and different combos have different joined
        name sequences (rule 5 drops nothing), so the moves are exactly the
        non-empty subsets, each one step. Lets the counting DPs walk
        sub-masks instead of building the move list.
        """
        cached = self._distinct_ready_cache.get(mask, -1)
        if cached != -1:
            return cached
        result: int | None = None
        if self._pipe_free:
            pred_mask = self._pred_mask
            ready = [i for i in range(self._n) if not (mask >> i) & 1 and not (pred_mask[i] & ~mask)]
            if len({self.names[i] for i in ready}) == len(ready):
                result = sum(1 << i for i in ready)
        self._distinct_ready_cache[mask] = result
        return result

    def _count(self, mask: int, pos: int, step: int) -> int:
        """Alive completions from state ``mask`` at position ``pos`` that have a step at ``step``.

        Alive: every constraint at a position ``>= pos`` is met (constraints
        before ``pos`` are the caller's business).
        """
        if self._dead:
            return 0
        if pos > self._last_constrained:
            return self._count_at_least(mask, step - pos + 1)
        if mask == self._full:
            return 0  # the path ends before a constrained position
        if pos > step:
            step = pos - 1  # the length condition already holds: share the memo entry
        key = (mask, pos, step)
        memo = self._count_memo.get(key)
        if memo is not None:
            return memo
        total = 0
        ready = self._distinct_ready(mask)
        if ready is not None:
            wanted = self._constraints.get(pos)
            if wanted is not None:
                # the one matching move, if the wanted set is a non-empty subset of the ready nodes
                if wanted and len(set(wanted)) == len(wanted) and all(0 <= i < self._n for i in wanted):
                    bits = sum(1 << i for i in wanted)
                    if bits & ready == bits:
                        total = self._count(mask | bits, pos + 1, step)
            else:
                sub = ready
                while sub:
                    total += self._count(mask | sub, pos + 1, step)
                    sub = (sub - 1) & ready
        else:
            for steps, nxt in self._moves(mask):
                if self._meets_constraints(steps, pos):
                    total += self._count(nxt, pos + len(steps), step)
        self._count_memo[key] = total
        return total

    def _count_at_least(self, mask: int, need: int) -> int:
        """Completions from state ``mask`` (no constraints) with at least ``need`` steps."""
        if need < 0:
            need = 0
        if mask == self._full:
            return 1 if need == 0 else 0
        key = (mask, need)
        memo = self._at_least_memo
        cached = memo.get(key)
        if cached is not None:
            return cached
        total = 0
        ready = self._distinct_ready(mask)
        if ready is not None:
            rest = need - 1 if need > 0 else 0
            sub = ready
            while sub:
                nxt = mask | sub
                value = memo.get((nxt, rest))
                total += value if value is not None else self._count_at_least(nxt, rest)
                sub = (sub - 1) & ready
        else:
            for steps, nxt in self._moves(mask):
                total += self._count_at_least(nxt, need - len(steps))
        memo[key] = total
        return total

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
