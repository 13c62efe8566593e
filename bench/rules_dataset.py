"""The catalog's rules on any dataset: ``wtb audit DATASET --rules small|standard`` (docs/audit.md §12).

Applies :func:`wildtoolbench.bench.rules_session.session_rule_problems` to every session of a dataset (either
side, by the dataset's field names) and keeps the problems whose rules are active for a finished session
under the profile. Each finding names the rule id, the session, the task, the step (the gold node's index;
``None`` for the task's message) and the text or value at fault.

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wildtoolbench.bench.rules import check_profile, select
from wildtoolbench.bench.rules_session import session_rule_problems
from wildtoolbench.bench.schema import fields_for

AUDIT_PROFILES = ("small", "standard")
"""The profiles ``wtb audit --rules`` takes (``off`` would check nothing)."""


def session_view(session: Mapping[str, Any], language: str) -> dict[str, Any]:
    """``session`` with the ``english_*`` field names the rules read, taken from ``language``'s side."""
    side = fields_for(language)
    return {
        "id": session.get("id"),
        "english_tasks": session.get(side.tasks),
        "english_answer_list": session.get(side.answer_list),
        "english_env_info": session.get(side.env_info),
        "english_tools": session.get(side.tools),
    }


def rule_findings(sessions: Iterable[Mapping[str, Any]], language: str = "en", profile: str = "standard") -> list[dict]:
    """Every rule finding of ``sessions`` under ``profile`` (module doc).

    Returns:
        ``{"id", "task", "step", "rule", "value", "message"}`` per finding, in session order; ``value`` is
        the argument value or the quoted words at fault (``None`` when the rule quotes nothing).

    Raises:
        ValueError: ``profile`` is not one of :data:`AUDIT_PROFILES`.
    """
    if check_profile(profile) not in AUDIT_PROFILES:
        raise ValueError(f"wtb audit --rules takes {' or '.join(AUDIT_PROFILES)}, not {profile!r}")
    out = []
    for session in sessions:
        if not isinstance(session, Mapping):
            continue
        view = session_view(session, language)
        for problem in select(session_rule_problems(view, language, profile), profile):
            details = problem.details
            value = details.get("value", details.get("text"))
            out.append(
                {
                    "id": session.get("id"),
                    "task": details.get("task"),
                    "step": details.get("step"),
                    "rule": problem.rule,
                    "value": value,
                    "message": str(problem),
                }
            )
    return out


def count_by_rule(findings: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The number of findings per rule id, most frequent first."""
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding["rule"]] = counts.get(finding["rule"], 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
