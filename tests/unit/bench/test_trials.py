"""wildtoolbench.bench.trials: pass^k, pass@k, flip rate and their intervals over repeated trials (docs/trials.md §1-§5)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from wildtoolbench.bench.trials import (
    pairwise_disagreement,
    pass_at_k,
    pass_hat_k,
    session_buckets,
    session_verdicts,
    student_t_cdf,
    student_t_quantile,
    summarize_trials,
    trials_document,
    verdicts_from_score_lines,
)

REPO = Path(__file__).resolve().parents[3]

# Two sessions, two tasks, four trials: task counts c = 3, 1, 4, 0 of n = 4.
SMALL = {
    ("s1", 0): [True, True, False, True],
    ("s1", 1): [True, False, False, False],
    ("s2", 0): [True, True, True, True],
    ("s2", 1): [False, False, False, False],
}


def test_pass_hat_k_and_pass_at_k_by_hand():
    assert pass_hat_k(3, 5, 2) == pytest.approx(3 / 10)  # C(3,2) / C(5,2)
    assert pass_at_k(3, 5, 2) == pytest.approx(1 - 1 / 10)  # 1 - C(2,2) / C(5,2)
    assert pass_hat_k(3, 5, 1) == pass_at_k(3, 5, 1) == pytest.approx(0.6)
    assert pass_hat_k(5, 5, 5) == 1.0 and pass_hat_k(4, 5, 5) == 0.0
    assert pass_at_k(0, 5, 3) == 0.0 and pass_at_k(1, 5, 5) == 1.0
    assert pass_hat_k(2, 5, 3) == 0.0  # fewer correct trials than k
    for bad in ((1, 2, 0), (1, 2, 3), (3, 2, 1), (-1, 2, 1)):
        with pytest.raises(ValueError):
            pass_hat_k(*bad)


def test_pass_hat_k_is_unbiased_for_p_to_the_k():
    # exact expectation over c ~ Binomial(n, p)
    n, p = 7, 0.35
    for k in range(1, n + 1):
        mean = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * pass_hat_k(c, n, k) for c in range(n + 1))
        at = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * pass_at_k(c, n, k) for c in range(n + 1))
        assert mean == pytest.approx(p**k) and at == pytest.approx(1 - (1 - p) ** k)


def test_pairwise_disagreement():
    assert pairwise_disagreement(2, 4) == pytest.approx(2 / 3)  # 2*2*2 / (4*3)
    assert pairwise_disagreement(4, 4) == 0.0
    with pytest.raises(ValueError):
        pairwise_disagreement(1, 1)


def test_student_t_against_tables():
    assert student_t_quantile(0.975, 1) == pytest.approx(12.706205, abs=1e-6)
    assert student_t_quantile(0.975, 3) == pytest.approx(3.182446, abs=1e-6)
    assert student_t_quantile(0.975, 23) == pytest.approx(2.068658, abs=1e-6)
    assert student_t_quantile(0.80, 5) == pytest.approx(0.919544, abs=1e-6)
    assert student_t_quantile(0.025, 10) == pytest.approx(-2.228139, abs=1e-6)
    assert student_t_quantile(0.975, 1e9) == pytest.approx(1.959964, abs=1e-6)
    assert student_t_cdf(0.0, 4) == pytest.approx(0.5)
    assert student_t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy: 1/2 + atan(1)/pi
    with pytest.raises(ValueError):
        student_t_quantile(1.0, 3)


def test_summary_by_hand():
    summary = summarize_trials(SMALL)
    task = summary["task"]
    assert summary["trials"] == 4 and task["units"] == 4
    assert task["per_trial"] == [0.75, 0.5, 0.25, 0.5]
    hat = {k: e["value"] for k, e in task["pass_hat_k"].items()}
    assert hat == pytest.approx({"1": 0.5, "2": (0.5 + 0 + 1 + 0) / 4, "3": (0.25 + 0 + 1 + 0) / 4, "4": 0.25})
    at = {k: e["value"] for k, e in task["pass_at_k"].items()}
    assert at == pytest.approx({"1": 0.5, "2": (1 + 0.5 + 1 + 0) / 4, "3": (1 + 0.75 + 1 + 0) / 4, "4": 0.75})
    # Interval of the mean: session s1's per-trial correct counts are 2, 1, 0, 1 (sample variance 2/3, over
    # n = 4 trials: 1/6); s2's never change. One session carries the variance: t with 3 degrees of freedom.
    half = 3.182446305284263 * math.sqrt(1 / 6) / 4
    assert task["mean"]["value"] == 0.5
    assert task["mean"]["low"] == pytest.approx(0.5 - half) and task["mean"]["high"] == pytest.approx(0.5 + half)
    assert task["pass_hat_k"]["1"] == task["mean"]
    assert task["pass_hat_k"]["4"]["low"] is None  # a jackknife of k = n trials leaves fewer than k
    assert task["flip_rate"] == 0.5 and task["stable_share"] == 0.5 and task["flipped"] == 2
    assert task["pairwise_disagreement"] == pytest.approx((0.5 + 0.5 + 0 + 0) / 4)
    # sessions: s1 all correct in trial 1 only, s2 never
    assert session_verdicts(SMALL) == {"s1": [True, False, False, False], "s2": [False] * 4}
    session = summary["session"]
    assert session["pass_hat_k"]["1"]["value"] == pytest.approx(0.125)
    assert session["pass_at_k"]["2"]["value"] == pytest.approx((0.5 + 0) / 2)
    assert session["flip_rate"] == 0.5


def test_trials_document_has_exactly_the_published_shape():
    document = trials_document(summarize_trials(SMALL))
    assert document == {
        "trials": 4,
        "pass_hat_k": {
            "task": {"1": 0.5, "2": 0.375, "3": 0.3125, "4": 0.25},
            "session": {"1": 0.125, "2": 0.0, "3": 0.0, "4": 0.0},
        },
        "pass_at_k": {
            "task": {"1": 0.5, "2": 0.625, "3": 0.6875, "4": 0.75},
            "session": {"1": 0.125, "2": 0.25, "3": 0.375, "4": 0.5},
        },
        "flip_rate": {"task": 0.5},
    }
    single = trials_document(summarize_trials({key: values[:1] for key, values in SMALL.items()}))
    assert single == {
        "trials": 1,
        "pass_hat_k": {"task": {"1": 0.75}, "session": {"1": 0.5}},  # trial 1: 3 of 4 tasks, s1 only
        "pass_at_k": {"task": {"1": 0.75}, "session": {"1": 0.5}},
        "flip_rate": {"task": None},
    }


def test_sessions_with_more_trials_count_only_up_to_the_shared_k():
    verdicts = {**SMALL, ("s3", 0): [True, False, True, True, True, False]}
    summary = summarize_trials(verdicts)
    assert summary["trials"] == 4 and summary["task"]["most_trials"] == 6
    assert list(summary["task"]["pass_hat_k"]) == ["1", "2", "3", "4"]
    # s3's task counts with its own 6 trials: 4/6 correct; pass^4 = C(4,4)/C(6,4) = 1/15
    assert summary["task"]["pass_hat_k"]["4"]["value"] == pytest.approx((0 + 0 + 1 + 0 + 1 / 15) / 5)
    # its flip counts over the first 4 trials (True, False, True, True: flips)
    assert summary["task"]["flipped"] == 3


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="different trial counts"):
        summarize_trials({("s", 0): [True, False], ("s", 1): [True]})
    with pytest.raises(ValueError, match="no task"):
        summarize_trials({})


def _line(session_id, labels):
    return {"id": session_id, "model_name": "m", "results": [{"label": label} for label in labels]}


def test_verdicts_from_score_lines():
    trial_1 = [_line("a", ["correct", "error"]), _line("b", ["error"])]
    trial_2 = [_line("a", ["correct", "correct"])]
    assert verdicts_from_score_lines([trial_1, trial_2]) == {
        ("a", 0): [True, True],
        ("a", 1): [False, True],
        ("b", 0): [False],
    }
    with pytest.raises(ValueError, match="trial 1: session 'a' appears twice"):
        verdicts_from_score_lines([[_line("a", ["correct"]), _line("a", ["correct"])]])
    with pytest.raises(ValueError, match="trial 2: session 'a' has 1 tasks, 2 before"):
        verdicts_from_score_lines([trial_1, [_line("a", ["correct"])]])
    with pytest.raises(ValueError, match="trial 2: session 'c' is missing from trial 1"):
        verdicts_from_score_lines([trial_1, [_line("c", ["correct"])]])
    with pytest.raises(ValueError, match="trial 1: a score line without"):
        verdicts_from_score_lines([[{"id": "a"}]])


def test_buckets_follow_the_metric_dict():
    from wildtoolbench.bench.schema import load_sessions

    sessions = load_sessions(REPO / "bench" / "data" / "demo_sessions.jsonl", tasks=4)
    buckets = session_buckets(sessions)
    verdicts = {key: [True, False, True] for key in buckets["task_type"]}
    summary = summarize_trials(verdicts, buckets)
    types = [t for s in sessions for t in s.english_task_types]
    assert summary["task_type"]["Single-Tool"]["units"] == types.count("Single-Tool")
    multi = sum(types.count(t) for t in ("Parallel Multi-Tool", "Sequential Multi-Tool", "Mixed Multi-Tool"))
    assert summary["task_type"]["Multi-Tool"]["units"] == multi > 0
    assert summary["turn_subtype"]["First Turn"]["units"] == len(sessions) == 6
    assert summary["turn_subtype"]["Subsequent Turn"]["units"] == 18
    assert summary["task_type"]["Single-Tool"]["pass_hat_k"]["2"]["value"] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- the acceptance simulation

SESSIONS, TASKS, K = 24, 4, 20  # the reference fixtures' size: 24 sessions of 4 tasks
P = np.linspace(0.3, 1.0, SESSIONS * TASKS)[np.random.default_rng(12345).permutation(SESSIONS * TASKS)].reshape(
    SESSIONS, TASKS
)
"""Each task's known chance of being correct in a trial, fixed across seeds."""


def _seeded_verdicts(seed: int) -> dict[tuple[str, int], list[bool]]:
    draws = np.random.default_rng(seed).random((SESSIONS, TASKS, K)) < P[..., None]
    return {(f"s{s}", t): draws[s, t].tolist() for s in range(SESSIONS) for t in range(TASKS)}


def test_pass_hat_k_intervals_cover_the_analytic_value_and_flip_rates_match():
    """K = 20 trials of a stochastic candidate with known chances: pass^k for k = 1..5 inside its 95% interval
    of the analytic value mean(p^k) in at least 95 of 100 seeds; flip rates around 1 - p^K - (1 - p)^K."""
    covered = dict.fromkeys(range(1, 6), 0)
    estimates = {k: [] for k in range(1, 6)}
    flip_errors = []
    expected_flip = 1 - P**K - (1 - P) ** K
    flip_sd = math.sqrt(float((expected_flip * (1 - expected_flip)).sum())) / P.size
    for seed in range(100):
        task = summarize_trials(_seeded_verdicts(seed), max_k=5)["task"]
        for k in range(1, 6):
            estimate = task["pass_hat_k"][str(k)]
            covered[k] += estimate["low"] <= float((P**k).mean()) <= estimate["high"]
            estimates[k].append(estimate["value"])
        flip_errors.append(task["flip_rate"] - float(expected_flip.mean()))
    assert all(count >= 95 for count in covered.values()), covered
    for k in range(1, 6):  # unbiased: the mean of 100 estimates within 3 standard errors of mean(p^k)
        values = np.array(estimates[k])
        assert abs(values.mean() - (P**k).mean()) <= 3 * values.std(ddof=1) / 10
    flip_errors = np.array(flip_errors)
    assert abs(flip_errors.mean()) <= 3 * flip_sd / 10  # the flip rate is unbiased for its expectation
    assert np.abs(flip_errors).max() <= 4 * flip_sd  # and each seed's within 4 standard deviations
