"""Fixed mode: the valid steps through a gold DAG, as a state machine (docs/fixed-mode.md §3-§5).

Reference mode follows the published path enumeration (docs/paths.md), with
its name-based de-duplication, its all-or-one-by-one same-name runs and its
steps that mix a question with a call. Fixed mode replaces it with plain
rules on the set of nodes already issued (the *state*):

- a **call step** is any non-empty set of ready real-tool nodes (ready: every
  dependency issued), whatever their names;
- a **question step** is exactly one ready ``ask_user_for_required_parameters`` node;
- the **answer step** is one ready ``prepare_to_answer`` node, once every other
  node that does not depend on an answer node has been issued; it ends the task.

Every step of a fixed-mode run is matched and consumes its nodes (a question
too), so the alive paths always share the steps taken so far and the state
is all a tracker needs. ``min_length`` is the fewest steps from the empty state
to the end over these (always matchable) steps; the gold path is the first
optimal one (the reference gold path when it follows the rules above).

Pure module: no LangGraph, no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any

from wildtoolbench.bench.paths import Path, PathTracker, Step, dag_of
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER

_UNREACHABLE = 1 << 30


class _FixedShape:
    """Prune-independent facts about one gold DAG in fixed mode, shared by its trackers (cached per DAG)."""

    def __init__(self, names: tuple[str, ...], dependencies: tuple[tuple[int, ...], ...]):
        n = len(names)
        self.names = names
        self.n = n
        self.full = (1 << n) - 1
        self.pred_mask = [0] * n
        for index, deps in enumerate(dependencies):
            for dep in deps:
                self.pred_mask[index] |= 1 << dep
        self.asks = [i for i, name in enumerate(names) if name == ASK_USER]
        self.answers = [i for i, name in enumerate(names) if name == PREPARE_TO_ANSWER]
        self.calls_mask = sum(1 << i for i, name in enumerate(names) if name not in (ASK_USER, PREPARE_TO_ANSWER))
        answers_mask = sum(1 << i for i in self.answers)
        # nodes reachable from an answer node: they can never be issued before the task ends
        descendants = answers_mask
        changed = True
        while changed:
            changed = False
            for i in range(n):
                if not (descendants >> i) & 1 and self.pred_mask[i] & descendants:
                    descendants |= 1 << i
                    changed = True
        self.must_precede_answer = self.full & ~descendants
        self.remaining: dict[int, int] = {}
        self.gold_path: tuple[tuple[int, ...], ...] | None = None
        self.acyclic = False

    def ready(self, mask: int) -> int:
        bits = 0
        for i in range(self.n):
            if not (mask >> i) & 1 and not (self.pred_mask[i] & ~mask):
                bits |= 1 << i
        return bits

    def answer_allowed(self, mask: int, node: int) -> bool:
        return (self.ready(mask) >> node) & 1 == 1 and self.must_precede_answer & ~mask == 0

    def canonical_moves(self, mask: int) -> list[tuple[int, bool]]:
        """``(nodes bit mask, ends the task)`` of the moves an optimal path needs: all ready calls at once,
        one ready question, or an allowed answer (issuing fewer ready calls never shortens a path)."""
        ready = self.ready(mask)
        moves: list[tuple[int, bool]] = []
        calls = ready & self.calls_mask
        if calls:
            moves.append((calls, False))
        moves.extend((1 << a, False) for a in self.asks if (ready >> a) & 1)
        moves.extend((1 << p, True) for p in self.answers if self.answer_allowed(mask, p))
        return moves

    def fewest_steps(self, mask: int) -> int:
        """Fewest steps from state ``mask`` to the end of the task (``_UNREACHABLE`` when it cannot end)."""
        cached = self.remaining.get(mask)
        if cached is not None:
            return cached
        if not self.answers and mask == self.full:
            return 0
        best = _UNREACHABLE
        for bits, ends in self.canonical_moves(mask):
            best = min(best, 1 if ends else 1 + self.fewest_steps(mask | bits))
        self.remaining[mask] = best
        return best

    def follows_rules(self, path: Sequence[Sequence[int]]) -> bool:
        """Whether ``path`` is a valid fixed-mode path that ends the task at its last step."""
        mask = 0
        for position, step in enumerate(path):
            if not step:
                return False
            ready = self.ready(mask)
            bits = 0
            for i in step:
                bits |= 1 << i
            if bits & ~ready:
                return False
            last = position == len(path) - 1
            pseudo = [i for i in step if not (self.calls_mask >> i) & 1]
            if pseudo:
                if len(step) != 1:
                    return False
                if self.names[step[0]] == PREPARE_TO_ANSWER:
                    return last and self.answer_allowed(mask, step[0])
            mask |= bits
        return not self.answers and mask == self.full


@functools.lru_cache(maxsize=32)
def _fixed_shape(names: tuple[str, ...], dependencies: tuple[tuple[int, ...], ...]) -> _FixedShape:
    return _FixedShape(names, dependencies)


class FixedPathTracker:
    """The state of one task in a fixed-mode run: which nodes are issued, what may come next (docs/fixed-mode.md §3-§5).

    Built like :class:`wildtoolbench.bench.paths.PathTracker` and used the same way by the
    step loop (``tracker_after`` replays the prunes of the task so far); every
    matched step, a question included, is applied with :meth:`prune`.

    Attributes:
        names: function name of every node, in index order.
        min_length: fewest steps of any valid fixed-mode path (the task's
            optimal length); questions and the answer count as steps.
        gold_path: the first optimal path (list of steps, each an ascending
            list of node indices): the reference gold path when it is a valid
            fixed-mode path, otherwise the path that takes, at each state, the
            first optimal move among "all ready calls", "one question"
            (ascending node index) and "the answer".

    Raises:
        KeyError, IndexError: a node lacks ``action.name`` / ``dependency_list``
            or a dependency index is out of range.
        ValueError: the dependencies contain a cycle.
    """

    def __init__(self, answer_list: Sequence[Mapping[str, Any]]):
        names, dependencies = dag_of(answer_list)
        self._shape = _fixed_shape(names, dependencies)
        self._answer_list = answer_list
        self.names = list(names)
        self.issued = 0
        """Bit mask of the nodes issued so far."""
        self.ended = False
        """Whether an answer step has been applied."""
        if not self._shape.acyclic:
            PathTracker(answer_list)  # raises ValueError on a cycle, as in reference mode
            self._shape.acyclic = True
        self.min_length = self._shape.fewest_steps(0)
        if self.min_length >= _UNREACHABLE:  # no answer node can ever be given: count the steps to issue everything
            self.min_length = len(self.gold_path)

    @property
    def gold_path(self) -> Path:
        """The first optimal fixed-mode path (see the class doc; docs/fixed-mode.md §4); computed once per gold DAG, a fresh copy per access."""
        shape = self._shape
        if shape.gold_path is None:
            reference = PathTracker(self._answer_list).gold_path
            if shape.follows_rules(reference):
                shape.gold_path = tuple(tuple(step) for step in reference)
            else:
                shape.gold_path = tuple(_greedy_gold_path(shape))
        return [list(step) for step in shape.gold_path]

    def ready(self) -> list[int]:
        """Nodes not yet issued whose dependencies are all issued, ascending (docs/fixed-mode.md §4)."""
        ready = self._shape.ready(self.issued)
        return [i for i in range(self._shape.n) if (ready >> i) & 1]

    def ready_calls(self) -> list[int]:
        """Ready real-tool nodes, ascending: any non-empty subset of them is a call step (docs/fixed-mode.md §5)."""
        return [] if self.ended else [i for i in self.ready() if (self._shape.calls_mask >> i) & 1]

    def ready_asks(self) -> list[int]:
        """Ready ``ask_user_for_required_parameters`` nodes, ascending: each one alone is a question step (docs/fixed-mode.md §3)."""
        return [] if self.ended else [i for i in self.ready() if self.names[i] == ASK_USER]

    def allowed_answers(self) -> list[int]:
        """``prepare_to_answer`` nodes that may be given now: ready, and every node that must come first issued (docs/fixed-mode.md §3)."""
        if self.ended:
            return []
        return [p for p in self._shape.answers if self._shape.answer_allowed(self.issued, p)]

    def candidates(self, step: int | None = None) -> Iterator[Step]:
        """Every valid next step, for an error step's record (docs/fixed-mode.md §3-§5).

        Args:
            step: the step index (accepted for symmetry with :class:`wildtoolbench.bench.paths.PathTracker`;
                the state alone decides).

        Returns:
            A generator: each question node alone, then each allowed answer node
            alone, then every non-empty set of ready call nodes in
            ``itertools.combinations`` order (by size, then by index), each sorted
            by function name (stable). There are ``2**k - 1`` call sets for
            ``k`` ready calls: take a prefix (``itertools.islice``).
        """
        names = self.names
        for node in self.ready_asks():
            yield [node]
        for node in self.allowed_answers():
            yield [node]
        calls = self.ready_calls()
        for size in range(1, len(calls) + 1):
            for combo in combinations(calls, size):
                yield sorted(combo, key=lambda i: names[i])

    def count_candidates(self) -> int:
        """How many entries :meth:`candidates` yields (docs/fixed-mode.md §4)."""
        return len(self.ready_asks()) + len(self.allowed_answers()) + (1 << len(self.ready_calls())) - 1

    def prune(self, step: int, nodes: Sequence[int]) -> None:
        """Apply a matched step: issue ``nodes`` (an answer node ends the task; docs/fixed-mode.md §3).

        ``step`` is accepted for symmetry with :class:`wildtoolbench.bench.paths.PathTracker`.

        Raises:
            ValueError: ``nodes`` is not a valid step from the current state.
        """
        bits = 0
        for i in nodes:
            bits |= 1 << i
        valid = (
            bool(nodes)
            and not self.ended
            and (
                (bits & ~self._shape.calls_mask == 0 and bits & ~self._shape.ready(self.issued) == 0)
                or (len(nodes) == 1 and nodes[0] in self.ready_asks())
                or (len(nodes) == 1 and nodes[0] in self.allowed_answers())
            )
        )
        if not valid:
            raise ValueError(
                f"step {step}: {list(nodes)} is not a valid fixed-mode step from the issued nodes {self._issued_list()}"
            )
        self.issued |= bits
        if len(nodes) == 1 and self.names[nodes[0]] == PREPARE_TO_ANSWER:
            self.ended = True

    def _issued_list(self) -> list[int]:
        return [i for i in range(self._shape.n) if (self.issued >> i) & 1]


def _greedy_gold_path(shape: _FixedShape) -> list[tuple[int, ...]]:
    """The first optimal path over the canonical moves (all ready calls, one question, the answer)."""
    path: list[tuple[int, ...]] = []
    mask = 0
    need = shape.fewest_steps(0)
    if need >= _UNREACHABLE:  # the task cannot end with an answer: issue calls, then questions, as they come
        while mask != shape.full:
            ready = shape.ready(mask)
            bits = ready & shape.calls_mask or next(1 << i for i in range(shape.n) if (ready >> i) & 1)
            path.append(tuple(i for i in range(shape.n) if (bits >> i) & 1))
            mask |= bits
        return path
    while True:
        for bits, ends in shape.canonical_moves(mask):
            rest = 0 if ends else shape.fewest_steps(mask | bits)
            if 1 + rest == need:
                path.append(tuple(i for i in range(shape.n) if (bits >> i) & 1))
                mask |= bits
                need -= 1
                break
        else:  # pragma: no cover - fewest_steps guarantees an optimal move
            raise AssertionError("no optimal fixed-mode move from a reachable state")
        if ends or (not shape.answers and mask == shape.full):
            return path


def tracker_for(answer_list: Sequence[Mapping[str, Any]], scoring: ScoringStrategy | str | None = None) -> Any:
    """A fresh path tracker of ``answer_list`` for a scoring strategy (or its name; default reference):
    :class:`~wildtoolbench.bench.paths.PathTracker`, or with the inference fixes (fixed, semantic)
    :class:`FixedPathTracker` (docs/fixed-mode.md §3).

    Raises:
        KeyError, IndexError, ValueError: as the tracker's constructor (a malformed or cyclic gold DAG).
    """
    if scoring_strategy(scoring).inference_fixes:
        return FixedPathTracker(answer_list)
    return PathTracker(answer_list)
