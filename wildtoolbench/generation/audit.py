"""The audit of a generated set (docs/generation.md §9): ``wtb generate`` audits what it produced, drops or
flags sessions by the policy, and records the audit summary and the coverage figures in ``manifest.json``.

One call after the batch, :func:`audit_generation`, works on the run's output folder (the same for a
local run and a ``--server`` run): it reads ``sessions.jsonl`` one session at a time (:class:`FileSessions`), runs every check of docs/audit.md on it
and the contamination check of docs/coverage.md §9 against the official dataset (given, or cached),
then under the ``drop`` policy rewrites ``sessions.jsonl``, ``replay.jsonl`` and the kept sessions'
``session.json`` / ``replay.json`` without the dropped sessions (ids renumbered by line), writes the
dropped ones to ``dropped.jsonl`` and the kept sessions' findings to ``audit.jsonl``, and adds ``audit``
and ``coverage`` to ``manifest.json`` (the rest of the manifest as the batch wrote it; each session's
entry gets its final id, or ``"status": "dropped"`` and the reason).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.audit import SEVERITY_ERROR, Finding, audit_sessions
from wildtoolbench.common.files import JsonlFileWriter, write_json_atomic, write_jsonl_atomic

POLICIES: tuple[str, ...] = ("drop", "flag", "off")
"""``--audit`` values (docs/generation.md §9): ``drop`` the sessions with an error finding or that repeat an
official session, flag the rest; ``flag`` every session with a finding, drop none; ``off`` no audit."""
DEFAULT_POLICY = "drop"

FINDINGS_FILE = "audit.jsonl"
DROPPED_FILE = "dropped.jsonl"
CONTAMINATION = "contamination"
"""The reason of a session dropped for repeating a session of the official dataset (docs/coverage.md §9)."""


@dataclass
class GenerationAudit:
    """What :func:`audit_generation` did (docs/generation.md §9).

    Attributes:
        policy: one of :data:`POLICIES`.
        audited: sessions audited (those of ``sessions.jsonl`` as the batch wrote it).
        kept: sessions left in ``sessions.jsonl``.
        dropped: ``{"key", "id", "reasons"}`` per dropped session (``id`` the one it had before).
        flagged: ``{"key", "id", "kinds"}`` per kept session with a finding (``kinds``: kind -> count).
        counts: findings per kind and severity over every audited session.
        contamination: sessions that repeat an official session, ``None`` when no official dataset was at hand.
        manifest: the ``audit`` entry written to ``manifest.json``.
    """

    policy: str
    audited: int = 0
    kept: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    contamination: int | None = None
    manifest: dict[str, Any] = field(default_factory=dict)


class FileSessions(Sequence[dict[str, Any]]):
    """The sessions of a JSON Lines file, read one at a time (docs/generation.md §12.1): only each line's place
    in the file is kept, and ``sessions[i]`` parses line ``i`` again, so auditing a generated set never holds
    all its sessions. The file is held open: it stays readable after ``sessions.jsonl`` is replaced.

    Args:
        path: the file (a missing file is an empty set).

    Raises:
        OSError: the file cannot be read.
        ValueError: a line is not UTF-8 or not JSON (naming the file and line).
    """

    def __init__(self, path: Path):
        from wildtoolbench.bench.io import UndecodableLine, iter_jsonl_spans

        self.path = path
        self._spans: list[tuple[int, int, int]] = []
        self._fd: int | None = None
        if not path.is_file():
            return
        for number, offset, length, text in iter_jsonl_spans(path):
            if isinstance(text, UndecodableLine):
                raise ValueError(f"{path}: line {number}: {text}")
            self._spans.append((number, offset, length))
        self._fd = os.open(path, os.O_RDONLY)

    def __len__(self) -> int:
        return len(self._spans)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        number, offset, length = self._spans[index]
        assert self._fd is not None
        try:
            return json.loads(os.pread(self._fd, length, offset).decode("utf-8"))
        except ValueError as exc:
            raise ValueError(f"{self.path}: line {number}: not JSON ({exc})") from None

    def close(self) -> None:
        """Close the file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def drop_reasons(findings: Sequence[Finding], contaminated: dict[str, str], policy: str) -> dict[str | None, list[str]]:
    """Which sessions the policy drops, and why (docs/generation.md §9).

    Args:
        findings: the audit's findings on the generated sessions.
        contaminated: session id -> the official session it repeats.
        policy: one of :data:`POLICIES`.

    Returns:
        session id -> reasons (``"<kind>: <message>"``, first of each kind; ``contamination: repeats
        <official id>``); empty unless the policy is ``drop``. A session is dropped for an error finding
        whose suggested correction is not "leave as it is" (of two exact duplicates the earlier stays,
        docs/audit.md §9.4) and for repeating an official session.
    """
    if policy != "drop":
        return {}
    out: dict[str | None, list[str]] = {}
    kinds: set[tuple[str | None, str]] = set()  # (session, kind) already given a reason
    for finding in findings:
        if finding.severity != SEVERITY_ERROR or finding.correction == {}:
            continue
        reasons = out.setdefault(finding.id, [])
        if (finding.id, finding.kind) not in kinds:
            kinds.add((finding.id, finding.kind))
            reasons.append(f"{finding.kind}: {finding.message}")
    for session_id, official in contaminated.items():
        out.setdefault(session_id, []).append(f"{CONTAMINATION}: repeats {official} of the official dataset")
    return out


def audit_generation(
    out_dir: str | os.PathLike[str],
    *,
    policy: str = DEFAULT_POLICY,
    reference: str | os.PathLike[str] | None = None,
) -> GenerationAudit:
    """Audit a finished generation run's output folder by ``policy`` (module doc; docs/generation.md §9).

    Args:
        out_dir: the run's ``--out`` folder, as :func:`wildtoolbench.runner.generation.run_batch` left it.
        policy: one of :data:`POLICIES`.
        reference: the official dataset to compare the coverage with and to check contamination against;
            ``None``: the cached official dataset when ``wtb data pull`` put it there, else the published
            figures (no contamination check).

    Returns:
        A :class:`GenerationAudit`; with ``off``, only ``{"policy": "off"}`` is added to the manifest.

    Raises:
        ValueError: an unknown policy.
        wildtoolbench.bench.schema.DatasetError: the reference file cannot be read.
        OSError: an output file cannot be written.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown audit policy {policy!r} (one of {', '.join(POLICIES)})")
    out = Path(out_dir)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    result = GenerationAudit(policy)
    if policy == "off":
        result.manifest = {"policy": "off"}
        manifest["audit"] = result.manifest
        write_json_atomic(manifest_path, manifest)
        return result
    sessions = FileSessions(out / "sessions.jsonl")
    try:
        _audit_sessions(out, sessions, manifest, result, reference)
    finally:
        sessions.close()
    write_json_atomic(manifest_path, manifest)
    return result


def _audit_sessions(
    out: Path, sessions: FileSessions, manifest: dict[str, Any], result: GenerationAudit, reference: Any
) -> None:
    """The audit of ``sessions`` (read from ``out/sessions.jsonl``) by ``result.policy``: writes its files and
    notes it in ``result`` and ``manifest`` (``sessions`` ids, ``coverage``; docs/generation.md §9.2)."""
    from wildtoolbench.audit.coverage import coverage_report

    policy = result.policy
    index = manifest.get("sessions") if isinstance(manifest.get("sessions"), list) else []
    key_of = {entry.get("id"): entry.get("key") for entry in index if isinstance(entry, dict) and entry.get("id")}
    findings = audit_sessions(sessions, language="en") if sessions else []
    document = coverage_report(out / "sessions.jsonl", sessions, language="en", reference=reference)
    contaminated: dict[str, str] = {}
    for entry in document["contamination"] or []:
        contaminated.setdefault(entry["id"], entry["reference_id"])
    reasons = drop_reasons(findings, contaminated, policy)
    result.audited = len(sessions)
    result.contamination = None if document["contamination"] is None else len(contaminated)
    result.counts = _counts(findings)

    with JsonlFileWriter(out / DROPPED_FILE) as dropped_lines:
        new_id, kept_findings = _sort_sessions(sessions, findings, reasons, key_of, result, dropped_lines)
    result.kept = len(new_id)
    final = {**document, "dataset": os.fspath(out / "sessions.jsonl")}
    if result.dropped:
        _rewrite_sessions(out, sessions, new_id, key_of)
        kept = FileSessions(out / "sessions.jsonl")  # the coverage of what is kept
        try:
            final = coverage_report(out / "sessions.jsonl", kept, language="en", reference=reference)
        finally:
            kept.close()
    write_jsonl_atomic(out / FINDINGS_FILE, [f.to_json() for f in kept_findings])
    final.pop("findings", None)
    result.manifest = {
        "policy": policy,
        "audited": result.audited,
        "kept": result.kept,
        "dropped": len(result.dropped),
        "flagged": len(result.flagged),
        "findings": result.counts,
        "contamination": result.contamination,
        "dropped_sessions": result.dropped,
        "flagged_sessions": result.flagged,
        "files": {"findings": FINDINGS_FILE, "dropped": DROPPED_FILE},
    }
    for entry in index:
        if not isinstance(entry, dict) or entry.get("status") != "done":
            continue
        if entry.get("id") in reasons:
            entry.update({"status": "dropped", "reason": "; ".join(reasons[entry["id"]]), "id": None})
        elif entry.get("id") in new_id:
            entry["id"] = new_id[entry["id"]]
    manifest["audit"] = result.manifest
    manifest["coverage"] = final


def _sort_sessions(
    sessions: Sequence[dict[str, Any]],
    findings: Sequence[Finding],
    reasons: Mapping[str, list[str]],
    key_of: Mapping[Any, Any],
    result: GenerationAudit,
    dropped_lines: JsonlFileWriter,
) -> tuple[dict[str, str], list[Finding]]:
    """Drop the sessions ``reasons`` names (each written to ``dropped_lines``) and number the others again
    (``wild_tool_bench_<n>``, their findings following them), noting each dropped and each flagged session in
    ``result`` (docs/generation.md §9).

    Returns:
        ``(old id -> new id of every kept session, the kept sessions' findings)``.
    """
    new_id: dict[str, str] = {}
    kept_findings: list[Finding] = []
    by_session: dict[Any, list[Finding]] = {}
    for finding in findings:
        by_session.setdefault(finding.id, []).append(finding)
    for session in sessions:
        old = session["id"]
        key = key_of.get(old)
        found = by_session.get(old, [])
        if old in reasons:
            result.dropped.append({"key": key, "id": old, "reasons": reasons[old]})
            dropped_lines.write(
                {"key": key, "reasons": reasons[old], "findings": [f.to_json() for f in found], "session": session}
            )
            continue
        new_id[old] = f"wild_tool_bench_{len(new_id)}"
        for finding in found:
            finding.id = new_id[old]
        kept_findings.extend(found)
        if found:
            result.flagged.append(
                {"key": key, "id": new_id[old], "kinds": dict(Counter(f.kind for f in found).most_common())}
            )
    return new_id, kept_findings


def _counts(findings: Sequence[Finding]) -> dict[str, dict[str, int]]:
    from wildtoolbench.audit.run import count_by_kind

    return count_by_kind(findings)


def _rewrite_sessions(
    out: Path, sessions: Sequence[dict[str, Any]], new_id: dict[str, str], key_of: dict[str, Any]
) -> None:
    """``sessions.jsonl``, ``replay.jsonl`` and the per-session files without the dropped sessions, streamed
    one session at a time (``sessions`` reads the file as it was)."""
    from wildtoolbench.bench.generation import oracle_candidate

    keys_kept = set()
    with JsonlFileWriter(out / "sessions.jsonl") as lines, JsonlFileWriter(out / "replay.jsonl") as replays:
        for old_session in sessions:
            new = new_id.get(old_session["id"])
            if new is None:
                continue
            session = {**old_session, "id": new}
            replay = oracle_candidate(session)
            lines.write(session)
            replays.write(replay)
            key = key_of.get(old_session["id"])
            if key is None:
                continue
            keys_kept.add(key)
            write_json_atomic(out / "sessions" / key / "session.json", session)
            write_json_atomic(out / "sessions" / key / "replay.json", replay)
    for key in key_of.values():
        if key is not None and key not in keys_kept:
            for name in ("session.json", "replay.json"):
                (out / "sessions" / key / name).unlink(missing_ok=True)


def closing_line(result: GenerationAudit) -> str:
    """The line ``wtb generate`` prints after its own (docs/generation.md §9), e.g. ``"audit (drop): 20
    session(s) audited, 18 kept, 2 dropped (unknown_tool 1, contamination 1), 7 flagged; findings in
    audit.jsonl, coverage in manifest.json"``."""
    if result.policy == "off":
        return "audit: off (--audit off): the generated sessions were not audited"
    why = Counter(reason.split(":", 1)[0] for entry in result.dropped for reason in entry["reasons"][:1])
    dropped = f"{len(result.dropped)} dropped" + (
        " (" + ", ".join(f"{k} {n}" for k, n in why.most_common()) + ")" if why else ""
    )
    contamination = (
        "contamination not checked (no official dataset)"
        if result.contamination is None
        else f"{result.contamination} repeat an official session"
    )
    return (
        f"audit ({result.policy}): {result.audited} session(s) audited, {result.kept} kept, {dropped}, "
        f"{len(result.flagged)} flagged; {contamination}; findings in {FINDINGS_FILE}"
        + (f", dropped sessions in {DROPPED_FILE}" if result.dropped else "")
        + ", coverage in manifest.json"
    )


__all__ = [
    "CONTAMINATION",
    "DEFAULT_POLICY",
    "DROPPED_FILE",
    "FileSessions",
    "FINDINGS_FILE",
    "POLICIES",
    "GenerationAudit",
    "audit_generation",
    "closing_line",
    "drop_reasons",
]
