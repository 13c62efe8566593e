"""Scoring result records one at a time against their sessions, in one pass, with the problems a whole-file
pass reports (docs/scoring.md, docs/metrics.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.metrics import MetricsAccumulator, with_extra
from wildtoolbench.bench.schema import (
    DatasetError,
    DatasetIssue,
    Session,
)
from wildtoolbench.bench.scoring import (
    ArgumentChecker,
    ScoringError,
    record_identity,
    score_session,
)
from wildtoolbench.bench.strategy import REFERENCE, ScoringStrategy, scoring_strategy
from wildtoolbench.scoring.results import Numbered, natural_id_key, records_language


def score_records(
    sessions: Mapping[str, Session | Mapping[str, Any]],
    records: list[tuple[int, dict[str, Any]]],
    *,
    results_file: str = "<results>",
    checker: ArgumentChecker | None = None,
    scoring: ScoringStrategy | str | None = None,
    language: str | None = None,
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """Score result records against their sessions (looked up by id) and compute the metric dict (docs/scoring.md, docs/metrics.md).

    ``scoring`` is the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default reference);
    fixed scoring applies the fixes of docs/fixed-mode.md §6-§8 (records of any mode); reference scoring
    refuses records made by a run with the inference fixes, and a file mixing kinds of record is refused in
    every mode.

    ``language`` is the side the run was made on (``None``: :func:`records_language`); it picks the
    tools the argument checker reads and the labels the tasks are counted under.

    Returns:
        ``(model_name, score_lines, metric)``: ``score_lines`` are
        ``{"id", "model_name", "results"}`` dicts sorted by id (natural order;
        ``{"id", "model_name", "scoring": "fixed", "results"}`` outside reference mode),
        ``metric`` is :func:`wildtoolbench.bench.metrics.compute_metrics` over the scored sessions (with ``"extra"``
        when extra metrics are registered, docs/metrics.md §8).

    Raises:
        DatasetError: unknown session ids, more than one model name, scoring mode or language, or
            records that cannot be scored (each issue names line and field).
    """
    scoring = scoring_strategy(scoring)
    language = records_language(records, language, results_file=results_file)
    lines: list[dict[str, Any]] = []
    model_name, _, metric = score_stream(
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


def score_stream(
    records: Iterable[Numbered],
    sessions: Mapping[str, Session | Mapping[str, Any]],
    emit: Callable[[str, dict[str, Any]], None],
    *,
    results_file: str,
    checker: ArgumentChecker | None,
    scoring: ScoringStrategy,
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
    stream = _Stream(
        sessions,
        emit,
        results_file=results_file,
        checker=checker,
        scoring=scoring,
        language=language,
        load_issues=load_issues,
        side_issues=side_issues,
        consume=consume,
    )
    for number, record in records:
        stream.take(number, record)
    return stream.finish()


class _Stream:
    """The state of one :func:`score_stream` pass: the records' language side, the problems found so far
    (raised by :meth:`finish` in a whole-file pass's order), the models and scoring modes seen, the metrics."""

    def __init__(
        self,
        sessions: Mapping[str, Session | Mapping[str, Any]],
        emit: Callable[[str, dict[str, Any]], None],
        *,
        results_file: str,
        checker: ArgumentChecker | None,
        scoring: ScoringStrategy,
        language: str | None,
        load_issues: Sequence[DatasetIssue],
        side_issues: Callable[[str], list[DatasetIssue]] | None,
        consume: bool,
    ) -> None:
        self.sessions, self.emit, self.results_file = sessions, emit, results_file
        self.checker, self.scoring, self.language = checker, scoring, language
        self.load_issues, self.side_issues, self.consume = load_issues, side_issues, consume
        self.resolve = language is None
        self.first_side: tuple[int, str] | None = None
        self.side_problems: list[DatasetIssue] = []
        self.side_error: Exception | None = None
        self.side_checked = False
        self.metrics: MetricsAccumulator | None = None
        self.deferred: Exception | None = None  # an unexpected error while scoring: raised after the file-level issues
        self.metric_error: Exception | None = None
        self.issues: list[DatasetIssue] = []
        self.model_names: dict[str, int] = {}
        self.modes: dict[str, int] = {}
        self.mode = scoring.record_tag()

    def check_side(self, side: str) -> None:
        """Note the dataset's sessions that cannot run on ``side`` (``side_issues``), once."""
        self.side_checked = True
        if self.side_issues is None:
            return
        try:
            found = self.side_issues(side)
        except ValueError as exc:
            self.side_error = exc
        else:
            if found:
                self.side_error = DatasetError(found)

    def note_side(self, number: int, side: str) -> None:
        """The first record's side is the file's; a record on another side is a problem."""
        if self.first_side is None:
            self.first_side, self.language = (number, side), side
        elif side != self.first_side[1]:
            self.side_problems.append(
                DatasetIssue(
                    self.results_file,
                    number,
                    "language",
                    f"{side} record, but line {self.first_side[0]} is {self.first_side[1]}: one language side per result file",
                )
            )

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Check one record; score it, add it to the metrics and emit its score line unless the file is refused."""
        session_id, model_name = record_identity(record)
        self.model_names.setdefault(model_name, number)
        self.modes.setdefault(str(record.get("scoring", REFERENCE.name)), number)
        if self.resolve:
            self.note_side(number, str(record.get("language", "en")))
        language = self.language
        assert language is not None
        if not self.side_checked:
            self.check_side(language)
        if self.load_issues or self.side_problems or self.side_error is not None or self.deferred is not None:
            return  # the file is refused whatever this record holds: no need to score it
        session = self.sessions.get(session_id)
        if session is None:
            self.issues.append(
                DatasetIssue(self.results_file, number, "id", f"no session {session_id!r} in the dataset")
            )
            return
        try:
            tasks = score_session(
                record, session, checker=self.checker, scoring=self.scoring, language=language, consume=self.consume
            )
        except ScoringError as exc:
            self.issues.append(DatasetIssue(self.results_file, number, exc.field, exc.message))
            return
        except Exception as exc:  # noqa: BLE001 - re-raised by finish, after the issues a whole-file pass raises before it
            self.deferred = exc
            return
        if self.metric_error is None:
            if self.metrics is None:
                self.metrics = MetricsAccumulator(scoring=self.scoring, language=language)
            try:
                self.metrics.add(session, tasks)
            except ValueError as exc:  # compute_metrics raised it after every scoring issue
                self.metric_error = exc
        self.emit(session_id, {"id": session_id, "model_name": model_name, **self.mode, "results": tasks})

    def finish(self) -> tuple[str, str, dict[str, Any]]:
        """Raise the problems found, in a whole-file pass's order; else ``(model_name, language, metric)``."""
        language = self.language or "en"
        if not self.side_checked:
            self.check_side(language)
        if self.load_issues:
            raise DatasetError(self.load_issues)
        if self.side_problems:
            raise DatasetError(self.side_problems)
        if self.side_error is not None:
            raise self.side_error
        if self.deferred is not None:
            raise self.deferred
        issues = self.issues
        if len(self.modes) > 1:
            listed = ", ".join(f"{name!r} (line {line})" for name, line in self.modes.items())
            issues.append(
                DatasetIssue(
                    self.results_file, None, "scoring", f"one scoring mode per result file expected, found {listed}"
                )
            )
        if len(self.model_names) > 1:
            listed = ", ".join(f"{name!r} (line {line})" for name, line in self.model_names.items())
            issues.append(
                DatasetIssue(
                    self.results_file, None, "model_name", f"one model per result file expected, found {listed}"
                )
            )
        if issues:
            raise DatasetError(issues)
        if self.metric_error is not None:
            raise self.metric_error
        model_name = next(iter(self.model_names))
        metrics = self.metrics or MetricsAccumulator(scoring=self.scoring, language=language)
        return model_name, language, with_extra(metrics.result(model_name), metrics.extra())
