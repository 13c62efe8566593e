"""The lazy PathTracker against the materialised reference (SPEC 3.2, 3.3).

The materialised tracker lists every path of ``enumerate_paths`` (which
matches all rows of paths.jsonl, see test_paths_reference.py); the lazy one
must give the same ``min_length``, ``gold_path`` and, after any sequence of
prunes and non-pruning (ask) steps, the same candidates in the same order.
"""

from __future__ import annotations

import json
import random
from itertools import combinations
from typing import Any

import pytest

from bench.bench_paths import oracle_walk, parallel_task
from bench.paths import (
    ASK_USER,
    PREPARE_TO_ANSWER,
    MaterialisedPathTracker,
    PathTracker,
    _moves_from_ready,
    enumerate_paths,
)


def _rows(reference_dir) -> list[dict[str, Any]]:
    with open(reference_dir / "paths.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _task(names: list[str], deps: list[list[int]] | None = None) -> list[dict[str, Any]]:
    deps = deps or [[] for _ in names]
    return [
        {"action": {"name": name, "arguments": {}}, "observation": "", "dependency_list": list(d)}
        for name, d in zip(names, deps)
    ]


def _differential_walk(answer_list, rng: random.Random, policy: str) -> int:
    """Drive both trackers with the same choices; assert equal answers at every step.

    ``policy``: ``oracle`` (the gold step), ``last`` (the last candidate, a
    long suboptimal path) or ``random`` (random candidate, random
    non-pruning ask steps, occasional non-candidate prunes and queries of
    other step indices). Returns the number of steps walked.
    """
    naive = MaterialisedPathTracker(answer_list)
    lazy = PathTracker(answer_list)
    assert lazy.names == naive.names
    assert lazy.min_length == naive.min_length
    assert lazy.gold_path == naive.gold_path
    horizon = len(answer_list) + 3
    for step in range(horizon):
        expected = naive.candidates(step)
        assert lazy.candidates(step) == expected, (policy, step)
        if not expected:
            # nothing alive is that long: every later step is empty too
            later = rng.randrange(step, horizon + 1)
            assert lazy.candidates(later) == naive.candidates(later) == []
            return step
        if policy == "oracle":
            chosen = next(c for c in expected if sorted(c) == naive.gold_path[step])
        elif policy == "last":
            chosen = expected[-1]
        else:
            roll = rng.random()
            if roll < 0.25:
                chosen = None  # an ask step: no pruning
            elif roll < 0.30:
                chosen = [step % len(answer_list), (step + 1) % len(answer_list)]  # often no candidate
            else:
                chosen = rng.choice(expected)
            if rng.random() < 0.3:
                other = rng.randrange(0, horizon)
                assert lazy.candidates(other) == naive.candidates(other), (policy, step, other)
        if chosen is not None:
            naive.prune(step, chosen)
            lazy.prune(step, list(reversed(chosen)))  # any order is accepted
    return horizon


def test_lazy_equals_reference_on_every_row(reference_dir):
    rows = _rows(reference_dir)
    assert len(rows) == 101
    for row in rows:
        where = (row["session_id"], row["task_idx"])
        lazy = PathTracker(row["answer_list"])
        assert lazy.min_length == row["min_length"], where
        assert lazy.gold_path == row["optimal_path_list"][0], where
        rng = random.Random(f"{where}")
        _differential_walk(row["answer_list"], rng, "oracle")
        _differential_walk(row["answer_list"], rng, "last")
        for _ in range(8):
            _differential_walk(row["answer_list"], rng, "random")


def test_lazy_rows_candidates_match_fixture_paths(reference_dir):
    """Without the naive tracker: step-s candidates straight from the fixture's path list."""
    for row in _rows(reference_dir):
        lazy = PathTracker(row["answer_list"])
        names = [node["action"]["name"] for node in row["answer_list"]]
        for step in range(len(row["answer_list"]) + 1):
            expected: list[list[int]] = []
            for path in row["all_path_list"]:
                if step < len(path):
                    ordered = sorted(path[step], key=lambda i: names[i])
                    if ordered not in expected:
                        expected.append(ordered)
            assert lazy.candidates(step) == expected, (row["session_id"], row["task_idx"], step)


def _random_dag(rng: random.Random) -> list[dict[str, Any]]:
    """Small random gold DAG: names from a 1-3 letter alphabet (same-name runs,
    name dedup), some ask nodes, dependencies in a random topological order
    (so edges also point from higher to lower indices), sometimes a final
    prepare_to_answer node depending on every sink."""
    n = rng.randint(1, 6)
    alphabet = ["get_a", "get_b", "get_c"][: rng.randint(1, 3)]
    names = [ASK_USER if rng.random() < 0.12 else rng.choice(alphabet) for _ in range(n)]
    order = list(range(n))
    rng.shuffle(order)
    density = rng.choice([0.0, 0.15, 0.3, 0.5])
    deps: list[list[int]] = [[] for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < density:
                deps[order[b]].append(order[a])
    if rng.random() < 0.5:
        sinks = [i for i in range(n) if not any(i in d for d in deps)]
        names.append(PREPARE_TO_ANSWER)
        deps.append(sinks)
    return _task(names, deps)


def test_random_dags_differential():
    rng = random.Random(20260414)
    walked = 0
    for _ in range(1000):
        answer_list = _random_dag(rng)
        policy = rng.choice(["oracle", "last", "random", "random"])
        walked += _differential_walk(answer_list, rng, policy)
    assert walked > 1000  # the walks went past step 0


def test_twelve_independent_distinct_calls():
    # 12 distinct tools (nodes 0-11) + prepare_to_answer (node 12) on all of them.
    answer_list = parallel_task([f"tool_{i:02d}" for i in range(12)])
    tracker = PathTracker(answer_list)
    # Longest chain: one call then prepare_to_answer; calling all 12 at once reaches it.
    assert tracker.min_length == 2
    assert tracker.gold_path == [list(range(12)), [12]]
    # Names are distinct: no run, no name collision, so every non-empty subset
    # of the 12 ready calls is a step-0 candidate: 2^12 - 1; the first ones are
    # the singletons in index order.
    step0 = tracker.candidates(0)
    assert len(step0) == 2**12 - 1
    assert step0[:3] == [[0], [1], [2]]
    assert step0[-1] == list(range(12))
    # The oracle walk: after all 12 only prepare_to_answer is left.
    assert oracle_walk(PathTracker(answer_list)) == (2**12 - 1) + 1
    tracker.prune(0, list(range(12)))
    assert tracker.candidates(1) == [[12]]
    assert tracker.candidates(2) == []
    # A one-call first step leaves 11 ready calls: 2^11 - 1 candidates at step 1.
    other = PathTracker(answer_list)
    other.prune(0, [5])
    assert len(other.candidates(1)) == 2**11 - 1
    assert [5] not in other.candidates(1)


def test_ten_independent_same_name_calls():
    # 10 calls of one tool (nodes 0-9, one same-name run) + prepare_to_answer (node 10).
    answer_list = parallel_task(["get_weather"] * 10)
    tracker = PathTracker(answer_list)
    assert tracker.min_length == 2
    assert tracker.gold_path == [list(range(10)), [10]]
    # Rule 5 keeps one combo per size (name sequences "f", "f|f", ...); rule 6
    # drops sizes 2..9 (partial run, no full prefix); size 1 is node 0, the
    # first of the full run, so it becomes the run one node per step. So two
    # moves: [0],[1],...,[9] one by one (enumerated first) and all 10 at once.
    assert tracker.candidates(0) == [[0], list(range(10))]
    assert tracker.candidates(1) == [[1], [10]]
    assert oracle_walk(PathTracker(answer_list)) == 2 + 1
    # One by one: step s is node s, then prepare_to_answer at step 10.
    tracker.prune(0, [0])
    for step in range(1, 10):
        assert tracker.candidates(step) == [[step]]
        tracker.prune(step, [step])
    assert tracker.candidates(10) == [[10]]
    assert tracker.candidates(11) == []


def test_unpruned_first_step_then_constrained_step():
    """An ask step at 0 leaves step 0 free while step 1 is pruned (not a prefix)."""
    names = ["ask_user_for_required_parameters", "get_a", "get_b", "get_a", PREPARE_TO_ANSWER]
    answer_list = _task(names, [[], [], [0], [], [1, 2, 3]])
    naive, lazy = MaterialisedPathTracker(answer_list), PathTracker(answer_list)
    for tracker in (naive, lazy):
        tracker.prune(1, [2])
    assert lazy.candidates(0) == naive.candidates(0)
    assert lazy.candidates(0)  # step 0 must have been something after which node 2 is ready
    assert all(0 in c for c in lazy.candidates(0))
    assert lazy.candidates(2) == naive.candidates(2)


def test_conflicting_prunes_leave_nothing():
    answer_list = _task(["get_a", "get_b"])
    tracker = PathTracker(answer_list)
    tracker.prune(0, [0])
    tracker.prune(0, [1])
    assert tracker.candidates(0) == []
    assert tracker.candidates(1) == []


def test_empty_answer_list_and_cycle():
    tracker = PathTracker([])
    assert (tracker.min_length, tracker.gold_path, tracker.candidates(0)) == (0, [], [])
    with pytest.raises(ValueError, match="cycle"):
        PathTracker(_task(["get_a", "get_b"], [[1], [0]]))
    with pytest.raises(ValueError, match="step must be >= 0"):
        tracker.candidates(-1)


def _moves_seen_only_when_kept(names, ready):
    """The other reading of SPEC 3.3 rules 5/6: a name sequence counts as seen
    only when its combo survives the prefix rule. Test-only, for contrast."""
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
    moves, seen = [], set()
    for size in range(1, len(ready) + 1):
        for combo in combinations(ready, size):
            key = "|".join(names[i] for i in combo)
            if key in seen:
                continue
            prefixes = [combo[:k] for k in range(1, size + 1)]
            if size >= 2 and any(p in partial for p in prefixes) and not any(p in full for p in prefixes):
                continue
            seen.add(key)
            if size == 1 and combo[0] in first_of_full:
                moves.append([[i] for i in first_of_full[combo[0]]])
            else:
                moves.append([list(combo)])
    return moves


def test_seen_updated_before_prefix_check():
    """Documented choice: rule 5 marks a name sequence seen before rule 6 runs.

    Smallest DAG where the order matters (an exhaustive search over name
    patterns shows no ready set of 4 or fewer nodes differs, so 5 independent
    nodes are needed): ``get_a, get_a, get_b, get_a, get_c``. Nodes 0-1 form
    a same-name run. Combo (0, 4) "get_a|get_c" is dropped by rule 6 (prefix
    (0,) is partial, no full prefix) but, in the reference, already marks
    "get_a|get_c" seen; so (3, 4), which starts outside the run, is dropped by
    rule 5. Under the other reading (3, 4) would be a step. Consequence: a
    model that calls get_a and get_c together at step 0 is a name error.
    """
    names = ["get_a", "get_a", "get_b", "get_a", "get_c"]
    ready = list(range(5))
    ours = _moves_from_ready(names, ready)
    other = _moves_seen_only_when_kept(names, ready)
    assert [m for m in other if m not in ours] == [[[3, 4]]]
    assert [m for m in ours if m not in other] == []

    answer_list = _task(names)
    tracker = PathTracker(answer_list)
    step0 = tracker.candidates(0)
    assert step0 == MaterialisedPathTracker(answer_list).candidates(0)
    assert [3, 4] not in step0
    assert not any(sorted(names[i] for i in c) == ["get_a", "get_c"] for c in step0)
    # get_b|get_a (2, 3) is kept, shown sorted by name.
    assert [3, 2] in step0
    assert all(path[0] != [3, 4] for path in enumerate_paths(answer_list))

    # With 4 or fewer ready nodes the two readings never differ.
    for n in range(1, 5):
        for pattern in _name_patterns(n):
            assert _moves_from_ready(pattern, list(range(n))) == _moves_seen_only_when_kept(pattern, list(range(n)))


def _name_patterns(n: int) -> list[list[str]]:
    """All name sequences of length n up to renaming (restricted growth strings)."""
    out: list[list[str]] = [[]]
    for _ in range(n):
        out = [p + [name] for p in out for name in sorted(set(p)) + [f"t{len(set(p))}"]]
    return out
