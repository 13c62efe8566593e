"""The result of :func:`wildtoolbench.evaluate`: :class:`EvalRun`, read from a scored run folder
(docs/guides/scripting.md; the files are those of docs/evaluation.md §5 and docs/metrics.md §5).

Every number comes from the run's metric file (``metric.json``, or ``metric.fixed.json`` in fixed mode),
the one ``wtb eval`` prints as its table; :attr:`EvalRun.tasks` holds one row per scored task, read from
the score file and the dataset (its task type and turn subtype, docs/metrics.md §1) with the error
category of a failed task (docs/errors.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_STEP_KEY = re.compile(r"^step_(\d+)$")


def data_frame(rows: list[dict[str, Any]], owner: str) -> Any:
    """``rows`` as a ``pandas.DataFrame``, for ``owner.to_pandas()``.

    Raises:
        ImportError: pandas is not installed (it is not a dependency of wildtoolbench); the message names
            ``owner.rows()`` as the way without it.
    """
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            f"{owner}.to_pandas() needs pandas, which wildtoolbench does not install: pip install pandas "
            f"(or use {owner}.rows())"
        ) from exc
    return pandas.DataFrame(rows)


@dataclass(frozen=True)
class TaskRow:
    """One scored task of a run (a row of :attr:`EvalRun.tasks`).

    Attributes:
        session_id: the session's id.
        task_index: the task's position in the session, from 0.
        task_type: its task type (``Single-Tool``, ``Parallel Multi-Tool``, ``Clarify``, ``Chat`` ...).
        turn_subtype: ``First Turn`` for the first task, else its turn subtype (``Coreferential Reference`` ...).
        label: the task's label in the score file (``correct`` or ``error``).
        optimal: whether its tool calls took an optimal path (``is_optimal``).
        error_category: for a failed task its docs/errors.md category (``wrong_name``, ``param_value`` ...),
            else ``None``.
        error_reason: the first failing step's reason, else ``None``.
        steps: model requests recorded for the task.
    """

    session_id: str
    task_index: int
    task_type: str | None
    turn_subtype: str | None
    label: str
    optimal: bool
    error_category: str | None
    error_reason: str | None
    steps: int

    @property
    def correct(self) -> bool:
        """``label == "correct"``."""
        return self.label == "correct"


def _rate(bucket: Mapping[str, Any] | None, key: str = "accuracy") -> float | None:
    return None if not bucket else bucket.get(key)


@dataclass(frozen=True)
class EvalRun:
    """A finished evaluation: the metric file, the scored tasks and the infrastructure errors.

    Attributes:
        metrics: the metric file as a dict (``metric.json``: ``total_info``, ``task_type_info``,
            ``turn_subtype_info``, ``optimal_info``, ``progress_info`` ...; docs/metrics.md §5); ``{}`` when no
            session has a record (every session hit an infrastructure error) or for a dry run.
        tasks: one :class:`TaskRow` per scored task, session by session in score-file order.
        errors: the rows of ``errors.jsonl``: sessions set aside by infrastructure errors (not scored).
        out: the run folder, or ``None`` when the run was made in a temporary folder (``out=None``).
        model_name: the model name the results record.
        scoring: ``reference`` or ``fixed``.
        language: the side that ran, ``en`` or ``zh``.
        summary: ``summary.json`` (requests, tokens, cost, wall time), ``{}`` when absent.
        trials: ``trials.json`` of a run with ``trials`` > 1 (pass^k, pass@k, flip rate), else ``None``.
        estimate: the estimate of a dry run (``dry_run=True``: nothing ran), else ``None``.
    """

    metrics: dict[str, Any]
    tasks: list[TaskRow]
    errors: list[dict[str, Any]]
    out: Path | None
    model_name: str | None = None
    scoring: str = "reference"
    language: str = "en"
    summary: dict[str, Any] = field(default_factory=dict)
    trials: dict[str, Any] | None = None
    estimate: dict[str, Any] | None = None

    # ------------------------------------------------------------------ the paper's metrics (docs/metrics.md)
    @property
    def task_accuracy(self) -> float | None:
        """Task accuracy: ``metrics["total_info"]["task"]["accuracy"]`` (a fraction; ``None`` without metrics)."""
        return _rate(self.metrics.get("total_info", {}).get("task"))

    @property
    def session_accuracy(self) -> float | None:
        """Session accuracy: ``metrics["total_info"]["session"]["accuracy"]``."""
        return _rate(self.metrics.get("total_info", {}).get("session"))

    @property
    def optimal_path_rate(self) -> float | None:
        """Optimal path rate (OP): ``metrics["optimal_info"]["Total"]["accuracy"]``."""
        return _rate(self.metrics.get("optimal_info", {}).get("Total"))

    @property
    def accomplish_progress_rate(self) -> float | None:
        """Accomplish progress rate (AP): ``metrics["progress_info"]["Total"]["rate"]``."""
        return _rate(self.metrics.get("progress_info", {}).get("Total"), "rate")

    @property
    def task_type_accuracy(self) -> dict[str, float]:
        """Task accuracy per task type (``metrics["task_type_info"]``), e.g. ``{"Single-Tool": 1.0, ...}``."""
        return {name: b["accuracy"] for name, b in self.metrics.get("task_type_info", {}).items()}

    @property
    def turn_subtype_accuracy(self) -> dict[str, float]:
        """Task accuracy per turn subtype (``metrics["turn_subtype_info"]``), ``First Turn`` included."""
        return {name: b["accuracy"] for name, b in self.metrics.get("turn_subtype_info", {}).items()}

    @property
    def optimal_path_rate_by_task_type(self) -> dict[str, float]:
        """OP per task type (``metrics["optimal_info"]`` without ``Total``)."""
        return {k: b["accuracy"] for k, b in self.metrics.get("optimal_info", {}).items() if k != "Total"}

    @property
    def accomplish_progress_rate_by_task_type(self) -> dict[str, float]:
        """AP per task type (``metrics["progress_info"]`` without ``Total``)."""
        return {k: b["rate"] for k, b in self.metrics.get("progress_info", {}).items() if k != "Total"}

    # ------------------------------------------------------------------ rows
    def rows(self) -> list[dict[str, Any]]:
        """:attr:`tasks` as plain dicts (``correct`` added), ready for ``csv.DictWriter`` or a data frame."""
        return [{**asdict(task), "correct": task.correct} for task in self.tasks]

    def to_pandas(self) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (one row per task).

        Raises:
            ImportError: pandas is not installed (it is not a dependency of wildtoolbench).
        """
        return data_frame(self.rows(), "EvalRun")

    def __repr__(self) -> str:
        accuracy = self.task_accuracy
        shown = "no metrics" if accuracy is None else f"task accuracy {accuracy * 100:.2f}%"
        return (
            f"EvalRun({self.model_name!r}, {shown}, {len(self.tasks)} tasks, {len(self.errors)} errors, "
            f"out={str(self.out) if self.out else None!r})"
        )


def _json_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def eval_task_rows(
    scored: Sequence[Mapping[str, Any]], sessions: Mapping[str, Any], language: str = "en"
) -> list[TaskRow]:
    """The :class:`TaskRow` of every task of the score lines ``scored`` (``{"id", "results": [...]}``).

    Args:
        scored: the score file's lines.
        sessions: the dataset's sessions by id (dicts or ``Session`` objects), for task types and turn subtypes.
        language: the side that ran (``wildtoolbench.bench.schema.bucket_labels``).
    """
    from wildtoolbench.bench.errors import classify_task
    from wildtoolbench.bench.schema import bucket_labels
    from wildtoolbench.bench.terms import FIRST_TURN

    rows = []
    for line in scored:
        session_id = str(line.get("id"))
        session = sessions.get(session_id)
        types, subtypes = bucket_labels(session, language) if session is not None else ([], [])
        for index, task in enumerate(line.get("results") or []):
            found = classify_task(task) if task.get("label") != "correct" else None
            log = task.get("inference_log") if isinstance(task.get("inference_log"), Mapping) else {}
            steps = max(len(task.get("latency") or []), sum(1 for key in log if _STEP_KEY.match(key)))
            rows.append(
                TaskRow(
                    session_id=session_id,
                    task_index=index,
                    task_type=types[index] if index < len(types) else None,
                    turn_subtype=FIRST_TURN
                    if index == 0
                    else (subtypes[index - 1] if index - 1 < len(subtypes) else None),
                    label=str(task.get("label")),
                    optimal=bool(task.get("is_optimal")),
                    error_category=found.category if found else None,
                    error_reason=found.reason if found else None,
                    steps=steps,
                )
            )
    return rows


def read_eval_run(
    folder: Path,
    dataset: Path,
    *,
    tasks: int = 4,
    scoring: str = "reference",
    language: str = "en",
    out: Path | None = None,
) -> EvalRun:
    """Read the :class:`EvalRun` of a scored run folder.

    Args:
        folder: the run folder (``result.jsonl``, the score and metric files of ``scoring``).
        dataset: the dataset file the run was made on.
        tasks: tasks per session of the dataset.
        scoring: the scoring mode whose files are read.
        language: the side that ran.
        out: what :attr:`EvalRun.out` says (``None`` for a temporary folder).

    Raises:
        wildtoolbench.bench.schema.DatasetError: the dataset cannot be read.
        OSError, ValueError: a file of the folder cannot be read or is not JSON.
    """
    from wildtoolbench.bench.schema import load_sessions
    from wildtoolbench.common.run_folder import ERRORS_FILE, SUMMARY_FILE
    from wildtoolbench.scoring.outputs import score_files, trial_files

    score_file, metric_file = score_files(scoring)
    metrics = _json(folder / metric_file) or {}
    scored = _json_lines(folder / score_file) if metrics else []
    sessions = {s.id: s for s in load_sessions(dataset, tasks=tasks, language=language)} if scored else {}
    return EvalRun(
        metrics=metrics,
        tasks=eval_task_rows(scored, sessions, language),
        errors=_json_lines(folder / ERRORS_FILE),
        out=out,
        model_name=metrics.get("model_name"),
        scoring=scoring,
        language=language,
        summary=_json(folder / SUMMARY_FILE) or {},
        trials=_json(folder / trial_files(scoring)[1]),
    )
