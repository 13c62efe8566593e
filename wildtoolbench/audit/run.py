"""``wtb audit``: the file side of the dataset audit (docs/audit.md).

Reads a dataset file leniently (every line that is a JSON object is audited, its validation problems
become findings), scores the runs given for ``failed_by_all``, writes the findings (JSON Lines), a
draft errata file and a verified split. Reading an errata file and scoring with one applied belong
to the scoring: :mod:`wildtoolbench.scoring.errata`. The checks themselves are pure:
:mod:`wildtoolbench.bench.audit`, :mod:`wildtoolbench.bench.errata`.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.audit import (
    FINDING_KINDS,
    Finding,
    RunTasks,
    audit_sessions,
    drop_covered,
    validation_findings,
)
from wildtoolbench.bench.errata import (
    Applied,
    draft_errata,
    erratum_line,
)
from wildtoolbench.bench.io import UndecodableLine, iter_jsonl
from wildtoolbench.bench.schema import DatasetError, DatasetIssue, task_counts, validate_file
from wildtoolbench.bench.strategy import record_strategy
from wildtoolbench.common.files import write_jsonl_atomic
from wildtoolbench.common.run_folder import RESULT_FILE


@dataclass
class AuditedDataset:
    """A dataset read for the audit (docs/audit.md §1).

    Attributes:
        path: the file.
        sessions: the lines that are JSON objects, in file order.
        lines: the 1-based line of each session.
        valid: per session, whether it passed the loader (docs/dataset.md §6).
        issues: every problem the loader reports (bad lines included).
    """

    path: str
    sessions: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    valid: list[bool] = field(default_factory=list)
    issues: list[DatasetIssue] = field(default_factory=list)

    def by_id(self) -> dict[str, dict[str, Any]]:
        """id -> session, for the sessions with a string id (the first of a repeated id)."""
        out: dict[str, dict[str, Any]] = {}
        for session in self.sessions:
            if isinstance(session.get("id"), str):
                out.setdefault(session["id"], session)
        return out


def read_dataset(path: str | os.PathLike[str], *, tasks: int | None = None, language: str = "en") -> AuditedDataset:
    """Read a dataset file for the audit: never refuses a file with at least one JSON object line (docs/audit.md §1).

    Args:
        path: the dataset file (JSON Lines, docs/dataset.md).
        tasks: tasks per session to check against; ``None``: the count the sessions share.
        language: the side audited.

    Raises:
        DatasetError: the file cannot be read, or none of its lines is a JSON object.
    """
    file = os.fspath(path)
    data = AuditedDataset(file)
    mixed: list[DatasetIssue] = []
    if tasks is None:
        tasks, mixed = task_counts(file)
    report = validate_file(file, tasks=tasks, language=language)
    data.issues = sorted([*mixed, *report.issues], key=lambda issue: issue.line or 0)
    bad_lines = {issue.line for issue in data.issues}
    try:
        for number, text in iter_jsonl(file):
            if isinstance(text, UndecodableLine):
                continue
            try:
                raw = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(raw, dict):
                data.sessions.append(raw)
                data.lines.append(number)
                data.valid.append(number not in bad_lines)
    except OSError as exc:
        raise DatasetError([DatasetIssue(file, None, None, f"cannot read: {exc.strerror or exc}")]) from None
    if not data.sessions:
        issues = data.issues or [DatasetIssue(file, None, None, "file holds no session")]
        raise DatasetError(issues)
    return data


def load_run(path: str | os.PathLike[str], sessions: Mapping[str, Mapping[str, Any]], language: str) -> RunTasks:
    """The scored tasks of one run for ``failed_by_all`` (docs/audit.md §8).

    Args:
        path: a run folder (its ``result.jsonl``) or a result file (docs/evaluation.md §5).
        sessions: id -> valid session dict; records of other sessions are left out.
        language: the side the run was made on.

    Returns:
        A :class:`wildtoolbench.bench.audit.RunTasks` named after the records' model (and the folder, when two runs
        share a model name the caller disambiguates). Each record is scored in the mode it was made in;
        a record that cannot be scored is left out.

    Raises:
        DatasetError: the result file is missing or malformed (every problem named).
    """
    from wildtoolbench.bench.scoring import ScoringError, score_session
    from wildtoolbench.scoring.results import load_result_records

    file = Path(path) / RESULT_FILE if Path(path).is_dir() else Path(path)
    if not file.is_file():
        raise DatasetError([DatasetIssue(os.fspath(file), None, None, "no result file")])
    records = load_result_records(file)
    run = RunTasks(name=str(Path(path).name))
    names: list[str] = []
    for _, record in records:
        session = sessions.get(str(record.get("id", record.get("session_id"))))
        if session is None:
            continue
        names.append(str(record.get("model_name", record.get("candidate"))))
        try:
            mode = record_strategy(record)  # each record in the mode that made it
            run.tasks[session["id"]] = score_session(record, session, scoring=mode, language=language)  # type: ignore[index]
        except (ScoringError, ValueError):
            continue
    if names:
        run.name = Counter(names).most_common(1)[0][0]
    return run


def audit_file(
    path: str | os.PathLike[str],
    *,
    runs: Sequence[str | os.PathLike[str]] = (),
    tasks: int | None = None,
    language: str = "en",
) -> tuple[AuditedDataset, list[Finding]]:
    """Audit a dataset file (docs/audit.md): validation problems, every check of docs/audit.md §2, and
    ``failed_by_all`` over ``runs``.

    Returns:
        ``(dataset, findings)``; findings ordered by the dataset's line, validation problems of a
        session first.

    Raises:
        DatasetError: the dataset cannot be read at all, or a run's result file is malformed.
    """
    data = read_dataset(path, tasks=tasks, language=language)
    valid_by_id = {s["id"]: s for s, ok in zip(data.sessions, data.valid) if ok and isinstance(s.get("id"), str)}
    loaded = [load_run(run, valid_by_id, language) for run in runs]
    seen = Counter(run.name for run in loaded)
    for run, source in zip(loaded, runs):
        if seen[run.name] > 1:
            run.name = f"{run.name} ({source})"
    ids_by_line = {line: s["id"] for s, line in zip(data.sessions, data.lines) if isinstance(s.get("id"), str)}
    invalid = validation_findings(data.issues, ids_by_line)
    found = audit_sessions(data.sessions, language=language, valid=data.valid, runs=loaded, lines=data.lines)
    ordered = sorted(
        [*drop_covered(invalid, found), *found],
        key=lambda f: (f.line if f.line is not None else 0, 0 if f.kind == FINDING_KINDS[0] else 1),
    )
    return data, ordered


def write_findings(path: str | os.PathLike[str], findings: Sequence[Finding]) -> None:
    """``--json OUT``: one line per finding, exactly ``{"id", "task", "kind", "severity", "message"}`` (docs/audit.md §1)."""
    write_jsonl_atomic(path, [finding.to_json() for finding in findings])


def write_draft_errata(path: str | os.PathLike[str], findings: Sequence[Finding]) -> int:
    """``--write-errata FILE``: the draft errata of :func:`wildtoolbench.bench.errata.draft_errata` (docs/audit.md §9.4). Returns the line count."""
    drafted = draft_errata(findings)
    write_jsonl_atomic(path, [erratum_line(erratum) for erratum in drafted])
    return len(drafted)


def write_verified(
    path: str | os.PathLike[str], data: AuditedDataset, findings: Sequence[Finding], applied: Applied | None
) -> tuple[int, int]:
    """``--verified OUT``: the verified split (docs/audit.md §10): the valid sessions, errata applied,
    without any session that has an excluded task or still has an error finding (the audit is run again
    on the corrected sessions; of two exact duplicates the earlier one stays). Returns ``(kept, dropped)``."""
    sessions = [
        (applied.sessions.get(s["id"], s) if applied is not None and isinstance(s.get("id"), str) else s)
        for s, ok in zip(data.sessions, data.valid)
        if ok
    ]
    excluded = applied.excluded if applied is not None else {}
    if applied is not None:
        findings = audit_sessions(sessions)
    errors = {f.id for f in findings if f.severity == "error" and f.correction != {}}
    kept = [s for s in sessions if s.get("id") not in errors and not excluded.get(s.get("id"))]
    write_jsonl_atomic(path, kept)
    return len(kept), len(data.sessions) - len(kept)


def count_by_kind(findings: Sequence[Finding]) -> dict[str, dict[str, int]]:
    """``kind -> {severity: count}`` in :data:`wildtoolbench.bench.audit.FINDING_KINDS` order, kinds without findings left out."""
    counts: dict[str, dict[str, int]] = {}
    for kind in FINDING_KINDS:
        of_kind = Counter(f.severity for f in findings if f.kind == kind)
        if of_kind:
            counts[kind] = dict(sorted(of_kind.items()))
    return counts


__all__ = [
    "AuditedDataset",
    "audit_file",
    "count_by_kind",
    "load_run",
    "read_dataset",
    "write_draft_errata",
    "write_findings",
    "write_verified",
]
