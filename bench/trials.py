"""Repeated trials of one candidate: per-trial accuracy, pass^k, pass@k, flip rate (docs/trials.md).

A *trial* is one evaluation of a session: the candidate answers every task of the session once, on
the gold history (docs/evaluation.md). Running each session K times (independent model calls, the
same gold history) gives every task a list of K verdicts. This module turns such lists into the
estimates of docs/trials.md §2-§4 and the ``trials.json`` document of §5.

Input shape, used throughout: ``verdicts`` maps a *task key* ``(session id, task index)`` to the
task's verdicts in trial order (``True`` = labelled ``correct``). Every task of one session has the
same number of trials (a trial evaluates the whole session); sessions may have different numbers.

Pure functions over plain data (standard library only): no I/O, no framework.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import Any

from wildtoolbench.bench.terms import CORRECT

TaskKey = tuple[str, int]
"""``(session id, task index)``: a task of the dataset (task index from 0, in session order)."""

LEVEL = 0.95
"""Coverage of the intervals of this module and of the report's (``wildtoolbench.reports.stats``; docs/trials.md §2)."""


# --------------------------------------------------------------------------- estimators of one item


def pass_hat_k(correct: int, trials: int, k: int) -> float:
    """pass^k of one item: the unbiased estimate of the chance that k independent trials are all
    correct, ``C(c, k) / C(n, k)`` (tau-bench, Yao et al. 2024, §4; docs/trials.md §3).

    Args:
        correct: ``c``, correct trials (0 <= c <= n).
        trials: ``n``, trials run (n >= k).
        k: trials that must all be correct (k >= 1).

    Returns:
        A fraction in [0, 1]; it is exact (no sampling) when ``k == 1`` (``c / n``).

    Raises:
        ValueError: ``k < 1``, ``n < k`` or ``c`` outside ``[0, n]``.
    """
    _check_counts(correct, trials, k)
    return math.comb(correct, k) / math.comb(trials, k)


def pass_at_k(correct: int, trials: int, k: int) -> float:
    """pass@k of one item: the unbiased estimate of the chance that at least one of k independent trials
    is correct, ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, Codex, §2.1; docs/trials.md §3).

    Args and errors as :func:`pass_hat_k`. Returns a fraction in [0, 1].
    """
    _check_counts(correct, trials, k)
    return 1.0 - math.comb(trials - correct, k) / math.comb(trials, k)


def _check_counts(correct: int, trials: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if trials < k:
        raise ValueError(f"{trials} trial(s) cannot estimate k = {k}: need at least k trials")
    if not 0 <= correct <= trials:
        raise ValueError(f"correct must be in [0, {trials}], got {correct}")


FEW_PAIRED_SESSIONS = 20
"""Below this many paired sessions a comparison's verdict carries a warning (docs/trials.md §6): its
interval rests on a handful of clusters (a t interval with fewer than 19 degrees of freedom, or a
bootstrap with few distinct resamples), and sessions that happen to agree give a zero spread."""


def flips(verdicts: Sequence[bool]) -> bool:
    """Whether an item's verdict is not the same in all its trials (docs/trials.md §4); ``False`` for fewer
    than 2 trials."""
    return len(set(verdicts)) > 1


def pairwise_disagreement(correct: int, trials: int) -> float:
    """Share of the ordered pairs of distinct trials of one item whose verdicts differ,
    ``2 c (n - c) / (n (n - 1))``: the unbiased estimate of ``2 p (1 - p)`` (docs/trials.md §4).

    Raises:
        ValueError: fewer than 2 trials, or ``correct`` outside ``[0, trials]``.
    """
    if trials < 2:
        raise ValueError(f"pairwise disagreement needs at least 2 trials, got {trials}")
    _check_counts(correct, trials, 1)
    return 2.0 * correct * (trials - correct) / (trials * (trials - 1))


# --------------------------------------------------------------------------- input


def verdicts_from_score_lines(trials: Sequence[Iterable[Mapping[str, Any]]]) -> dict[TaskKey, list[bool]]:
    """The verdicts of every task over trials, from each trial's score lines (docs/trials.md §1).

    Args:
        trials: ``trials[j]`` holds trial ``j + 1``'s score lines, as ``score.jsonl`` writes them
            (``{"id": <session id>, "results": [{"label": "correct" | "error", ...}, ...]}``, one line per
            session; docs/scoring.md §4). A session may be missing from later trials (its trials stop
            there), never from an earlier trial than one it is in.

    Returns:
        ``{(session id, task index): [verdict of trial 1, verdict of trial 2, ...]}``, sessions in first-seen
        order; a verdict is ``label == "correct"``.

    Raises:
        ValueError: a line without ``id`` or ``results`` list, a session twice in one trial, a session whose
            task count changes between trials, or a session missing from a trial before one it is in;
            the message names the trial and the session.
    """
    found: dict[TaskKey, list[bool]] = {}
    counts: dict[str, int] = {}
    trial_count: dict[str, int] = {}
    for j, lines in enumerate(trials, 1):
        seen: set[str] = set()
        for line in lines:
            session_id = line.get("id") if isinstance(line, Mapping) else None
            results = line.get("results") if isinstance(line, Mapping) else None
            if not isinstance(session_id, str) or not isinstance(results, list):
                raise ValueError(f"trial {j}: a score line without an 'id' string and a 'results' list")
            if session_id in seen:
                raise ValueError(f"trial {j}: session {session_id!r} appears twice")
            seen.add(session_id)
            if counts.setdefault(session_id, len(results)) != len(results):
                raise ValueError(
                    f"trial {j}: session {session_id!r} has {len(results)} tasks, {counts[session_id]} before"
                )
            if trial_count.get(session_id, 0) != j - 1:
                raise ValueError(
                    f"trial {j}: session {session_id!r} is missing from trial {trial_count.get(session_id, 0) + 1}"
                )
            trial_count[session_id] = j
            for index, task in enumerate(results):
                label = task.get("label") if isinstance(task, Mapping) else None
                found.setdefault((session_id, index), []).append(label == CORRECT)
    return found


def _by_session(verdicts: Mapping[TaskKey, Sequence[bool]]) -> dict[str, list[tuple[int, list[bool]]]]:
    """``{session id: [(task index, verdicts), ...]}`` in task order; checks one trial count per session."""
    sessions: dict[str, list[tuple[int, list[bool]]]] = {}
    for key, values in verdicts.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"task key {key!r}: expected (session id, task index)")
        sessions.setdefault(key[0], []).append((key[1], [bool(v) for v in values]))
    for session_id, tasks in sessions.items():
        tasks.sort(key=lambda item: item[0])
        lengths = {len(values) for _, values in tasks}
        if len(lengths) > 1:
            raise ValueError(f"session {session_id!r}: its tasks have different trial counts {sorted(lengths)}")
        if 0 in lengths:
            raise ValueError(f"session {session_id!r}: a task without any trial")
    return sessions


def session_verdicts(verdicts: Mapping[TaskKey, Sequence[bool]]) -> dict[str, list[bool]]:
    """Per session and trial, whether every task of the session was correct in that trial (docs/metrics.md §2,
    docs/trials.md §1).

    Returns:
        ``{session id: [trial 1 all correct, trial 2 all correct, ...]}``.

    Raises:
        ValueError: a malformed task key, or tasks of one session with different trial counts.
    """
    return {
        session_id: [all(values[j] for _, values in tasks) for j in range(len(tasks[0][1]))]
        for session_id, tasks in _by_session(verdicts).items()
    }


# --------------------------------------------------------------------------- estimates with intervals


Unit = list[bool]
"""The verdicts of one counted unit (a task, or a session's all-correct verdicts) over its trials."""


def _jackknife_estimate(
    sessions: Sequence[Sequence[Unit]], per_unit: Callable[[int, int], float], k: int, level: float
) -> dict[str, Any]:
    """Mean of ``per_unit(c, n)`` over the units, with the delete-one-trial jackknife interval of
    docs/trials.md §2: each session's sum is jackknifed over its own trials, the sessions' variances add
    up, and the quantile is Student's t with the Welch-Satterthwaite degrees of freedom.

    ``sessions[s]`` lists the units of session ``s`` (all with the session's trial count ``n``); units of
    sessions with fewer than ``k`` trials are left out. Returns ``{"value", "low", "high", "units"}``; the
    bounds are ``None`` when some counted session has only ``k`` trials (a jackknife needs ``k + 1``)
    or no unit is counted.
    """
    total = 0.0
    units = 0
    parts: list[tuple[float, int]] = []  # (jackknife variance of the session's sum, its trials - 1)
    interval = True
    for units_of_session in sessions:
        if not units_of_session:
            continue
        n = len(units_of_session[0])
        if n < k:
            continue
        counts = [sum(unit) for unit in units_of_session]
        total += sum(per_unit(c, n) for c in counts)
        units += len(counts)
        if n < k + 1:
            interval = False
            continue
        # leaving trial j out moves each unit from (c, n) to (c - verdict_j, n - 1): two values per unit
        kept_wrong = [per_unit(c, n - 1) if c < n else 0.0 for c in counts]
        gain = [(per_unit(c - 1, n - 1) if c else 0.0) - kept_wrong[u] for u, c in enumerate(counts)]
        base = sum(kept_wrong)
        leave_out = [base + sum(gain[u] for u, unit in enumerate(units_of_session) if unit[j]) for j in range(n)]
        mean = sum(leave_out) / n
        parts.append(((n - 1) / n * sum((g - mean) ** 2 for g in leave_out), n - 1))
    if not units:
        return {"value": None, "low": None, "high": None, "units": 0}
    value = total / units
    if not interval:
        return {"value": value, "low": None, "high": None, "units": units}
    half = _t_half_width(parts, level) / units
    return {"value": value, "low": max(0.0, value - half), "high": min(1.0, value + half), "units": units}


def _t_half_width(parts: Sequence[tuple[float, int]], level: float) -> float:
    """Half width ``t * sqrt(sum of variances)`` for independent variance estimates ``(v, df)``, with the
    Welch-Satterthwaite degrees of freedom ``(sum v)^2 / sum(v^2 / df)`` (docs/trials.md §2)."""
    variance = sum(v for v, _ in parts)
    if variance <= 0.0:
        return 0.0
    df = variance**2 / sum(v * v / d for v, d in parts if v > 0.0)
    return student_t_quantile(0.5 + level / 2.0, df) * math.sqrt(variance)


# --------------------------------------------------------------------------- Student's t


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``0 <= x <= 1``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` (> 0, possibly fractional) degrees of freedom (docs/trials.md §2).

    Raises:
        ValueError: ``df <= 0``.
    """
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def student_t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (docs/trials.md §2); the normal
    quantile when ``df`` is infinite or above 1e7.

    Raises:
        ValueError: ``q`` outside (0, 1) or ``df <= 0``.
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile level must be in (0, 1), got {q}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    if df > 1e7:
        return NormalDist().inv_cdf(q)
    if q < 0.5:
        return -student_t_quantile(1.0 - q, df)
    # Newton's method on the cdf from the Cornish-Fisher start, kept inside a bracket that bisection shrinks
    z = NormalDist().inv_cdf(q)
    x = z + (z**3 + z) / (4.0 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96.0 * df * df)
    low, high = 0.0, max(2.0 * x, 1.0)
    while student_t_cdf(high, df) < q:
        low, high = high, high * 2.0
    log_norm = math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    for _ in range(100):
        if not low < x < high:
            x = (low + high) / 2.0
        error = student_t_cdf(x, df) - q
        if error < 0:
            low = x
        else:
            high = x
        density = math.exp(log_norm - (df + 1.0) / 2.0 * math.log1p(x * x / df))
        step = error / density
        x -= step
        if abs(step) < 1e-12 * max(1.0, abs(x)) or high - low < 1e-12 * max(1.0, high):
            break
    return x


def _flip_summary(sessions: Sequence[Sequence[Unit]], trials: int) -> dict[str, Any]:
    """Flip rate, stable share and pairwise disagreement of docs/trials.md §4 over the first ``trials``
    trials of every unit (units with fewer trials are left out)."""
    counted = flipped = 0
    disagreement = 0.0
    for units_of_session in sessions:
        for unit in units_of_session:
            if len(unit) < trials or trials < 2:
                continue
            first = unit[:trials]
            counted += 1
            flipped += flips(first)
            disagreement += pairwise_disagreement(sum(first), trials)
    if not counted:
        return {"flip_rate": None, "stable_share": None, "pairwise_disagreement": None, "flipped": 0, "units": 0}
    return {
        "flip_rate": flipped / counted,
        "stable_share": 1.0 - flipped / counted,
        "pairwise_disagreement": disagreement / counted,
        "flipped": flipped,
        "units": counted,
    }


def _summary(sessions: Sequence[Sequence[Unit]], level: float, max_k: int | None) -> dict[str, Any]:
    """Everything docs/trials.md §2-§4 estimates for one kind of unit (tasks of a bucket, or sessions)."""
    sessions = [units for units in sessions if units]
    if not sessions:
        return {"units": 0, "trials": 0}
    trials = min(len(units[0]) for units in sessions)
    ks = range(1, (trials if max_k is None else min(trials, max_k)) + 1)
    most = max(len(units[0]) for units in sessions)
    per_trial = []
    for j in range(trials):
        values = [unit[j] for units in sessions for unit in units]
        per_trial.append(sum(values) / len(values))
    summary: dict[str, Any] = {
        "units": sum(len(units) for units in sessions),
        "trials": trials,
        "most_trials": most,
        "per_trial": per_trial,
        "mean": _jackknife_estimate(sessions, lambda c, n: c / n, 1, level),
        "pass_hat_k": {
            str(k): _jackknife_estimate(sessions, lambda c, n, k=k: pass_hat_k(c, n, k), k, level) for k in ks
        },
        "pass_at_k": {
            str(k): _jackknife_estimate(sessions, lambda c, n, k=k: pass_at_k(c, n, k), k, level) for k in ks
        },
    }
    summary.update(_flip_summary(sessions, trials))
    return summary


def summarize_trials(
    verdicts: Mapping[TaskKey, Sequence[bool]],
    breakdowns: Mapping[str, Mapping[TaskKey, Iterable[str]]] | None = None,
    *,
    level: float = LEVEL,
    max_k: int | None = None,
) -> dict[str, Any]:
    """The estimates of docs/trials.md §2-§4 for tasks, sessions and each bucket of each breakdown.

    Args:
        verdicts: ``{(session id, task index): [verdict per trial]}`` (module docstring; e.g.
            :func:`verdicts_from_score_lines`). Tasks of one session share a trial count.
        breakdowns: optional ``{breakdown name: {task key: bucket names}}``, e.g. ``{"task_type": ...,
            "turn_subtype": ...}`` from :func:`session_buckets`; a task may be in several buckets of one
            breakdown (``Subsequent Turn`` and ``Coreferential Reference``) and tasks missing from it are in
            none.
        level: coverage of the intervals (0.95).
        max_k: estimate pass^k and pass@k for k up to this (``None``: up to K).

    Returns:
        ``{"trials": K, "level": level, "task": S, "session": S, <breakdown name>: {<bucket>: S, ...}, ...}``
        where ``K`` is the smallest trial count of any session and each summary ``S`` is::

            {"units": <tasks or sessions counted>, "trials": <smallest trial count among them>,
             "most_trials": <largest>, "per_trial": [<accuracy of trial 1>, ..., <trial K>],
             "mean": E, "pass_hat_k": {"1": E, ..., "K": E}, "pass_at_k": {"1": E, ...},
             "flip_rate": f, "stable_share": 1 - f, "pairwise_disagreement": d, "flipped": <units>}

        with ``E = {"value", "low", "high", "units"}`` (fractions; ``low``/``high`` ``None`` when no
        interval can be given, §2). ``mean`` is the average per-unit success rate over all trials;
        ``flip_rate`` and ``pairwise_disagreement`` use each unit's first K trials (``None`` when K < 2).
        Buckets are listed in first-seen order.

    Raises:
        ValueError: no task, a malformed task key, or tasks of one session with different trial counts.
    """
    grouped = _by_session(verdicts)
    if not grouped:
        raise ValueError("no task verdicts to summarize")
    tasks = [[values for _, values in tasks] for tasks in grouped.values()]
    sessions = [[[all(values[j] for values in units) for j in range(len(units[0]))]] for units in tasks]
    result: dict[str, Any] = {
        "trials": min(len(units[0]) for units in tasks),
        "level": level,
        "task": _summary(tasks, level, max_k),
        "session": _summary(sessions, level, max_k),
    }
    for name, buckets_of in (breakdowns or {}).items():
        members: dict[str, list[list[Unit]]] = {}
        for session_id, session_tasks in grouped.items():
            in_session: dict[str, list[Unit]] = {}
            for index, values in session_tasks:
                for bucket in buckets_of.get((session_id, index), ()):
                    in_session.setdefault(bucket, []).append(values)
            for bucket, units in in_session.items():
                members.setdefault(bucket, []).append(units)
        result[name] = {bucket: _summary(units, level, max_k) for bucket, units in members.items()}
    return result


def session_buckets(sessions: Iterable[Any], language: str = "en") -> dict[str, dict[TaskKey, list[str]]]:
    """The task-type and turn-subtype buckets of every task, as :func:`summarize_trials` takes them, counted as
    the metric dict counts them (docs/metrics.md §1): a multi-tool type also counts under ``Multi-Tool``; the
    first task under ``First Turn``, a later one under ``Subsequent Turn`` and its own subtype.

    Args:
        sessions: ``wildtoolbench.bench.schema.Session`` objects or their dicts.
        language: the side that ran (``wildtoolbench.bench.schema.bucket_labels``).

    Returns:
        ``{"task_type": {task key: [bucket, ...]}, "turn_subtype": {task key: [bucket, ...]}}``.

    Raises:
        ValueError: (``zh``) labels that cannot be bucketed (``wildtoolbench.bench.schema.bucket_labels``).
    """
    from wildtoolbench.bench.schema import MULTI_TOOL_TYPES, bucket_labels
    from wildtoolbench.bench.terms import FIRST_TURN, MULTI_TOOL, SUBSEQUENT_TURN

    task_type: dict[TaskKey, list[str]] = {}
    turn_subtype: dict[TaskKey, list[str]] = {}
    for session in sessions:
        session_id = session.id if hasattr(session, "id") else session["id"]
        types, subtypes = bucket_labels(session, language)
        for index, kind in enumerate(types):
            task_type[(session_id, index)] = [kind, MULTI_TOOL] if kind in MULTI_TOOL_TYPES else [kind]
            turn_subtype[(session_id, index)] = [FIRST_TURN] if index == 0 else [SUBSEQUENT_TURN, subtypes[index - 1]]
    return {"task_type": task_type, "turn_subtype": turn_subtype}


def trials_document(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The ``trials.json`` document of a run with K trials (docs/trials.md §5)::

        {"trials": K,
         "pass_hat_k": {"task": {"1": v, ..., "K": v}, "session": {"1": v, ...}},
         "pass_at_k": {"task": {...}, "session": {...}},
         "flip_rate": {"task": v}}

    values as fractions (``flip_rate`` ``null`` when K < 2).

    Args:
        summary: :func:`summarize_trials` of the run.

    Raises:
        KeyError: ``summary`` is not a :func:`summarize_trials` result.
    """

    def values(kind: str, name: str) -> dict[str, float | None]:
        return {k: estimate["value"] for k, estimate in summary[kind][name].items()}

    return {
        "trials": summary["trials"],
        "pass_hat_k": {"task": values("task", "pass_hat_k"), "session": values("session", "pass_hat_k")},
        "pass_at_k": {"task": values("task", "pass_at_k"), "session": values("session", "pass_at_k")},
        "flip_rate": {"task": summary["task"]["flip_rate"]},
    }
