"""What a reviewer may edit, and an edit re-validated and re-audited before it is saved (docs/review.md §5).

An edit names one field of a session by the path syntax of the loader's messages and of errata
(``english_answer_list[1][0].action.arguments``, docs/audit.md §9.1) and gives its new value. Only
the fields of :data:`EDITABLE` may be edited: a gold call's arguments (the whole object, or one
argument), a gold node's observation, the user's reply to a gold question and a user message. The
edited session is validated by the loader's rules (:func:`wildtoolbench.bench.schema.session_issues`) and audited
by every per-session check of docs/audit.md; an edit that adds a validation problem is refused with
the loader's words.

Nothing here executes anything from the data: values are JSON decoded with :func:`json.loads`, paths
are matched by regular expressions and walked as keys and indices.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.audit import (
    Finding,
    context_findings,
    duplicate_findings,
    observation_findings,
    scorer_findings,
    sort_findings,
    tool_findings,
)
from wildtoolbench.bench.errata import parse_path
from wildtoolbench.bench.rules import RULE_CATALOG, finding_doc
from wildtoolbench.bench.rules.audit_kinds import finding_rule
from wildtoolbench.bench.schema import decode_json_line, fields_for, session_issues

EDITABLE: tuple[tuple[str, str], ...] = (
    (r"ANSWER\[(\d+)\]\[(\d+)\]\.action\.arguments", "gold arguments"),
    (r"ANSWER\[(\d+)\]\[(\d+)\]\.action\.arguments\.[^.\[\]]+", "gold argument"),
    (r"ANSWER\[(\d+)\]\[(\d+)\]\.observation", "observation"),
    (r"ANSWER\[(\d+)\]\[(\d+)\]\.user_input", "user reply"),
    (r"TASKS\[(\d+)\]", "user message"),
)
"""The editable fields (docs/review.md §5.1), ``ANSWER`` and ``TASKS`` standing for the answer-list and
user-message fields of the side reviewed, with what each is called in the log."""

MAX_EDIT_CHARS = 100_000
"""Longest edited value accepted, in characters of its text (docs/review.md §5.1)."""


class EditRefused(ValueError):
    """An edit that is not saved (docs/review.md §5): ``problems`` lists ``(field, message)`` pairs, the
    message of the exception joins them."""

    def __init__(self, problems: Sequence[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("; ".join(f"{f}: {m}" if f else m for f, m in self.problems))


@dataclass(frozen=True)
class EditTarget:
    """Where an edit goes (docs/review.md §5.1).

    Attributes:
        path: the field, e.g. ``english_answer_list[1][0].action.arguments.city``.
        task: the 0-based task the field belongs to.
        what: the field's kind (the second item of an :data:`EDITABLE` row).
    """

    path: str
    task: int
    what: str


def edit_target(path: str, language: str = "en") -> EditTarget:
    """The :class:`EditTarget` of ``path`` for the side ``language`` (docs/review.md §5.1).

    Raises:
        EditRefused: ``path`` is not one of the :data:`EDITABLE` fields of that side.
        ValueError: ``language`` is not ``en`` or ``zh``.
    """
    side = fields_for(language)
    for pattern, what in EDITABLE:
        full = pattern.replace("ANSWER", re.escape(side.answer_list)).replace("TASKS", re.escape(side.tasks))
        match = re.fullmatch(full, path or "")
        if match:
            return EditTarget(path, int(match.group(1)), what)
    raise EditRefused(
        [
            (
                "path",
                f"{path!r} cannot be edited: only {side.answer_list}[t][n].action.arguments (or one argument), "
                f"{side.answer_list}[t][n].observation, {side.answer_list}[t][n].user_input and {side.tasks}[t]",
            )
        ]
    )


def read_field(session: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """``(True, value)`` at ``path`` in ``session``, or ``(False, None)`` when the last key is missing
    (docs/review.md §5.1).

    Raises:
        EditRefused: a part of the path before the last does not exist.
    """
    node: Any = session
    parts = parse_path(path)
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list) or not 0 <= part < len(node):
                raise EditRefused([("path", f"{path} does not resolve: no element [{part}]")])
        elif not isinstance(node, dict) or part not in node:
            if last and isinstance(node, dict):
                return False, None
            raise EditRefused([("path", f"{path} does not resolve: no key {part!r}")])
        node = node[part]
    return True, node


def decode_value(text: str, mode: str) -> Any:
    """The value an edit gives: ``text`` itself for ``mode == "text"``, the JSON it holds for ``"json"``
    (decoded as a dataset line is, :func:`wildtoolbench.bench.schema.decode_json_line`: nested at most 100 levels;
    docs/review.md §5.1).

    Raises:
        EditRefused: an unknown mode, text over :data:`MAX_EDIT_CHARS`, text that is not JSON (or nested
            too deeply), a value holding a lone surrogate.
    """
    if not isinstance(text, str):
        raise EditRefused([("value", "expected the new value as text")])
    if len(text) > MAX_EDIT_CHARS:
        raise EditRefused([("value", f"longer than {MAX_EDIT_CHARS} characters")])
    if mode == "text":
        value: Any = text
    elif mode == "json":
        value, problem = decode_json_line(text)
        if problem is not None:
            raise EditRefused([("value", f"not JSON a dataset may hold: {problem}")])
    else:
        raise EditRefused([("mode", f"expected 'text' or 'json', got {mode!r}")])
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise EditRefused([("value", "holds a lone surrogate: not Unicode text, cannot be written as UTF-8")]) from None
    return value


def apply_edit(session: Mapping[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``session`` with the field at ``path`` set to ``value`` (an argument key may be new;
    docs/review.md §5.1). ``session`` is not changed.

    Raises:
        EditRefused: the path does not resolve.
    """
    edited = copy.deepcopy(dict(session))
    parts = parse_path(path)
    read_field(edited, path)
    node: Any = edited
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = copy.deepcopy(value)
    return edited


def validation_problems(session: Mapping[str, Any], *, tasks: int, language: str) -> list[tuple[str, str]]:
    """The loader's problems with ``session`` (:func:`wildtoolbench.bench.schema.session_issues`), ``(field, message)``
    pairs in the loader's order (docs/review.md §5.2)."""
    return session_issues(dict(session), tasks=tasks, language=language)


def check_edit(
    before: Mapping[str, Any], after: Mapping[str, Any], *, tasks: int, language: str
) -> list[tuple[str, str]]:
    """The validation problems of ``after`` that ``before`` did not have: an edit that adds one is refused
    (docs/review.md §5.2). A session that was invalid may be edited towards validity one field at a time."""
    _, problem = decode_json_line(json.dumps(after, ensure_ascii=False))
    if problem is not None:  # what the loader would say of the session's line (docs/dataset.md §7.1)
        return [("(json)", problem)]
    known = set(validation_problems(before, tasks=tasks, language=language))
    return [problem for problem in validation_problems(after, tasks=tasks, language=language) if problem not in known]


REFUSING_KINDS: tuple[str, ...] = ("schema_violation", "unknown_tool")
"""Finding kinds an edit may not add (docs/review.md §5.2): a gold call that breaks its own tool's schema or
names a tool the session lacks breaks the data's own rules, as a validation problem does."""


def refused_findings(before: Sequence[Finding], after: Sequence[Finding]) -> list[tuple[str, str]]:
    """The findings of :data:`REFUSING_KINDS` in ``after`` whose kind and field no finding of ``before``
    has, as ``(kind, message)`` pairs (docs/review.md §5.2); an edit that adds one is refused."""
    known = {(f.kind, f.field) for f in before}
    return [(f.kind, f.message) for f in after if f.kind in REFUSING_KINDS and (f.kind, f.field) not in known]


def own_findings(session: Mapping[str, Any], *, tasks: int, language: str) -> list[Finding]:
    """Every finding of docs/audit.md about ``session`` alone: its validation problems
    (``invalid_session``), ``unknown_tool``, ``schema_violation``, ``value_not_in_context``,
    ``observation_mismatch`` and, for a valid session, ``scorer_sensitive`` (docs/review.md §5.3).
    Duplicates need the other sessions: :func:`duplicate_map`."""
    from wildtoolbench.bench.audit import drop_covered, validation_findings
    from wildtoolbench.bench.schema import DatasetIssue

    session_id = session.get("id") if isinstance(session.get("id"), str) else None
    problems = validation_problems(session, tasks=tasks, language=language)
    found = [
        *tool_findings(session, language),
        *context_findings(session, language),
        *observation_findings(session, language),
    ]
    if not problems:
        found.extend(scorer_findings(session, language))
    issues = [DatasetIssue("<review>", 0, f, m) for f, m in problems]
    invalid = validation_findings(issues, {0: session_id} if session_id else {})
    for finding in invalid:
        finding.message = finding.message.removeprefix("line 0: ")
    return sort_findings([*drop_covered(invalid, found), *found])


def duplicate_map(sessions: Sequence[Mapping[str, Any]], language: str) -> dict[int, list[Finding]]:
    """``duplicate_session`` findings by session position, over the sessions as they stand (docs/audit.md §4,
    docs/review.md §5.3); a finding goes to the first session holding its id."""
    by_id: dict[Any, int] = {}
    for position, session in enumerate(sessions):
        by_id.setdefault(session.get("id"), position)
    out: dict[int, list[Finding]] = {}
    for finding in duplicate_findings(sessions, language):
        if finding.id in by_id:
            out.setdefault(by_id[finding.id], []).append(finding)
    return out


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as the review database keeps it: ``wtb audit --json``'s keys plus ``field``, ``rule`` (the
    catalog rule id that checks the same, ``None`` where none does) and ``doc`` (the docs section of its
    rule, else of its kind; docs/review.md §2.2, §5.3)."""
    data = finding.to_json()
    rule = finding_rule(finding.kind, RULE_CATALOG)
    return {**data, "field": finding.field, "rule": rule, "doc": finding_doc(data)}


__all__ = [
    "EDITABLE",
    "EditRefused",
    "EditTarget",
    "apply_edit",
    "check_edit",
    "decode_value",
    "duplicate_map",
    "edit_target",
    "finding_json",
    "REFUSING_KINDS",
    "own_findings",
    "refused_findings",
    "read_field",
    "validation_problems",
]
