"""Reading a result file (docs/evaluation.md §5): its records checked line by line (identity, ``result``, no
duplicate id), loaded or streamed, its model name and its language side."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from wildtoolbench.bench.schema import (
    MAX_DEPTH,
    DatasetError,
    DatasetIssue,
    JsonlScan,
    LineParser,
    note_session_id,
    parse_jsonl_file,
)
from wildtoolbench.bench.scoring import (
    ScoringError,
    record_identity,
    record_model_name,
    with_model_name,
)

RESULT_DEPTH = 2 * MAX_DEPTH
"""Deepest nesting of a result line: a record wraps the dataset's values (at most ``MAX_DEPTH`` deep) in its own."""


def natural_id_key(session_id: str) -> tuple:
    """Sort key that orders ``wild_tool_bench_2`` before ``wild_tool_bench_10`` (docs/evaluation.md §5)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", session_id))


def result_line_parser(default_model: str | None = None) -> LineParser:
    """The result loader's ``parse_line``: identity, ``result`` present, no duplicate id (docs/evaluation.md §5);
    a record naming no model gets ``model_name`` (``wildtoolbench.bench.scoring.with_model_name``, docs/scoring.md §5.1)."""
    first_line: dict[str, int] = {}
    first_model: dict[str, Any] = {}

    def parse_line(file: str, number: int, record: Any) -> tuple[Numbered | None, list[DatasetIssue]]:
        record = with_model_name(record, default_model)
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
                    duplicate.file,
                    duplicate.line,
                    duplicate.field,
                    f"{duplicate.message}: model {model_name!r} here, {first_model[session_id]!r} there; the file "
                    "holds several models' results: score one model per file",
                )
            return None, [duplicate]
        return (number, record), []

    return parse_line


Numbered = tuple[int, dict[str, Any]]
"""``(line_number, record)`` of a result file."""

RESULTS_EMPTY = "file holds no result records"


def load_result_records(path: str | os.PathLike[str], model_name: str | None = None) -> list[Numbered]:
    """Read a result file (JSON Lines, one record per session, docs/evaluation.md §5).

    Records may be in our format (``id``, ``model_name``, ``result``) or the
    reference fixtures' (``session_id``, ``candidate``, ``result``). ``model_name`` completes the
    records that name no model (the published runner's error records, docs/scoring.md §5.1).

    Returns:
        ``(line_number, record)`` pairs in file order.

    Raises:
        DatasetError: every bad line (bad JSON, not an object, no id / model name),
            duplicate session ids, a missing or empty file.
    """
    records, issues = parse_jsonl_file(
        path, result_line_parser(model_name), empty_message=RESULTS_EMPTY, max_depth=RESULT_DEPTH
    )
    if issues:
        raise DatasetError(issues)
    return records


def scan_result_records(path: str | os.PathLike[str], model_name: str | None = None) -> JsonlScan[Numbered]:
    """:func:`load_result_records` as one streaming pass (docs/evaluation.md §5): iterating the returned
    :class:`wildtoolbench.bench.schema.JsonlScan` yields ``(offset, length, (line_number, record))`` for each good
    record, one at a time, and its ``issues`` collect what :func:`load_result_records` would raise
    (complete once the iteration has ended). Never raises for bad input."""
    return JsonlScan(path, result_line_parser(model_name), empty_message=RESULTS_EMPTY, max_depth=RESULT_DEPTH)


def file_model_name(path: str | os.PathLike[str]) -> str | None:
    """The model name of the first record of the result file ``path`` that names one, or ``None`` (none
    does, or the file cannot be read: its problems are reported by the scoring pass). Reads up to that
    record only (docs/scoring.md §5.1)."""

    def parse_line(file: str, number: int, record: Any) -> tuple[str | None, list[DatasetIssue]]:
        return record_model_name(record), []

    for _, _, name in JsonlScan(path, parse_line, empty_message=RESULTS_EMPTY, max_depth=RESULT_DEPTH):
        return name
    return None


def records_language(
    records: list[tuple[int, dict[str, Any]]], language: str | None = None, *, results_file: str = "<results>"
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
    first: tuple[int, str] | None = None
    issues: list[DatasetIssue] = []
    for number, record in records:
        side = str(record.get("language", "en"))
        if first is None:
            first = (number, side)
        elif side != first[1]:
            issues.append(
                DatasetIssue(
                    results_file,
                    number,
                    "language",
                    f"{side} record, but line {first[0]} is {first[1]}: one language side per result file",
                )
            )
    if issues:
        raise DatasetError(issues)
    return first[1] if first is not None else "en"


def checked_records(path: str | os.PathLike[str], model_name: str | None = None) -> Iterator[dict[str, Any]]:
    """The records of a result file one at a time, after a first pass has checked the whole file
    (docs/evaluation.md §5); records naming no model get ``model_name``, else the file's first one.
    Raises DatasetError here, before any record is returned, as :func:`load_result_records` would."""
    name = model_name if model_name is not None else file_model_name(path)
    scan = scan_result_records(path, name)
    for _ in scan:
        pass
    if scan.issues:
        raise DatasetError(scan.issues)
    return (record for _, _, (_, record) in scan_result_records(path, name))
