"""wildtoolbench.bench.sequential: the paired difference with MDD and verdict, and the stopping rule (docs/trials.md §6, §7)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wildtoolbench.bench.sequential import (
    A_BETTER,
    ALPHA,
    B_BETTER,
    CONTINUE,
    WITHIN_NOISE,
    mixture_half_width,
    paired_difference,
    sequential_decision,
    verdict_of,
)

# Three sessions of two tasks, one trial each.
A = {("s1", 0): [1], ("s1", 1): [1], ("s2", 0): [1], ("s2", 1): [0], ("s3", 0): [0], ("s3", 1): [0]}
B = {("s1", 0): [1], ("s1", 1): [0], ("s2", 0): [0], ("s2", 1): [0], ("s3", 0): [0], ("s3", 1): [0]}


def test_verdict_of():
    assert verdict_of(0.01, 0.2) == A_BETTER
    assert verdict_of(-0.2, -0.01) == B_BETTER
    assert verdict_of(-0.1, 0.1) == verdict_of(0.0, 0.1) == WITHIN_NOISE


def test_paired_difference_by_hand():
    result = paired_difference(A, B)
    task, session = result["task"], result["session"]
    assert (result["sessions"], result["tasks"], result["trials"]) == (3, 6, {"a": (1, 1), "b": (1, 1)})
    # per-session differences of correct tasks: 1, 1, 0 over 6 tasks
    assert (task.a, task.b, task.value) == pytest.approx((3 / 6, 1 / 6, 2 / 6))
    # SE = sqrt(3/2 * ((1 - 2/3)^2 + (1 - 2/3)^2 + (0 - 2/3)^2)) / 6 = 1/6; t(0.975; 2) = 4.302653
    assert task.se == pytest.approx(1 / 6)
    assert task.low == pytest.approx(1 / 3 - 4.302653 / 6, abs=1e-6)
    assert task.high == 1.0  # 1/3 + 4.302653/6 clipped: a difference of two shares is at most 1
    assert task.mdd == pytest.approx((4.302653 + 1.060660) / 6, abs=1e-6)  # t(0.80; 2) = 1.060660
    assert task.verdict == WITHIN_NOISE and task.units == 6
    # sessions all correct: A 1, 0, 0; B 0, 0, 0
    assert (session.a, session.b, session.value) == pytest.approx((1 / 3, 0.0, 1 / 3))
    assert session.se == pytest.approx(1 / 3) and session.units == 3


def test_paired_difference_decides_a_clear_gap_and_averages_trials():
    a = {(f"s{s}", t): [True, True] for s in range(10) for t in range(2)}
    b = {(f"s{s}", t): [t == 0 or s % 5 == 0, False] for s in range(10) for t in range(2)}
    result = paired_difference(a, b)
    # B: task 0 right in trial 1 (10 tasks), task 1 in trial 1 of s0 and s5: 12 of 40 trial verdicts
    assert result["task"].b == pytest.approx(12 / 40) and result["task"].value == pytest.approx(0.7)
    assert result["task"].verdict == A_BETTER and result["task"].low > 0
    assert result["session"].b == pytest.approx(2 / 20)
    reverse = paired_difference(b, a)
    assert reverse["task"].verdict == B_BETTER and reverse["task"].value == pytest.approx(-0.7)
    assert paired_difference(a, a)["task"].as_dict() | {"a": 0, "b": 0} == {
        "a": 0,
        "b": 0,
        "value": 0.0,
        "low": 0.0,
        "high": 0.0,
        "se": 0.0,
        "mdd": 0.0,
        "verdict": WITHIN_NOISE,
        "units": 20,
    }


def test_paired_difference_refuses_unpaired_tasks():
    with pytest.raises(ValueError, match="do not hold the same tasks"):
        paired_difference(A, {**B, ("s4", 0): [1]})
    with pytest.raises(ValueError, match="candidate B's tasks have trial counts"):
        paired_difference(A, {**B, ("s1", 0): [1, 0]})
    single = paired_difference({("s", 0): [1]}, {("s", 0): [0]})["task"]
    assert single.verdict == WITHIN_NOISE and math.isinf(single.high)


def test_mixture_half_width_formula():
    v, tau = 0.001, 0.1
    expected = math.sqrt(v * (v + tau**2) / tau**2 * (2 * math.log(1 / 0.05) + math.log((v + tau**2) / v)))
    assert mixture_half_width(v, alpha=0.05, tau=tau) == pytest.approx(expected)
    assert mixture_half_width(0.0) == 0.0
    # wider than the fixed-sample 1.96 standard errors: it holds at every look
    assert mixture_half_width(v) > 1.96 * math.sqrt(v)
    with pytest.raises(ValueError):
        mixture_half_width(-1.0)


def test_which_sessions_get_another_trial():
    a = {("s1", 0): [True], ("s2", 0): [True]}
    first = sequential_decision(a, a, max_trials=5)
    assert first.decision == CONTINUE and first.rerun == {"a": ["s1", "s2"], "b": ["s1", "s2"]}
    assert first.trials == {"a": 2, "b": 2} and first.variance == pytest.approx(4 * 0.25 / 4)
    # s1 flipped for A; s2 stable on both sides after 2 trials; B cannot be run again
    a = {("s1", 0): [True, False], ("s2", 0): [True, True]}
    b = {("s1", 0): [True, True], ("s2", 0): [False, False]}
    look = sequential_decision(a, b, max_trials=5, rerun=("a",))
    assert look.decision == CONTINUE and look.rerun == {"a": ["s1"], "b": []}
    assert look.estimate == pytest.approx((0.5 - 1 + 1 - 0) / 2)
    # smoothed variances (c + 1/2)(m - c + 1/2) / (m + 1)^2, each over m = 2 trials, over T^2 = 4
    smoothed = [1.5 * 1.5 / 9, 2.5 * 0.5 / 9, 2.5 * 0.5 / 9, 0.5 * 2.5 / 9]
    assert look.variance == pytest.approx(sum(smoothed) / 2 / 4)
    spent = sequential_decision(a, b, max_trials=2)
    assert spent.decision == WITHIN_NOISE and spent.rerun == {"a": [], "b": []}
    with pytest.raises(ValueError):
        sequential_decision(a, b, max_trials=0)


def test_a_decision_stops_the_trials():
    a = {(f"s{s}", t): [True] * 6 for s in range(30) for t in range(4)}
    b = {(f"s{s}", t): [False] * 6 for s in range(30) for t in range(4)}
    look = sequential_decision(a, b, max_trials=10)
    assert look.decision == A_BETTER and look.rerun == {"a": [], "b": []} and look.low > 0
    assert sequential_decision(b, a, max_trials=10).decision == B_BETTER


# --------------------------------------------------------------------------- simulations (docs/trials.md §7)


def _simulate(p_a, p_b, rng, *, max_trials=10, rerun=("a", "b")):
    """Run the stopping rule on candidates whose task t of session s is correct with chance p[s, t]."""
    sessions, tasks = p_a.shape
    draws = {
        "a": (rng.random((sessions, tasks, max_trials)) < p_a[..., None]).tolist(),
        "b": (rng.random((sessions, tasks, max_trials)) < p_b[..., None]).tolist(),
    }
    trials = {"a": [1] * sessions, "b": [1] * sessions}  # the first trial of each candidate
    while True:
        evidence = {
            side: {(f"s{s}", t): draws[side][s][t][: trials[side][s]] for s in range(sessions) for t in range(tasks)}
            for side in ("a", "b")
        }
        look = sequential_decision(evidence["a"], evidence["b"], max_trials=max_trials, rerun=rerun)
        if look.decision != CONTINUE:
            return look
        for side, chosen in look.rerun.items():
            for session_id in chosen:
                trials[side][int(session_id[1:])] += 1


def test_error_rate_on_equal_candidates_by_simulation():
    """1,000 runs of two candidates with the same chances (6 sessions x 4 tasks, up to 10 trials): decided
    no more often than alpha allows (one-sided binomial tolerance, 2.33 standard deviations), and every other
    run ends "within noise" at the budget."""
    runs = 1000
    rng = np.random.default_rng(2026)
    decided = 0
    for _ in range(runs):
        p = rng.uniform(0.2, 0.8, size=(6, 4))
        look = _simulate(p, p, rng)
        if look.decision in (A_BETTER, B_BETTER):
            decided += 1
        else:
            assert look.decision == WITHIN_NOISE and look.rerun == {"a": [], "b": []}
            assert look.low <= 0 <= look.high
    assert decided <= ALPHA * runs + 2.33 * math.sqrt(runs * ALPHA * (1 - ALPHA))  # <= 66
    assert decided < 0.04 * runs  # measured: 1.8% (docs/trials.md §7)


def test_a_ten_point_gap_is_decided_with_fewer_trials_than_ten_full_ones():
    """A 10 points above B on every task (24 sessions x 4 tasks): decided for A, never for B, with fewer
    session evaluations than 10 full trials of both candidates."""
    runs, sessions = 200, 24
    rng = np.random.default_rng(7)
    decisions, evaluations = [], []
    for _ in range(runs):
        p_b = rng.uniform(0.2, 0.8, size=(sessions, 4))
        look = _simulate(p_b + 0.1, p_b, rng)
        decisions.append(look.decision)
        evaluations.append(look.trials["a"] + look.trials["b"])
    assert decisions.count(B_BETTER) == 0
    assert decisions.count(A_BETTER) >= 0.85 * runs  # measured: 92%
    full = 2 * 10 * sessions
    assert np.mean(evaluations) < 0.6 * full  # measured: 201 of 480
