"""The run files of ``wtb generate`` written from the sessions' own files (docs/generation.md §7, §12.1).

While the batch runs, each finished session leaves its folder on disk (``sessions/<key>/outcome.json`` with its
session, usage and yield table) and only a :class:`FinishedSession` in memory: its plan, status, counts and
quality check, never its transcript or its session. When every session has ended, :func:`write_run_files`
streams ``sessions.jsonl``, ``replay.jsonl``, ``failures.jsonl`` and ``quality_dropped.jsonl`` into place in
plan order, reading one ``outcome.json`` at a time (each file written to a temp file and renamed), writes the
kept sessions' ``session.json`` / ``replay.json`` with their final ids, and returns what the manifest needs.
The run's memory is then flat in the number of sessions but for these small records and the manifest's index.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.generation import SessionPlan, oracle_candidate
from wildtoolbench.bench.generation_quality import QUALITY_CHECKS
from wildtoolbench.bench.generation_yield import merge_yields
from wildtoolbench.bench.rules_session import session_quality
from wildtoolbench.common.files import JsonlFileWriter, write_json_atomic
from wildtoolbench.runner.generation_outcome import OUTCOME_FILE, GenerationOutcome

QUALITY_DROPPED_FILE = "quality_dropped.jsonl"
"""The sessions the quality check dropped (``--quality drop``), ``{"key", "reasons", "session"}`` per line."""


@dataclass
class FinishedSession:
    """What a run keeps of one finished session until it writes its run files (docs/generation.md §12.1).

    Attributes:
        plan: the session's plan (the caller holds it anyway).
        has_session: the session was built (``outcome.session`` was set): kept unless the quality check drops it.
        reason, rules, infrastructure: why it failed (``failures.jsonl``).
        usage: its model requests, tries, tokens and retried requests.
        seconds: wall-clock seconds it took.
        quality: the quality check of its session (``session_quality``), ``None`` without a session.
    """

    plan: SessionPlan
    has_session: bool
    reason: str = ""
    rules: list[str] = field(default_factory=list)
    infrastructure: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    quality: dict[str, Any] | None = None


def finished_session(outcome: GenerationOutcome, profile: str) -> FinishedSession:
    """The small record of a finished session (its quality check made now, on its session).

    Args:
        outcome: the session's outcome, its files and ``outcome.json`` already written.
        profile: the run's rule profile (docs/generation.md §11.2).

    Returns:
        A :class:`FinishedSession` that holds neither the state nor the session.
    """
    session = outcome.session
    return FinishedSession(
        outcome.plan,
        session is not None,
        outcome.reason,
        list(outcome.rules),
        outcome.infrastructure,
        outcome.usage,
        outcome.seconds,
        None if session is None else session_quality(session, outcome.plan.language, profile),
    )


def _recorded(out: Path, key: str) -> dict[str, Any]:
    """``sessions/<key>/outcome.json`` as written when the session ended.

    Raises:
        ValueError: the file is missing or not a JSON object (naming the file).
    """
    path = out / "sessions" / key / OUTCOME_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the finished session's record ({exc}); run the command again") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object; run the command again")
    return data


@dataclass
class RunFiles:
    """What :func:`write_run_files` wrote: the manifest's ``sessions`` index, counts and the merged yield table."""

    index: list[dict[str, Any]] = field(default_factory=list)
    qualities: list[dict[str, Any]] = field(default_factory=list)
    succeeded: int = 0
    failed: int = 0
    dropped: int = 0
    infrastructure: int = 0
    yields: dict[str, Any] = field(default_factory=dict)


def write_run_files(out: Path, finished: Sequence[FinishedSession], quality_policy: str) -> RunFiles:
    """Stream the run's JSON Lines files into place in plan order (module doc; docs/generation.md §7, §10, §12.1).

    Args:
        out: the run's output folder; every session's ``outcome.json`` is there.
        finished: one record per planned session, in plan order.
        quality_policy: ``drop`` leaves a session that fails the quality check out of ``sessions.jsonl``
            (written to ``quality_dropped.jsonl``); ``flag`` keeps it.

    Returns:
        A :class:`RunFiles`. Kept sessions get ids ``wild_tool_bench_<N>`` by their line in ``sessions.jsonl``;
        their ``session.json`` / ``replay.json`` are written to match.

    Raises:
        ValueError: a session's ``outcome.json`` cannot be read (no run file is replaced then).
        OSError: a file cannot be written.
    """
    result = RunFiles()
    with (
        JsonlFileWriter(out / "sessions.jsonl") as sessions,
        JsonlFileWriter(out / "replay.jsonl") as replays,
        JsonlFileWriter(out / "failures.jsonl") as failures,
        JsonlFileWriter(out / QUALITY_DROPPED_FILE) as dropped,
    ):
        for record in finished:
            key = record.plan.key
            folder = out / "sessions" / key
            entry = {"key": key, "dir": str(folder.relative_to(out)), **record.plan.summary()}
            data = _recorded(out, key)
            result.yields = merge_yields([result.yields, dict(data.get("yield") or {})])
            if not record.has_session:
                failures.write(
                    {"key": key, "plan": record.plan.summary(), "reason": record.reason, "rules": record.rules,
                     "dir": entry["dir"], "infrastructure": record.infrastructure}
                )  # fmt: skip
                result.infrastructure += int(record.infrastructure)
                result.index.append({**entry, "id": None, "status": "failed", "seconds": record.seconds})
                continue
            quality = record.quality or {}
            result.qualities.append(quality)
            if quality_policy == "drop" and not quality["ok"]:  # docs/generation.md §10: not kept, with its reasons
                reasons = [r for name in QUALITY_CHECKS for r in quality[name]]
                dropped.write({"key": key, "reasons": reasons, "session": data.get("session")})
                result.index.append({**entry, "id": None, "status": "dropped", "reason": "quality: " + "; ".join(reasons[:3]),
                                     "seconds": record.seconds, "quality": quality})  # fmt: skip
                continue
            session = {**data["session"], "id": f"wild_tool_bench_{sessions.count}"}
            del data
            replay = oracle_candidate(session)
            write_json_atomic(folder / "session.json", session)
            write_json_atomic(folder / "replay.json", replay)
            sessions.write(session)
            replays.write(replay)
            result.index.append({**entry, "id": session["id"], "status": "done", "seconds": record.seconds,
                                 "quality": quality})  # fmt: skip
        result.succeeded, result.failed, result.dropped = sessions.count, failures.count, dropped.count
    return result
