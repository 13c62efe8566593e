"""Agreement between reviewers: Cohen's kappa on the accept / reject verdicts of the tasks two reviewers
both judged (docs/review.md §8).

For reviewers A and B and the n tasks both gave a verdict on, ``p_o`` is the share of tasks with the
same verdict and ``p_e = a_A * a_B + r_A * r_B`` the agreement expected by chance from each reviewer's
own shares of accepts (``a``) and rejects (``r``) on those tasks. ``kappa = (p_o - p_e) / (1 - p_e)``;
when ``p_e == 1`` (both gave one and the same verdict to every task) kappa is undefined and reported as
``None``, with ``p_o`` still shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any


def cohen_kappa(pairs: Iterable[tuple[str, str]]) -> tuple[int, float | None, float | None]:
    """``(n, observed agreement, kappa)`` of paired verdicts ``(A's, B's)`` (docs/review.md §8).

    Returns:
        ``n`` the number of pairs; the observed agreement ``p_o`` in [0, 1] (``None`` when n is 0); kappa
        in [-1, 1], ``None`` when n is 0 or chance agreement is 1.
    """
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return 0, None, None
    labels = sorted({label for pair in pairs for label in pair})
    observed = sum(1 for a, b in pairs if a == b) / n
    expected = sum(
        (sum(1 for a, _ in pairs if a == label) / n) * (sum(1 for _, b in pairs if b == label) / n) for label in labels
    )
    if expected >= 1.0 - 1e-12:
        return n, observed, None
    return n, observed, (observed - expected) / (1.0 - expected)


@dataclass
class PairAgreement:
    """The agreement of two reviewers (docs/review.md §8).

    Attributes:
        first, second: the reviewers' names (``first < second``).
        n: tasks both judged; ``observed``: share with the same verdict; ``kappa``: Cohen's kappa
            (``None``: undefined).
        disagreements: ``(pos, task)`` of the tasks they judged differently.
    """

    first: str
    second: str
    n: int
    observed: float | None
    kappa: float | None
    disagreements: list[tuple[int, int]] = field(default_factory=list)


def agreement(verdicts: Iterable[Any]) -> list[PairAgreement]:
    """Every pair of reviewers with their agreement, over verdicts with ``pos``, ``task``, ``reviewer`` and
    ``verdict`` attributes (:class:`wildtoolbench.review.store.Verdict`), pairs ordered by name (docs/review.md §8)."""
    by_reviewer: dict[str, dict[tuple[int, int], str]] = {}
    for verdict in verdicts:
        by_reviewer.setdefault(verdict.reviewer, {})[(verdict.pos, verdict.task)] = verdict.verdict
    out = []
    for first, second in combinations(sorted(by_reviewer), 2):
        a, b = by_reviewer[first], by_reviewer[second]
        shared = sorted(set(a) & set(b))
        n, observed, kappa = cohen_kappa((a[item], b[item]) for item in shared)
        out.append(PairAgreement(first, second, n, observed, kappa, [item for item in shared if a[item] != b[item]]))
    return out


def task_status(verdicts: Mapping[str, str]) -> str:
    """A task's status from its reviewers' verdicts (reviewer -> verdict; docs/review.md §7.1):
    ``rejected`` when any reviewer rejected it, ``accepted`` when at least one accepted and none rejected,
    ``open`` without a verdict."""
    values = set(verdicts.values())
    if "reject" in values:
        return "rejected"
    if "accept" in values:
        return "accepted"
    return "open"


__all__ = ["PairAgreement", "agreement", "cohen_kappa", "task_status"]
