"""``wtb diff RUN_A RUN_B`` and ``wtb gate``: read two run folders and the dataset they were made on, and diff
them task by task (docs/diff.md).

The I/O layer around :mod:`wildtoolbench.bench.diff`. The runs must be comparable as for ``wtb compare``
(:func:`wildtoolbench.comparison.runs.check_comparable`); the scored tasks come from each folder's score file
(``score.jsonl``, ``score.fixed.jsonl`` in fixed mode: its steps carry the argument verdicts), first trial;
the gold DAGs from the dataset file, ``--dataset`` or the one the runs' ``run.json`` names (docs/diff.md §5).
:func:`diff_runs` returns JSON-ready data: what ``wtb diff --json`` writes and a report can show.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.diff import DiffInputError, diff_task, flip_counts
from wildtoolbench.common.numbering import step_number, task_number
from wildtoolbench.comparison.runs import (
    RUN_FILE,
    RunFolderError,
    RunScores,
    RunsNotComparable,
    check_comparable,
    read_run,
)
from wildtoolbench.scoring.outputs import score_files
from wildtoolbench.scoring.results import natural_id_key


class DatasetNotFound(Exception):
    """No usable dataset file for the gold DAGs: none given and none named by the runs' ``run.json`` exists,
    or the given one is not the file the runs were made on (exit 2, docs/cli.md §2). ``reasons``: one sentence each."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run_json(folder: Path) -> dict[str, Any]:
    try:
        run = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return run if isinstance(run, dict) else {}


def dataset_for(runs: Sequence[Path], given: Path | None = None) -> Path:
    """The dataset file whose gold DAGs the runs are diffed through (docs/diff.md §5).

    Args:
        runs: the run folders, in the order their ``run.json`` is tried.
        given: ``--dataset``, when given: used when its sha256 is the one every ``run.json`` that names a
            digest records.

    Returns:
        ``given``, else the first ``run.json`` ``dataset`` that is a file with the recorded digest.

    Raises:
        DatasetNotFound: ``given`` has another digest, or no run names an existing file and none is given.
    """
    digests = {str(run["dataset_sha256"]) for run in map(_run_json, runs) if isinstance(run.get("dataset_sha256"), str)}
    if given is not None:
        digest = _sha256(given)
        if digests and digest not in digests:
            raise DatasetNotFound(
                [f"{given} is not the dataset file the runs were made on (sha256 {digest[:12]}..., run.json records "
                 f"{', '.join(sorted(d[:12] + '...' for d in digests))})"]
            )  # fmt: skip
        return given
    tried = []
    for folder in runs:
        run = _run_json(folder)
        named = run.get("dataset")
        if not isinstance(named, str):
            continue
        path = Path(named)
        if path.is_file() and (
            not isinstance(run.get("dataset_sha256"), str) or _sha256(path) == run["dataset_sha256"]
        ):
            return path
        tried.append(f"{named} (from {folder / RUN_FILE})")
    where = f": {', '.join(tried)} is missing or changed" if tried else ": no run.json names one"
    raise DatasetNotFound([f"cannot find the dataset the runs were made on{where}; pass --dataset FILE"])


def _without_inputs(task: Any) -> Any:
    """A scored task without its steps' ``inference_input`` (the request messages; the diff never reads them)."""
    if not isinstance(task, dict) or not isinstance(task.get("inference_log"), dict):
        return task
    log = {
        key: ({k: v for k, v in step.items() if k != "inference_input"} if isinstance(step, dict) else step)
        for key, step in task["inference_log"].items()
    }
    return {**task, "inference_log": log}


def _scored_tasks(run: RunScores) -> dict[str, tuple[int, list[Any]]]:
    """``{session id: (line number, [scored task, ...])}`` of the first trial of the run's score file."""
    path = run.path / score_files(run.scoring)[0]
    found: dict[str, tuple[int, list[Any]]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            line = json.loads(text)  # read_run has checked every line
            if line.get("trial", 1) == 1:
                found[line["id"]] = (number, [_without_inputs(task) for task in line["results"]])
    return found


def _answer_lists(dataset: Path, session_ids: Sequence[str], language: str) -> Iterator[tuple[str, list[Any]]]:
    """``(session id, [gold answer list per task])`` for ``session_ids``, from ``dataset`` (validated)."""
    from wildtoolbench.bench.schema import fields_for, index_sessions, infer_task_count

    index = index_sessions(dataset, tasks=infer_task_count(dataset))
    side = fields_for(language).answer_list
    missing = [s for s in session_ids if s not in index]
    if missing:
        raise DatasetNotFound([f"{dataset} does not hold session {missing[0]!r} of the runs ({len(missing)} missing)"])
    for session_id in session_ids:
        yield session_id, index[session_id][side]


def diff_runs(run_a: Path, run_b: Path, *, dataset: Path | None = None, scoring: str | None = None) -> dict[str, Any]:
    """Diff two run folders task by task (docs/diff.md §4, §5).

    Args:
        run_a, run_b: the run folders; a flip is read from A to B.
        dataset: the dataset file (:func:`dataset_for`); ``None``: the one the runs' ``run.json`` names.
        scoring: the score files to read (:func:`wildtoolbench.comparison.runs.read_run`).

    Returns:
        ``{"a": {"path", "model_name"}, "b": {...}, "scoring", "language", "dataset", "sessions", "tasks",
        "counts": {"regressed", "improved", "total"}, "flipped": [wildtoolbench.bench.diff.diff_task(...) per flipped task,
        sessions in natural id order, tasks in order]}``.

    Raises:
        RunFolderError: a folder cannot be read, or a flipped task's log cannot be diffed (named
            ``file:line: field: message``). RunsNotComparable: the runs cannot be paired. DatasetNotFound:
            as :func:`dataset_for`, or the dataset lacks a session. wildtoolbench.bench.schema.DatasetError: the dataset is
            malformed.
    """
    a, b = read_run(run_a, scoring), read_run(run_b, scoring)
    check_comparable(a, b)
    source = dataset_for([run_a, run_b], dataset)
    tasks_a, tasks_b = _scored_tasks(a), _scored_tasks(b)
    sessions = sorted(tasks_a, key=natural_id_key)
    flipped = []
    for session_id, answer_lists in _answer_lists(source, sessions, a.language):
        (line_a, scored_a), (line_b, scored_b) = tasks_a[session_id], tasks_b[session_id]
        for t, (task_a, task_b) in enumerate(zip(scored_a, scored_b)):
            if task_a.get("label") == task_b.get("label"):
                continue
            try:
                flipped.append(diff_task(session_id, t, task_a, task_b, answer_lists[t]))
            except DiffInputError as exc:
                side, line = (a, line_a) if exc.field.startswith("a.") else (b, line_b)
                where = f"{side.path / score_files(side.scoring)[0]}:{line}"
                raise RunFolderError([f"{where}: {exc.field[2:]}: {exc.message}"]) from None
            except IndexError:
                raise RunFolderError([f"{source}: session {session_id!r} has no task {t} (another dataset?)"]) from None
    return {
        "a": {"path": str(run_a), "model_name": a.model_name},
        "b": {"path": str(run_b), "model_name": b.model_name},
        "scoring": a.scoring,
        "language": a.language,
        "dataset": str(source),
        "sessions": len(sessions),
        "tasks": sum(a.tasks.values()),
        "counts": flip_counts(flipped),
        "flipped": flipped,
    }


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def step_summary(step: Mapping[str, Any] | None) -> str:
    """One side of a divergent step in a line (docs/diff.md §4): its calls with their arguments (and, for a
    call with an argument error, the verdict), or what the reply was (a question, the answer, an error with
    its reason, no step)."""
    if step is None:
        return "-"
    calls = step.get("calls") or []
    text = "; ".join(
        f"{call['name']}({_short(call['arguments'])})"
        + (f" [{_short(call['verdict'], 60)}]" if call.get("verdict") not in (None, "correct") else "")
        for call in calls
    )
    kind = step.get("kind")
    if kind == "calls":
        return text
    if kind == "error":
        reason = _short(step.get("error_reason") or "error", 60)
        said = text or (f"text {_short(step['content'], 40)!r}" if step.get("content") else "")
        return f"error: {reason}" + (f": {said}" if said else "")
    if kind == "end":
        reason = step.get("error_reason")
        return "no step" + (f" ({_short(reason, 60)})" if reason else "")
    return f"{kind}: {_short(step.get('content') or '', 60)!r}"


def flipped_lines(
    diff: Mapping[str, Any], flips: Sequence[str] | None = None, names: tuple[str, str] = ("A", "B")
) -> list[str]:
    """Per flipped task of :func:`diff_runs`'s result (of the kinds ``flips``, all when ``None``; docs/diff.md §4):
    a blank line, its id, labels, flip kind and first divergent step, and one line per side with that step's
    calls (:func:`step_summary`); ``names`` name the sides A and B."""
    lines: list[str] = []
    for task in diff["flipped"]:
        if flips is not None and task["flip"] not in flips:
            continue
        step = task["first_divergent_step"]
        at = (
            "no divergent step found"
            if step is None
            else f"first divergent step: {names[0]} {step_number(step['a'])}, {names[1]} {step_number(step['b'])}"
        )
        width = max(len(name) for name in names)
        lines += [
            "",
            f"{task['id']} task {task_number(task['task'])}: {task['a_label']} -> {task['b_label']} ({task['flip'] or 'flipped'}); {at}",
            f"  {names[0] + ':':<{width + 1}} {step_summary(task['a_step'])}",
            f"  {names[1] + ':':<{width + 1}} {step_summary(task['b_step'])}",
        ]
    return lines


def counts_line(diff: Mapping[str, Any], names: tuple[str, str] = ("A", "B")) -> str:
    """``N tasks flipped: R regressed (correct in A, wrong in B), I improved (...)`` (docs/diff.md §4)."""
    counts = diff["counts"]
    a, b = names
    return (
        f"{counts['total']} tasks flipped: {counts['regressed']} regressed (correct in {a}, wrong in {b}), "
        f"{counts['improved']} improved (wrong in {a}, correct in {b})"
    )


def diff_lines(diff: Mapping[str, Any], flips: Sequence[str] | None = None) -> list[str]:
    """The lines ``wtb diff`` prints for :func:`diff_runs`'s result (docs/diff.md §4): who A and B are, what was
    compared, the counts by flip kind, then :func:`flipped_lines`."""
    return [
        f"A: {diff['a']['model_name']} ({diff['a']['path']})",
        f"B: {diff['b']['model_name']} ({diff['b']['path']})",
        f"{diff['sessions']} sessions, {diff['tasks']} tasks; scoring {diff['scoring']}, language {diff['language']}",
        counts_line(diff),
        *flipped_lines(diff, flips),
    ]


__all__ = [
    "DatasetNotFound",
    "RunFolderError",
    "RunsNotComparable",
    "dataset_for",
    "counts_line",
    "diff_lines",
    "diff_runs",
    "flipped_lines",
    "step_summary",
]
