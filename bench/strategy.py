"""The scoring strategy of a run: one object, chosen once, holding every rule that differs between modes
(docs/fixed-mode.md §1, docs/semantic-mode.md §1).

A run is scored in one mode: ``reference`` (the published evaluation, quirks included), ``fixed`` (the
eight corrections of docs/fixed-mode.md) or ``semantic`` (fixed plus the equivalence rules of
docs/semantic-mode.md). The mode name is turned into a :class:`ScoringStrategy` in exactly one place,
:func:`scoring_strategy`; everything else asks the object (``strategy.inference_fixes``,
``strategy.file_name("score.jsonl")``) instead of comparing names. The strategy is data and imports
nothing of ours; the modules that apply a rule read its fields (``wildtoolbench.bench.paths_fixed.tracker_for``,
``wildtoolbench.bench.args.check_arguments``, ``wildtoolbench.bench.scoring.strategy_checker``).

Pure module: no I/O, no LangGraph.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ScoringStrategy:
    """The rules one scoring mode applies (docs/fixed-mode.md §1).

    Attributes:
        name: the mode's name as typed (``--scoring NAME``) and recorded (``"scoring": NAME``).
        inference_fixes: fixes 1-4 (docs/fixed-mode.md §2-§5): the state-machine path tracker, one tool
            message per call, questions consume question nodes, history encoded as live.
        scoring_fixes: the scoring fixes 5-7 the task walk applies (docs/fixed-mode.md §6-§8).
        progress_fix: fix 8, accomplish progress counts the gold nodes matched (docs/fixed-mode.md §9).
        equivalences: the argument checker also accepts values equivalent to the gold under the rules of
            docs/semantic-mode.md §2 (semantic).
        paper_comparable: its numbers can stand beside the paper's leaderboard (reference only).
    """

    name: str
    inference_fixes: bool
    scoring_fixes: frozenset[int]
    progress_fix: bool
    equivalences: bool
    paper_comparable: bool

    def __str__(self) -> str:
        return self.name

    @property
    def is_reference(self) -> bool:
        """Whether this is the published evaluation's mode (records and files carry no mode tag)."""
        return self.paper_comparable

    def record_tag(self) -> dict[str, str]:
        """``{}`` in reference mode (records stay byte-for-byte the published ones), else ``{"scoring": name}``
        (docs/fixed-mode.md §1)."""
        return {} if self.is_reference else {"scoring": self.name}

    def file_name(self, base: str) -> str:
        """The run-folder file holding this mode's version of ``base`` (docs/metrics.md §7):
        ``score.jsonl`` → ``score.fixed.jsonl``; ``base`` itself in reference mode."""
        if self.is_reference:
            return base
        stem, dot, suffix = base.rpartition(".")
        return f"{stem}.{self.name}.{suffix}" if dot else f"{base}.{self.name}"

    def folder_suffix(self) -> str:
        """``""`` in reference mode, else ``-NAME``: the default run folder ends with it (docs/fixed-mode.md §1)."""
        return "" if self.is_reference else f"-{self.name}"


REFERENCE = ScoringStrategy(
    "reference", inference_fixes=False, scoring_fixes=frozenset(), progress_fix=False, equivalences=False,
    paper_comparable=True,
)
"""The published evaluation, quirks included (docs/scoring.md, docs/quirks.md)."""

FIXED = ScoringStrategy(
    "fixed", inference_fixes=True, scoring_fixes=frozenset({5, 6, 7}), progress_fix=True, equivalences=False,
    paper_comparable=False,
)
"""The eight corrections of docs/fixed-mode.md."""

SEMANTIC = ScoringStrategy(
    "semantic", inference_fixes=True, scoring_fixes=frozenset({5, 6, 7}), progress_fix=True, equivalences=True,
    paper_comparable=False,
)
"""Fixed mode plus the equivalence rules of docs/semantic-mode.md §2; same harness, so a fixed run rescores
exactly (docs/semantic-mode.md §4)."""

SCORING_STRATEGIES: dict[str, ScoringStrategy] = {strategy.name: strategy for strategy in (REFERENCE, FIXED, SEMANTIC)}
"""Every strategy by its name."""

SCORING_MODES: tuple[str, ...] = tuple(SCORING_STRATEGIES)
"""The scoring mode names (docs/fixed-mode.md §1), as ``--scoring`` takes them; ``reference`` is the default."""


def scoring_strategy(mode: ScoringStrategy | str | None = None) -> ScoringStrategy:
    """The strategy of a mode: the one place a mode name becomes the rules it stands for (docs/fixed-mode.md §1).

    Args:
        mode: a :class:`ScoringStrategy` (returned as it is), a mode name from :data:`SCORING_MODES`, or
            ``None`` (a record or setting without a mode: reference).

    Returns:
        The :class:`ScoringStrategy`.

    Raises:
        ValueError: any other value; the message lists the allowed names.
    """
    if isinstance(mode, ScoringStrategy):
        return mode
    if mode is None:
        return REFERENCE
    strategy = SCORING_STRATEGIES.get(mode) if isinstance(mode, str) else None
    if strategy is None:
        raise ValueError(f"unknown scoring mode {mode!r}: use one of {', '.join(SCORING_MODES)}")
    return strategy


def record_strategy(record: Mapping[str, Any]) -> ScoringStrategy:
    """The strategy a result, score or metric record names in its ``"scoring"`` key (absent: reference;
    docs/fixed-mode.md §1). Raises ValueError for an unknown name."""
    return scoring_strategy(record.get("scoring"))
