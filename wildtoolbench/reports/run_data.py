"""What a report holds of its runs and datasets (:class:`Run`, :class:`TaskFacts`, :class:`Dataset`), the error
that names a file it cannot read (:class:`ReportError`), and the readers of a run folder's JSON files."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.errors import CATEGORIES
from wildtoolbench.bench.io import loads_json
from wildtoolbench.bench.schema import ASK_USER, PREPARE_TO_ANSWER
from wildtoolbench.bench.strategy import REFERENCE, ScoringStrategy, scoring_strategy

PSEUDO = (ASK_USER, PREPARE_TO_ANSWER)
MAX_CANDIDATES_SHOWN = 12
"""Distinct gold candidates kept per step for the trajectory viewer (the count of all is kept too)."""

TOOL_KINDS = {"Clarify": "clarify", "Chat": "chat"}


BASELINE_PREFIX = "baseline:"
"""Model names and specs of the baselines that need no model (docs/evaluation.md §9)."""


class ReportError(Exception):
    """A run folder or dataset cannot be reported on; the message names the file and the problem."""


@dataclass
class Dataset:
    """One dataset file used by one or more runs.

    Attributes:
        key: short id used in the page (``d0``, ``d1`` ...).
        path: the file.
        sha256: hex digest of the file.
        sessions: session dicts (docs/dataset.md) in file order.
        index: session id -> position in ``sessions``.
        offset: position of this dataset's first session in the report's global session list.
        official: see the attribute's note.
    """

    key: str
    path: Path
    sha256: str
    sessions: list[dict[str, Any]]
    index: dict[str, int]
    offset: int = 0
    official: bool = False
    """The file is the official WildToolBench dataset: its git blob id is the pinned one
    (:mod:`wildtoolbench.data.official`, ``WTB_DATA_PINS`` honoured), the file the paper's figures come from."""


@dataclass
class TaskFacts:
    """What the report shows about one scored task.

    Attributes:
        session_id, task_idx: where it is.
        correct: ``label == "correct"``.
        optimal: ``is_optimal`` after scoring.
        steps: model requests recorded for the task.
        category, reason, failing_step: the docs/errors.md error of a failed task (``None`` when correct).
        latency, input_tokens, output_tokens: sums over the task's requests.
    """

    session_id: str
    task_idx: int
    correct: bool
    optimal: bool
    steps: int
    category: str | None = None
    reason: str | None = None
    failing_step: int | None = None
    latency: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class Run:
    """One run folder, reduced for the report.

    Attributes:
        key: short id used in the page (``r0``, ``r1`` ...).
        label: display name (the model name, plus the folder name when two runs share it).
        model: ``metric["model_name"]``.
        path: the run folder.
        metric: ``metric.json`` (docs/metrics.md).
        summary: ``summary.json`` or ``None``.
        dataset: the dataset the run was made on.
        session_ids: scored sessions in ``score.jsonl`` order.
        tasks: facts per scored task, session by session, in task order.
        trajectories: session id -> compact trajectory, already JSON text (see :func:`compact_trajectory`).
        raw_results: whether trajectories come from ``result.jsonl`` (else from the scored log).
        scoring: ``reference``, or ``fixed`` for a ``--scoring fixed`` run (read from ``metric.fixed.json``
            and ``score.fixed.jsonl``; docs/fixed-mode.md).
        extra_metrics: the metrics that are not the paper's, ``summary_metrics.json["extra"]`` (key ->
            ``{"value", ...}`` or ``None``; docs/metrics.md §8); empty when the file has none.
        language: the side that ran, ``en`` or ``zh`` (``run.json`` settings, else ``summary_metrics.json``).
        spec: the ``--model`` spec (``run.json`` settings ``model``), ``""`` when unknown.
        settings: the run's settings as ``run.json`` records them (docs/settings.md), ``{}`` when absent.
        version: the harness version that made the run (settings ``project_version``), ``""`` when unknown.
        date: when the run started, ISO 8601 UTC to the second (``run.json``'s modification time; else
            the metric file's), the report's only clock.
        score_path: the score file read (``score.jsonl``, or ``score.fixed.jsonl`` for a fixed run).
        scored: session id -> ``(line number in score_path, [scored task, ...])``: the ``results`` entries
            with each step's ``inference_input`` (the request messages) left out, what the run-against-run
            diff reads (:func:`wildtoolbench.bench.diff.diff_task`, docs/diff.md §2).
        trials: ``trials_summary.json`` of a run of ``wtb eval --trials`` (``wildtoolbench.bench.trials.summarize_trials``,
            docs/trials.md §5), ``None`` for a single run.
    """

    key: str
    label: str
    model: str
    path: Path
    metric: dict[str, Any]
    summary: dict[str, Any] | None
    dataset: Dataset
    session_ids: list[str] = field(default_factory=list)
    tasks: list[TaskFacts] = field(default_factory=list)
    trajectories: dict[str, str] = field(default_factory=dict)
    raw_results: bool = True
    scoring: str = REFERENCE.name
    extra_metrics: dict[str, Any] = field(default_factory=dict)
    language: str = "en"
    spec: str = ""
    score_path: Path = Path()
    scored: dict[str, tuple[int, list[Any]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    version: str = ""
    date: str = ""
    trials: dict[str, Any] | None = None

    @property
    def strategy(self) -> ScoringStrategy:
        """The :class:`~wildtoolbench.bench.strategy.ScoringStrategy` the run's scores were made with (docs/fixed-mode.md §1)."""
        return scoring_strategy(self.scoring)

    def is_baseline(self) -> bool:
        """Whether the run is of a baseline that needs no model (``baseline:chat``, ``baseline:first-tool``,
        docs/evaluation.md §9): the report shows it as a floor row, never ranked."""
        return self.model.startswith(BASELINE_PREFIX) or self.spec.startswith(BASELINE_PREFIX)

    def rank_exclusions(self) -> list[str]:
        """Why this run is not ranked among the paper's models (docs/metrics.md §10), ``[]`` when it is: the
        paper's figures are reference scoring of the English side on all 256 official sessions."""
        reasons = []
        if self.is_baseline():
            reasons.append("a floor: a baseline without a model")
        if not self.strategy.paper_comparable:
            reasons.append(f"{self.scoring} scoring")
        if self.language != "en":
            reasons.append("Chinese side" if self.language == "zh" else f"side {self.language}")
        if not self.dataset.official:
            reasons.append("not the official dataset")
        elif len(self.session_ids) != len(self.dataset.sessions):
            reasons.append(f"{len(self.session_ids)} of {len(self.dataset.sessions)} official sessions")
        return reasons

    def ranked(self) -> bool:
        """Whether the run is ranked among the paper's models (:meth:`rank_exclusions` is empty)."""
        return not self.rank_exclusions()

    def failed(self) -> int:
        """Number of failed tasks."""
        return sum(1 for t in self.tasks if not t.correct)

    def error_counts(self) -> dict[str, int]:
        """``{category: failed tasks}`` for every docs/errors.md category, in table order."""
        counts = dict.fromkeys(CATEGORIES, 0)
        for t in self.tasks:
            if t.category is not None:
                counts[t.category] += 1
        return counts


def read_json(path: Path) -> Any:
    """The JSON value of the file ``path``. Raises ReportError: missing, unreadable or not JSON (named)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{path}: missing") from None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None


def read_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSON Lines file, one line in memory at a time.
    Raises ReportError: missing, unreadable, or a line that is not JSON (file and line named)."""
    try:
        with open(path, encoding="utf-8") as handle:
            number = 0
            for (
                line
            ) in handle:  # no enumerate(), no strip(): neither keeps a copy of a huge line (docs/evaluation.md §5.6)
                number += 1
                if line.isspace():
                    continue
                try:
                    value = loads_json(line)
                except ValueError as exc:
                    raise ReportError(f"{path}:{number}: not JSON: {exc}") from None
                del line
                yield number, value
    except FileNotFoundError:
        raise ReportError(f"{path}: missing") from None
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None


def session_transitions(task_types: Sequence[str]) -> int:
    """Instruction transitions in a session: neighbouring tasks of different kinds (tool task, clarify, chat)."""
    kinds = [TOOL_KINDS.get(t, "tool") for t in task_types]
    return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)
