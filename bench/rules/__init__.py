"""The rule catalog of generation and of ``wtb audit --rules`` (docs/generation.md §11).

One entry per rule (:class:`Rule`: id, family, roles, languages, profiles, check, retry hint, docs
section), in one module per family; :data:`RULE_CATALOG` maps id -> rule. Checks return :class:`Problem`
objects that carry their rule's id; :func:`select` keeps those active in a profile, :func:`hints` picks
the retry fixes by id.

Pure package: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.rules import audit_kinds, decision, model, reply, result, structure, text, value, voice
from wildtoolbench.bench.rules.catalog import PROFILES, UNCLASSIFIED, Problem, Rule, rule_ids, rule_of

__all__ = [
    "RULE_CATALOG",
    "count_findings",
    "finding_doc",
    "finding_label",
    "PROFILES",
    "UNCLASSIFIED",
    "Problem",
    "Rule",
    "catalog_lines",
    "check_profile",
    "hints",
    "markdown_table",
    "rule_ids",
    "rule_of",
    "select",
]

RULE_CATALOG: dict[str, Rule] = {
    r.id: r
    for r in (*structure.STRUCTURE_RULES, *decision.DECISION_RULES, *value.VALUE_RULES, *result.RESULT_RULES,
              *voice.VOICE_RULES, *reply.REPLY_RULES, *text.TEXT_RULES, *model.MODEL_RULES)
}
"""Every rule by id, in family order."""


def finding_label(finding: Mapping[str, Any]) -> str:
    """An audit finding's rule id where a catalog rule checks the same, else its kind
    (:func:`wildtoolbench.bench.rules.audit_kinds.label_in`; docs/review.md §2)."""
    return audit_kinds.label_in(finding, RULE_CATALOG)


def finding_doc(finding: Mapping[str, Any]) -> str | None:
    """The docs section of an audit finding: its rule's, else its kind's (docs/review.md §2)."""
    return audit_kinds.doc_in(finding, RULE_CATALOG)


def count_findings(findings: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Audit findings counted by :func:`finding_label`, most frequent first (docs/review.md §2.1)."""
    return audit_kinds.count_by_label(findings, RULE_CATALOG)


def check_profile(profile: str) -> str:
    """``profile`` when it is one of :data:`PROFILES`.

    Raises:
        ValueError: an unknown profile (the message lists the known ones)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown rule profile {profile!r}: use one of {', '.join(PROFILES)}")
    return profile


def select(problems: Iterable[Problem], profile: str, role: str = "session") -> list[Problem]:
    """The ``problems`` whose rule is active for ``role`` under ``profile``, in order; a problem of an
    id the catalog does not know is kept (docs/generation.md §11.2)."""
    out = []
    for problem in problems:
        found = RULE_CATALOG.get(rule_of(problem))
        if found is None or found.active(profile, role):
            out.append(problem)
    return out


def hints(problems: Iterable[Problem], role: str, default: str | None = None) -> list[str]:
    """The retry-hint keys (of the ``retry_hints`` prompt fragment) for ``problems`` of ``role``'s
    output, one per problem in order (``default`` for a rule without a hint for that role, left out
    when ``None``; docs/generation.md §4.3)."""
    out = []
    for problem in problems:
        found = RULE_CATALOG.get(rule_of(problem))
        key = found.hints.get(role, default) if found is not None else default
        if key is not None:
            out.append(key)
    return out


def _profiles(r: Rule) -> str:
    names = [p for p in PROFILES if p in r.profiles]
    text = ",".join(names) or "-"
    for role, ps in r.role_profiles.items():
        text += f"; {role}: {','.join(p for p in PROFILES if p in ps) or '-'}"
    return text


def catalog_lines(rules: Sequence[Rule] | None = None) -> list[str]:
    """``wtb generate --list-rules``: one line per rule, id, family, profiles and summary."""
    rules = list(RULE_CATALOG.values()) if rules is None else list(rules)
    width = max(len(r.id) for r in rules)
    return [f"{r.id:<{width}}  {r.family:<9}  {_profiles(r):<22}  {r.summary}" for r in rules]


def markdown_table() -> str:
    """The catalog as the Markdown table of docs/generation.md §11.1 (a test checks that they agree)."""
    lines = ["| id | family | roles | languages | profiles | rejects |", "|---|---|---|---|---|---|"]
    for r in RULE_CATALOG.values():
        summary = r.summary.replace("|", "\\|")
        lines.append(
            f"| `{r.id}` | {r.family} | {', '.join(r.roles)} | {', '.join(r.languages)} | {_profiles(r)} | {summary} |"
        )
    return "\n".join(lines)
