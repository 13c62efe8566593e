"""The machine-readable figures of a report (``report.json``, docs/metrics.md §10)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wildtoolbench.bench.errors import CATEGORIES
from wildtoolbench.reports.content import (
    Report,
    run_facts,
)
from wildtoolbench.reports.diffs import json_diffs
from wildtoolbench.reports.run_data import Run
from wildtoolbench.reports.stats import (
    Interval,
)
from wildtoolbench.reports.tables import (
    Row,
)


def report_json(report: Report, err_rows: Sequence[Row], seed: int, resamples: int) -> dict[str, Any]:
    """The machine-readable figures of a report (``report.json``): per run its metric totals, intervals,
    rank, error counts and, when it has any, its extra metrics (``summary_metrics.json["extra"]``,
    docs/metrics.md §8); the runs table's facts (:func:`wildtoolbench.reports.content.run_facts`); per task type and
    position the counts and intervals; the paired comparisons and the pairs not compared; the interval
    methods and bootstrap settings (docs/metrics.md §10); per comparable pair the tasks that flipped with
    their first divergent step (``diffs``, :func:`wildtoolbench.reports.diffs.report_diffs`, docs/diff.md §4); the audit
    section (``audit``, ``null`` without ``--audit``; :func:`wildtoolbench.reports.audit.audit_section`, docs/audit.md)."""
    errors = {r.run: r for r in err_rows if r.run}
    labels = {run.key: run.label for run in report.runs}

    def facts(run: Run) -> dict[str, Any]:
        found = run_facts(run, report.figures[run.key])
        found["task_accuracy"] = interval_json(found["task_accuracy"])
        found["session_accuracy"] = interval_json(found["session_accuracy"])
        found["top_errors"] = [{"category": k, "tasks": n} for k, n in found["top_errors"]]
        found["errors"] = {k: errors[run.key].extra[f"{k}_count"] for k in CATEGORIES}
        found["task_type"] = _grouped_json(report.groups[run.key]["type"])
        found["task_position"] = _grouped_json(report.groups[run.key]["position"])
        if run.extra_metrics:
            found["extra_metrics"] = run.extra_metrics
        return found

    return {
        "intervals": {
            "level": 0.95,
            "proportions": "wilson",
            "task_accuracy": "wilson on the effective number of tasks (sessions as clusters)",
            "session_accuracy": "wilson on sessions",
        },
        "bootstrap": {
            "seed": seed,
            "resamples": resamples,
            "level": 0.95,
            "unit": "session",
            "used_for": "paired differences",
        },
        "rank": "1 + the paper's models strictly better by session then task accuracy; null when not ranked",
        "runs": [facts(run) for run in report.runs],
        "comparisons": [
            {
                "a": c.a.label,
                "b": c.b.label,
                "sessions": c.difference.sessions,
                "task_accuracy_difference": interval_json(c.difference.task),
                "session_accuracy_difference": interval_json(c.difference.session),
                "within_noise": {
                    "task": c.difference.task.contains_zero(),
                    "session": c.difference.session.contains_zero(),
                },
                "verdict": c.verdict(),
            }
            for c in report.comparisons
        ],
        "not_compared": [{"a": labels[r["a"]], "b": labels[r["b"]], "why": r["why"]} for r in report.refused],
        "scoring": report.scoring,
        "diffs": json_diffs(report.diffs, report.runs),
        "audit": report.audit,
    }


def interval_json(interval: Interval) -> dict[str, float]:
    """An interval in ``report.json``: ``{"value", "low", "high"}``."""
    return {"value": interval.value, "low": interval.low, "high": interval.high}


def _grouped_json(groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {k: {"correct": v["correct"], "n": v["n"], **interval_json(v["interval"])} for k, v in groups.items()}
