"""Score a whole run: dataset file + result file in, ``score.jsonl``, ``metric.json`` and
``summary_metrics.json`` out (docs/scoring.md, docs/metrics.md).

This is the I/O layer around the pure :mod:`wildtoolbench.bench.scoring` and
:mod:`wildtoolbench.bench.metrics`; ``wtb score`` and ``wtb eval`` both call
:func:`score_run`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.io import loads_json
from wildtoolbench.bench.metrics import MetricsAccumulator, published, readable_metrics, with_extra
from wildtoolbench.bench.schema import (
    MAX_DEPTH,
    DatasetError,
    DatasetIssue,
    JsonlScan,
    LineParser,
    Session,
    index_sessions,
    note_session_id,
    parse_jsonl_file,
)
from wildtoolbench.bench.scoring import (
    ArgumentChecker,
    ScoringError,
    record_identity,
    record_model_name,
    score_session,
    with_model_name,
)
from wildtoolbench.bench.terms import check_scoring_mode
from wildtoolbench.common.files import (
    STREAM_LINES_FROM,
    atomic_write_text,
    give_default_mode,
    line_chunks,
    named_os_error,
    write_json_atomic,
)
from wildtoolbench.common.run_folder import (
    FIXED_METRIC_FILE,
    FIXED_SCORE_FILE,
    FIXED_SUMMARY_METRICS_FILE,
    FIXED_TRIALS_FILE,
    FIXED_TRIALS_SCORE_FILE,
    FIXED_TRIALS_SUMMARY_FILE,
    METRIC_FILE,
    RESULT_FILE,
    SCORE_FILE,
    SUMMARY_METRICS_FILE,
    TRIALS_FILE,
    TRIALS_RESULT_FILE,
    TRIALS_SCORE_FILE,
    TRIALS_SUMMARY_FILE,
)

RESULT_DEPTH = 2 * MAX_DEPTH
"""Deepest nesting of a result line: a record wraps the dataset's values (at most ``MAX_DEPTH`` deep) in its own."""


def score_files(scoring: str = "reference") -> tuple[str, str]:
    """``(score file, metric file)`` names of a scoring mode: ``score.jsonl`` / ``metric.json`` in reference
    mode, ``score.fixed.jsonl`` / ``metric.fixed.json`` in fixed mode, so both can sit in one run
    directory (docs/fixed-mode.md §1). Raises ValueError for an unknown mode."""
    return (
        (FIXED_SCORE_FILE, FIXED_METRIC_FILE) if check_scoring_mode(scoring) == "fixed" else (SCORE_FILE, METRIC_FILE)
    )


def summary_metrics_file(scoring: str = "reference") -> str:
    """The readable metrics file of a scoring mode (docs/metrics.md §7): ``summary_metrics.json``, or
    ``summary_metrics.fixed.json`` in fixed mode (beside :func:`score_files`). Raises ValueError for an unknown mode."""
    return FIXED_SUMMARY_METRICS_FILE if check_scoring_mode(scoring) == "fixed" else SUMMARY_METRICS_FILE


def score_outputs(scoring: str | None = None) -> tuple[str, ...]:
    """The file names a scoring writes into a run folder: the score, metric and readable metric files of
    ``scoring`` (:func:`score_files`, :func:`summary_metrics_file`) and the trial files (:func:`trial_files`,
    docs/trials.md §5), or of both modes when ``None``
    (docs/evaluation.md §5). Raises ValueError for an unknown mode."""
    modes = ("reference", "fixed") if scoring is None else (scoring,)
    return tuple(
        name for mode in modes for name in (*score_files(mode), summary_metrics_file(mode), *trial_files(mode))
    )


def remove_scores(out_dir: str | os.PathLike[str], scoring: str | None = None) -> list[Path]:
    """Delete the score outputs of ``scoring`` (both modes when ``None``) from ``out_dir``, so that no metric
    is shown beside results it was not computed from (docs/evaluation.md §5).

    Returns:
        The files removed (missing ones are skipped).

    Raises:
        OSError: a file exists but cannot be removed (the error names it).
    """
    removed = []
    for name in score_outputs(scoring):
        path = Path(out_dir) / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def natural_id_key(session_id: str) -> tuple:
    """Sort key that orders ``wild_tool_bench_2`` before ``wild_tool_bench_10`` (docs/evaluation.md §5)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", session_id))


def _result_line_parser(default_model: str | None = None) -> LineParser:
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
        path, _result_line_parser(model_name), empty_message=RESULTS_EMPTY, max_depth=RESULT_DEPTH
    )
    if issues:
        raise DatasetError(issues)
    return records


def scan_result_records(path: str | os.PathLike[str], model_name: str | None = None) -> JsonlScan[Numbered]:
    """:func:`load_result_records` as one streaming pass (docs/evaluation.md §5): iterating the returned
    :class:`wildtoolbench.bench.schema.JsonlScan` yields ``(offset, length, (line_number, record))`` for each good
    record, one at a time, and its ``issues`` collect what :func:`load_result_records` would raise
    (complete once the iteration has ended). Never raises for bad input."""
    return JsonlScan(path, _result_line_parser(model_name), empty_message=RESULTS_EMPTY, max_depth=RESULT_DEPTH)


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


def score_records(
    sessions: Mapping[str, Session | Mapping[str, Any]],
    records: list[tuple[int, dict[str, Any]]],
    *,
    results_file: str = "<results>",
    checker: ArgumentChecker | None = None,
    scoring: str = "reference",
    language: str | None = None,
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """Score result records against their sessions (looked up by id) and compute the metric dict (docs/scoring.md, docs/metrics.md).

    ``scoring="fixed"`` scores with the fixes of docs/fixed-mode.md §6-§8 (records of either mode);
    reference scoring refuses records made by a fixed-mode run, and a file mixing both kinds of
    record is refused in either mode.

    ``language`` is the side the run was made on (``None``: :func:`records_language`); it picks the
    tools the argument checker reads and the labels the tasks are counted under.

    Returns:
        ``(model_name, score_lines, metric)``: ``score_lines`` are
        ``{"id", "model_name", "results"}`` dicts sorted by id (natural order;
        ``{"id", "model_name", "scoring": "fixed", "results"}`` in fixed mode),
        ``metric`` is :func:`wildtoolbench.bench.metrics.compute_metrics` over the scored sessions (with ``"extra"``
        when extra metrics are registered, docs/metrics.md §8).

    Raises:
        DatasetError: unknown session ids, more than one model name, scoring mode or language, or
            records that cannot be scored (each issue names line and field).
    """
    check_scoring_mode(scoring)
    language = records_language(records, language, results_file=results_file)
    lines: list[dict[str, Any]] = []
    model_name, _, metric = _score_stream(
        records,
        sessions,
        lambda _, line: lines.append(line),
        results_file=results_file,
        checker=checker,
        scoring=scoring,
        language=language,
    )
    lines.sort(key=lambda line: natural_id_key(line["id"]))
    return model_name, lines, metric


def _score_stream(
    records: Iterable[Numbered],
    sessions: Mapping[str, Session | Mapping[str, Any]],
    emit: Callable[[str, dict[str, Any]], None],
    *,
    results_file: str,
    checker: ArgumentChecker | None,
    scoring: str,
    language: str | None,
    load_issues: Sequence[DatasetIssue] = (),
    side_issues: Callable[[str], list[DatasetIssue]] | None = None,
    consume: bool = False,
) -> tuple[str, str, dict[str, Any]]:
    """Score records one at a time, in one pass (docs/scoring.md, docs/metrics.md): each scored
    session's score line goes to ``emit(session_id, line)`` and into the metrics, then is dropped.

    The problems are raised once the records are exhausted, in the order a whole-file pass checks
    them: ``load_issues`` (the live issue list of the scan that yields ``records``), the records'
    language sides (``language=None``: :func:`records_language`), ``side_issues(language)`` (the
    dataset's sessions that cannot run on that side), then the scoring issues and the mixed models or
    modes of :func:`score_records`. Once a problem of the first three kinds is known the remaining
    records are only checked, not scored; whatever was emitted is void when this raises.
    ``consume``: the records are dropped once scored, so their tasks are labelled in place
    (``wildtoolbench.bench.scoring.score_session(consume=True)``).

    Returns:
        ``(model_name, language, metric)``.

    Raises:
        DatasetError: as :func:`score_records` and :func:`score_run`.
        ValueError: the language the records name is not ``en`` or ``zh`` (from ``side_issues``).
    """
    resolve = language is None
    first_side: tuple[int, str] | None = None
    side_problems: list[DatasetIssue] = []
    side_error: Exception | None = None
    side_checked = False
    metrics: MetricsAccumulator | None = None
    deferred: Exception | None = None  # an unexpected error while scoring: raised after the file-level issues
    metric_error: Exception | None = None
    issues: list[DatasetIssue] = []
    model_names: dict[str, int] = {}
    modes: dict[str, int] = {}
    mode = {"scoring": "fixed"} if scoring == "fixed" else {}

    def check_side(side: str) -> None:
        nonlocal side_error, side_checked
        side_checked = True
        if side_issues is None:
            return
        try:
            found = side_issues(side)
        except ValueError as exc:
            side_error = exc
        else:
            if found:
                side_error = DatasetError(found)

    for number, record in records:
        session_id, model_name = record_identity(record)
        model_names.setdefault(model_name, number)
        modes.setdefault(str(record.get("scoring", "reference")), number)
        if resolve:
            side = str(record.get("language", "en"))
            if first_side is None:
                first_side, language = (number, side), side
            elif side != first_side[1]:
                side_problems.append(
                    DatasetIssue(
                        results_file,
                        number,
                        "language",
                        f"{side} record, but line {first_side[0]} is {first_side[1]}: one language side per result file",
                    )
                )
        assert language is not None
        if not side_checked:
            check_side(language)
        if load_issues or side_problems or side_error is not None or deferred is not None:
            continue  # the file is refused whatever this record holds: no need to score it
        session = sessions.get(session_id)
        if session is None:
            issues.append(DatasetIssue(results_file, number, "id", f"no session {session_id!r} in the dataset"))
            continue
        try:
            tasks = score_session(record, session, checker=checker, scoring=scoring, language=language, consume=consume)
        except ScoringError as exc:
            issues.append(DatasetIssue(results_file, number, exc.field, exc.message))
            continue
        except Exception as exc:  # noqa: BLE001 - re-raised below, after the issues a whole-file pass raises before it
            deferred = exc
            continue
        if metric_error is None:
            if metrics is None:
                metrics = MetricsAccumulator(scoring=scoring, language=language)
            try:
                metrics.add(session, tasks)
            except ValueError as exc:  # compute_metrics raised it after every scoring issue
                metric_error = exc
        emit(session_id, {"id": session_id, "model_name": model_name, **mode, "results": tasks})
    language = language or "en"
    if not side_checked:
        check_side(language)
    if load_issues:
        raise DatasetError(load_issues)
    if side_problems:
        raise DatasetError(side_problems)
    if side_error is not None:
        raise side_error
    if deferred is not None:
        raise deferred
    if len(modes) > 1:
        listed = ", ".join(f"{name!r} (line {line})" for name, line in modes.items())
        issues.append(
            DatasetIssue(results_file, None, "scoring", f"one scoring mode per result file expected, found {listed}")
        )
    if len(model_names) > 1:
        listed = ", ".join(f"{name!r} (line {line})" for name, line in model_names.items())
        issues.append(
            DatasetIssue(results_file, None, "model_name", f"one model per result file expected, found {listed}")
        )
    if issues:
        raise DatasetError(issues)
    if metric_error is not None:
        raise metric_error
    model_name = next(iter(model_names))
    metrics = metrics or MetricsAccumulator(scoring=scoring, language=language)
    return model_name, language, with_extra(metrics.result(model_name), metrics.extra())


class _SortedScoreFile:
    """Score lines written as they come to a temporary file beside ``path``, then put in place sorted by
    id (natural order), atomically (docs/evaluation.md §5): one line in memory at a time.

    :meth:`commit` fsyncs and renames; :meth:`discard` (on an error) removes the temporary file and the
    folders this object created, so that nothing is left.
    """

    def __init__(self, path: Path, size_hint: Callable[[], int] | None = None) -> None:
        self.path = path
        self.size_hint = size_hint
        """The length of the line the next score line comes from (bytes): from
        :data:`wildtoolbench.common.files.STREAM_LINES_FROM` on, it is written piece by piece; ``None``: never."""
        self._tmp: str | None = None
        self._handle: Any = None
        self._made: list[Path] = []
        self._entries: list[tuple[tuple, int, int]] = []
        self._offset = 0

    def add(self, session_id: str, line: dict[str, Any], trial: int = 1) -> None:
        """Append one score line (creating the folder and the temporary file on the first call); lines are put
        in place sorted by ``trial``, then id. Raises OSError naming ``path`` (docs/cli.md §3.4)."""
        try:
            self._add(session_id, line, trial)
        except OSError as exc:
            raise named_os_error(exc, self.path) from None

    def _add(self, session_id: str, line: dict[str, Any], trial: int = 1) -> None:
        if self._handle is None:
            folder = self.path.parent
            self._made = [p for p in (folder, *folder.parents) if not p.exists()]
            folder.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
            give_default_mode(self._tmp)
            self._handle = os.fdopen(fd, "w+b")
        large = self.size_hint is not None and self.size_hint() >= STREAM_LINES_FROM
        length = 0
        try:
            for piece in line_chunks(
                line, large=large
            ):  # a large line is written piece by piece (docs/evaluation.md §5.6)
                self._handle.write(piece)
                length += len(piece)
        except (TypeError, ValueError):
            self._handle.seek(self._offset)
            self._handle.truncate()
            raise
        self._entries.append(((trial, natural_id_key(session_id)), self._offset, length))
        self._offset += length

    def commit(self) -> None:
        """Put the lines in place at ``path``, sorted by id (a byte-range copy when they came in another
        order), fsync'd, by one rename. Raises OSError naming ``path`` (docs/cli.md §3.4)."""
        try:
            self._commit()
        except OSError as exc:
            raise named_os_error(exc, self.path) from None

    def _commit(self) -> None:
        if self._handle is None:  # no line at all
            atomic_write_text(self.path, "")
            return
        ordered = sorted(self._entries, key=lambda entry: entry[0])
        if ordered != self._entries:  # a result file in another order (wtb eval writes it sorted)
            source, unsorted = self._handle, self._tmp
            fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            give_default_mode(self._tmp)
            self._handle = os.fdopen(fd, "wb")
            try:
                source.flush()
                for _, offset, length in ordered:  # byte-range copy, one line at a time
                    source.seek(offset)
                    self._handle.write(source.read(length))
            finally:
                source.close()
                os.unlink(unsorted)
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.replace(self._tmp, self.path)
        self._handle = self._tmp = None

    def discard(self) -> None:
        """Remove the temporary file(s) and the folders :meth:`add` created (innermost first, while empty)."""
        if self._handle is not None:
            self._handle.close()
        if self._tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)
        for folder in self._made:  # innermost first; stops at a folder someone else filled meanwhile
            try:
                folder.rmdir()
            except OSError:
                break


def score_run(
    dataset_path: str | os.PathLike[str],
    results_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    checker: ArgumentChecker | None = None,
    tasks: int = 4,
    scoring: str = "reference",
    language: str | None = None,
    model_name: str | None = None,
) -> dict[str, Any]:
    """Score a result file against a dataset; write ``out_dir/score.jsonl``, ``out_dir/metric.json``
    (the published format, docs/metrics.md §5) and ``out_dir/summary_metrics.json`` (docs/metrics.md §7).

    Args:
        dataset_path: sessions (JSON Lines, docs/dataset.md); sessions are matched by ``id``.
        results_path: one result record per session (docs/evaluation.md §5), one model.
        out_dir: created if needed; the files are written atomically.
        checker: argument checker override (default ``wildtoolbench.bench.args.check_arguments``).
        tasks: tasks per session in the dataset (4 in the benchmark; N for ``wtb generate --layers N``).
        scoring: ``"reference"`` (default) or ``"fixed"``: scoring fixes 5-8 (docs/fixed-mode.md §6-§9),
            written to ``score.fixed.jsonl`` and ``metric.fixed.json`` (:func:`score_files`), so that
            rescoring a reference run leaves its reference files alone. No model is called.
        language: the side of the dataset the results were made on (``--lang``); ``None``: the
            records say (:func:`records_language`).
        model_name: the model of records that name none (``--model-name``; the published runner's
            error records, docs/scoring.md §5.1); ``None``: the first model a record of the file names.

    Both files are streamed: the dataset is validated line by line and only indexed (id -> line;
    :func:`wildtoolbench.bench.schema.index_sessions`), each result record is scored as it is read, against its
    session parsed again from that line, and its score line goes to a temporary file beside the
    output, put in place sorted by id once every record has been scored. Memory does not grow with
    the run's size; the outputs and the problems reported are those of a whole-file pass.

    Returns:
        The metric dict (also written to ``metric.json``), with the extra metrics of the catalog under
        ``"extra"`` when any is registered (docs/metrics.md §8; written to ``summary_metrics.json``, never
        to ``metric.json``). Sessions of the dataset without a result record are not counted.

    Raises:
        DatasetError: any problem with either input file; nothing is written then (not even
            ``out_dir``, when it did not exist), and the score files of ``scoring`` an earlier scoring
            left in ``out_dir`` are removed (:func:`remove_scores`), so no stale metric stays beside
            the results.
        OSError: an output cannot be written; the same files are removed.
    """
    score_file, metric_file = score_files(scoring)
    out = Path(out_dir)
    try:
        sessions = index_sessions(dataset_path, tasks=tasks)
    except BaseException:
        remove_scores(out, scoring)  # a failed rescoring shows no metric of an earlier one
        raise
    scan = scan_result_records(results_path, model_name if model_name is not None else file_model_name(results_path))
    read = [0]  # the length of the result line being scored: a score line is about as long

    def numbered_records() -> Iterator[tuple[int, dict[str, Any]]]:
        for _, length, numbered in scan:
            read[0] = length
            yield numbered

    score_lines = _SortedScoreFile(out / score_file, size_hint=lambda: read[0])
    try:
        _, language, metric = _score_stream(
            numbered_records(),
            sessions,
            score_lines.add,
            results_file=scan.file,
            checker=checker,
            scoring=scoring,
            language=language,
            load_issues=scan.issues,
            side_issues=sessions.language_issues,
            consume=True,
        )
        score_lines.commit()
        write_json_atomic(out / metric_file, published(metric))
        write_json_atomic(out / summary_metrics_file(scoring), readable_metrics(metric, language=language))
        trials_path = Path(results_path).with_name(TRIALS_RESULT_FILE)
        if Path(results_path).name == RESULT_FILE and trials_path.is_file():
            score_trials(
                sessions, trials_path, out, score_lines.path, checker=checker, scoring=scoring, language=language
            )
        else:  # no trials beside these results: no trial figures of an earlier run stay (docs/trials.md §5)
            for name in trial_files(scoring):
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
    except BaseException:
        score_lines.discard()
        with contextlib.suppress(OSError):  # a failed rescoring shows no metric of an earlier one
            remove_scores(out, scoring)
        raise
    return metric


def trial_files(scoring: str = "reference") -> tuple[str, str, str]:
    """``(score lines of trials 2.., trials.json, full trial summary)`` file names of a scoring mode
    (docs/trials.md §5). Raises ValueError for an unknown mode."""
    if check_scoring_mode(scoring) == "fixed":
        return FIXED_TRIALS_SCORE_FILE, FIXED_TRIALS_FILE, FIXED_TRIALS_SUMMARY_FILE
    return TRIALS_SCORE_FILE, TRIALS_FILE, TRIALS_SUMMARY_FILE


def score_trials(
    sessions: Mapping[str, Session | Mapping[str, Any]],
    trials_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    first_scores: str | os.PathLike[str],
    *,
    checker: ArgumentChecker | None = None,
    scoring: str = "reference",
    language: str = "en",
) -> dict[str, Any]:
    """Score trials 2, 3, ... of a run and summarize all its trials (docs/trials.md §1-§5).

    Every record of ``trials_path`` (``result.trials.jsonl``: records with ``"trial"`` >= 2) is scored as
    trial 1 is; the score lines, each with its ``"trial"``, go to ``score.trials.jsonl``
    (``score.trials.fixed.jsonl``) sorted by trial, then id. The verdicts of trial 1 (``first_scores``, the
    run's ``score.jsonl``) and of the later trials give ``trials.json`` (:func:`wildtoolbench.bench.trials.trials_document`)
    and ``trials_summary.json`` (the full :func:`wildtoolbench.bench.trials.summarize_trials`, by task type and turn
    subtype). A session counts its trials 1, 2, ... up to the first one it has no record of (an
    infrastructure error leaves a gap until the run is resumed).

    Args:
        sessions: the dataset's sessions by id (``wildtoolbench.bench.schema.index_sessions``).
        trials_path: the trials' result file.
        out_dir: the run folder.
        first_scores: trial 1's score lines.
        checker, scoring, language: as :func:`score_run`.

    Returns:
        The ``trials.json`` document.

    Raises:
        DatasetError: a record that cannot be scored (file, line and field named).
        OSError: an output cannot be written.
    """
    from wildtoolbench.bench.trials import session_buckets, summarize_trials, trials_document, verdicts_from_score_lines

    out = Path(out_dir)
    score_name, document_name, summary_name = trial_files(scoring)
    by_trial: dict[int, list[Numbered]] = {}
    parsers: dict[int, LineParser] = {}
    issues: list[DatasetIssue] = []
    file = os.fspath(trials_path)
    with open(trials_path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                record = loads_json(text)  # a long line's repeated observations held once (docs/evaluation.md §5.6)
            except (ValueError, RecursionError) as exc:
                issues.append(DatasetIssue(file, number, "-", f"not JSON: {exc}"))
                continue
            trial = record.get("trial") if isinstance(record, dict) else None
            if isinstance(trial, bool) or not isinstance(trial, int) or trial < 2:
                issues.append(DatasetIssue(file, number, "trial", f"must be a whole number >= 2, got {trial!r}"))
                continue
            parser = parsers.setdefault(trial, _result_line_parser(record_model_name(record)))  # one id per trial
            parsed, found = parser(file, number, record)
            issues.extend(found)
            if parsed is not None:
                by_trial.setdefault(trial, []).append(parsed)
    if issues:
        raise DatasetError(issues)
    lines: list[dict[str, Any]] = []
    for trial in sorted(by_trial):
        _, scored, _ = score_records(
            sessions,
            by_trial[trial],
            results_file=str(trials_path),
            checker=checker,
            scoring=scoring,
            language=language,
        )
        lines.extend({**line, "trial": trial} for line in scored)
    writer = _SortedScoreFile(out / score_name)  # written line by line, put in place by one rename
    try:
        for line in lines:
            writer.add(line["id"], line, line["trial"])
        writer.commit()
    except BaseException:
        writer.discard()
        raise
    first = _score_lines(first_scores)
    per_trial: list[list[dict[str, Any]]] = [first]
    present = {line["id"] for line in first}
    for trial in range(2, max(by_trial, default=1) + 1):
        kept = [line for line in lines if line["trial"] == trial and line["id"] in present]
        present = {line["id"] for line in kept}
        per_trial.append(kept)
    verdicts = verdicts_from_score_lines(per_trial)
    ids = {session_id for session_id, _ in verdicts}
    summary = summarize_trials(verdicts, session_buckets([sessions[i] for i in sorted(ids)], language))
    document = trials_document(summary)
    write_json_atomic(out / document_name, document)
    write_json_atomic(out / summary_name, summary)
    return document


def _score_lines(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The score lines of a score file this module wrote."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def compare_run_files(
    dataset_path: str | os.PathLike[str],
    reference_results: str | os.PathLike[str],
    fixed_results: str | os.PathLike[str] | None = None,
    *,
    tasks: int = 4,
    model_name: str | None = None,
) -> dict[str, Any]:
    """Which task labels flip between reference and fixed scoring of a run, and which fix is responsible (docs/fixed-mode.md §10).

    The file-reading side of :func:`wildtoolbench.bench.compare.compare_run` (see there for the returned dict). The
    dataset is indexed (:func:`wildtoolbench.bench.schema.index_sessions`) and the reference records are read twice,
    one at a time: checked first (:func:`load_result_records`'s problems), then compared; a fixed
    run's records are held in memory (they are looked up by id).

    Args:
        dataset_path: the sessions (JSON Lines).
        reference_results: ``result.jsonl`` of a reference run.
        fixed_results: ``result.jsonl`` of a ``--scoring fixed`` run of the same model, or
            ``None`` to compare the reference run with its own fixed rescoring.
        tasks: tasks per session in the dataset.
        model_name: the model of records that name none (see :func:`score_run`).

    Raises:
        DatasetError: a bad input file, or a record that cannot be compared (named by file and line).
    """
    from wildtoolbench.bench.compare import compare_run

    sessions = index_sessions(dataset_path, tasks=tasks)
    reference = _checked_records(reference_results, model_name)
    fixed = (
        None
        if fixed_results is None
        else [record for _, record in load_result_records(fixed_results, model_name or file_model_name(fixed_results))]
    )
    try:
        return compare_run(sessions, reference, fixed)
    except ScoringError as exc:
        raise DatasetError([DatasetIssue(os.fspath(reference_results), None, exc.field, exc.message)]) from None
    except KeyError as exc:
        raise DatasetError(
            [DatasetIssue(os.fspath(reference_results), None, "id", f"no session {exc} in the dataset")]
        ) from None


def _checked_records(path: str | os.PathLike[str], model_name: str | None = None) -> Iterator[dict[str, Any]]:
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
