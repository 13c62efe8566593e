"""Score a whole run: dataset file + result file in, ``score.jsonl``, ``metric.json`` and
``summary_metrics.json`` out (docs/scoring.md, docs/metrics.md).

This is the I/O layer around the pure :mod:`bench.scoring` and
:mod:`bench.metrics`; ``wtb score`` and ``wtb eval`` both call
:func:`score_run`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Optional

from bench.io import write_json_atomic, write_jsonl_atomic
from bench.metrics import compute_metrics, readable_metrics
from bench.schema import (
    DatasetError,
    DatasetIssue,
    Session,
    language_issues,
    load_sessions,
    note_session_id,
    parse_jsonl_file,
    sessions_by_id,
)
from bench.scoring import ArgumentChecker, ScoringError, record_identity, score_session
from bench.terms import check_scoring_mode

SCORE_FILE = "score.jsonl"
METRIC_FILE = "metric.json"
"""The metric dict in the published format (docs/metrics.md §5): an empty group reads 0.0 there."""
SUMMARY_METRICS_FILE = "summary_metrics.json"
"""The same metrics for reading (docs/metrics.md §7): an empty group is ``null``, the language is named."""
FIXED_SCORE_FILE = "score.fixed.jsonl"
FIXED_METRIC_FILE = "metric.fixed.json"
FIXED_SUMMARY_METRICS_FILE = "summary_metrics.fixed.json"


def score_files(scoring: str = "reference") -> tuple[str, str]:
    """``(score file, metric file)`` names of a scoring mode: ``score.jsonl`` / ``metric.json`` in reference
    mode, ``score.fixed.jsonl`` / ``metric.fixed.json`` in fixed mode, so both can sit in one run
    directory (docs/fixed-mode.md §1). Raises ValueError for an unknown mode."""
    return (FIXED_SCORE_FILE, FIXED_METRIC_FILE) if check_scoring_mode(scoring) == "fixed" else (SCORE_FILE, METRIC_FILE)


def summary_metrics_file(scoring: str = "reference") -> str:
    """The readable metrics file of a scoring mode (docs/metrics.md §7): ``summary_metrics.json``, or
    ``summary_metrics.fixed.json`` in fixed mode (beside :func:`score_files`). Raises ValueError for an unknown mode."""
    return FIXED_SUMMARY_METRICS_FILE if check_scoring_mode(scoring) == "fixed" else SUMMARY_METRICS_FILE


def natural_id_key(session_id: str) -> tuple:
    """Sort key that orders ``wild_tool_bench_2`` before ``wild_tool_bench_10`` (docs/evaluation.md §5)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", session_id))


def load_result_records(path: str | os.PathLike[str]) -> list[tuple[int, dict[str, Any]]]:
    """Read a result file (JSON Lines, one record per session, docs/evaluation.md §5).

    Records may be in our format (``id``, ``model_name``, ``result``) or the
    reference fixtures' (``session_id``, ``candidate``, ``result``).

    Returns:
        ``(line_number, record)`` pairs in file order.

    Raises:
        DatasetError: every bad line (bad JSON, not an object, no id / model name),
            duplicate session ids, a missing or empty file.
    """
    first_line: dict[str, int] = {}
    first_model: dict[str, Any] = {}
    Numbered = tuple[int, dict[str, Any]]

    def parse_line(file: str, number: int, record: Any) -> tuple[Optional[Numbered], list[DatasetIssue]]:
        try:
            session_id, model_name = record_identity(record)
        except ScoringError as exc:
            return None, [DatasetIssue(file, number, exc.field, exc.message)]
        if "result" not in record:
            return None, [DatasetIssue(file, number, "result", "missing")]
        first_model.setdefault(session_id, model_name)
        duplicate = note_session_id(first_line, file, number, session_id)
        if duplicate is not None:
            if first_model[session_id] != model_name:  # e.g. the fixtures' expected_results.jsonl
                duplicate = DatasetIssue(
                    duplicate.file, duplicate.line, duplicate.field,
                    f"{duplicate.message}: model {model_name!r} here, {first_model[session_id]!r} there; the file "
                    "holds several models' results: score one model per file",
                )
            return None, [duplicate]
        return (number, record), []

    records, issues = parse_jsonl_file(path, parse_line, empty_message="file holds no result records")
    if issues:
        raise DatasetError(issues)
    return records


def records_language(
    records: list[tuple[int, dict[str, Any]]], language: Optional[str] = None, *, results_file: str = "<results>"
) -> str:
    """The dataset side a result file was made on (docs/dataset.md §2.2, docs/evaluation.md §5.5).

    Args:
        records: ``(line_number, record)`` pairs (:func:`load_result_records`).
        language: ``--lang`` when given: returned as it is (each record is checked against it when
            scored); ``None``: the records' ``"language"`` key, ``en`` for records without one.

    Returns:
        ``"en"`` or ``"zh"``.

    Raises:
        DatasetError: (``language=None``) the records name different sides; one issue per line
            whose side differs from the first record's.
    """
    if language is not None:
        return language
    first: Optional[tuple[int, str]] = None
    issues: list[DatasetIssue] = []
    for number, record in records:
        side = str(record.get("language", "en"))
        if first is None:
            first = (number, side)
        elif side != first[1]:
            issues.append(DatasetIssue(
                results_file, number, "language",
                f"{side} record, but line {first[0]} is {first[1]}: one language side per result file",
            ))  # fmt: skip
    if issues:
        raise DatasetError(issues)
    return first[1] if first is not None else "en"


def score_records(
    sessions: dict[str, Session],
    records: list[tuple[int, dict[str, Any]]],
    *,
    results_file: str = "<results>",
    checker: Optional[ArgumentChecker] = None,
    scoring: str = "reference",
    language: Optional[str] = None,
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """Score result records against their sessions (looked up by id) and compute the metric dict (docs/scoring.md, docs/metrics.md).

    ``scoring="fixed"`` scores with the fixes of docs/fixed-mode.md §6-§9 (records of either mode);
    reference scoring refuses records made by a fixed-mode run, and a file mixing both kinds of
    record is refused in either mode.

    ``language`` is the side the run was made on (``None``: :func:`records_language`); it picks the
    tools the argument checker reads and the labels the tasks are counted under.

    Returns:
        ``(model_name, score_lines, metric)``: ``score_lines`` are
        ``{"id", "model_name", "results"}`` dicts sorted by id (natural order;
        ``{"id", "model_name", "scoring": "fixed", "results"}`` in fixed mode),
        ``metric`` is :func:`bench.metrics.compute_metrics` over the scored sessions.

    Raises:
        DatasetError: unknown session ids, more than one model name, scoring mode or language, or
            records that cannot be scored (each issue names line and field).
    """
    check_scoring_mode(scoring)
    modes: dict[str, int] = {}
    language = records_language(records, language, results_file=results_file)
    issues: list[DatasetIssue] = []
    model_names: dict[str, int] = {}
    scored: list[tuple[Session, list[dict[str, Any]]]] = []
    lines: list[dict[str, Any]] = []
    for number, record in records:
        session_id, model_name = record_identity(record)
        model_names.setdefault(model_name, number)
        modes.setdefault(str(record.get("scoring", "reference")), number)
        session = sessions.get(session_id)
        if session is None:
            issues.append(DatasetIssue(results_file, number, "id", f"no session {session_id!r} in the dataset"))
            continue
        try:
            tasks = score_session(record, session, checker=checker, scoring=scoring, language=language)
        except ScoringError as exc:
            issues.append(DatasetIssue(results_file, number, exc.field, exc.message))
            continue
        scored.append((session, tasks))
        mode = {"scoring": "fixed"} if scoring == "fixed" else {}
        lines.append({"id": session_id, "model_name": model_name, **mode, "results": tasks})
    if len(modes) > 1:
        listed = ", ".join(f"{name!r} (line {line})" for name, line in modes.items())
        issues.append(DatasetIssue(results_file, None, "scoring", f"one scoring mode per result file expected, found {listed}"))
    if len(model_names) > 1:
        listed = ", ".join(f"{name!r} (line {line})" for name, line in model_names.items())
        issues.append(DatasetIssue(results_file, None, "model_name", f"one model per result file expected, found {listed}"))
    if issues:
        raise DatasetError(issues)
    model_name = next(iter(model_names))
    lines.sort(key=lambda line: natural_id_key(line["id"]))
    return model_name, lines, compute_metrics(model_name, scored, scoring=scoring, language=language)


def score_run(
    dataset_path: str | os.PathLike[str],
    results_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    checker: Optional[ArgumentChecker] = None,
    tasks: int = 4,
    scoring: str = "reference",
    language: Optional[str] = None,
) -> dict[str, Any]:
    """Score a result file against a dataset; write ``out_dir/score.jsonl``, ``out_dir/metric.json``
    (the published format, docs/metrics.md §5) and ``out_dir/summary_metrics.json`` (docs/metrics.md §7).

    Args:
        dataset_path: sessions (JSON Lines, docs/dataset.md); sessions are matched by ``id``.
        results_path: one result record per session (docs/evaluation.md §5), one model.
        out_dir: created if needed; the files are written atomically.
        checker: argument checker override (default ``bench.args.check_arguments``).
        tasks: tasks per session in the dataset (4 in the benchmark; N for ``wtb generate --layers N``).
        scoring: ``"reference"`` (default) or ``"fixed"``: scoring fixes 5-8 (docs/fixed-mode.md §6-§9),
            written to ``score.fixed.jsonl`` and ``metric.fixed.json`` (:func:`score_files`), so that
            rescoring a reference run leaves its reference files alone. No model is called.
        language: the side of the dataset the results were made on (``--lang``); ``None``: the
            records say (:func:`records_language`).

    Returns:
        The metric dict (also written to ``metric.json``). Sessions of the dataset
        without a result record are not counted.

    Raises:
        DatasetError: any problem with either input file; nothing is written then.
    """
    score_file, metric_file = score_files(scoring)
    sessions = sessions_by_id(load_sessions(dataset_path, tasks=tasks))
    records = load_result_records(results_path)
    language = records_language(records, language, results_file=os.fspath(results_path))
    side_issues = [
        DatasetIssue(*(session.source or (os.fspath(dataset_path), None)), field, message)
        for session in sessions.values() for field, message in language_issues(session, language)
    ]  # fmt: skip
    if side_issues:
        raise DatasetError(side_issues)
    _, lines, metric = score_records(
        sessions, records, results_file=os.fspath(results_path), checker=checker, scoring=scoring, language=language
    )
    out = Path(out_dir)
    write_jsonl_atomic(out / score_file, lines)
    write_json_atomic(out / metric_file, metric)
    write_json_atomic(out / summary_metrics_file(scoring), readable_metrics(metric, language=language))
    return metric


def compare_run_files(
    dataset_path: str | os.PathLike[str],
    reference_results: str | os.PathLike[str],
    fixed_results: str | os.PathLike[str] | None = None,
    *,
    tasks: int = 4,
) -> dict[str, Any]:
    """Which task labels flip between reference and fixed scoring of a run, and which fix is responsible (docs/fixed-mode.md §10).

    The file-reading side of :func:`bench.compare.compare_run` (see there for the returned dict).

    Args:
        dataset_path: the sessions (JSON Lines).
        reference_results: ``result.jsonl`` of a reference run.
        fixed_results: ``result.jsonl`` of a ``--scoring fixed`` run of the same model, or
            ``None`` to compare the reference run with its own fixed rescoring.
        tasks: tasks per session in the dataset.

    Raises:
        DatasetError: a bad input file, or a record that cannot be compared (named by file and line).
    """
    from bench.compare import compare_run

    sessions = sessions_by_id(load_sessions(dataset_path, tasks=tasks))
    reference = [record for _, record in load_result_records(reference_results)]
    fixed = None if fixed_results is None else [record for _, record in load_result_records(fixed_results)]
    try:
        return compare_run(sessions, reference, fixed)
    except ScoringError as exc:
        raise DatasetError([DatasetIssue(os.fspath(reference_results), None, exc.field, exc.message)]) from None
    except KeyError as exc:
        raise DatasetError([DatasetIssue(os.fspath(reference_results), None, "id", f"no session {exc} in the dataset")]) from None
