"""The audit's finding kinds by the catalog's rule ids (docs/audit.md §2, docs/generation.md §11).

Three kinds of ``wtb audit`` check what a rule of the catalog checks while a session is generated: a call
of a tool the session lacks, arguments that break the tool's schema and an argument value the
conversation does not give. A finding of one of them names that rule's id; the other kinds
(``invalid_session``, ``duplicate_session``, ``observation_mismatch``, ``scorer_sensitive``,
``failed_by_all``) judge what no generation rule does and keep their kind as their label. ``wtb review``
shows and counts findings by these labels (docs/review.md §2).

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wildtoolbench.bench.rules.catalog import Rule

AUDIT_KIND_RULES: dict[str, str] = {
    "unknown_tool": "structure.unknown_tool",
    "schema_violation": "decision.schema",
    "value_not_in_context": "value.not_in_context",
}
"""Audit finding kind -> the catalog rule that checks the same (docs/audit.md §2)."""

AUDIT_KIND_DOCS: dict[str, str] = {
    "invalid_session": "docs/dataset.md §6",
    "schema_violation": "docs/audit.md §3",
    "unknown_tool": "docs/audit.md §3",
    "duplicate_session": "docs/audit.md §4",
    "value_not_in_context": "docs/audit.md §5",
    "observation_mismatch": "docs/audit.md §6",
    "scorer_sensitive": "docs/audit.md §7",
    "failed_by_all": "docs/audit.md §8",
}
"""Audit finding kind -> the docs section of its check (docs/audit.md §2's table)."""


def finding_rule(kind: Any, catalog: Mapping[str, Rule]) -> str | None:
    """The catalog rule id of an audit finding of ``kind`` (``None`` when no rule checks the same, or the id
    is not in ``catalog``)."""
    rule = AUDIT_KIND_RULES.get(kind) if isinstance(kind, str) else None
    return rule if rule in catalog else None


def label_in(finding: Mapping[str, Any], catalog: Mapping[str, Rule]) -> str:
    """What a finding (``{"kind", ...}``, maybe ``{"rule"}``) is shown and counted as: its rule id where one
    applies, else its kind (``"?"`` for a finding without either)."""
    rule = finding.get("rule")
    if isinstance(rule, str) and rule in catalog:
        return rule
    kind = finding.get("kind")
    return finding_rule(kind, catalog) or (kind if isinstance(kind, str) and kind else "?")


def doc_in(finding: Mapping[str, Any], catalog: Mapping[str, Rule]) -> str | None:
    """The docs section of a finding: its rule's section where a rule applies, else its kind's
    (:data:`AUDIT_KIND_DOCS`); ``None`` for an unknown kind."""
    label = label_in(finding, catalog)
    if label in catalog:
        return catalog[label].doc
    return AUDIT_KIND_DOCS.get(label)


def count_by_label(findings: Iterable[Mapping[str, Any]], catalog: Mapping[str, Rule]) -> dict[str, int]:
    """The number of findings per label (:func:`label_in`), most frequent first, then by label."""
    counts: dict[str, int] = {}
    for finding in findings:
        label = label_in(finding, catalog)
        counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
