"""The export: the accepted and corrected sessions as a dataset, with the review log (docs/review.md §7).

A session is exported when it is valid as it stands (docs/dataset.md §6) and every one of its tasks
is accepted: at least one reviewer accepted it and none rejected it. It is exported as it stands,
with every saved edit. Beside it the export holds the oracle replay of the exported gold (the
candidate file ``wtb generate`` writes, docs/generation.md), the review log (every edit and verdict
in the order saved) and an errata file that makes the same corrections and exclusions on the
original dataset (docs/audit.md §9).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.errata import parse_path
from wildtoolbench.bench.generation import oracle_candidate
from wildtoolbench.bench.rules import count_findings
from wildtoolbench.common.shareable import shareable_path
from wildtoolbench.review.agreement import agreement, task_status
from wildtoolbench.review.checks import read_field
from wildtoolbench.review.store import SessionRow, Verdict

EXPORT_FILES: tuple[str, ...] = ("sessions.jsonl", "replay.jsonl", "review_log.jsonl", "errata.jsonl", "summary.json")
"""The files of an export folder (docs/review.md §7.2)."""


def _statuses(row: SessionRow, verdicts: Sequence[Verdict]) -> list[str]:
    tasks = row.current.get("english_tasks")
    count = len(tasks) if isinstance(tasks, list) else 0
    by_task: dict[int, dict[str, str]] = {}
    for verdict in verdicts:
        by_task.setdefault(verdict.task, {})[verdict.reviewer] = verdict.verdict
    return [task_status(by_task.get(task, {})) for task in range(count)]


def plan_export(rows: Sequence[SessionRow], verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """Which sessions an export holds now, and why the others are left out (docs/review.md §7.1).

    Returns:
        ``{"sessions", "exported", "rejected", "open", "invalid", "edited", "keep": [pos ...],
        "left_out": [{"session", "why"} ...]}``: counts of the sessions, of those exported, of the left-out
        ones with a rejected task, with an open task and invalid, and of the exported ones that were edited.
    """
    keep: list[int] = []
    left: list[dict[str, str]] = []
    seen: set[str] = set()
    tally = {"rejected": 0, "open": 0, "invalid": 0}
    by_pos: dict[int, list[Verdict]] = {}
    for verdict in verdicts:  # grouped once: the plan is linear in sessions and verdicts
        by_pos.setdefault(verdict.pos, []).append(verdict)
    for row in rows:
        statuses = _statuses(row, by_pos.get(row.pos, []))
        name = row.sid or f"line {row.line}"
        if "rejected" in statuses:
            tally["rejected"] += 1
            tasks = ", ".join(str(t + 1) for t, s in enumerate(statuses) if s == "rejected")  # docs/terms.md §1.2
            left.append({"session": name, "why": f"task(s) {tasks} rejected"})
        elif "open" in statuses or not statuses:
            tally["open"] += 1
            tasks = ", ".join(str(t + 1) for t, s in enumerate(statuses) if s == "open")
            left.append({"session": name, "why": f"task(s) {tasks} not judged yet"})
        elif not row.valid:
            tally["invalid"] += 1
            left.append({"session": name, "why": "invalid as it stands (see its invalid_session findings)"})
        elif row.sid in seen:
            tally["invalid"] += 1
            left.append({"session": name, "why": "an earlier exported session has the same id"})
        else:
            keep.append(row.pos)
            seen.add(str(row.sid))
    kept = set(keep)
    return {
        "sessions": len(rows),
        "exported": len(keep),
        **tally,
        "edited": sum(1 for row in rows if row.pos in kept and row.version > 1),
        "keep": keep,
        "left_out": left,
    }


def _covering(paths: Sequence[str]) -> list[str]:
    """The edited paths no other edited path contains, in first-edit order."""
    out: list[str] = []
    for path in dict.fromkeys(paths):
        if any(path != other and (path.startswith(other + ".") or path.startswith(other + "[")) for other in paths):
            continue
        out.append(path)
    return out


def draft_errata_lines(rows: Sequence[SessionRow], verdicts: Sequence[Verdict], events: Sequence[dict]) -> list[dict]:
    """Errata lines (docs/audit.md §9.1) that make the review's corrections and exclusions on the original
    dataset (docs/review.md §7.2): per edited field (a field inside another edited one is covered by it)
    ``{"path", "value", "was"}`` from the original to the current value, and ``{"exclude": true}`` per
    rejected task with the reviewers' reasons as the note. Sessions without an id are left out."""
    by_pos = {row.pos: row for row in rows}
    lines: list[dict[str, Any]] = []
    edited: dict[int, list[tuple[str, int | None]]] = {}
    for event in events:
        if event["action"] == "edit":
            edited.setdefault(event["position"], []).append((event["path"], event["task"]))
    for pos, edits in edited.items():
        row = by_pos[pos]
        if row.sid is None:
            continue
        task_of = dict(edits)
        reviewers = sorted({e["reviewer"] for e in events if e["position"] == pos and e["action"] == "edit"})
        for path in _covering([p for p, _ in edits]):
            has_new, new = read_field(row.current, path)
            has_old, old = read_field(row.original, path)
            if has_new and has_old and new == old:
                continue
            correction: dict[str, Any] = {"path": path, "value": new}
            if has_old:
                correction["was"] = old
            parse_path(path)
            lines.append(
                {
                    "session": row.sid,
                    "task": task_of[path],
                    "kind": "review_edit",
                    "note": f"edited in review by {', '.join(reviewers)}",
                    "correction": correction,
                }
            )
    rejected: dict[tuple[int, int], list[str]] = {}
    for verdict in verdicts:
        if verdict.verdict == "reject":
            rejected.setdefault((verdict.pos, verdict.task), []).append(f"{verdict.reviewer}: {verdict.reason}")
    for (pos, task), reasons in sorted(rejected.items()):
        row = by_pos.get(pos)
        if row is None or row.sid is None:
            continue
        lines.append(
            {
                "session": row.sid,
                "task": task,
                "kind": "review_reject",
                "note": "; ".join(reasons),
                "correction": {"exclude": True},
            }
        )
    return lines


def export_texts(
    rows: Sequence[SessionRow], verdicts: Sequence[Verdict], events: Sequence[dict], meta: dict[str, str]
) -> dict[str, str]:
    """The text of every file of :data:`EXPORT_FILES` (docs/review.md §7.2): the exported sessions (JSON
    Lines, dataset format), their oracle replay, the review log, the errata for the original dataset and
    a summary (the plan's counts, the dataset and its digest, the findings counted by rule id (by kind where
    no rule applies; docs/review.md §7.2), the agreement of each pair of reviewers)."""
    plan = plan_export(rows, verdicts)
    kept = [row for row in rows if row.pos in set(plan["keep"])]

    def lines(values: Sequence[Any]) -> str:
        return "".join(json.dumps(value, ensure_ascii=False) + "\n" for value in values)

    summary = {
        "dataset": shareable_path(meta.get("dataset")) or None,  # no absolute path (docs/cli.md §4)
        "digest": meta.get("digest"),
        "language": meta.get("language"),
        **{k: v for k, v in plan.items() if k != "keep"},
        "findings_by_rule": count_findings(f for row in rows for f in row.findings),
        "agreement": [
            {"reviewers": [p.first, p.second], "tasks": p.n, "observed": p.observed, "kappa": p.kappa}
            for p in agreement(verdicts)
        ],
    }
    return {
        "sessions.jsonl": lines([row.current for row in kept]),
        "replay.jsonl": lines([oracle_candidate(row.current) for row in kept]),
        "review_log.jsonl": lines(list(events)),
        "errata.jsonl": lines(draft_errata_lines(rows, verdicts, events)),
        "summary.json": json.dumps(summary, ensure_ascii=False, indent=2) + "\n",
    }


def write_export(
    out: str | os.PathLike[str], rows: Sequence[SessionRow], verdicts: Sequence[Verdict], events: Sequence[dict], meta
) -> dict[str, Any]:
    """Write the export folder ``out`` (created when missing; each file written atomically; docs/review.md §7.2).

    Returns:
        The plan of :func:`plan_export`.

    Raises:
        OSError: a file cannot be written.
    """
    from wildtoolbench.common.files import atomic_write_text

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in export_texts(rows, verdicts, events, meta).items():
        atomic_write_text(folder / name, text)
    return plan_export(rows, verdicts)


def write_export_streaming(
    out: str | os.PathLike[str],
    rows: Sequence[SessionRow],
    verdicts: Sequence[Verdict],
    events: Sequence[dict],
    meta: dict[str, str],
    load: Any,
) -> dict[str, Any]:
    """:func:`write_export` for a large review: ``rows`` are light (``ReviewStore.sessions(light=True)``) and
    ``load(pos)`` gives one whole session row; the kept sessions are read and written one at a time, so
    memory holds one session, not the dataset. The files are those of :func:`export_texts`, byte for byte.

    Raises:
        OSError: a file cannot be written.
    """
    import tempfile

    from wildtoolbench.common.files import atomic_write_text

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    plan = plan_export(rows, verdicts)
    temporary: dict[str, str] = {}
    try:
        handles = {}
        for name in ("sessions.jsonl", "replay.jsonl"):
            fd, temporary[name] = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            handles[name] = os.fdopen(fd, "w", encoding="utf-8")
        with handles["sessions.jsonl"] as sessions, handles["replay.jsonl"] as replay:
            for pos in plan["keep"]:
                current = load(pos).current
                sessions.write(json.dumps(current, ensure_ascii=False) + "\n")
                replay.write(json.dumps(oracle_candidate(current), ensure_ascii=False) + "\n")
            for handle in (sessions, replay):
                handle.flush()
                os.fsync(handle.fileno())
        for name, path in temporary.items():
            os.replace(path, folder / name)
        temporary.clear()
    finally:
        for path in temporary.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    edited = {event["position"] for event in events if event["action"] == "edit"}
    full = [load(row.pos) if row.pos in edited else row for row in rows]
    texts = export_texts([], verdicts, [], meta)  # the summary's frame; its counts are the plan's below
    summary = json.loads(texts["summary.json"])
    summary.update({k: v for k, v in plan.items() if k != "keep"})
    summary["findings_by_rule"] = count_findings(f for row in full for f in row.findings)
    atomic_write_text(folder / "review_log.jsonl", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    errata = draft_errata_lines(full, verdicts, events)
    atomic_write_text(folder / "errata.jsonl", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in errata))
    atomic_write_text(folder / "summary.json", json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
    return plan


__all__ = [
    "EXPORT_FILES",
    "draft_errata_lines",
    "export_texts",
    "plan_export",
    "write_export",
    "write_export_streaming",
]
