"""Read run folders for a report: metric, scores, results, summary, run identity and dataset.

A run folder is what ``wtb eval`` (or ``wtb score``) writes: ``metric.json`` and
``score.jsonl`` are required; ``result.jsonl`` (the raw trajectories, docs/evaluation.md §5),
``summary.json`` (accounting) and ``run.json`` (dataset path and sha256) are
used when present. Files are read one line at a time and reduced to what the
report needs (per-task facts and a compact trajectory per session), so a run of
1,024 sessions (tens of MB of JSON) stays small in memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from wildtoolbench.bench.strategy import REFERENCE, SCORING_STRATEGIES
from wildtoolbench.common.run_folder import (
    METRIC_FILE,
    RESULT_FILE,
    RUN_FILE,
    SCORE_FILE,
    SUMMARY_FILE,
    SUMMARY_METRICS_FILE,
)
from wildtoolbench.reports.datasets import file_sha256, load_report_dataset, run_dataset_file
from wildtoolbench.reports.run_data import Dataset, ReportError, Run, TaskFacts, read_json, read_json_lines
from wildtoolbench.reports.trajectory import compact_trajectory, task_facts, without_inputs
from wildtoolbench.scoring.outputs import trial_files


def _record_id(record: Any, path: Path, number: int) -> str:
    if isinstance(record, Mapping):
        session_id = record.get("id", record.get("session_id"))
        if isinstance(session_id, str):
            return session_id
    raise ReportError(f"{path}:{number}: no session id")


def _extra_metrics(path: Path) -> dict[str, Any]:
    """``summary_metrics.json["extra"]`` (docs/metrics.md §8): key -> readable metric or ``None``; ``{}``
    when the file or the section is absent.

    Raises:
        ReportError: the file is not JSON, or its ``extra`` is not an object of objects / nulls.
    """
    if not path.is_file():
        return {}
    data = read_json(path)
    extra = data.get("extra") if isinstance(data, dict) else None
    if extra is None:
        return {}

    def readable(value: Any) -> bool:
        if value is None:
            return True
        number = value.get("value") if isinstance(value, dict) else "missing"
        return number is None or (isinstance(number, (int, float)) and not isinstance(number, bool))

    if not isinstance(extra, dict) or not all(readable(v) for v in extra.values()):
        bad = next((k for k, v in extra.items() if not readable(v)), None) if isinstance(extra, dict) else None
        where = f"extra.{bad}" if bad is not None else "extra"
        raise ReportError(f"{path}: field {where}: expected an object with a numeric 'value', or null")
    return extra


def _read_identity(run: Run, info_path: Path, summary_metrics: Path, metric_path: Path) -> None:
    """Fill the run's facts (side, model spec, settings, harness version, date) from ``run.json`` (docs/settings.md),
    falling back to ``summary_metrics.json``'s ``language`` and the metric file's time."""
    info = read_json(info_path) if info_path.is_file() else {}
    settings = info.get("settings") if isinstance(info, dict) and isinstance(info.get("settings"), dict) else {}
    language = settings.get("language")
    if not isinstance(language, str) and summary_metrics.is_file():
        found = read_json(summary_metrics)
        language = found.get("language") if isinstance(found, dict) else None
    run.language = language if isinstance(language, str) and language else "en"
    run.settings = settings
    run.spec = str(settings.get("model") or "")
    run.version = str(settings.get("project_version") or "")
    stamp = (info_path if info_path.is_file() else metric_path).stat().st_mtime
    run.date = datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_report_run(
    run_dir: Path,
    key: str,
    datasets: dict[tuple[str, str], Dataset],
    dataset_override: Path | None = None,
) -> Run:
    """Read one run folder.

    Args:
        run_dir: folder holding at least ``metric.json`` and ``score.jsonl``.
        key: the run's short id in the page.
        datasets: datasets read so far, keyed by ``(resolved path, sha256)``; the run's
            dataset is added when new (runs on the same file share one entry).
        dataset_override: dataset for a folder whose ``run.json`` does not name one.

    Returns:
        The :class:`Run` (its ``label`` is the model name; :func:`load_runs` makes labels unique).

    Raises:
        ReportError: a required file is missing or malformed, the dataset cannot be
            found or changed since the run, or a scored session is not in the dataset.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a run folder")
    # the first mode whose metric file the folder holds: reference, else the mode of a --scoring run
    strategy = next((s for s in SCORING_STRATEGIES.values() if (run_dir / s.file_name(METRIC_FILE)).is_file()), REFERENCE)
    scoring, metric_file, score_file = strategy.name, strategy.file_name(METRIC_FILE), strategy.file_name(SCORE_FILE)
    metric = read_json(run_dir / metric_file)
    if not isinstance(metric, dict) or "total_info" not in metric:
        raise ReportError(f"{run_dir / metric_file}: not a metric file (no total_info)")
    summary_path = run_dir / SUMMARY_FILE
    summary = read_json(summary_path) if summary_path.is_file() else None

    score_path = run_dir / score_file
    scored, lines, order = _read_scores(score_path)

    tasks_per_session = len(scored[order[0]])
    path = run_dataset_file(run_dir, dataset_override)
    identity = (str(path.resolve()), file_sha256(path))
    dataset = datasets.get(identity)
    if dataset is None:
        dataset = load_report_dataset(path, f"d{len(datasets)}", tasks_per_session)
        datasets[identity] = dataset
    missing = [s for s in order if s not in dataset.index]
    if missing:
        raise ReportError(f"{score_path}: {len(missing)} scored session(s) not in {path}, e.g. {missing[0]}")

    model = str(metric.get("model_name") or run_dir.name)
    run = Run(
        key, model, model, run_dir, metric, summary if isinstance(summary, dict) else None, dataset, scoring=scoring
    )
    summary_metrics = run_dir / strategy.file_name(SUMMARY_METRICS_FILE)
    run.extra_metrics = _extra_metrics(summary_metrics)
    _read_identity(run, run_dir / RUN_FILE, summary_metrics, run_dir / metric_file)
    tags = [
        t for t in (None if strategy.is_reference else scoring, None if run.language == "en" else run.language) if t
    ]
    run.label = f"{model} ({', '.join(tags)})" if tags else model
    facts: dict[str, list[TaskFacts]] = {}
    for session_id in order:
        facts[session_id] = [task_facts(session_id, i, t) for i, t in enumerate(scored[session_id])]
        run.tasks.extend(facts[session_id])
    run.session_ids = order
    run.score_path = score_path
    run.scored = {s: (lines[s], [without_inputs(task) for task in scored[s]]) for s in order}

    trials_path = run_dir / trial_files(scoring)[2]
    if trials_path.is_file():  # docs/trials.md §5
        trials = read_json(trials_path)
        if not isinstance(trials, dict) or not isinstance(trials.get("task"), dict):
            raise ReportError(f"{trials_path}: not a trial summary (no task)")
        run.trials = trials

    _read_trajectories(run, run_dir / RESULT_FILE, scored, facts)
    return run


def _read_scores(score_path: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int], list[str]]:
    """A score file's lines: ``(session id -> scored tasks, session id -> line number, ids in file order)``.

    Raises:
        ReportError: a line that is not JSON, names no session or holds no ``results`` list; no line at all.
    """
    scored: dict[str, list[dict[str, Any]]] = {}
    lines: dict[str, int] = {}
    order: list[str] = []
    for number, record in read_json_lines(score_path):
        session_id = _record_id(record, score_path, number)
        results = record.get("results")
        if not isinstance(results, list):
            raise ReportError(f"{score_path}:{number}: no 'results' list")
        scored[session_id] = results
        lines[session_id] = number
        order.append(session_id)
    if not order:
        raise ReportError(f"{score_path}: holds no scored sessions")
    return scored, lines, order


def _read_trajectories(
    run: Run, result_path: Path, scored: dict[str, list[dict[str, Any]]], facts: dict[str, list[TaskFacts]]
) -> None:
    """Fill ``run.trajectories`` (compact, as JSON text) from the raw records of ``result_path`` when present;
    a session without one gets its scored log instead, and ``run.raw_results`` is then ``False``.

    Raises:
        ReportError: a line of ``result_path`` that is not JSON or names no session.
    """
    if result_path.is_file():
        for number, record in read_json_lines(result_path):
            session_id = _record_id(record, result_path, number)
            if session_id in scored:
                trajectory = compact_trajectory(record.get("result"), scored[session_id], facts[session_id])
                run.trajectories[session_id] = json.dumps(trajectory, ensure_ascii=False, separators=(",", ":"))
    missing_raw = [s for s in run.session_ids if s not in run.trajectories]
    if missing_raw:
        run.raw_results = False
        for (
            session_id
        ) in missing_raw:  # the scored log: calls sorted by the scorer, one step dropped after an argument error
            trajectory = compact_trajectory(scored[session_id], scored[session_id], facts[session_id])
            run.trajectories[session_id] = json.dumps(trajectory, ensure_ascii=False, separators=(",", ":"))


def load_runs(
    run_dirs: Sequence[os.PathLike[str] | str], dataset_override: Path | None = None
) -> tuple[list[Run], list[Dataset]]:
    """Read every run folder; labels are made unique and datasets shared between runs on the same file.

    Returns:
        ``(runs, datasets)`` in argument order / first-use order; each dataset's
        ``offset`` is its first session's position in the report's session list.

    Raises:
        ReportError: see :func:`load_report_run`; also when no folder is given or a folder is given twice.
    """
    if not run_dirs:
        raise ReportError("no run folder given")
    resolved = [Path(d).resolve() for d in run_dirs]
    if len(set(resolved)) != len(resolved):
        raise ReportError("a run folder is given twice")
    datasets: dict[tuple[str, str], Dataset] = {}
    runs = [load_report_run(Path(d), f"r{i}", datasets, dataset_override) for i, d in enumerate(run_dirs)]
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    for run in runs:
        if seen[run.label] > 1:
            run.label = f"{run.label} ({run.path.name})"
    labels: dict[str, int] = {}
    for run in runs:
        labels[run.label] = labels.get(run.label, 0) + 1
        if labels[run.label] > 1:
            run.label = f"{run.label} #{labels[run.label]}"
    offset = 0
    ordered = list(datasets.values())
    for dataset in ordered:
        dataset.offset = offset
        offset += len(dataset.sessions)
    return runs, ordered
