"""``wtb compare RUN_A RUN_B``: read two run folders, check they are comparable, and compare their task and
session accuracy paired by task (docs/trials.md §6).

The I/O layer around :func:`wildtoolbench.bench.sequential.paired_difference`. A run folder is what ``wtb eval`` (or
``wtb score``) writes: ``score.jsonl`` (``score.fixed.jsonl`` for fixed scoring) is required; ``run.json``
and ``summary_metrics.json`` are read when present. A score line may carry ``"trial": k`` (k >= 1, 1 when
absent): a folder holding several trials of its sessions is compared with all of them, those of
``score.trials.jsonl`` (``wtb eval --trials``, docs/trials.md §5) included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.sequential import ALPHA, POWER, paired_difference
from wildtoolbench.bench.strategy import scoring_strategy
from wildtoolbench.bench.trials import FEW_PAIRED_SESSIONS, TaskKey, verdicts_from_score_lines
from wildtoolbench.common.run_folder import RUN_FILE
from wildtoolbench.scoring.outputs import score_files, summary_metrics_file, trial_files
from wildtoolbench.scoring.results import natural_id_key


class RunFolderError(Exception):
    """A run folder cannot be read: its score file is missing or malformed (exit 1, docs/cli.md §2).

    ``issues`` lists ``file:line: field: message`` strings."""

    def __init__(self, issues: list[str]):
        super().__init__("; ".join(issues))
        self.issues = issues


class RunsNotComparable(Exception):
    """The two runs are not of the same sessions, scoring mode or language side (exit 2, docs/cli.md §2).

    ``reasons`` lists one sentence per difference."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass
class RunScores:
    """What ``wtb compare`` reads from one run folder.

    Attributes:
        path: the folder.
        model_name: the score lines' model name (``run.json``'s when the lines name none).
        scoring: ``reference`` or ``fixed``: which score file was read.
        language: the dataset side the run was made on (``en`` when nothing says).
        dataset_sha256: ``run.json``'s digest of the dataset file, or ``None`` (a ``wtb score`` folder).
        verdicts: ``{(session id, task index): [verdict per trial]}`` (docs/trials.md §1).
        tasks: ``{session id: task count}``.
    """

    path: Path
    model_name: str
    scoring: str
    language: str
    dataset_sha256: str | None
    verdicts: dict[TaskKey, list[bool]] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)

    def trials(self) -> tuple[int, int]:
        """``(fewest, most)`` trials of any session."""
        counts = {}
        for (session_id, _), values in self.verdicts.items():
            counts[session_id] = len(values)
        return min(counts.values()), max(counts.values())


def _read_json(path: Path) -> Any:
    """A JSON file's content, ``None`` when absent; :class:`RunFolderError` when unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise RunFolderError([f"{path}: cannot read: {exc}"]) from None


def read_run(path: Path, scoring: str | None = None) -> RunScores:
    """Read the score file of one run folder (docs/trials.md §6).

    Args:
        path: the run folder.
        scoring: which score file to read (``reference``: ``score.jsonl``, ``fixed``: ``score.fixed.jsonl``);
            ``None``: the mode ``run.json`` names, else ``reference``.

    Returns:
        A :class:`RunScores`.

    Raises:
        RunFolderError: the score file is missing, or a line is not JSON, not a score line (``id``,
            ``results`` list), has a bad ``trial``, or repeats a session and trial; every problem is named.
        ValueError: ``scoring`` is not a scoring mode.
    """
    run = _read_json(path / RUN_FILE)
    run = run if isinstance(run, dict) else {}
    mode = scoring_strategy(scoring or run.get("scoring") or None)
    score_name = score_files(mode)[0]
    score_path = path / score_name
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    language = settings.get("language")
    if language is None:
        summary = _read_json(path / summary_metrics_file(mode))
        language = summary.get("language") if isinstance(summary, dict) else None
    issues: list[str] = []
    by_trial: dict[int, list[dict[str, Any]]] = {}
    seen: dict[tuple[str, int], int] = {}
    model_names: list[str] = []
    if not score_path.is_file():
        inside = sorted(p.parent.name for p in path.glob(f"*/{score_name}"))
        hint = f"; the run folders are one level down: {', '.join(str(path / n) for n in inside)}" if inside else ""
        raise RunFolderError([f"error: {score_path}: missing (not a run folder, or not scored in {mode} mode){hint}"])
    for source in (score_path, path / trial_files(mode)[0]):
        if source != score_path and not source.is_file():
            continue
        _read_score_lines(source, issues, by_trial, seen, model_names)
    if not seen and not issues:
        issues.append(f"{score_path}: holds no score lines")
    if issues:
        raise RunFolderError(issues)
    trials = [by_trial.get(j, []) for j in range(1, max(by_trial) + 1)]
    try:
        verdicts = verdicts_from_score_lines(trials)
    except ValueError as exc:
        raise RunFolderError([f"{score_path}: {exc}"]) from None
    tasks: dict[str, int] = {}
    for session_id, _ in verdicts:
        tasks[session_id] = tasks.get(session_id, 0) + 1
    return RunScores(
        path=path,
        model_name=", ".join(model_names) or str(run.get("model_name") or "?"),
        scoring=mode.name,
        language=str(language or "en"),
        dataset_sha256=run.get("dataset_sha256") if isinstance(run.get("dataset_sha256"), str) else None,
        verdicts=verdicts,
        tasks=tasks,
    )


def _read_score_lines(
    score_path: Path,
    issues: list[str],
    by_trial: dict[int, list[dict[str, Any]]],
    seen: dict[tuple[str, int], int],
    model_names: list[str],
) -> None:
    """Add the score lines of ``score_path`` to ``by_trial`` (problems to ``issues``, as :func:`read_run` names them)."""
    try:
        handle = open(score_path, encoding="utf-8")
    except OSError as exc:
        issues.append(f"{score_path}: cannot read: {exc}")
        return
    with handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            where = f"{score_path}:{number}"
            try:
                line = json.loads(text)
            except ValueError as exc:
                issues.append(f"{where}: not JSON: {exc}")
                continue
            if not isinstance(line, dict):
                issues.append(f"{where}: not a JSON object")
                continue
            session_id, results, trial = line.get("id"), line.get("results"), line.get("trial", 1)
            if not isinstance(session_id, str):
                issues.append(f"{where}: id: missing or not a string")
                continue
            if not isinstance(results, list) or not all(isinstance(task, dict) for task in results):
                issues.append(f"{where}: results: missing or not a list of scored tasks")
                continue
            if isinstance(trial, bool) or not isinstance(trial, int) or trial < 1:
                issues.append(f"{where}: trial: {trial!r} is not a trial number (1, 2, ...)")
                continue
            if (session_id, trial) in seen:
                issues.append(
                    f"{where}: id: session {session_id!r} trial {trial} already on line {seen[session_id, trial]}"
                )
                continue
            seen[session_id, trial] = number
            if isinstance(line.get("model_name"), str) and line["model_name"] not in model_names:
                model_names.append(line["model_name"])
            by_trial.setdefault(trial, []).append(line)


def _listed(ids: list[str]) -> str:
    ids = sorted(ids, key=natural_id_key)
    return ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def check_comparable(a: RunScores, b: RunScores) -> None:
    """Refuse two runs whose tasks cannot be paired (docs/trials.md §6): other dataset content (the
    ``run.json`` digests differ), other sessions, other task counts, another scoring mode or language side.

    Raises:
        RunsNotComparable: one reason per difference found.
    """
    reasons: list[str] = []
    if a.dataset_sha256 and b.dataset_sha256 and a.dataset_sha256 != b.dataset_sha256:
        reasons.append(
            f"the runs were made on different dataset files (sha256 {a.dataset_sha256[:12]}... in {a.path / RUN_FILE}, "
            f"{b.dataset_sha256[:12]}... in {b.path / RUN_FILE})"
        )
    if a.scoring != b.scoring:
        reasons.append(f"scoring modes differ: {a.scoring} ({a.path}) and {b.scoring} ({b.path})")
    if a.language != b.language:
        reasons.append(f"language sides differ: {a.language} ({a.path}) and {b.language} ({b.path})")
    only_a = [s for s in a.tasks if s not in b.tasks]
    only_b = [s for s in b.tasks if s not in a.tasks]
    if only_a:
        reasons.append(f"{len(only_a)} session(s) only in {a.path}: {_listed(only_a)}")
    if only_b:
        reasons.append(f"{len(only_b)} session(s) only in {b.path}: {_listed(only_b)}")
    counts = [s for s in a.tasks if s in b.tasks and a.tasks[s] != b.tasks[s]]
    if counts:
        reasons.append(f"{len(counts)} session(s) with different task counts: {_listed(counts)}")
    if reasons:
        raise RunsNotComparable(reasons)


def compare_runs(
    run_a: Path, run_b: Path, *, scoring: str | None = None, alpha: float = ALPHA, power: float = POWER
) -> dict[str, Any]:
    """Compare two run folders task by task (docs/trials.md §6).

    Args:
        run_a, run_b: the run folders; differences are ``A - B``.
        scoring: the score files to read (:func:`read_run`).
        alpha, power: as :func:`wildtoolbench.bench.sequential.paired_difference`.

    Returns:
        The comparison as a JSON-ready dict (what ``--json`` writes)::

            {"a": {"path", "model_name", "trials": [fewest, most]}, "b": {...},
             "scoring", "language", "sessions", "tasks", "alpha", "power",
             "task": {"a", "b", "value", "low", "high", "se", "mdd", "verdict", "units"},
             "session": {...}, "verdict": <the task-accuracy verdict>}

    Raises:
        RunFolderError: a folder cannot be read. RunsNotComparable: the runs cannot be paired.
    """
    a, b = read_run(run_a, scoring), read_run(run_b, scoring)
    check_comparable(a, b)
    result = paired_difference(a.verdicts, b.verdicts, alpha=alpha, power=power)
    return {
        "a": {"path": str(run_a), "model_name": a.model_name, "trials": list(a.trials())},
        "b": {"path": str(run_b), "model_name": b.model_name, "trials": list(b.trials())},
        "scoring": a.scoring,
        "language": a.language,
        "sessions": result["sessions"],
        "tasks": result["tasks"],
        "alpha": alpha,
        "power": power,
        "task": result["task"].as_dict(),
        "session": result["session"].as_dict(),
        "verdict": result["task"].verdict,
    }


def _points(value: float) -> str:
    return f"{value * 100:+.2f}"


def _trials(trials: list[int]) -> str:
    fewest, most = trials
    if fewest == most:
        return f"{fewest} trial" + ("s" if fewest > 1 else "")
    return f"{fewest}-{most} trials"


def comparison_text(comparison: Mapping[str, Any]) -> str:
    """The lines ``wtb compare`` prints for :func:`compare_runs`'s result (docs/trials.md §6): who A and B are,
    what was paired, a row per accuracy (both values, the difference in percentage points with its interval,
    the minimum detectable difference, the verdict), and the verdict line; with fewer than
    ``wildtoolbench.bench.trials.FEW_PAIRED_SESSIONS`` paired sessions, a note that the verdict is only a hint."""
    level = round((1 - comparison["alpha"]) * 100)
    lines = [
        f"A: {comparison['a']['model_name']} ({comparison['a']['path']}, {_trials(comparison['a']['trials'])})",
        f"B: {comparison['b']['model_name']} ({comparison['b']['path']}, {_trials(comparison['b']['trials'])})",
        f"{comparison['sessions']} paired sessions, {comparison['tasks']} tasks; scoring {comparison['scoring']}, "
        f"language {comparison['language']}",
        "",
        f"{'':<17} {'A':>8} {'B':>8} {'A - B':>8}  {f'{level}% interval':<18} {'MDD':>6}  verdict",
    ]
    for name, key in (("task accuracy", "task"), ("session accuracy", "session")):
        row = comparison[key]
        interval = f"[{_points(row['low'])}, {_points(row['high'])}]"
        lines.append(
            f"{name:<17} {row['a'] * 100:>7.2f}% {row['b'] * 100:>7.2f}% {_points(row['value']):>8}  {interval:<18} "
            f"{row['mdd'] * 100:>6.2f}  {row['verdict']}"
        )
    lines += [
        "",
        f"differences in percentage points; {level}% intervals over sessions (paired); MDD: the smallest "
        f"difference detected with {round(comparison['power'] * 100)}% power at this size (docs/trials.md §6)",
        f"verdict: {comparison['verdict']} (task accuracy)",
    ]
    if comparison["sessions"] < FEW_PAIRED_SESSIONS:
        lines.append(
            f"note: only {comparison['sessions']} paired sessions, fewer than {FEW_PAIRED_SESSIONS}: the interval "
            "is rough, read the verdict as a hint (docs/trials.md §6)"
        )
    return "\n".join(lines)
