"""Confidence intervals of a run's accuracies (Wilson score intervals), and the paired bootstrap of the
difference of two runs (docs/metrics.md §10).

Proportions. Session accuracy is a share of independent sessions: its interval is the Wilson score
interval on ``sessions``. Task accuracy is a share of tasks, but the tasks of a session share tools,
history and user, so they are not independent draws: its interval is the Wilson interval on an
effective number of tasks, ``tasks / design effect``, the design effect being the cluster-robust
variance of the ratio over its binomial variance (at least 1), and the effective number kept between
the number of sessions and the number of tasks. When every task is right or every task is wrong the
data say nothing about clustering, and the effective number is the number of sessions (the widest
choice). Unlike a percentile bootstrap, a Wilson interval never collapses to a point at 0% or 100%
(0 of 24 sessions gives [0.00%, 13.80%]).

The percentile bootstrap below (:func:`bootstrap_accuracy`) is kept for reference and for the tests.

Sessions are the unit of resampling: the 4 tasks of a session share tools,
history and user, so they are not independent draws. Each resample draws as
many sessions as the run has, with replacement, and recomputes task accuracy
(correct tasks / tasks of the drawn sessions) and session accuracy (share of
drawn sessions with every task correct). The interval is the 2.5th and 97.5th
percentile of the resampled values (percentile bootstrap). A fixed seed gives
the same interval on every run of the report.

For two runs on the same sessions the paired bootstrap draws the SAME sessions
for both runs in each resample and takes the difference, so the session-level
difficulty shared by both runs cancels out. A difference whose interval holds
0 is reported as within noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wildtoolbench.bench.trials import LEVEL

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap interval (ratios in [0, 1], or differences in [-1, 1])."""

    value: float
    low: float
    high: float

    def contains_zero(self) -> bool:
        """True when 0 lies within ``[low, high]``."""
        return self.low <= 0.0 <= self.high


@dataclass(frozen=True)
class SessionOutcomes:
    """Per-session counts of one run: ``correct[i]`` of ``total[i]`` tasks right in session ``i``."""

    ids: tuple[str, ...]
    correct: np.ndarray
    total: np.ndarray

    @classmethod
    def from_lists(cls, ids: Sequence[str], correct: Sequence[int], total: Sequence[int]) -> SessionOutcomes:
        """Build from parallel sequences (one entry per session).

        Raises:
            ValueError: the lengths differ, there is no session, or a count is out of range.
        """
        if not (len(ids) == len(correct) == len(total)):
            raise ValueError("ids, correct and total must have one entry per session")
        if not ids:
            raise ValueError("no sessions")
        c = np.asarray(correct, dtype=np.int64)
        t = np.asarray(total, dtype=np.int64)
        if (c < 0).any() or (c > t).any() or (t <= 0).any():
            raise ValueError("each session needs 0 <= correct <= total and total >= 1")
        return cls(tuple(ids), c, t)

    def task_accuracy(self) -> float:
        """Correct tasks / tasks."""
        return float(self.correct.sum() / self.total.sum())

    def session_accuracy(self) -> float:
        """Share of sessions with every task correct."""
        return float((self.correct == self.total).mean())


@dataclass(frozen=True)
class PairedDifference:
    """Difference ``a - b`` of two runs over their shared sessions, with paired-bootstrap intervals.

    Attributes:
        task, session: the differences in task and session accuracy.
        sessions: number of shared sessions.
    """

    task: Interval
    session: Interval
    sessions: int

    def within_noise(self) -> bool:
        """True when both intervals hold 0 (no difference the data can tell apart from resampling noise)."""
        return self.task.contains_zero() and self.session.contains_zero()


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson(successes: float, n: float, level: float = LEVEL, value: float | None = None) -> Interval:
    """Wilson score interval of a proportion (docs/metrics.md §10).

    Args:
        successes: successes (may be fractional when ``n`` is an effective sample size).
        n: trials, > 0 (may be fractional).
        level: coverage, 0.95 for a 95% interval.
        value: the point estimate to report (default ``successes / n``).

    Returns:
        ``Interval(value, low, high)`` with ``0 <= low <= value <= high <= 1``; ``low > 0`` unless
        ``successes == 0`` and ``high < 1`` unless ``successes == n``.

    Raises:
        ValueError: ``n`` <= 0 or ``successes`` outside ``[0, n]``.
    """
    if n <= 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes} of {n}")
    z = _z(level)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, float(centre - half))
    high = 1.0 if successes == n else min(1.0, float(centre + half))
    point = p if value is None else value
    return Interval(float(point), min(low, point), max(high, point))


def effective_tasks(correct: np.ndarray, total: np.ndarray) -> float:
    """The effective number of independent tasks of clustered counts (one entry per session):
    ``tasks / design effect``, between the number of sessions and of tasks; the number of sessions when
    every task is right or every task is wrong (docs/metrics.md §10)."""
    sessions, tasks = len(total), float(total.sum())
    hits = float(correct.sum())
    if sessions < 2 or hits in (0.0, tasks):
        return float(sessions)
    p = hits / tasks
    robust = sessions / (sessions - 1) * float(((correct - p * total) ** 2).sum()) / tasks**2
    binomial = p * (1 - p) / tasks
    effect = max(1.0, robust / binomial)
    return float(min(tasks, max(sessions, tasks / effect)))


def clustered_wilson(correct: Sequence[int], total: Sequence[int], level: float = LEVEL) -> Interval:
    """Wilson interval of correct / total tasks over sessions (``correct[i]`` of ``total[i]`` in session ``i``),
    on the effective number of tasks (:func:`effective_tasks`); the value is the plain ratio.

    Raises:
        ValueError: no task, or a count out of range.
    """
    c = np.asarray(correct, dtype=float)
    t = np.asarray(total, dtype=float)
    if t.sum() <= 0 or (c < 0).any() or (c > t).any():
        raise ValueError("need at least one task and 0 <= correct <= total per session")
    t, c = t[t > 0], c[t > 0]
    p = float(c.sum() / t.sum())
    n = effective_tasks(c, t)
    return wilson(p * n, n, level, value=p)


def accuracy_intervals(outcomes: SessionOutcomes, level: float = LEVEL) -> dict[str, Interval]:
    """Intervals of a run's task accuracy (:func:`clustered_wilson`) and session accuracy (:func:`wilson` on
    sessions), docs/metrics.md §10.

    Returns:
        ``{"task": Interval, "session": Interval}``; ``value`` is the accuracy on the sessions as given.
    """
    perfect = int((outcomes.correct == outcomes.total).sum())
    return {
        "task": clustered_wilson(outcomes.correct, outcomes.total, level),
        "session": wilson(perfect, len(outcomes.ids), level),
    }


def _interval(value: float, samples: np.ndarray, level: float) -> Interval:
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return Interval(float(value), float(low), float(high))


def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def bootstrap_accuracy(
    outcomes: SessionOutcomes,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> dict[str, Interval]:
    """Percentile-bootstrap intervals of task and session accuracy, resampling sessions.

    Args:
        outcomes: the run's per-session counts.
        resamples: bootstrap resamples.
        seed: seed of the generator (``numpy.random.default_rng``); same inputs and seed, same intervals.
        level: coverage, 0.95 for a 95% interval.

    Returns:
        ``{"task": Interval, "session": Interval}``; ``value`` is the accuracy on the sessions as given.

    Raises:
        ValueError: ``resamples`` < 1.
    """
    draws = _draws(len(outcomes.ids), resamples, seed)
    correct = outcomes.correct[draws]
    total = outcomes.total[draws]
    task = correct.sum(axis=1) / total.sum(axis=1)
    session = (correct == total).mean(axis=1)
    return {
        "task": _interval(outcomes.task_accuracy(), task, level),
        "session": _interval(outcomes.session_accuracy(), session, level),
    }


def paired_bootstrap(
    a: SessionOutcomes,
    b: SessionOutcomes,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> PairedDifference | None:
    """Paired bootstrap of ``a - b`` in task and session accuracy over the sessions both runs have.

    Args:
        a, b: two runs' per-session counts; sessions are paired by id.
        resamples, seed, level: as :func:`bootstrap_accuracy`.

    Returns:
        A :class:`PairedDifference` (``value`` = the difference on the shared
        sessions), or ``None`` when the runs share no session.

    Raises:
        ValueError: ``resamples`` < 1, or a shared session has different task counts.
    """
    index_b = {sid: i for i, sid in enumerate(b.ids)}
    pairs = [(i, index_b[sid]) for i, sid in enumerate(a.ids) if sid in index_b]
    if not pairs:
        return None
    ia = np.array([p[0] for p in pairs])
    ib = np.array([p[1] for p in pairs])
    ca, ta, cb, tb = a.correct[ia], a.total[ia], b.correct[ib], b.total[ib]
    if (ta != tb).any():
        raise ValueError("paired sessions must have the same number of tasks")
    draws = _draws(len(pairs), resamples, seed)
    tasks = ta[draws].sum(axis=1)
    task_diff = (ca[draws].sum(axis=1) - cb[draws].sum(axis=1)) / tasks
    session_diff = (ca[draws] == ta[draws]).mean(axis=1) - (cb[draws] == tb[draws]).mean(axis=1)
    value_task = float((ca.sum() - cb.sum()) / ta.sum())
    value_session = float((ca == ta).mean() - (cb == tb).mean())
    return PairedDifference(
        _interval(value_task, task_diff, level), _interval(value_session, session_diff, level), len(pairs)
    )
