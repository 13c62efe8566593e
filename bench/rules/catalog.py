"""The rule catalog's types: a rule as data, a problem that carries its rule's id, profiles (docs/generation.md §11).

Every rule of generation and of ``wtb audit --rules`` is one :class:`Rule` in a family module of this
package (``structure``, ``decision``, ``value``, ``result``, ``voice``, ``reply``, ``text``,
``model``); a check returns :class:`Problem` objects: the reason's text (what the role is told, as
before) with the rule's id and details attached, so nothing re-reads the prose to learn which rule
fired.

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PROFILES = ("small", "standard", "off")
"""Rule profiles (docs/generation.md §11.2): ``small`` every rule (the bundled local model's default),
``standard`` the rules that catch defects of any model (the default with any other model), ``off``
only the structural rules without which a session cannot be built (the Checker model judges the rest)."""

ALL = frozenset(PROFILES)
SMALL_STANDARD = frozenset({"small", "standard"})
SMALL = frozenset({"small"})
STANDARD = frozenset({"standard"})
UNCLASSIFIED = "unclassified"
"""The id a reason without a rule id is counted under (a transcript written before the catalog)."""


@dataclass(frozen=True)
class Rule:
    """One rule of the catalog (docs/generation.md §11).

    Attributes:
        id: stable id, ``family.name`` (never reworded; the yield table and manifests count by it).
        family: ``structure``, ``decision``, ``value``, ``result``, ``voice``, ``reply``, ``text``, ``model``.
        roles: the outputs it judges (``planner``, ``tool``, ``user``, ``agent``, ``checker``; ``session``
            for the quality check and the audit of a dataset).
        languages: the session languages it applies to.
        profiles: the profiles it is active in.
        summary: one line saying what it rejects.
        check: the function that applies it (dotted name under ``wildtoolbench.bench``).
        hints: per role, the key of the ``retry_hints`` prompt fragment the retry is told (absent: the
            role's default, docs/generation.md §4.3).
        doc: the docs section of the rule.
    """

    id: str
    family: str
    roles: tuple[str, ...]
    profiles: frozenset[str]
    summary: str
    check: str
    doc: str
    languages: tuple[str, ...] = ("en", "zh")
    hints: Mapping[str, str] = field(default_factory=dict)
    role_profiles: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Per role, profiles that replace ``profiles`` for that role's outputs."""

    def active(self, profile: str, role: str = "session") -> bool:
        """Whether the rule applies to ``role``'s output under ``profile``."""
        return profile in self.role_profiles.get(role, self.profiles)


class Problem(str):
    """One rule's rejection: the reason text (a ``str``, what the role is told) with ``rule`` (the
    rule's id) and ``details`` (e.g. the value, the parameter). Text operations return plain ``str``;
    use :meth:`prefixed` to keep the id."""

    rule: str
    details: dict[str, Any]

    def __new__(cls, reason: str, rule: str, /, **details: Any) -> Problem:
        obj = super().__new__(cls, reason)
        obj.rule = rule
        obj.details = details
        return obj

    def prefixed(self, prefix: str) -> Problem:
        """The same problem with ``prefix`` before its text (``"action 0 (f): "``)."""
        return Problem(prefix + str(self), self.rule, **self.details)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (str(self), self.rule, self.details))


def _rebuild(text: str, rule: str, details: dict[str, Any]) -> Problem:
    return Problem(text, rule, **details)


def rule_of(reason: Any) -> str:
    """The rule id a reason carries (:data:`UNCLASSIFIED` for a plain string)."""
    return reason.rule if isinstance(reason, Problem) else UNCLASSIFIED


def rule_ids(reasons: Iterable[Any]) -> list[str]:
    """The rule ids of ``reasons``, in order (for a transcript entry's ``rules`` field)."""
    return [rule_of(r) for r in reasons]
