"""The paired statistics of ``wtb ablate`` (docs/variants.md §6): per factor and level, the pairs'
target-task accuracy on origins and variants, the paired difference with a session-clustered 95%
interval, and an exact sign-flip test over sessions.

Input shape: ``verdicts`` maps ``(session id, task index)`` to the task's verdicts over trials
(``True`` = correct), as :func:`wildtoolbench.bench.trials.verdicts_from_score_lines` returns them.
Pure functions, standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from wildtoolbench.bench.trials import LEVEL, student_t_quantile

SMALL_PAIRS = 10
"""A cell with fewer pairs (or fewer than :data:`SMALL_SESSIONS` origin sessions) is marked ``small``."""
SMALL_SESSIONS = 5


def _share(values: Sequence[bool]) -> Fraction:
    return Fraction(sum(values), len(values))


def pair_outcomes(
    pairs: Sequence[Mapping[str, Any]], verdicts: Mapping[tuple[str, int], Sequence[bool]]
) -> list[dict[str, Any]]:
    """Each pair with both verdict shares (docs/variants.md §6.1): ``origin`` and ``variant`` (the
    fraction of trials the target task was correct) and ``difference`` (variant minus origin), as
    :class:`fractions.Fraction`. Pairs whose origin or variant task was not scored are left out."""
    found = []
    for pair in pairs:
        origin = verdicts.get((pair["origin"], pair["origin_task"]))
        variant = verdicts.get((pair["variant"], pair["target_task"]))
        if not origin or not variant:
            continue
        o, v = _share(origin), _share(variant)
        found.append({**pair, "origin_share": o, "variant_share": v, "difference": v - o})
    return found


def clustered_mean(values: Sequence[Fraction | float], clusters: Sequence[str], level: float = LEVEL) -> dict[str, Any]:
    """Mean of ``values`` with a cluster-robust interval (docs/variants.md §6.2): the sandwich variance
    ``C / (C - 1) * sum_c (sum_{i in c} (x_i - mean))^2 / n^2`` over the C clusters, and Student's t with
    C - 1 degrees of freedom. Returns ``{"value", "low", "high", "clusters", "n"}``; the bounds are
    ``None`` with fewer than 2 clusters, and ``value`` too when there is no value."""
    n = len(values)
    if not n:
        return {"value": None, "low": None, "high": None, "clusters": 0, "n": 0}
    mean = float(sum(values)) / n
    sums: dict[str, float] = {}
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] = sums.get(cluster, 0.0) + float(value) - mean
    count = len(sums)
    if count < 2:
        return {"value": mean, "low": None, "high": None, "clusters": count, "n": n}
    variance = count / (count - 1) * sum(s * s for s in sums.values()) / (n * n)
    half = student_t_quantile(0.5 + level / 2.0, count - 1) * math.sqrt(variance) if variance > 0 else 0.0
    return {"value": mean, "low": mean - half, "high": mean + half, "clusters": count, "n": n}


def sign_flip_p_value(differences: Sequence[Fraction], clusters: Sequence[str]) -> float:
    """Exact two-sided p-value of the cluster sign-flip test (docs/variants.md §6.3).

    The statistic is the sum of the differences; under the null hypothesis (the factor changes
    nothing, so within each origin session variant and origin are exchangeable) each session's sum
    is as likely to be negated, and the p-value is the share of the ``2^C`` sign assignments whose sum
    is at least as far from 0 as the observed one, counted exactly (dynamic programme over the
    integer sums, not sampled). With one pair per session and one trial this is the exact McNemar test.
    1.0 when every difference is 0 or there is none.
    """
    sums: dict[str, Fraction] = {}
    for difference, cluster in zip(differences, clusters, strict=True):
        sums[cluster] = sums.get(cluster, Fraction(0)) + Fraction(difference)
    scale = math.lcm(*(s.denominator for s in sums.values())) if sums else 1
    steps = [abs(int(s * scale)) for s in sums.values() if s != 0]
    if not steps:
        return 1.0
    observed = abs(sum(int(s * scale) for s in sums.values()))
    ways: dict[int, int] = {0: 1}
    for step in steps:
        nxt: dict[int, int] = {}
        for total, count in ways.items():
            nxt[total + step] = nxt.get(total + step, 0) + count
            nxt[total - step] = nxt.get(total - step, 0) + count
        ways = nxt
    extreme = sum(count for total, count in ways.items() if abs(total) >= observed)
    return min(1.0, extreme / 2 ** len(steps))


def _points(value: float | None) -> float | None:
    return None if value is None else round(100.0 * value, 4)


def effect(outcomes: Sequence[Mapping[str, Any]], level: float = LEVEL) -> dict[str, Any]:
    """The statistics of one cell (docs/variants.md §6), in accuracy points (0-100):
    ``pairs``, ``sessions``, ``origin_accuracy``, ``variant_accuracy``, ``difference`` (variant minus
    origin), ``ci_low``/``ci_high`` (session-clustered, :func:`clustered_mean`, clipped to [-100, 100]), ``p_value``
    (:func:`sign_flip_p_value`), ``worse``/``better`` (pairs whose variant share is lower/higher) and
    ``small`` (fewer than :data:`SMALL_PAIRS` pairs or :data:`SMALL_SESSIONS` sessions)."""
    clusters = [o["origin"] for o in outcomes]
    differences = [o["difference"] for o in outcomes]
    diff = clustered_mean(differences, clusters, level)
    if diff["low"] is not None:  # a difference of shares lies in [-1, 1]
        diff = {**diff, "low": max(-1.0, diff["low"]), "high": min(1.0, diff["high"])}
    origin = clustered_mean([o["origin_share"] for o in outcomes], clusters, level)
    variant = clustered_mean([o["variant_share"] for o in outcomes], clusters, level)
    return {
        "pairs": len(outcomes),
        "sessions": diff["clusters"],
        "origin_accuracy": _points(origin["value"]),
        "variant_accuracy": _points(variant["value"]),
        "difference": _points(diff["value"]),
        "ci_low": _points(diff["low"]),
        "ci_high": _points(diff["high"]),
        "p_value": sign_flip_p_value(differences, clusters),
        "worse": sum(1 for d in differences if d < 0),
        "better": sum(1 for d in differences if d > 0),
        "small": len(outcomes) < SMALL_PAIRS or diff["clusters"] < SMALL_SESSIONS,
    }


def accuracy_point(shares: Sequence[Fraction], clusters: Sequence[str], level: float = LEVEL) -> dict[str, Any]:
    """Target-task accuracy with its session-clustered interval, in points: ``{"pairs", "accuracy",
    "ci_low", "ci_high"}`` (the transitions curve, docs/variants.md §6.4)."""
    mean = clustered_mean(shares, clusters, level)
    low = None if mean["low"] is None else max(0.0, mean["low"])
    high = None if mean["high"] is None else min(1.0, mean["high"])
    return {"pairs": mean["n"], "accuracy": _points(mean["value"]), "ci_low": _points(low), "ci_high": _points(high)}
