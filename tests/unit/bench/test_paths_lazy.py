"""The lazy PathTracker against the materialised reference (docs/evaluation.md §3, docs/paths.md).

The materialised tracker lists every path of ``enumerate_paths`` (which
matches all rows of paths.jsonl, see test_paths_reference.py); the lazy one
must give the same ``min_length``, ``gold_path`` and, after any sequence of
prunes and non-pruning (ask) steps, the same candidates in the same order.
"""

from __future__ import annotations

import json
import random
from itertools import combinations, islice
from math import comb, factorial
from typing import Any

import pytest

from benchmarks.paths import oracle_walk, parallel_task
from tests.support.paths_reference import MaterialisedPathTracker, enumerate_paths
from wildtoolbench.bench.paths import PathTracker, _moves_from_ready, _same_name_runs
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER


def _rows(reference_dir) -> list[dict[str, Any]]:
    with open(reference_dir / "paths.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _task(names: list[str], deps: list[list[int]] | None = None) -> list[dict[str, Any]]:
    deps = deps or [[] for _ in names]
    return [
        {"action": {"name": name, "arguments": {}}, "observation": "", "dependency_list": list(d)}
        for name, d in zip(names, deps)
    ]


def _assert_same_entries(naive: MaterialisedPathTracker, lazy: PathTracker, step: int, where) -> None:
    """Undeduplicated step tables and their counts agree; the distinct ones are the candidates."""
    entries = list(naive.step_entries(step))
    assert list(lazy.step_entries(step)) == entries, where
    assert lazy.count_step_entries(step) == naive.count_step_entries(step) == len(entries), where
    distinct: list[list[int]] = []
    for entry in entries:
        if entry not in distinct:
            distinct.append(entry)
    assert distinct == lazy.candidates(step), where
    assert lazy.has_step_table(step) == naive.has_step_table(step) == (step < len(naive.names)), where
    assert lazy.shortest_alive_length() == naive.shortest_alive_length(), where
    # the step loop's crash test (an alive path with no step ``step``), by counting and by the min-DP
    shorter_alive = lazy.count_step_entries(0) != lazy.count_step_entries(step)
    assert shorter_alive == (naive.shortest_alive_length() is not None and naive.shortest_alive_length() <= step), where


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
        _assert_same_entries(naive, lazy, step, (policy, step))
        if not expected:
            # nothing alive is that long: every later step is empty too
            later = rng.randrange(step, horizon + 1)
            assert lazy.candidates(later) == naive.candidates(later) == []
            assert list(lazy.step_entries(later)) == [] and lazy.count_step_entries(later) == 0
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
                _assert_same_entries(naive, lazy, other, (policy, step, other))
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


def test_lazy_rows_step_entries_match_fixture_paths(reference_dir):
    """Without the naive tracker: the undeduplicated step-s table straight from the fixture's path list."""
    duplicated = 0
    for row in _rows(reference_dir):
        lazy = PathTracker(row["answer_list"])
        names = [node["action"]["name"] for node in row["answer_list"]]
        for step in range(len(row["answer_list"]) + 2):
            expected = [sorted(path[step], key=lambda i: names[i]) for path in row["all_path_list"] if step < len(path)]
            where = (row["session_id"], row["task_idx"], step)
            assert list(lazy.step_entries(step)) == expected, where
            assert lazy.count_step_entries(step) == len(expected), where
            duplicated += len(expected) - len(lazy.candidates(step))
    assert duplicated > 0  # some fixture rows do have repeated entries


def test_session_21_task_0_step_entries_keep_duplicates(reference_dir):
    """Fixture evidence: over_ask's error step 0 lists the getCityShow step twice."""
    with open(reference_dir / "expected_results.jsonl", encoding="utf-8") as handle:
        record = next(
            r
            for r in map(json.loads, handle)
            if r["session_id"] == "wild_tool_bench_21" and r["candidate"] == "over_ask"
        )
    step0 = next(t for t in record["result"] if t["inference_log"]["task_idx"] == 0)["inference_log"]["step_0"]
    listed = step0["inference_answer"]
    assert list(listed) == ["candidate_0_answer_function_list", "candidate_1_answer_function_list"]
    assert listed["candidate_0_answer_function_list"] == listed["candidate_1_answer_function_list"]
    assert [a["name"] for a in listed["candidate_0_answer_function_list"]["action"]] == ["getCityShow"]

    # Gold DAG of that task: getCityShow; two getShowDetail on it; prepare_to_answer on all.
    answer_list = _task(["getCityShow", "getShowDetail", "getShowDetail", PREPARE_TO_ANSWER], [[], [0], [0], [0, 1, 2]])
    assert enumerate_paths(answer_list) == [[[0], [1], [2], [3]], [[0], [1, 2], [3]]]
    for tracker in (PathTracker(answer_list), MaterialisedPathTracker(answer_list)):
        assert list(tracker.step_entries(0)) == [[0], [0]]
        assert tracker.count_step_entries(0) == 2
        assert tracker.candidates(0) == [[0]]
        assert list(tracker.step_entries(1)) == [[1], [1, 2]]
        assert list(tracker.step_entries(2)) == [[2], [3]]
        assert list(tracker.step_entries(3)) == [[3]]
        assert tracker.count_step_entries(3) == 1
        # n = 4 nodes: the reference builds tables for steps 0-3 only.
        assert tracker.has_step_table(3) and not tracker.has_step_table(4)
        assert list(tracker.step_entries(4)) == [] and tracker.count_step_entries(4) == 0
        tracker.prune(0, [0])
        tracker.prune(1, [1])
        assert list(tracker.step_entries(2)) == [[2]]
        assert list(tracker.step_entries(0)) == [[0]]


def _stirling2(n: int, k: int) -> int:
    """Stirling number of the second kind S(n, k), by the usual recurrence."""
    table = [[0] * (k + 1) for _ in range(n + 1)]
    table[0][0] = 1
    for i in range(1, n + 1):
        for j in range(1, min(i, k) + 1):
            table[i][j] = j * table[i - 1][j] + table[i - 1][j - 1]
    return table[n][k]


def _fubini(n: int) -> int:
    """Ordered set partitions of n items: a(n) = sum_k C(n, k) a(n - k), a(0) = 1."""
    a = [1]
    for m in range(1, n + 1):
        a.append(sum(comb(m, k) * a[m - k] for k in range(1, m + 1)))
    return a[n]


def test_count_step_entries_twelve_independent_distinct_calls():
    """12 distinct independent calls + prepare_to_answer: counting without enumeration.

    With distinct names every non-empty subset of the ready calls is a move
    (no run, no name collision), so a path is an ordered set partition of the
    12 calls into k blocks (k! * S(12, k) of them) followed by the
    prepare_to_answer step: k + 1 steps. ``count_step_entries(s)`` counts the
    paths with more than s steps, i.e. with k >= s blocks:
    sum_{k >= max(s, 1)} k! * S(12, k). At s = 0 (and s = 1) that is every
    path, the Fubini number a(12) = 28091567595 (OEIS A000670).
    """
    answer_list = parallel_task([f"tool_{i:02d}" for i in range(12)])
    tracker = PathTracker(answer_list)
    assert _fubini(12) == 28091567595
    assert tracker.count_step_entries(0) == 28091567595
    for step in (1, 2, 5, 11, 12, 13, 14):
        expected = sum(factorial(k) * _stirling2(12, k) for k in range(max(step, 1), 13))
        assert tracker.count_step_entries(step) == expected, step
    assert tracker.count_step_entries(12) == factorial(12)  # all singletons, then prepare_to_answer
    assert tracker.count_step_entries(13) == 0
    # The lazy table starts with the a(11) paths that issue call 0 alone first.
    assert list(islice(tracker.step_entries(0), 5)) == [[0]] * 5
    assert list(islice(tracker.step_entries(12), 3)) == [[12]] * 3
    # After pruning step 0 to one call, 11 calls are left: a(11) paths, each
    # with at least 3 steps; only [5], [the other 11], [12] has no step 3.
    tracker.prune(0, [5])
    assert tracker.count_step_entries(0) == tracker.count_step_entries(2) == _fubini(11)
    assert tracker.count_step_entries(3) == _fubini(11) - 1
    # An ask step leaves step 1 free while step 2 is pruned to a pair.
    tracker.prune(2, [0, 1])
    # Step 1: any non-empty subset T of the 10 calls other than 0, 1 (and 5), then {0, 1}, then the rest.
    expected = sum(comb(9, t) * _fubini(9 - t) for t in range(1, 10))
    assert tracker.count_step_entries(1) == expected
    # A prune to node indices that do not exist leaves nothing (no crash).
    odd = PathTracker(answer_list)
    odd.prune(0, [-1, 99])
    assert odd.count_step_entries(0) == 0 and list(odd.step_entries(0)) == [] and odd.candidates(0) == []
    with pytest.raises(RuntimeError, match="pruned"):
        running = tracker.step_entries(1)
        next(running)
        tracker.prune(3, [12])
        next(running)


def test_step_entries_five_independent_distinct_calls():
    """Step 0 table of 5 distinct independent calls: each first block T, in
    combination order, repeated once per ordered set partition of the rest."""
    answer_list = parallel_task([f"tool_{i}" for i in range(5)])
    expected = [
        list(block) for size in range(1, 6) for block in combinations(range(5), size) for _ in range(_fubini(5 - size))
    ]
    assert len(expected) == _fubini(5) == 541
    for tracker in (PathTracker(answer_list), MaterialisedPathTracker(answer_list)):
        assert list(tracker.step_entries(0)) == expected
        assert tracker.count_step_entries(0) == 541


def test_count_step_entries_same_name_run():
    """Ten calls of one tool: two paths (one by one, or all at once), each then prepare_to_answer."""
    tracker = PathTracker(parallel_task(["get_weather"] * 10))
    assert tracker.count_step_entries(0) == tracker.count_step_entries(1) == 2
    assert list(tracker.step_entries(1)) == [[1], [10]]
    assert tracker.count_step_entries(2) == 1
    assert tracker.count_step_entries(10) == 1
    assert tracker.count_step_entries(11) == 0
    with pytest.raises(ValueError, match="step must be >= 0"):
        tracker.step_entries(-1)
    with pytest.raises(ValueError, match="step must be >= 0"):
        tracker.count_step_entries(-1)


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


def test_distinct_ready_shortcut_matches_moves():
    """The counting shortcut (every non-empty subset of the ready nodes is a
    one-step move) is used only where :func:`_moves_from_ready` agrees."""
    rng = random.Random(7)
    used = 0
    for _ in range(300):
        tracker = PathTracker(_random_dag(rng))
        frontier, seen = [0], {0}
        while frontier:
            mask = frontier.pop()
            moves = tracker._moves(mask)
            ready = tracker._distinct_ready(mask)
            if ready is not None:
                used += 1
                subsets = [
                    (tuple(i for i in range(tracker._n) if (sub >> i) & 1),)
                    for sub in range(1, ready + 1)
                    if sub & ready == sub
                ]
                assert sorted(steps for steps, _ in moves) == sorted(subsets), mask
            for _, nxt in moves:
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
    assert used > 100
    # A name containing "|" can collide when joined: no shortcut then.
    piped = PathTracker(_task(["a|b", "c", "a", "b|c"]))
    assert piped._distinct_ready(0) is None
    assert len(piped._moves(0)) < 2**4 - 1


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
    """The other reading of docs/paths.md rules 5/6: a name sequence counts as seen
    only when its combo survives the prefix rule. Test-only, for contrast: it
    shares the same-name runs (rules 3-4) with the library and differs from
    ``_moves_from_ready`` only in the order of rules 5 and 6."""
    full, partial, first_of_full = _same_name_runs(names, ready)
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


def test_trackers_of_one_dag_share_caches_but_not_prunes():
    """Trackers of equal gold DAGs share the prune-independent caches (the step loop builds one per step);
    pruning one never changes another, and the gold path handed out is a copy."""
    names = ["get_a", "get_b", "get_a", PREPARE_TO_ANSWER]
    deps = [[], [], [], [0, 1, 2]]
    first, second = PathTracker(_task(names, deps)), PathTracker(_task(names, deps))
    assert first._shape is second._shape
    assert PathTracker(_task(names, [[], [], [0], [0, 1, 2]]))._shape is not first._shape
    naive = MaterialisedPathTracker(_task(names, deps))
    first.prune(0, [1])
    naive_pruned = MaterialisedPathTracker(_task(names, deps))
    naive_pruned.prune(0, [1])
    for step in range(5):
        assert first.candidates(step) == naive_pruned.candidates(step), step
        assert second.candidates(step) == naive.candidates(step), step
    assert first.shortest_alive_length() == naive_pruned.shortest_alive_length() == 3
    assert second.shortest_alive_length() == naive.shortest_alive_length() == 2
    gold = second.gold_path
    gold[0].append(99)
    gold.append([42])
    assert second.gold_path == first.gold_path == naive.gold_path == [[0, 1, 2], [3]]


def test_shortest_alive_length_after_ask_steps_and_dead_prunes():
    """No prune keeps the unconstrained minimum; a prune that no path meets leaves nothing alive."""
    names = ["get_a", "get_b", PREPARE_TO_ANSWER]
    tracker = PathTracker(_task(names, [[], [0], [1]]))
    assert tracker.shortest_alive_length() == tracker.min_length == 3
    tracker.prune(0, [1])  # get_b depends on get_a: no path starts with it
    assert tracker.shortest_alive_length() is None and tracker.candidates(0) == []
    bad_index = _task(["get_a", PREPARE_TO_ANSWER], [[], [-1]])
    with pytest.raises(IndexError, match="dependency index -1 out of range"):
        PathTracker(bad_index)
