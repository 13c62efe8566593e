"""Comparing two candidates on the same tasks: the paired difference with its interval, the minimum
detectable difference and a verdict (docs/trials.md §6), and the stopping rule that adds trials until
the comparison is decided (docs/trials.md §7).

Input shape, as in :mod:`wildtoolbench.bench.trials`: each candidate's verdicts map a task key ``(session id, task
index)`` to its verdicts over trials (``True`` = correct); tasks of one session share a trial count.
Both candidates must hold the same task keys. ``a`` and ``b`` are the two sides of every difference:
a positive difference means A is more accurate.

Pure functions over plain data (standard library only): no I/O, no framework.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.trials import TaskKey, student_t_quantile

ALPHA = 0.05
"""Two-sided error rate of the fixed-sample intervals and of the stopping rule (docs/trials.md §6, §7)."""
POWER = 0.80
"""Power at which the minimum detectable difference is stated (docs/trials.md §6)."""
TAU = 0.10
"""Scale of the normal mixture of the stopping rule: the size of difference it detects fastest (§7)."""
MIN_TRIALS = 2
"""Trials every session gets before the stopping rule may leave one out for being stable (§7)."""

A_BETTER = "A better"
B_BETTER = "B better"
WITHIN_NOISE = "within noise"
CONTINUE = "continue"


def verdict_of(low: float, high: float) -> str:
    """``A better`` when the interval of ``a - b`` lies above 0, ``B better`` when below, else
    ``within noise`` (docs/trials.md §6)."""
    if low > 0.0:
        return A_BETTER
    if high < 0.0:
        return B_BETTER
    return WITHIN_NOISE


def _paired_sessions(
    a: Mapping[TaskKey, Sequence[bool]], b: Mapping[TaskKey, Sequence[bool]]
) -> dict[str, list[tuple[Sequence[bool], Sequence[bool]]]]:
    """``{session id: [(a verdicts, b verdicts) per task in task order]}``; checks the pairing."""
    missing = sorted(set(a) ^ set(b))
    if missing:
        raise ValueError(f"the candidates do not hold the same tasks: {len(missing)} differ, first {missing[0]!r}")
    sessions: dict[str, list[tuple[int, Sequence[bool], Sequence[bool]]]] = {}
    for key in a:
        sessions.setdefault(key[0], []).append((key[1], a[key], b[key]))
    paired: dict[str, list[tuple[Sequence[bool], Sequence[bool]]]] = {}
    for session_id, tasks in sessions.items():
        tasks.sort(key=lambda item: item[0])
        for side, column in (("A", 1), ("B", 2)):
            lengths = {len(task[column]) for task in tasks}
            if len(lengths) > 1 or 0 in lengths:
                raise ValueError(
                    f"session {session_id!r}: candidate {side}'s tasks have trial counts {sorted(lengths)}; "
                    "a trial evaluates every task of a session once"
                )
        paired[session_id] = [(task[1], task[2]) for task in tasks]
    if not paired:
        raise ValueError("no task to compare")
    return paired


# --------------------------------------------------------------------------- fixed sample


@dataclass(frozen=True)
class Difference:
    """The paired difference ``a - b`` of one accuracy (docs/trials.md §6).

    Attributes:
        a, b: the two candidates' accuracies (fractions; per session, the mean over its trials).
        value: ``a - b``.
        low, high: the two-sided ``1 - alpha`` interval of ``value``, clipped to [-1, 1].
        se: its standard error (sessions as clusters).
        mdd: the smallest true difference this comparison detects with probability ``power``.
        verdict: ``A better``, ``B better`` or ``within noise``.
        units: tasks (task accuracy) or sessions (session accuracy) compared.
    """

    a: float
    b: float
    value: float
    low: float
    high: float
    se: float
    mdd: float
    verdict: str
    units: int

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return dict(self.__dict__)


def _cluster_difference(
    diffs: Sequence[float], sizes: Sequence[int], a: float, b: float, alpha: float, power: float
) -> Difference:
    """Difference of sums ``diffs[s]`` over ``sum(sizes)`` units, sessions as clusters (docs/trials.md §6)."""
    units = sum(sizes)
    clusters = len(diffs)
    value = sum(diffs) / units
    if clusters < 2:
        return Difference(a, b, value, -math.inf, math.inf, math.inf, math.inf, WITHIN_NOISE, units)
    spread = sum((d - n * value) ** 2 for d, n in zip(diffs, sizes))
    se = math.sqrt(clusters / (clusters - 1) * spread) / units
    df = clusters - 1
    mdd = (student_t_quantile(1.0 - alpha / 2.0, df) + student_t_quantile(power, df)) * se
    half = student_t_quantile(1.0 - alpha / 2.0, df) * se
    low, high = max(-1.0, value - half), min(1.0, value + half)  # a difference of two shares
    return Difference(a, b, value, low, high, se, mdd, verdict_of(low, high), units)


def paired_difference(
    a: Mapping[TaskKey, Sequence[bool]],
    b: Mapping[TaskKey, Sequence[bool]],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> dict[str, Any]:
    """The paired difference of task and session accuracy between two candidates on the same tasks, each with
    its interval, minimum detectable difference and verdict (docs/trials.md §6).

    Sessions are the clusters: a session's difference is the mean over its trials of A's correct tasks
    minus B's, and the interval is the cluster-robust Student-t interval over sessions (``S - 1`` degrees
    of freedom). It covers the difference on sessions drawn like these, and so also the difference on these
    very sessions (a wider target, §6).

    Args:
        a, b: ``{(session id, task index): [verdict per trial]}`` of each candidate, same task keys; trial
            counts may differ between candidates and sessions.
        alpha: two-sided error rate of the intervals.
        power: power at which the minimum detectable difference is given.

    Returns:
        ``{"task": Difference, "session": Difference, "sessions": S, "tasks": T, "trials": {"a": (min, max),
        "b": (min, max)}, "alpha": alpha, "power": power}``; with a single session the interval is infinite
        and the verdict ``within noise``.

    Raises:
        ValueError: the task keys differ, a session's tasks have different trial counts, or no task.
    """
    paired = _paired_sessions(a, b)
    task_diffs, sizes, session_diffs = [], [], []
    task_a = task_b = session_a = session_b = 0.0
    for tasks in paired.values():
        mean_a = [sum(x) / len(x) for x, _ in tasks]
        mean_b = [sum(y) / len(y) for _, y in tasks]
        task_diffs.append(sum(mean_a) - sum(mean_b))
        sizes.append(len(tasks))
        task_a, task_b = task_a + sum(mean_a), task_b + sum(mean_b)
        all_a = sum(all(x[j] for x, _ in tasks) for j in range(len(tasks[0][0]))) / len(tasks[0][0])
        all_b = sum(all(y[j] for _, y in tasks) for j in range(len(tasks[0][1]))) / len(tasks[0][1])
        session_diffs.append(all_a - all_b)
        session_a, session_b = session_a + all_a, session_b + all_b
    tasks_total, sessions_total = sum(sizes), len(paired)
    counts_a = [len(tasks[0][0]) for tasks in paired.values()]
    counts_b = [len(tasks[0][1]) for tasks in paired.values()]
    trial_counts = {"a": (min(counts_a), max(counts_a)), "b": (min(counts_b), max(counts_b))}
    return {
        "task": _cluster_difference(task_diffs, sizes, task_a / tasks_total, task_b / tasks_total, alpha, power),
        "session": _cluster_difference(
            session_diffs, [1] * sessions_total, session_a / sessions_total, session_b / sessions_total, alpha, power
        ),
        "sessions": sessions_total,
        "tasks": tasks_total,
        "trials": trial_counts,
        "alpha": alpha,
        "power": power,
    }


# --------------------------------------------------------------------------- sequential


def mixture_half_width(variance: float, *, alpha: float = ALPHA, tau: float = TAU) -> float:
    """Half width of the normal-mixture confidence sequence at an estimate of variance ``variance``
    (docs/trials.md §7): ``sqrt(V (V + tau^2) / tau^2 * (2 log(1/alpha) + log((V + tau^2) / V)))``.

    An estimate that is ever further than this from 0 rejects "no difference" with error rate at most
    ``alpha`` over all looks, however many (Robbins 1970; Johari et al. 2022). ``0`` when ``V == 0``.

    Raises:
        ValueError: ``variance < 0``, ``alpha`` outside (0, 1) or ``tau <= 0``.
    """
    if variance < 0 or not 0.0 < alpha < 1.0 or tau <= 0:
        raise ValueError("need variance >= 0, 0 < alpha < 1 and tau > 0")
    if variance == 0.0:
        return 0.0
    t2 = tau * tau
    return math.sqrt(
        variance * (variance + t2) / t2 * (2.0 * math.log(1.0 / alpha) + math.log((variance + t2) / variance))
    )


def _session_variance(counts: Sequence[int], m: int, min_trials: int) -> float:
    """Variance of one trial's correct-task count of a session whose tasks were correct ``counts[t]`` times in
    ``m`` trials (§7): the sum of its tasks' unbiased Bernoulli variances once it has ``min_trials`` trials
    (0 when no verdict ever differed), else the bound ``tasks / 4``."""
    if m < max(2, min_trials):
        return len(counts) / 4.0
    return sum((c + 0.5) * (m - c + 0.5) for c in counts) / ((m + 1) * (m + 1))


@dataclass(frozen=True)
class SequentialDecision:
    """One look of the stopping rule of docs/trials.md §7.

    Attributes:
        decision: ``A better`` / ``B better`` (the confidence sequence excludes 0), ``within noise`` (it
            holds 0 and no session can take another trial), or ``continue``.
        estimate: the task-accuracy difference ``a - b`` (each task's mean over its trials).
        low, high: the confidence sequence at this look.
        variance: the estimated variance of ``estimate``.
        rerun: ``{"a": [session ids], "b": [session ids]}``: the sessions to give one more trial, per
            candidate, in session order (empty when decided or when the budget is spent).
        trials: ``{"a": session trials run, "b": ...}``: the evidence so far, in session evaluations.
    """

    decision: str
    estimate: float
    low: float
    high: float
    variance: float
    rerun: dict[str, list[str]]
    trials: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return dict(self.__dict__)


def sequential_decision(
    a: Mapping[TaskKey, Sequence[bool]],
    b: Mapping[TaskKey, Sequence[bool]],
    *,
    max_trials: int,
    rerun: Sequence[str] = ("a", "b"),
    alpha: float = ALPHA,
    tau: float = TAU,
    min_trials: int = MIN_TRIALS,
) -> SequentialDecision:
    """Look at the paired evidence so far and decide A better / B better / continue, and which sessions to
    give another trial (docs/trials.md §7).

    The estimate is the difference of task accuracy, each session's tasks averaged over that candidate's
    trials; its variance adds each session's per-trial variance divided by its trial count (a session that
    has fewer than ``min_trials`` trials counts the bound ``tasks / 4``). The decision comes from the
    normal-mixture confidence sequence (:func:`mixture_half_width`), valid at every look. A session gets
    another trial of a candidate in ``rerun`` while it has fewer than ``min_trials`` trials of it, or its
    verdicts differed between that candidate's trials, and while it has fewer than ``max_trials``.

    Call it after every round of trials (a round runs the returned sessions once more); stop at the first
    decision other than ``continue``.

    Args:
        a, b: ``{(session id, task index): [verdict per trial]}`` of each candidate, same task keys.
        max_trials: the budget: trials per session and candidate (``--max-trials``).
        rerun: the candidates that can be run again (``("a",)`` when B is a finished run that cannot).
        alpha: error rate of the rule (two-sided, over all looks).
        tau: scale of the normal mixture.
        min_trials: trials before a session may be left out for being stable (>= 2).

    Returns:
        A :class:`SequentialDecision`.

    Raises:
        ValueError: as :func:`paired_difference`; ``max_trials < 1``, ``min_trials < 2``, or a ``rerun``
            entry other than ``"a"`` and ``"b"``.
    """
    if max_trials < 1 or min_trials < 2 or not set(rerun) <= {"a", "b"}:
        raise ValueError("need max_trials >= 1, min_trials >= 2 and rerun among 'a', 'b'")
    paired = _paired_sessions(a, b)
    tasks = sum(len(t) for t in paired.values())
    estimate = variance = 0.0
    chosen: dict[str, list[str]] = {"a": [], "b": []}
    runs = {"a": 0, "b": 0}
    for session_id, pairs in paired.items():
        for side, column in (("a", 0), ("b", 1)):
            m = len(pairs[0][column])
            counts = [sum(pair[column]) for pair in pairs]
            runs[side] += m
            mean = sum(counts) / m
            estimate += mean if side == "a" else -mean
            variance += _session_variance(counts, m, min_trials) / m
            if side in rerun and m < max_trials and (m < min_trials or any(0 < c < m for c in counts)):
                chosen[side].append(session_id)
    estimate /= tasks
    variance /= tasks * tasks
    half = mixture_half_width(variance, alpha=alpha, tau=tau)
    low, high = estimate - half, estimate + half
    decision = verdict_of(low, high)
    if decision == WITHIN_NOISE and (chosen["a"] or chosen["b"]):
        decision = CONTINUE
    if decision != CONTINUE:
        chosen = {"a": [], "b": []}
    return SequentialDecision(decision, estimate, low, high, variance, chosen, runs)
