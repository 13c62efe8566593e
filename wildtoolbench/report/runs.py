"""Read run folders for a report: metric, scores, results, summary, run identity and dataset.

A run folder is what ``wtb eval`` (or ``wtb score``) writes: ``metric.json`` and
``score.jsonl`` are required; ``result.jsonl`` (the raw trajectories, docs/evaluation.md §5),
``summary.json`` (accounting) and ``run.json`` (dataset path and sha256) are
used when present. Files are read one line at a time and reduced to what the
report needs (per-task facts and a compact trajectory per session), so a run of
1,024 sessions (tens of MB of JSON) stays small in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from wildtoolbench.bench.errors import CATEGORIES, classify_task
from wildtoolbench.bench.io import loads_json
from wildtoolbench.bench.schema import ASK_USER, PREPARE_TO_ANSWER, DatasetError, load_sessions
from wildtoolbench.bench.scoring import step_keys
from wildtoolbench.common.run_folder import (
    FIXED_METRIC_FILE,
    FIXED_SCORE_FILE,
    FIXED_SUMMARY_METRICS_FILE,
    METRIC_FILE,
    RESULT_FILE,
    RUN_FILE,
    SCORE_FILE,
    SUMMARY_FILE,
    SUMMARY_METRICS_FILE,
)
from wildtoolbench.data.official import OFFICIAL_DATASET
from wildtoolbench.score.outputs import trial_files

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
    scoring: str = "reference"
    extra_metrics: dict[str, Any] = field(default_factory=dict)
    language: str = "en"
    spec: str = ""
    score_path: Path = Path()
    scored: dict[str, tuple[int, list[Any]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    version: str = ""
    date: str = ""
    trials: dict[str, Any] | None = None

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
        if self.scoring != "reference":
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


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{path}: missing") from None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
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


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes (as ``run.json`` records it).

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_dataset_file(run_dir: Path, override: Path | None) -> Path:
    """The dataset file of a run: the one ``run.json`` names, else ``override``.

    Raises:
        ReportError: ``run.json`` names a file whose content changed since the run
            (sha256 differs), or no dataset can be found.
    """
    info_path = run_dir / RUN_FILE
    if info_path.is_file():
        info = _read_json(info_path)
        named = Path(str(info.get("dataset", ""))) if isinstance(info, dict) and info.get("dataset") else None
        if named is not None and named.is_file():
            recorded = info.get("dataset_sha256")
            if recorded and file_sha256(named) != recorded:
                raise ReportError(
                    f"{info_path}: the dataset {named} changed since the run (sha256 differs); "
                    "the report would pair results with other sessions"
                )
            return named
        if override is None:
            raise ReportError(f"{info_path}: names the dataset {named}, which is not there; pass --dataset")
    if override is None:
        raise ReportError(f"{run_dir}: no {RUN_FILE} naming the dataset (a `wtb score` folder?); pass --dataset")
    if not override.is_file():
        raise ReportError(f"{override}: dataset file not found")
    return override


def load_report_dataset(path: Path, key: str, tasks: int) -> Dataset:
    """Read and validate a dataset file (docs/dataset.md) for the report.

    Raises:
        ReportError: the file is missing or malformed (the first problems are listed).
    """
    try:
        sessions = [s.to_dict() for s in load_sessions(path, tasks=tasks)]
    except DatasetError as exc:
        shown = "; ".join(str(i) for i in exc.issues[:5])
        raise ReportError(f"{path}: not a valid dataset ({len(exc.issues)} problem(s)): {shown}") from None
    return Dataset(
        key, path, file_sha256(path), sessions, {s["id"]: i for i, s in enumerate(sessions)}, official=is_official(path)
    )


def is_official(path: Path) -> bool:
    """Whether ``path`` holds exactly the official dataset's bytes (its git blob id is the one pinned under
    :data:`OFFICIAL_DATASET`, docs/metrics.md §10).

    Raises:
        ReportError: ``WTB_DATA_PINS`` names an unreadable or malformed pin table.
    """
    from wildtoolbench.data.official import PinsError, git_blob_id, pin_table

    try:
        pin = pin_table().get(OFFICIAL_DATASET)
    except PinsError as exc:
        raise ReportError(str(exc)) from None
    return pin is not None and git_blob_id(path) == pin.blob


# --------------------------------------------------------------------------- compact trajectories


def _call_view(call: Any) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        return {"name": None, "args": json.dumps(call, ensure_ascii=False)}
    function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
    arguments = function.get("arguments")
    view = {
        "name": function.get("name"),
        "args": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
    }
    if call.get("id") is not None:
        view["id"] = call.get("id")
    return view


def _candidates(step: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """Distinct gold candidates of a step (actions, plus question/reply of pseudo steps) and how many entries there were."""
    answer = step.get("inference_answer")
    if not isinstance(answer, Mapping):
        return [], 0
    seen: dict[str, dict[str, Any]] = {}
    for entry in answer.values():
        if not isinstance(entry, Mapping):
            continue
        actions = [
            {"name": a.get("name"), "args": a.get("arguments")}
            for a in entry.get("action") or []
            if isinstance(a, Mapping)
        ]
        item: dict[str, Any] = {"actions": actions}
        if any(a["name"] in PSEUDO for a in actions):
            for extra in ("observation", "user_input"):
                if extra in entry:
                    item[extra] = entry[extra]
        seen.setdefault(json.dumps(item, sort_keys=True, ensure_ascii=False), item)
    distinct = list(seen.values())
    return distinct[:MAX_CANDIDATES_SHOWN], len(distinct)


def _diagnostics(output: Mapping[str, Any]) -> list[str]:
    notes = output.get("diagnostics")
    if not isinstance(notes, list):
        return []
    return [str(n.get("message") or n.get("kind")) if isinstance(n, Mapping) else str(n) for n in notes]


def _value(values: Any, index: int) -> Any:
    value = values[index] if isinstance(values, list) and index < len(values) else None
    return round(value, 4) if isinstance(value, float) else value


def compact_trajectory(raw: Any, scored: Sequence[Mapping[str, Any]], facts: Sequence[TaskFacts]) -> dict[str, Any]:
    """The trajectory viewer's data for one session of one run.

    Args:
        raw: the record's ``result`` (docs/evaluation.md §5): the per-task list, or the
            ``"Error during inference: ..."`` string.
        scored: the session's scored tasks (``score.jsonl`` ``results``).
        facts: the tasks' :class:`TaskFacts`.

    Returns:
        ``{"error": str}`` for a failed inference, else ``{"tasks": [...]}``; each
        task holds its labels, error category and steps. A step holds the messages
        sent as ``[n, new]`` (the first ``n`` messages of the previous request in
        the session, then the ``new`` ones), the reply (``content``, ``reasoning``,
        ``calls``), the name label and error reason, the argument label and checks
        ``[[name, predicted, gold, result], ...]`` (in the scorer's sorted order),
        the gold candidates, ``latency`` and token counts, and ``dropped`` for the
        step the scorer removed after an argument error (fixtures quirk 14).
    """
    if isinstance(raw, str):
        return {"error": raw}
    previous: list[Any] = []
    tasks_out = []
    for index, task in enumerate(raw if isinstance(raw, list) else []):
        task = task if isinstance(task, Mapping) else {}
        score = scored[index] if index < len(scored) else {}
        fact = facts[index] if index < len(facts) else None
        log = task.get("inference_log") if isinstance(task.get("inference_log"), Mapping) else {}
        score_log = score.get("inference_log") if isinstance(score.get("inference_log"), Mapping) else {}
        steps = []
        for key in step_keys(log):
            number = int(key.split("_")[1])
            step = log[key] if isinstance(log[key], Mapping) else {}
            output = step.get("inference_output") if isinstance(step.get("inference_output"), Mapping) else {}
            messages = (step.get("inference_input") or {}).get("messages") or []
            shared = 0
            while shared < min(len(previous), len(messages)) and previous[shared] == messages[shared]:
                shared += 1
            previous = messages
            candidates, total = _candidates(step)
            view: dict[str, Any] = {
                "i": number,
                "m": [shared, messages[shared:]],
                "content": output.get("content"),
                "reasoning": output.get("reasoning_content"),
                "calls": [_call_view(c) for c in output.get("tool_calls") or []]
                if isinstance(output.get("tool_calls"), list)
                else [],
                "name": output.get("current_action_name_label"),
                "cand": candidates,
                "ncand": total,
                "lat": _value(task.get("latency"), number),
                "tin": _value(task.get("input_token_count"), number),
                "tout": _value(task.get("output_token_count"), number),
            }
            if output.get("error_reason"):
                view["why"] = output["error_reason"]
            notes = _diagnostics(output)
            if notes:
                view["notes"] = notes
            scored_step = score_log.get(key)
            if scored_step is None and score_log:
                view["dropped"] = True
            elif isinstance(scored_step, Mapping):
                scored_output = scored_step.get("inference_output") or {}
                label = scored_output.get("current_action_arguments_label")
                if label is not None:
                    view["args"] = label
                    results = scored_output.get("current_action_arguments_check_result") or []
                    predicted = scored_output.get("tool_calls") or []
                    gold = (
                        (scored_step.get("inference_answer") or {}).get("candidate_0_answer_function_list") or {}
                    ).get("action") or []
                    view["checks"] = [
                        [
                            _call_view(p)["name"],
                            _call_view(p)["args"],
                            g.get("arguments") if isinstance(g, Mapping) else None,
                            results[j] if j < len(results) else "correct",
                        ]
                        for j, (p, g) in enumerate(zip(predicted, gold))
                    ]
            steps.append(view)
        entry: dict[str, Any] = {
            "label": score.get("label"),
            "nameLabel": score.get("action_name_label"),
            "argsLabel": score.get("action_arguments_label"),
            "optimal": bool(score.get("is_optimal")),
            "steps": steps,
        }
        if task.get("error_reason"):
            entry["why"] = task["error_reason"]
        if fact is not None and fact.category is not None:
            entry["err"] = [fact.category, fact.reason, fact.failing_step]
        tasks_out.append(entry)
    return {"tasks": tasks_out}


# --------------------------------------------------------------------------- runs


def _task_facts(session_id: str, index: int, scored: Mapping[str, Any]) -> TaskFacts:
    found = classify_task(scored)
    log = scored.get("inference_log") if isinstance(scored.get("inference_log"), Mapping) else {}
    latency = [x for x in scored.get("latency") or [] if isinstance(x, (int, float))]
    tokens_in = [x for x in scored.get("input_token_count") or [] if isinstance(x, (int, float))]
    tokens_out = [x for x in scored.get("output_token_count") or [] if isinstance(x, (int, float))]
    return TaskFacts(
        session_id=session_id,
        task_idx=index,
        correct=scored.get("label") == "correct",
        optimal=bool(scored.get("is_optimal")),
        steps=max(len(scored.get("latency") or []), len(step_keys(log))),
        category=found.category if found else None,
        reason=found.reason if found else None,
        failing_step=found.step if found else None,
        latency=float(sum(latency)),
        input_tokens=int(sum(tokens_in)),
        output_tokens=int(sum(tokens_out)),
    )


def without_inputs(task: Any) -> Any:
    """A scored task (a ``results`` entry) without its steps' ``inference_input``, the request messages the
    diff never reads (docs/diff.md §2); anything that is not a task with a log is returned as it is."""
    if not isinstance(task, dict) or not isinstance(task.get("inference_log"), dict):
        return task
    log = {
        key: ({k: v for k, v in step.items() if k != "inference_input"} if isinstance(step, dict) else step)
        for key, step in task["inference_log"].items()
    }
    return {**task, "inference_log": log}


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
    data = _read_json(path)
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
    info = _read_json(info_path) if info_path.is_file() else {}
    settings = info.get("settings") if isinstance(info, dict) and isinstance(info.get("settings"), dict) else {}
    language = settings.get("language")
    if not isinstance(language, str) and summary_metrics.is_file():
        found = _read_json(summary_metrics)
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
    scoring = "reference"
    metric_file, score_file = METRIC_FILE, SCORE_FILE
    if not (run_dir / METRIC_FILE).is_file() and (run_dir / FIXED_METRIC_FILE).is_file():
        scoring, metric_file, score_file = "fixed", FIXED_METRIC_FILE, FIXED_SCORE_FILE  # a --scoring fixed run
    metric = _read_json(run_dir / metric_file)
    if not isinstance(metric, dict) or "total_info" not in metric:
        raise ReportError(f"{run_dir / metric_file}: not a metric file (no total_info)")
    summary_path = run_dir / SUMMARY_FILE
    summary = _read_json(summary_path) if summary_path.is_file() else None

    scored: dict[str, list[dict[str, Any]]] = {}
    lines: dict[str, int] = {}
    order: list[str] = []
    score_path = run_dir / score_file
    for number, record in _json_lines(score_path):
        session_id = _record_id(record, score_path, number)
        results = record.get("results")
        if not isinstance(results, list):
            raise ReportError(f"{score_path}:{number}: no 'results' list")
        scored[session_id] = results
        lines[session_id] = number
        order.append(session_id)
    if not order:
        raise ReportError(f"{score_path}: holds no scored sessions")

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
    summary_metrics = run_dir / (SUMMARY_METRICS_FILE if scoring == "reference" else FIXED_SUMMARY_METRICS_FILE)
    run.extra_metrics = _extra_metrics(summary_metrics)
    _read_identity(run, run_dir / RUN_FILE, summary_metrics, run_dir / metric_file)
    tags = [
        t for t in (None if scoring == "reference" else scoring, None if run.language == "en" else run.language) if t
    ]
    run.label = f"{model} ({', '.join(tags)})" if tags else model
    facts: dict[str, list[TaskFacts]] = {}
    for session_id in order:
        facts[session_id] = [_task_facts(session_id, i, t) for i, t in enumerate(scored[session_id])]
        run.tasks.extend(facts[session_id])
    run.session_ids = order
    run.score_path = score_path
    run.scored = {s: (lines[s], [without_inputs(task) for task in scored[s]]) for s in order}

    trials_path = run_dir / trial_files(scoring)[2]
    if trials_path.is_file():  # docs/trials.md §5
        trials = _read_json(trials_path)
        if not isinstance(trials, dict) or not isinstance(trials.get("task"), dict):
            raise ReportError(f"{trials_path}: not a trial summary (no task)")
        run.trials = trials

    result_path = run_dir / RESULT_FILE
    if result_path.is_file():
        for number, record in _json_lines(result_path):
            session_id = _record_id(record, result_path, number)
            if session_id in scored:
                trajectory = compact_trajectory(record.get("result"), scored[session_id], facts[session_id])
                run.trajectories[session_id] = json.dumps(trajectory, ensure_ascii=False, separators=(",", ":"))
    missing_raw = [s for s in order if s not in run.trajectories]
    if missing_raw:
        run.raw_results = False
        for (
            session_id
        ) in missing_raw:  # the scored log: calls sorted by the scorer, one step dropped after an argument error
            trajectory = compact_trajectory(scored[session_id], scored[session_id], facts[session_id])
            run.trajectories[session_id] = json.dumps(trajectory, ensure_ascii=False, separators=(",", ":"))
    return run


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


def session_transitions(task_types: Sequence[str]) -> int:
    """Instruction transitions in a session: neighbouring tasks of different kinds (tool task, clarify, chat)."""
    kinds = [TOOL_KINDS.get(t, "tool") for t in task_types]
    return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)
