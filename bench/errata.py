"""Errata: reviewed corrections to a dataset's gold, and how they apply (docs/audit.md §9).

An errata file is JSON Lines, one erratum per line::

    {"session": "wild_tool_bench_3", "task": 2, "kind": "scorer_sensitive",
     "note": "the layer's properties object has no schema", "correction": {"exclude": true}}

``correction`` is one of

- ``null``: noted, not decided yet; shown, never applied;
- ``{"exclude": true}``: the task (the whole session when ``task`` is ``null``) leaves the metrics;
- ``{"path": FIELD, "value": V}``: the session's field ``FIELD`` (the path syntax of the loader's
  messages, ``english_answer_list[1][0].action.arguments.city``) becomes ``V``; the last key may be
  new (a missing argument added);
- ``{"path": FIELD, "delete": true}``: the object key or list element at ``FIELD`` is removed;

and a path correction may say ``"was": V0``, the value it expects to replace, checked before
anything is applied.

Pure module: no I/O except :func:`load_errata`, which reads the file line by line.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wildtoolbench.bench.audit_schema import json_equal
from wildtoolbench.bench.io import UndecodableLine, iter_jsonl
from wildtoolbench.bench.schema import DatasetError, DatasetIssue

ERRATUM_KEYS: tuple[str, ...] = ("session", "task", "kind", "note", "correction")
"""The keys of an erratum line, in the order :func:`erratum_line` writes them (docs/audit.md §9.1)."""

_SEGMENT = re.compile(r"^([^.\[\]]+)((?:\[\d+\])*)$")
_TASK_PATH = re.compile(r"^(?:english_)?(answer_list|tasks)\[(\d+)\]")


@dataclass(frozen=True)
class Erratum:
    """One line of an errata file (docs/audit.md §9.1).

    Attributes:
        session: the session id.
        task: 0-based task index, or ``None`` for the whole session.
        kind: what the defect is (an audit kind such as ``schema_violation``, or any other word).
        note: the reviewer's words.
        correction: ``None``, ``{"exclude": True}``, ``{"path", "value"[, "was"]}`` or ``{"path", "delete"[, "was"]}``.
        line: the file line (1-based) it came from, ``None`` when built in memory.
    """

    session: str
    task: int | None
    kind: str
    note: str
    correction: Mapping[str, Any] | None
    line: int | None = None

    @property
    def excludes(self) -> bool:
        """The correction takes the task (or session) out of the metrics."""
        return bool(self.correction) and self.correction.get("exclude") is True

    @property
    def path(self) -> str | None:
        """The field a path correction changes, else ``None``."""
        return self.correction.get("path") if self.correction else None


def parse_path(path: str) -> list[str | int]:
    """``english_answer_list[1][0].action.arguments.city`` -> ``["english_answer_list", 1, 0, "action", "arguments", "city"]`` (docs/audit.md §9.1).

    Raises:
        ValueError: an empty path, or a segment that is not ``key`` followed by ``[index]`` s.
    """
    if not isinstance(path, str) or not path:
        raise ValueError("expected a field path such as english_answer_list[0][1].action.arguments.city")
    parts: list[str | int] = []
    for segment in path.split("."):
        match = _SEGMENT.match(segment)
        if not match:
            raise ValueError(f"bad path segment {segment!r} in {path!r}")
        parts.append(match.group(1))
        parts.extend(int(index) for index in re.findall(r"\[(\d+)\]", match.group(2)))
    return parts


def _check_correction(correction: Any) -> tuple[str, str] | None:
    if correction is None:
        return None
    if not isinstance(correction, Mapping):
        return "correction", f"expected an object or null, got {type(correction).__name__}"
    if "exclude" in correction:
        if correction["exclude"] is not True or len(correction) != 1:
            return "correction", 'an exclusion is exactly {"exclude": true}'
        return None
    if "path" not in correction:
        return "correction", 'expected {"exclude": true}, {"path", "value"} or {"path", "delete": true}'
    try:
        parse_path(correction["path"])
    except ValueError as exc:
        return "correction.path", str(exc)
    unknown = set(correction) - {"path", "value", "delete", "was"}
    if unknown:
        return "correction", f"unknown key(s) {', '.join(sorted(unknown))}"
    if ("value" in correction) == (correction.get("delete") is True):
        return "correction", 'give exactly one of "value" and "delete": true'
    if "delete" in correction and correction["delete"] is not True:
        return "correction.delete", "expected true"
    return None


def parse_erratum(raw: Any, line: int | None = None) -> tuple[Erratum | None, list[tuple[str, str]]]:
    """One erratum from a decoded JSON line, or the ``(field, message)`` problems that stop it (docs/audit.md §9.1)."""
    if not isinstance(raw, Mapping):
        return None, [("(line)", f"expected a JSON object, got {type(raw).__name__}")]
    problems = []
    if not isinstance(raw.get("session"), str) or not raw.get("session"):
        problems.append(("session", "missing or not a non-empty string"))
    task = raw.get("task")
    if task is not None and (not isinstance(task, int) or isinstance(task, bool) or task < 0):
        problems.append(("task", f"expected a task index (0, 1, ...) or null, got {json.dumps(task)}"))
    if not isinstance(raw.get("kind"), str) or not raw.get("kind"):
        problems.append(("kind", "missing or not a non-empty string"))
    if not isinstance(raw.get("note", ""), str):
        problems.append(("note", "expected a string"))
    if "correction" not in raw:
        problems.append(("correction", "missing (null for a note without a correction)"))
    else:
        problem = _check_correction(raw["correction"])
        if problem:
            problems.append(problem)
    if problems:
        return None, problems
    return Erratum(raw["session"], task, raw["kind"], raw.get("note", ""), raw["correction"], line), []


def load_errata(path: str | os.PathLike[str]) -> list[Erratum]:
    """Read an errata file (JSON Lines, docs/audit.md §9.1); blank lines are skipped.

    Raises:
        DatasetError: every bad line, as ``file:line: field: message``; a missing file.
    """
    file = os.fspath(path)
    errata: list[Erratum] = []
    issues: list[DatasetIssue] = []
    try:
        for number, text in iter_jsonl(file):
            if isinstance(text, UndecodableLine):
                issues.append(DatasetIssue(file, number, "(encoding)", text.message))
                continue
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                issues.append(DatasetIssue(file, number, "(json)", f"not JSON ({exc.msg})"))
                continue
            erratum, problems = parse_erratum(raw, number)
            issues.extend(DatasetIssue(file, number, f, m) for f, m in problems)
            if erratum is not None:
                errata.append(erratum)
    except OSError as exc:
        raise DatasetError([DatasetIssue(file, None, None, f"cannot read: {exc.strerror or exc}")]) from None
    if issues:
        raise DatasetError(issues)
    return errata


def _resolve(session: Any, parts: Sequence[str | int]) -> tuple[Any, str | int]:
    """The container holding the last part, after walking the others.

    Raises:
        KeyError, IndexError, TypeError: a part does not exist.
    """
    node = session
    for part in parts[:-1]:
        if isinstance(part, int):
            if not isinstance(node, list):
                raise TypeError(f"[{part}] needs a list, found {type(node).__name__}")
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise TypeError(f".{part} needs an object, found {type(node).__name__}")
            node = node[part]
    return node, parts[-1]


def _read(container: Any, last: str | int) -> Any:
    if isinstance(last, int):
        if not isinstance(container, list):
            raise TypeError(f"[{last}] needs a list, found {type(container).__name__}")
        return container[last]
    if not isinstance(container, dict):
        raise TypeError(f".{last} needs an object, found {type(container).__name__}")
    return container[last]


def erratum_problems(erratum: Erratum, sessions: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """What stops ``erratum`` applying to the dataset ``sessions`` (id -> session dict), as ``(field, message)`` (docs/audit.md §9.2):
    an unknown session, a task beyond the session's, a path that does not resolve (or names another
    task than ``task``), a ``was`` that differs from the current value. Empty when it applies."""
    session = sessions.get(erratum.session)
    if session is None:
        return [("session", f"no session {erratum.session!r} in the dataset")]
    tasks = session.get("english_tasks")
    count = len(tasks) if isinstance(tasks, list) else 0
    if erratum.task is not None and erratum.task >= count:
        return [("task", f"session {erratum.session} has {count} tasks (0-{count - 1}), not task {erratum.task}")]
    path = erratum.path
    if path is None:
        return []
    parts = parse_path(path)
    match = _TASK_PATH.match(path)
    if match and erratum.task is not None and int(match.group(2)) != erratum.task:
        return [("correction.path", f"{path} belongs to task {match.group(2)}, the erratum names task {erratum.task}")]
    try:
        container, last = _resolve(session, parts)
        exists = True
        try:
            current = _read(container, last)
        except (KeyError, IndexError):
            if erratum.correction.get("delete") or isinstance(last, int):  # type: ignore[union-attr]
                raise
            exists, current = False, None
    except (KeyError, IndexError, TypeError) as exc:
        return [("correction.path", f"{path} does not resolve in session {erratum.session}: {exc}")]
    if "was" in erratum.correction and (not exists or not json_equal(current, erratum.correction["was"])):  # type: ignore[operator]
        found = json.dumps(current, ensure_ascii=False) if exists else "nothing"
        return [("correction.was", f"{path} holds {found[:80]}, not the value the erratum expects")]
    return []


def check_errata(errata: Iterable[Erratum], sessions: Mapping[str, Mapping[str, Any]], file: str = "<errata>") -> None:
    """Check every erratum against the dataset (docs/audit.md §9.2).

    Raises:
        DatasetError: one ``file:line: field: message`` issue per problem of :func:`erratum_problems`.
    """
    issues = [
        DatasetIssue(file, erratum.line, f, m) for erratum in errata for f, m in erratum_problems(erratum, sessions)
    ]
    if issues:
        raise DatasetError(issues)


@dataclass
class ArgumentChange:
    """A gold call whose arguments an erratum changed (docs/audit.md §9.3): node ``node`` of task
    ``task`` of the answer-list field ``answer_list`` (``english_answer_list`` or ``answer_list``)."""

    session: str
    answer_list: str
    task: int
    node: int
    name: str
    old: Any
    new: Any


@dataclass
class Applied:
    """The dataset with the errata applied (docs/audit.md §9.3).

    Attributes:
        sessions: id -> corrected session dict (a deep copy; sessions without errata are the originals).
        excluded: id -> the task indices excluded from the metrics.
        argument_changes: the gold calls whose arguments changed (rescoring a run sees these).
        other_changes: the path corrections that change something else (an observation, a message,
            a tool, a call's name): they change what a model sees, so only a new run reflects them.
        pending: errata without a correction.
    """

    sessions: dict[str, dict[str, Any]]
    excluded: dict[str, set[int]] = field(default_factory=dict)
    argument_changes: list[ArgumentChange] = field(default_factory=list)
    other_changes: list[Erratum] = field(default_factory=list)
    pending: list[Erratum] = field(default_factory=list)


_ARGUMENTS_PATH = re.compile(r"^((?:english_)?answer_list)\[(\d+)\]\[(\d+)\]\.action\.arguments(?:[.\[]|$)")


def apply_errata(errata: Sequence[Erratum], sessions: Mapping[str, Mapping[str, Any]]) -> Applied:
    """Apply checked errata (:func:`check_errata`) to the sessions, in file order (docs/audit.md §9.3).

    Args:
        errata: the errata, already checked against ``sessions``.
        sessions: id -> session dict; not modified.

    Returns:
        An :class:`Applied`.

    Raises:
        ValueError: an erratum that does not apply (not checked first, or made void by an earlier one).
    """
    out = Applied(sessions=dict(sessions))  # type: ignore[arg-type]
    copied: set[str] = set()
    for erratum in errata:
        if erratum.correction is None:
            out.pending.append(erratum)
            continue
        session_id = erratum.session
        if erratum.excludes:
            tasks = sessions[session_id].get("english_tasks") or []
            chosen = range(len(tasks)) if erratum.task is None else [erratum.task]
            out.excluded.setdefault(session_id, set()).update(chosen)
            continue
        problems = erratum_problems(erratum, out.sessions)
        if problems:
            raise ValueError(f"erratum on line {erratum.line}: {problems[0][0]}: {problems[0][1]}")
        if session_id not in copied:
            out.sessions[session_id] = copy.deepcopy(dict(sessions[session_id]))
            copied.add(session_id)
        session = out.sessions[session_id]
        path = erratum.path or ""
        match = _ARGUMENTS_PATH.match(path)
        before = copy.deepcopy(_node_action(session, match)) if match else None
        container, last = _resolve(session, parse_path(path))
        if erratum.correction.get("delete"):  # type: ignore[union-attr]
            del container[last]
        else:
            container[last] = copy.deepcopy(erratum.correction["value"])  # type: ignore[index]
        if match and before is not None:
            after = _node_action(session, match)
            out.argument_changes.append(
                ArgumentChange(
                    session_id, match.group(1), int(match.group(2)), int(match.group(3)),
                    str(before.get("name")), before.get("arguments"), copy.deepcopy(after.get("arguments")),
                )
            )  # fmt: skip
        else:
            out.other_changes.append(erratum)
    return out


def _node_action(session: Mapping[str, Any], match: re.Match) -> dict[str, Any]:
    return session[match.group(1)][int(match.group(2))][int(match.group(3))]["action"]


def patch_record_gold(record: dict[str, Any], changes: Iterable[ArgumentChange], answer_list_field: str) -> int:
    """Rewrite the gold arguments a result record copied from the dataset (docs/evaluation.md §5.4) where
    an erratum changed them, so that rescoring checks the model's calls against the corrected gold
    (docs/audit.md §9.3). Changed in place.

    Args:
        record: a result record (``{"id", "model_name", "result": [per task]}``).
        changes: the argument changes of the record's session.
        answer_list_field: the side the record was made on (``english_answer_list`` or ``answer_list``).

    Returns:
        How many gold actions were rewritten.
    """
    result = record.get("result")
    if not isinstance(result, list):
        return 0
    rewritten = 0
    for change in changes:
        if change.answer_list != answer_list_field or change.task >= len(result):
            continue
        log = result[change.task].get("inference_log") if isinstance(result[change.task], dict) else None
        for step in (log or {}).values():
            answers = step.get("inference_answer") if isinstance(step, dict) else None
            for candidate in (answers or {}).values() if isinstance(answers, dict) else ():
                for action in candidate.get("action") or [] if isinstance(candidate, dict) else []:
                    if not isinstance(action, dict) or action.get("name") != change.name:
                        continue
                    try:
                        arguments = (
                            json.loads(action["arguments"])
                            if isinstance(action.get("arguments"), str)
                            else action.get("arguments")
                        )
                    except ValueError:
                        continue
                    if json_equal(arguments, change.old):
                        action["arguments"] = json.dumps(change.new, ensure_ascii=False)
                        rewritten += 1
    return rewritten


def erratum_line(erratum: Erratum) -> dict[str, Any]:
    """An erratum as its file line: ``{"session", "task", "kind", "note", "correction"}`` (docs/audit.md §9.1)."""
    return {
        "session": erratum.session,
        "task": erratum.task,
        "kind": erratum.kind,
        "note": erratum.note,
        "correction": erratum.correction,
    }


def draft_errata(findings: Iterable[Any]) -> list[Erratum]:
    """A draft errata list from audit findings, for review (``wtb audit --write-errata``, docs/audit.md §9.4).

    Args:
        findings: :class:`wildtoolbench.bench.audit.Finding` s (anything with ``id``, ``task``, ``kind``,
            ``severity``, ``message`` and ``correction``).

    Returns:
        One erratum per finding that names a session, in order: ``note`` is the finding's message;
        ``correction`` is the finding's suggested one for an error (deleting an unknown key,
        excluding the later of two exact duplicates; an empty suggestion, the earlier of the two, is
        ``null``), ``{"exclude": true}`` for any other error, and ``null`` (to be decided) for a warning.
    """
    out = []
    for finding in findings:
        if not isinstance(finding.id, str):
            continue
        correction = None
        if finding.severity == "error":
            correction = {"exclude": True} if finding.correction is None else (finding.correction or None)
        out.append(Erratum(finding.id, finding.task, finding.kind, finding.message, correction))
    return out
