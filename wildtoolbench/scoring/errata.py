"""``wtb score --errata``: a result file scored again with an errata file applied (docs/audit.md §9.2-§9.3).

Reads an errata file and checks it against the dataset's sessions (``wtb audit --errata`` and ``wtb
report --errata`` read it here too), scores the result file with the errata applied, writes the errata
metrics beside the published ones and prints both side by side. The errata themselves are pure:
:mod:`wildtoolbench.bench.errata`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from wildtoolbench.bench.errata import Applied, Erratum, apply_errata, check_errata, erratum_problems, load_errata
from wildtoolbench.bench.io import UndecodableLine, iter_jsonl
from wildtoolbench.bench.schema import DatasetError, DatasetIssue, fields_for
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.common.files import write_json_atomic

_out = Console(highlight=False, soft_wrap=True, emoji=False)


def read_errata(path: str | os.PathLike[str], sessions: Mapping[str, Mapping[str, Any]]) -> list[Erratum]:
    """An errata file, read and checked against the dataset's sessions (docs/audit.md §9.1-§9.2).

    Raises:
        DatasetError: every bad line and every erratum that does not apply.
    """
    file = os.fspath(path)
    try:
        errata = load_errata(path)
    except DatasetError as exc:  # report the bad lines and what the good ones get wrong, together
        good = _good_lines(path, {issue.line for issue in exc.issues})
        problems = [DatasetIssue(file, e.line, f, m) for e in good for f, m in erratum_problems(e, sessions)]
        raise DatasetError(sorted([*exc.issues, *problems], key=lambda issue: issue.line or 0)) from None
    check_errata(errata, sessions, file)
    return errata


def _good_lines(path: str | os.PathLike[str], bad: set[int | None]) -> list[Erratum]:
    from wildtoolbench.bench.errata import parse_erratum

    good = []
    for number, text in iter_jsonl(path):
        if number in bad or isinstance(text, UndecodableLine):
            continue
        erratum, _ = parse_erratum(json.loads(text), number)
        if erratum is not None:
            good.append(erratum)
    return good


def check_errata_file(
    dataset: str | os.PathLike[str], path: str | os.PathLike[str], *, tasks: int = 4
) -> list[Erratum]:
    """Read an errata file and check it against a dataset file before anything is scored or written
    (``wtb score --errata``, docs/audit.md §9.2).

    Raises:
        DatasetError: a bad dataset, a bad errata line, an erratum that does not apply.
    """
    from wildtoolbench.bench.schema import load_sessions

    return read_errata(path, {s.id: s.to_dict() for s in load_sessions(dataset, tasks=tasks)})


ERRATA_METRIC_FILE = "metric.errata.json"
ERRATA_SUMMARY_FILE = "summary_metrics.errata.json"


def errata_files(scoring: ScoringStrategy | str | None) -> tuple[str, str]:
    """``(metric file, summary file)`` of a scoring with errata (docs/audit.md §9.3): ``metric.errata.json`` and
    ``summary_metrics.errata.json``, or their ``.MODE.errata`` names in another mode (``metric.fixed.errata.json``)."""
    strategy = scoring_strategy(scoring)
    names = (strategy.file_name("metric.json"), strategy.file_name("summary_metrics.json"))
    return tuple(name.removesuffix(".json") + ".errata.json" for name in names)  # type: ignore[return-value]


@dataclass
class ErrataScore:
    """What ``wtb score --errata`` computed beside the published metrics (docs/audit.md §9.3).

    Attributes:
        metric: the metric dict with the errata applied.
        applied: the applied errata (exclusions, argument changes, the rest).
        rewritten: gold actions of the run's logs rewritten to the corrected gold.
        files: the files written (names inside the output folder).
        language: the side the records were made on.
    """

    metric: dict[str, Any]
    applied: Applied
    rewritten: int
    files: tuple[str, str]
    language: str = "en"


def score_with_errata(
    dataset: str | os.PathLike[str],
    results: str | os.PathLike[str],
    errata_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    tasks: int = 4,
    scoring: ScoringStrategy | str | None = None,
    language: str | None = None,
) -> ErrataScore:
    """Score a result file with errata applied (docs/audit.md §9.3) and write the errata metrics beside the
    published ones (:func:`errata_files`); ``metric.json`` and the score file are not touched. The
    scoring is :func:`errata_metric`'s.

    Raises:
        DatasetError: a bad dataset, result or errata file, or an erratum that does not apply.
    """
    from wildtoolbench.bench.metrics import readable_metrics

    result = errata_metric(dataset, results, errata_path, tasks=tasks, scoring=scoring, language=language)
    out = Path(out_dir)
    write_json_atomic(out / result.files[0], result.metric)
    write_json_atomic(out / result.files[1], readable_metrics(result.metric, language=result.language))
    return result


def errata_metric(
    dataset: str | os.PathLike[str],
    results: str | os.PathLike[str],
    errata_path: str | os.PathLike[str],
    *,
    tasks: int = 4,
    scoring: ScoringStrategy | str | None = None,
    language: str | None = None,
) -> ErrataScore:
    """Score a result file with errata applied (docs/audit.md §9.3), in memory (``wtb report --errata``;
    :func:`score_with_errata` writes the result).

    The run's logs hold the gold arguments they were scored against; where an erratum changed a gold
    call's arguments they are rewritten before scoring. Excluded tasks count in no metric. Other
    corrections (an observation, a message) change what the model saw: only a new run on the corrected
    dataset reflects them, and they are counted, not applied.

    Raises:
        DatasetError: a bad dataset, result or errata file, or an erratum that does not apply.
    """
    from wildtoolbench.bench.metrics import MetricsAccumulator
    from wildtoolbench.bench.schema import load_sessions
    from wildtoolbench.bench.scoring import ScoringError, score_session
    from wildtoolbench.scoring.results import load_result_records, records_language

    sessions = {s.id: s.to_dict() for s in load_sessions(dataset, tasks=tasks)}
    errata = read_errata(errata_path, sessions)
    applied = apply_errata(errata, sessions)
    records = load_result_records(results)
    language = records_language(records, language, results_file=os.fspath(results))
    side = fields_for(language).answer_list
    by_session: dict[str, list] = {}
    for change in applied.argument_changes:
        by_session.setdefault(change.session, []).append(change)
    metrics = MetricsAccumulator(scoring=scoring, language=language)
    rewritten = 0
    issues: list[DatasetIssue] = []
    model_name = ""
    for number, record in records:
        session_id = str(record.get("id", record.get("session_id")))
        session = applied.sessions.get(session_id)
        if session is None:
            continue
        model_name = model_name or str(record.get("model_name", record.get("candidate")))
        rewritten += _patched(record, by_session.get(session_id, ()), side)
        try:
            scored = score_session(record, session, scoring=scoring, language=language, consume=True)
        except ScoringError as exc:
            issues.append(DatasetIssue(os.fspath(results), number, exc.field, exc.message))
            continue
        metrics.add(session, scored, excluded=applied.excluded.get(session_id, ()))
    if issues:
        raise DatasetError(issues)
    metric = metrics.result(model_name)
    return ErrataScore(metric, applied, rewritten, errata_files(scoring), language)


def _patched(record: dict[str, Any], changes: Sequence[Any], side: str) -> int:
    from wildtoolbench.bench.errata import patch_record_gold

    return patch_record_gold(record, changes, side) if changes else 0


def score_errata(
    dataset: Path, results: Path, errata: Path, out: Path, *, tasks: int, scoring: str, language, metric
) -> None:
    """``wtb score --errata FILE``: score again with the errata applied, write the errata metrics beside the
    published ones and print both side by side (docs/audit.md §9.3).

    Raises:
        wildtoolbench.bench.schema.DatasetError: a bad errata file or an erratum that does not apply (exit 1).
    """
    result = score_with_errata(dataset, results, errata, out, tasks=tasks, scoring=scoring, language=language)
    _out.print(errata_table(metric, result.metric))
    _out.print(errata_line(result), markup=False)
    _out.print(f"wrote {out / result.files[0]} and {out / result.files[1]}", markup=False)


def errata_table(without: dict, with_errata: dict):
    """A ``rich`` table of every metric row without and with errata (docs/audit.md §9.3)."""
    from rich.table import Table

    from wildtoolbench.common.table import metric_rows

    table = Table(title="Scores without and with errata", title_justify="left")
    for name, justify in (("Group", "left"), ("Metric", "left"), ("Without", "right"), ("With errata", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    previous = None
    for (section, name, before, count_before), (_, _, after, count_after) in zip(
        metric_rows(without), metric_rows(with_errata)
    ):
        table.add_row(
            section if section != previous else "", name, f"{before} ({count_before})", f"{after} ({count_after})"
        )
        previous = section
    return table


def errata_line(result) -> str:
    """What the errata did: ``"errata: 2 task(s) excluded, 1 gold argument change(s) (3 logged gold call(s) rewritten), ..."``."""
    applied = result.applied
    excluded = sum(len(tasks) for tasks in applied.excluded.values())
    line = (
        f"errata: {excluded} task(s) excluded, {len(applied.argument_changes)} gold argument change(s) "
        f"({result.rewritten} logged gold call(s) rewritten), {len(applied.pending)} pending (no correction)"
    )
    if applied.other_changes:
        line += (
            f"; {len(applied.other_changes)} other correction(s) change what the model sees (observations, "
            "messages, tools): only a new run on the corrected dataset reflects them"
        )
    return line


__all__ = [
    "ERRATA_METRIC_FILE",
    "ERRATA_SUMMARY_FILE",
    "ErrataScore",
    "check_errata_file",
    "errata_files",
    "errata_line",
    "errata_metric",
    "errata_table",
    "read_errata",
    "score_errata",
    "score_with_errata",
]
