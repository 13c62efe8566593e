"""What a built report holds, shared by the page, ``report.md`` and ``report.json``: the run figures,
the paired comparisons, the error-category rules and the comparability note.

Its own module so that :mod:`wtb.report.build` (which makes a :class:`Report`) and
:mod:`wtb.report.markdown` (which writes one) both import it and not each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wtb.report.runs import Run
from wtb.report.stats import Interval, PairedDifference

RULES = [
    (
        "refusal",
        "the model replied in text where only real tool calls were due, before any correct tool step, and the text does not end in a question mark",
    ),
    ("wrong_refusal", "the same, but the text ends in a question: it asks the user for what it already has"),
    (
        "early_term",
        "the model replied in text where only real tool calls were due, after at least one correct tool step",
    ),
    (
        "redundant",
        "the model called tools where a gold candidate is the final answer (a chat task, or calls after the work is done)",
    ),
    (
        "wrong_name",
        "the model called tools where a gold candidate asks the user (the information is missing), or called names that are neither the names of a candidate nor a strict sub- or superset of them (also: calls beyond the end of every gold path)",
    ),
    (
        "call_error",
        "the called names are a strict sub- or superset of a candidate's (wrong parallel split or count); also an empty reply, unparsable calls, the step limit and a session whose inference failed (each of its tasks)",
    ),
    (
        "param_type",
        "names matched, the first failing argument message is 'args invalid json format' or a 'type inconsistent' message",
    ),
    ("param_halluc", "'args not defined', 'required args missing' or 'args keys mismatch' (invented or missing keys)"),
    (
        "param_value",
        "'value not in enum', 'string similarity too low', 'value mismatch', 'rouge calculation failed'; also the two checker messages the rules do not name, 'array length mismatch' and 'comparison failed'",
    ),
]
RULES_INTRO = (
    "The paper does not publish how it assigned its error categories; these operational rules (docs/errors.md) "
    "approximate them. A failed task is classified once, by its first failing step: a name error there "
    "gives an action category, an argument error a parameter category."
)


@dataclass
class RunFigures:
    """Uncertainty figures of one run: intervals of task and session accuracy, and its rank among the
    paper's models alone (by session then task accuracy; 1 = above all of them)."""

    task: Interval
    session: Interval
    rank: int | None


@dataclass
class Comparison:
    """A paired comparison of two runs on their shared sessions."""

    a: Run
    b: Run
    difference: PairedDifference

    def verdict(self) -> str:
        """Plain-language reading of the two intervals."""

        def one(name: str, interval: Interval) -> str:
            if interval.contains_zero():
                return f"{name}: within noise"
            better = self.a.label if interval.value > 0 else self.b.label
            return f"{name}: {better} higher"

        return f"{one('task accuracy', self.difference.task)}; {one('session accuracy', self.difference.session)}"


@dataclass
class Report:
    """What :func:`build_report` produced.

    Attributes:
        out: the report folder.
        files: paths written.
        runs: the runs, in argument order.
        figures: run key -> :class:`RunFigures`.
        comparisons: paired comparisons of every two runs on the same dataset.
    """

    out: Path
    files: list[Path]
    runs: list[Run]
    figures: dict[str, RunFigures]
    comparisons: list[Comparison] = field(default_factory=list)
    scoring: list[dict[str, Any]] = field(default_factory=list)
    """Reference vs fixed scoring (:func:`scoring_comparisons`), one entry per compared run or pair."""


OFFICIAL_SESSIONS = 256
"""Sessions of the official WildToolBench dataset, the one the paper's figures come from."""


def comparability_note(runs: Sequence[Run]) -> str:
    """A warning for runs whose ranks against the paper's models mean little: the paper's figures are on
    the official 256-session dataset (docs/metrics.md), so a run on another or a partial dataset (a demo,
    fixtures, generated sessions) is placed among them for orientation only. ``""`` when every run has
    256 sessions."""
    other = [run for run in runs if len(run.session_ids) != OFFICIAL_SESSIONS]
    if not other:
        return ""
    names = ", ".join(f"{run.label} ({len(run.session_ids)} sessions)" for run in other)
    return (
        f"Not comparable with the paper: {names}. The paper's figures are on the official "
        f"{OFFICIAL_SESSIONS}-session dataset; ranks of runs on other sessions are for orientation only."
    )
