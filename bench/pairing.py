"""Fixed mode: pair each predicted call with a gold call by an optimal assignment (docs/fixed-mode.md §6).

Reference scoring pairs same-name calls after sorting both sides by raw text
(quirk 13). Fixed mode pairs them so that the step has the fewest argument
errors and, among such pairings, the highest total similarity. The same
assignment decides, during a fixed-mode run, which gold node a same-name call
stands for (docs/fixed-mode.md §5) and therefore which observation its tool
message carries (docs/fixed-mode.md §2).

Pure functions over plain data: no LangGraph, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import permutations
from typing import Any

Call = tuple[str, Any]
"""``(function name, arguments)``; arguments as JSON text or already decoded."""

Check = Callable[[str, Any, Any], str]
"""``check(name, predicted_arguments, gold_arguments) -> "correct" | message`` (docs/arguments.md)."""

BRUTE_FORCE_LIMIT = 5040
"""Most candidate assignments of one name group tried one by one (7!); larger groups use the Hungarian method."""

_CORRECT = "correct"


@dataclass(frozen=True)
class Pairing:
    """An assignment of predicted calls to gold calls (docs/fixed-mode.md §6).

    Attributes:
        gold_index: for the ``j``-th predicted call, the index of its gold call
            (distinct indices; gold calls left over stay unpaired).
        results: the argument check of the ``j``-th predicted call against its gold call.
        errors: how many of ``results`` are not ``"correct"``.
        similarity: sum of :func:`argument_similarity` over the pairs.
    """

    gold_index: list[int]
    results: list[str]
    errors: int
    similarity: float


def canonical_arguments(arguments: Any) -> str:
    """Arguments as canonical JSON text (keys sorted, no spaces, non-ASCII raw); text that is not JSON as it is (docs/fixed-mode.md §6)."""
    if isinstance(arguments, (bytes, bytearray)):
        arguments = arguments.decode("utf-8", errors="replace")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(arguments)


def argument_similarity(predicted: Any, gold: Any) -> float:
    """``difflib`` ratio (0-1) of the canonical texts of two arguments values (docs/fixed-mode.md §6).

    Key order, spacing and escaping do not matter, since both sides are canonicalised first.
    """
    a, b = canonical_arguments(predicted), canonical_arguments(gold)
    return 1.0 if a == b else SequenceMatcher(None, a, b).ratio()


def pair_calls(predicted: Sequence[Call], gold: Sequence[Call], check: Check) -> Pairing | None:
    """Pair every predicted call with a gold call of the same name, optimally (docs/fixed-mode.md §6).

    Args:
        predicted: the model's calls, in the model's order.
        gold: the gold calls to choose from (as many as ``predicted`` when
            scoring a step, possibly more when a run matches a step against
            the ready nodes of a gold DAG).
        check: the argument check of one pair.

    Returns:
        The :class:`Pairing` with the fewest argument errors and, among those,
        the highest total similarity; ties go to the assignment that is first
        in lexicographic order of gold indices (so a prediction already in gold
        order keeps that order). ``None`` when some name has more predicted
        calls than gold calls. Calls of different names are never paired.

    Raises:
        Whatever ``check`` raises.
    """
    by_name: dict[str, list[int]] = {}
    for index, (name, _) in enumerate(gold):
        by_name.setdefault(name, []).append(index)
    groups: dict[str, list[int]] = {}
    for index, (name, _) in enumerate(predicted):
        groups.setdefault(name, []).append(index)
    if any(len(calls) > len(by_name.get(name, [])) for name, calls in groups.items()):
        return None

    gold_index = [0] * len(predicted)
    results = [""] * len(predicted)
    errors, similarity = 0, 0.0
    for name, calls in groups.items():
        options = by_name[name]
        table = [
            [
                (check(name, predicted[p][1], gold[g][1]), argument_similarity(predicted[p][1], gold[g][1]))
                for g in options
            ]
            for p in calls
        ]
        chosen = _best_assignment(table)
        for row, column in enumerate(chosen):
            result, score = table[row][column]
            gold_index[calls[row]] = options[column]
            results[calls[row]] = result
            errors += result != _CORRECT
            similarity += score
    return Pairing(gold_index, results, errors, similarity)


def _cost(cell: tuple[str, float]) -> tuple[int, float]:
    return int(cell[0] != _CORRECT), -round(cell[1], 9)


def _best_assignment(table: list[list[tuple[str, float]]]) -> list[int]:
    """Column of each row minimising (errors, -similarity), lexicographically first among ties."""
    rows, columns = len(table), len(table[0]) if table else 0
    count = 1
    for k in range(rows):
        count *= columns - k
    if count <= BRUTE_FORCE_LIMIT:
        best: tuple[int, float] | None = None
        chosen: tuple[int, ...] = ()
        for candidate in permutations(range(columns), rows):
            errors, similarity = 0, 0.0
            for row, column in enumerate(candidate):
                e, s = _cost(table[row][column])
                errors += e
                similarity += s
            key = (errors, round(similarity, 9))
            if best is None or key < best:
                best, chosen = key, candidate
        return list(chosen)
    weight = rows + 1  # one error outweighs any similarity difference (each similarity is at most 1)
    costs = [[e * weight + s for e, s in (_cost(cell) for cell in line)] for line in table]
    return _hungarian(costs)


def _hungarian(costs: list[list[float]]) -> list[int]:
    """Minimum-cost assignment of every row to a distinct column (rows <= columns), O(rows^2 * columns)."""
    n, m = len(costs), len(costs[0])
    inf = float("inf")
    u, v = [0.0] * (n + 1), [0.0] * (m + 1)
    p, way = [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], inf, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = costs[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    column = [0] * n
    for j in range(1, m + 1):
        if p[j]:
            column[p[j] - 1] = j - 1
    return column
