"""One generated session's outcome (:class:`GenerationOutcome`) and its resume record
``sessions/<key>/outcome.json`` (docs/generation.md outputs): written when the session ends, read
by a resumed run of the same command (:func:`wildtoolbench.runner.generation.run_batch`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.generation import SessionPlan
from wildtoolbench.common.files import write_json_atomic
from wildtoolbench.tracing import redact, redact_record, redact_text

OUTCOME_FILE = "outcome.json"


@dataclass
class GenerationOutcome:
    """Result of one session run: final state values, status and (on success) the dataset session."""

    plan: SessionPlan
    status: str
    reason: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] | None = None
    infrastructure: bool = False
    """The session failed because a model request failed for good (not because of the models' output)."""
    usage: dict[str, Any] = field(default_factory=dict)
    """Model requests, tries, tokens and retried requests of the session (``RequestUsage.as_dict()``)."""
    reused: bool = False
    """Kept from an earlier run of the same command (read from ``outcome.json``, not generated now)."""
    seconds: float = 0.0
    """Wall-clock seconds the session took to generate."""
    yields: dict[str, Any] = field(default_factory=dict)
    """The session's yield table (``wildtoolbench.bench.generation_yield.session_yield``; docs/generation.md §7.1)."""
    rules: list[str] = field(default_factory=list)
    """The rule ids of the rejection that failed the session (the state's ``failure_rules``; docs/generation.md §11)."""
    written: bool = False
    """The session's files and ``outcome.json`` are on disk already (a worker process wrote them, without sending
    its ``state``: ``wtb generate --workers``)."""


def _tools_digest(plan: SessionPlan) -> str:
    """sha256 of the plan's tool list (canonical JSON): the plan summary names only the tool-file line."""
    return hashlib.sha256(json.dumps(plan.tools, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def write_outcome(out_dir: Path, outcome: GenerationOutcome) -> Path:
    """Write ``sessions/<key>/outcome.json``, the record a resumed run reuses (docs/generation.md outputs).

    Args:
        out_dir: the run's output folder.
        outcome: a finished session's outcome.

    Returns:
        The path written (atomically: a crash leaves the old file or the new one, never half of one).
    """
    path = out_dir / "sessions" / outcome.plan.key / OUTCOME_FILE
    write_json_atomic(
        path,
        {
            "plan": outcome.plan.summary(),
            "tools_sha256": _tools_digest(outcome.plan),
            "status": outcome.status,
            "reason": redact_text(outcome.reason) if outcome.reason else outcome.reason,
            "rules": outcome.rules,
            "infrastructure": outcome.infrastructure,
            "usage": redact(outcome.usage),  # errors an endpoint echoed (docs/settings.md §8)
            "seconds": outcome.seconds,
            "yield": outcome.yields,
            "session": redact_record(outcome.session),
        },
    )
    return path


def load_finished_outcome(out_dir: Path, plan: SessionPlan) -> GenerationOutcome | None:
    """The outcome a previous run recorded for ``plan``, if it should be kept on resume.

    Args:
        out_dir: the run's output folder.
        plan: the session plan of this run.

    Returns:
        The recorded :class:`GenerationOutcome` (without graph state) when ``outcome.json`` exists and
        says ``done`` or a failure caused by the models' output; ``None`` when there is no record, it
        is unreadable (an interrupted write of an older version), or the failure was an
        infrastructure error (a model request that failed for good: generated again).

    Raises:
        ValueError: the folder holds a different plan under the same key (another seed, layer count,
            language or tool file): the message says to use ``--overwrite`` or another ``--out``.
    """
    path = out_dir / "sessions" / plan.key / OUTCOME_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("plan") != plan.summary() or data.get("tools_sha256") != _tools_digest(plan):
        raise ValueError(
            f"{path}: plan: this folder holds a different run (another seed, --layers, --paths, language or "
            f"tool file); use --overwrite to replace it or choose another --out"
        )
    if data.get("status") != "done" and data.get("infrastructure"):
        return None
    return GenerationOutcome(
        plan,
        str(data.get("status")),
        str(data.get("reason") or ""),
        {},
        data.get("session"),
        bool(data.get("infrastructure")),
        dict(data.get("usage") or {}),
        reused=True,
        seconds=float(data.get("seconds") or 0.0),
        yields=dict(data.get("yield") or {}),
        rules=[str(r) for r in data.get("rules") or [] if isinstance(r, str)],
    )
