"""The audit section of ``wtb report --audit`` (docs/guides/reports.md, docs/audit.md): every dataset of the
report audited, its findings per kind and severity and per session, and with ``--errata FILE`` each run
scored without and with the errata (docs/audit.md §9.3).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.audit import RunTasks, audit_sessions
from wildtoolbench.common.shareable import shareable_path
from wildtoolbench.reports.run_data import Dataset, ReportError, Run


def _dataset_runs(runs: Sequence[Run], dataset: Dataset) -> list[Run]:
    return [run for run in runs if run.dataset is dataset]


def _scored_runs(runs: Sequence[Run], dataset: Dataset, language: str) -> list[RunTasks]:
    """The runs on ``dataset`` that have their ``result.jsonl``, scored for ``failed_by_all`` (docs/audit.md §8)."""
    from wildtoolbench.audit.run import load_run
    from wildtoolbench.bench.schema import DatasetError
    from wildtoolbench.common.run_folder import RESULT_FILE

    by_id = {s["id"]: s for s in dataset.sessions}
    out = []
    for run in _dataset_runs(runs, dataset):
        if run.language != language or not (run.path / RESULT_FILE).is_file():
            continue
        try:
            loaded = load_run(run.path, by_id, language)
        except DatasetError as exc:
            raise ReportError("; ".join(str(issue) for issue in exc.issues)) from None
        loaded.name = run.label
        out.append(loaded)
    return out


def dataset_audit(runs: Sequence[Run], dataset: Dataset) -> dict[str, Any]:
    """The audit of one dataset of the report (docs/audit.md §2-§8).

    The side audited is the first of its runs' (``en`` without runs); ``failed_by_all`` is reported over
    the runs on that side that kept their ``result.jsonl``.

    Returns:
        ``{"key", "path", "language", "runs", "sessions_audited", "findings", "counts": {kind: {severity:
        n}}, "sessions": [[id, position in the dataset, [[task, kind, severity, message], ...]], ...]}``,
        sessions with findings only, in file order.

    Raises:
        ReportError: a run's result file is malformed.
    """
    from wildtoolbench.audit.run import count_by_kind

    on_dataset = _dataset_runs(runs, dataset)
    language = on_dataset[0].language if on_dataset else "en"
    scored = _scored_runs(runs, dataset, language)
    findings = audit_sessions(dataset.sessions, language=language, runs=scored)
    per_session: dict[str, list[list[Any]]] = {}
    for finding in findings:
        per_session.setdefault(finding.id or "", []).append(
            [finding.task, finding.kind, finding.severity, finding.message]
        )
    return {
        "key": dataset.key,
        "path": shareable_path(dataset.path),
        "language": language,
        "runs": [run.name for run in scored],
        "sessions_audited": len(dataset.sessions),
        "findings": len(findings),
        "counts": count_by_kind(findings),
        "sessions": [
            [session_id, dataset.index.get(session_id, -1), found] for session_id, found in per_session.items()
        ],
    }


def errata_scores(runs: Sequence[Run], errata: os.PathLike[str] | str) -> dict[str, Any]:
    """Each run scored without and with the errata (docs/audit.md §9.3), in memory.

    Args:
        runs: the report's runs; a run without its ``result.jsonl`` cannot be rescored and is listed in
            ``skipped``.
        errata: the errata file; it is checked against each run's dataset first.

    Returns:
        ``{"path", "runs": [{"key", "label", "rows": [[section, name, without, counts, with, counts]],
        "excluded", "argument_changes", "rewritten", "pending", "other_changes"}], "skipped": [{"key",
        "label", "why"}]}``.

    Raises:
        ReportError: the errata file is bad or does not apply to a run's dataset (every problem named,
            ``file:line: field: message``).
    """
    from wildtoolbench.bench.schema import DatasetError
    from wildtoolbench.common.run_folder import RESULT_FILE
    from wildtoolbench.common.table import metric_rows
    from wildtoolbench.scoring.errata import errata_metric

    out: dict[str, Any] = {"path": shareable_path(errata), "runs": [], "skipped": []}
    for run in runs:
        results = Path(run.path) / RESULT_FILE
        if not results.is_file():
            out["skipped"].append({"key": run.key, "label": run.label, "why": "no result.jsonl to rescore"})
            continue
        tasks = len(run.tasks) // max(len(run.session_ids), 1) or 4
        try:
            scored = errata_metric(
                run.dataset.path, results, errata, tasks=tasks, scoring=run.scoring, language=run.language
            )
        except DatasetError as exc:
            raise ReportError("; ".join(str(issue) for issue in exc.issues)) from None
        rows = [
            [section, name, before, count_before, after, count_after]
            for (section, name, before, count_before), (_, _, after, count_after) in zip(
                metric_rows(run.metric), metric_rows(scored.metric)
            )
        ]
        applied = scored.applied
        out["runs"].append(
            {
                "key": run.key,
                "label": run.label,
                "rows": rows,
                "excluded": sum(len(tasks) for tasks in applied.excluded.values()),
                "argument_changes": len(applied.argument_changes),
                "rewritten": scored.rewritten,
                "pending": len(applied.pending),
                "other_changes": len(applied.other_changes),
            }
        )
    return out


def audit_section(
    runs: Sequence[Run], datasets: Sequence[Dataset], errata: os.PathLike[str] | str | None = None
) -> dict[str, Any]:
    """The report's audit section: :func:`dataset_audit` of every dataset and, given ``errata``,
    :func:`errata_scores` (``None`` without).

    Returns:
        ``{"datasets": [...], "errata": {...} or None}``.

    Raises:
        ReportError: as :func:`dataset_audit` and :func:`errata_scores`.
    """
    return {
        "datasets": [dataset_audit(runs, dataset) for dataset in datasets],
        "errata": errata_scores(runs, errata) if errata is not None else None,
    }


__all__ = ["audit_section", "dataset_audit", "errata_scores"]
