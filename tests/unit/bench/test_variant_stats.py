"""The paired statistics of docs/variants.md §6: clustered interval, exact sign-flip test, cells."""

from __future__ import annotations

import math
from fractions import Fraction as F

import pytest

from wildtoolbench.bench.trials import student_t_quantile
from wildtoolbench.bench.variants.stats import clustered_mean, effect, pair_outcomes, sign_flip_p_value


def test_sign_flip_equals_exact_mcnemar_with_one_pair_per_session():
    # 5 pairs got worse, 1 better, 3 unchanged, each in its own session: exact McNemar (binomial, n = 6)
    differences = [F(-1)] * 5 + [F(1)] + [F(0)] * 3
    p = sign_flip_p_value(differences, [f"s{i}" for i in range(9)])
    assert p == pytest.approx(2 * (1 + 6) / 64)


def test_sign_flip_flips_whole_sessions():
    # two sessions, each with two pairs that got worse: only 4 sign assignments, 2 as extreme
    assert sign_flip_p_value([F(-1)] * 4, ["a", "a", "b", "b"]) == 0.5
    assert sign_flip_p_value([F(-1)] * 4, ["a", "b", "c", "d"]) == pytest.approx(2 / 16)
    assert sign_flip_p_value([F(0), F(0)], ["a", "b"]) == 1.0
    assert sign_flip_p_value([], []) == 1.0


def test_sign_flip_with_trial_fractions():
    # shares over 2 trials: differences of 1/2 are integers after scaling by 2
    p = sign_flip_p_value([F(-1, 2), F(-1), F(1, 2)], ["a", "b", "c"])
    # sums 1, 2, 1 (scaled); |T| >= 2 (observed -1/2-1+1/2 = -1 -> 2 scaled): 6 of 8 assignments
    assert p == pytest.approx(6 / 8)


def test_clustered_mean_by_hand():
    values = [F(-1), F(-1), F(0), F(0), F(-1), F(0)]
    clusters = ["a", "a", "b", "b", "c", "c"]
    got = clustered_mean(values, clusters)
    mean = -0.5
    sums = [(-1 - mean) * 2, (0 - mean) * 2, (-1 - mean) + (0 - mean)]
    variance = 3 / 2 * sum(s * s for s in sums) / 36
    half = student_t_quantile(0.975, 2) * math.sqrt(variance)
    assert got["value"] == mean and got["clusters"] == 3 and got["n"] == 6
    assert got["low"] == pytest.approx(mean - half) and got["high"] == pytest.approx(mean + half)
    one = clustered_mean([F(1), F(0)], ["a", "a"])
    assert one["low"] is None and one["value"] == 0.5


def test_effect_of_a_cell_in_points():
    pairs = [
        {
            "pair": f"v{i}",
            "factor": "names",
            "level": None,
            "origin": f"s{i // 2}",
            "origin_task": i % 2,
            "variant": f"v{i}",
            "target_task": i % 2,
        }
        for i in range(12)
    ]
    verdicts = {}
    for i, pair in enumerate(pairs):
        verdicts[(pair["origin"], pair["origin_task"])] = [True]
        verdicts[(pair["variant"], pair["target_task"])] = [i % 3 != 0]  # 4 of 12 variants wrong
    outcomes = pair_outcomes(pairs, verdicts)
    cell = effect(outcomes)
    assert cell["pairs"] == 12 and cell["sessions"] == 6
    assert cell["origin_accuracy"] == 100.0 and cell["variant_accuracy"] == pytest.approx(66.6667)
    assert cell["difference"] == pytest.approx(-33.3333) and cell["worse"] == 4 and cell["better"] == 0
    assert cell["ci_low"] < cell["difference"] < cell["ci_high"] < 0
    assert cell["small"] is False and cell["p_value"] == pytest.approx(2 / 16)  # 4 sessions, each one worse pair
    small = effect(outcomes[:9])
    assert small["small"] is True
    assert pair_outcomes([{**pairs[0], "variant": "missing"}], verdicts) == []
