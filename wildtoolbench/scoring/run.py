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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from wildtoolbench.bench.io import loads_json
from wildtoolbench.bench.metrics import published, readable_metrics
from wildtoolbench.bench.schema import (
    DatasetError,
    DatasetIssue,
    LineParser,
    Session,
    index_sessions,
)
from wildtoolbench.bench.scoring import (
    ArgumentChecker,
    ScoringError,
    record_model_name,
)
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.common.files import (
    write_json_atomic,
)
from wildtoolbench.common.folder_lock import scoring_lock
from wildtoolbench.common.run_folder import (
    RESULT_FILE,
    TRIALS_RESULT_FILE,
)
from wildtoolbench.scoring.outputs import remove_scores, score_files, summary_metrics_file, trial_files
from wildtoolbench.scoring.results import (
    Numbered,
    checked_records,
    file_model_name,
    load_result_records,
    result_line_parser,
    scan_result_records,
)
from wildtoolbench.scoring.sorted_file import SortedScoreFile
from wildtoolbench.scoring.stream import score_records, score_stream


def score_run(
    dataset_path: str | os.PathLike[str],
    results_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    checker: ArgumentChecker | None = None,
    tasks: int = 4,
    scoring: ScoringStrategy | str | None = None,
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
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default reference);
            fixed: scoring fixes 5-8 (docs/fixed-mode.md §6-§9), written to ``score.fixed.jsonl`` and
            ``metric.fixed.json`` (:func:`score_files`), so that rescoring a reference run leaves its
            reference files alone. No model is called.
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
    scoring = scoring_strategy(scoring)
    with scoring_lock(out_dir):  # no other command removes or replaces this scoring's files (docs/cli.md §3.2)
        return _score_run(dataset_path, results_path, out_dir, checker, tasks, scoring, language, model_name)


def _score_run(
    dataset_path: str | os.PathLike[str],
    results_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    checker: ArgumentChecker | None,
    tasks: int,
    scoring: ScoringStrategy,
    language: str | None,
    model_name: str | None,
) -> dict[str, Any]:
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

    score_lines = SortedScoreFile(out / score_file, size_hint=lambda: read[0])
    try:
        _, language, metric = score_stream(
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


def score_trials(
    sessions: Mapping[str, Session | Mapping[str, Any]],
    trials_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    first_scores: str | os.PathLike[str],
    *,
    checker: ArgumentChecker | None = None,
    scoring: ScoringStrategy | str | None = None,
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
            parser = parsers.setdefault(trial, result_line_parser(record_model_name(record)))  # one id per trial
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
    writer = SortedScoreFile(out / score_name)  # written line by line, put in place by one rename
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
    reference = checked_records(reference_results, model_name)
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
