"""``wtb compare RUN_FOLDER --scorings A,B``: the tasks whose label differs between two scorings of one run
folder, each with the equivalence rule ids that flipped it, and the totals per rule (docs/semantic-mode.md §4).

Both score files must be in the folder (``wtb eval --scoring``, or ``wtb score RUN_FOLDER --scoring``). A flip
between fixed and semantic scoring always names the rules of docs/semantic-mode.md §2 that accepted the
task's calls (the ``"equivalences"`` of its semantic score); a flip that involves reference scoring and no
rule comes from the fixes of docs/fixed-mode.md and is attributed to ``fixes`` (``wtb score --scoring fixed``
splits it by fix). The stated-value rule, the most arguable, is totalled apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wildtoolbench.bench.equivalence import EQUIVALENCE_RULES
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.common.run_folder import SCORE_FILE
from wildtoolbench.comparison.runs import RunFolderError
from wildtoolbench.scoring.results import natural_id_key

FIXES_CAUSE = "fixes"
"""The cause named for a flip no equivalence rule explains: the fixes of docs/fixed-mode.md."""


def comparability_line(strategies: list[ScoringStrategy]) -> str:
    """The line every table mixing scoring modes carries (docs/semantic-mode.md §1): which figures stand beside
    the paper's leaderboard (reference scoring only) and which do not."""
    names = ", ".join(str(s) for s in strategies)
    paper = [str(s) for s in strategies if s.paper_comparable]
    others = [str(s) for s in strategies if not s.paper_comparable]
    if not others:
        return f"comparability: {names} scoring only; comparable with the paper's leaderboard (reference scoring)"
    tail = f"only the {paper[0]} figures compare with the paper's leaderboard" if paper else "none compares with the paper's leaderboard (the paper used reference scoring)"
    return f"comparability: mixes {names} scoring: {', '.join(others)} figures are not the paper's measure; {tail}"


def _score_lines(path: Path) -> dict[str, list[dict[str, Any]]]:
    if not path.is_file():
        raise RunFolderError([f"error: {path}: missing (score the folder with wtb score RUN_FOLDER --scoring ...)"])
    lines: dict[str, list[dict[str, Any]]] = {}
    issues: list[str] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError as exc:
            issues.append(f"{path}:{number}: not JSON: {exc}")
            continue
        if not isinstance(line, dict) or not isinstance(line.get("id"), str) or not isinstance(line.get("results"), list):
            issues.append(f"{path}:{number}: not a score line ('id', 'results' list)")
            continue
        if "trial" not in line:
            lines[line["id"]] = line["results"]
    if issues:
        raise RunFolderError(issues)
    return lines


def _accuracy(lines: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    tasks = [task for results in lines.values() for task in results]
    correct = sum(task.get("label") == "correct" for task in tasks)
    sessions = sum(all(task.get("label") == "correct" for task in results) for results in lines.values())
    return {
        "tasks": len(tasks),
        "correct_tasks": correct,
        "task_accuracy": correct / len(tasks) if tasks else None,
        "sessions": len(lines),
        "correct_sessions": sessions,
        "session_accuracy": sessions / len(lines) if lines else None,
    }


def compare_scorings(run_dir: Path, a: str, b: str) -> dict[str, Any]:
    """The flips between two scorings of one run folder (docs/semantic-mode.md §4).

    Args:
        run_dir: the run folder.
        a, b: two different scoring mode names whose score files the folder holds.

    Returns:
        ``{"run", "scorings": [a, b], "a": accuracy, "b": accuracy, "flips": [{"id", "task_idx", "a", "b",
        "rules"}], "by_rule": {rule id: flips}, "arguable": {rule id: flips}, "comparability"}``; accuracy is
        ``{"tasks", "correct_tasks", "task_accuracy", "sessions", "correct_sessions", "session_accuracy"}``;
        ``rules`` lists rule ids (docs/semantic-mode.md §2), or ``["fixes"]`` for a flip no rule explains.

    Raises:
        ValueError: an unknown mode name, or the same mode twice.
        RunFolderError: a score file is missing or malformed, or the two hold other sessions.
    """
    first, second = scoring_strategy(a), scoring_strategy(b)
    if first is second:
        raise ValueError(f"--scorings names {first} twice: give two different scorings")
    left = _score_lines(run_dir / first.file_name(SCORE_FILE))
    right = _score_lines(run_dir / second.file_name(SCORE_FILE))
    if set(left) != set(right):
        raise RunFolderError([f"error: {run_dir}: the {first} and {second} score files hold other sessions"])
    flips: list[dict[str, Any]] = []
    by_rule: dict[str, int] = {}
    for session_id in sorted(left, key=natural_id_key):
        for t, (x, y) in enumerate(zip(left[session_id], right[session_id])):
            if x.get("label") == y.get("label"):
                continue
            correct_side = x if x.get("label") == "correct" else y
            rules = [r for r in correct_side.get("equivalences") or [] if r in EQUIVALENCE_RULES] or [FIXES_CAUSE]
            flips.append({"id": session_id, "task_idx": t, "a": x.get("label"), "b": y.get("label"), "rules": rules})
            for rule in rules:
                by_rule[rule] = by_rule.get(rule, 0) + 1
    order = [*EQUIVALENCE_RULES, FIXES_CAUSE]
    arguable = {rule: by_rule.pop(rule) for rule in [r for r in EQUIVALENCE_RULES if EQUIVALENCE_RULES[r].arguable] if rule in by_rule}
    return {
        "run": str(run_dir),
        "scorings": [first.name, second.name],
        "a": _accuracy(left),
        "b": _accuracy(right),
        "flips": flips,
        "by_rule": {rule: by_rule[rule] for rule in order if rule in by_rule},
        "arguable": arguable,
        "comparability": comparability_line([first, second]),
    }


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.2f}%"


def scorings_text(comparison: dict[str, Any]) -> str:
    """The printed form of :func:`compare_scorings` (one flip per line, then the totals per rule)."""
    a, b = comparison["scorings"]
    left, right = comparison["a"], comparison["b"]
    lines = [
        f"{a} vs {b} scoring of {comparison['run']}: {left['tasks']} tasks, {left['sessions']} sessions",
        f"task accuracy {_percent(left['task_accuracy'])} -> {_percent(right['task_accuracy'])}; "
        f"session accuracy {_percent(left['session_accuracy'])} -> {_percent(right['session_accuracy'])}",
        comparison["comparability"],
    ]
    if not comparison["flips"]:
        lines.append("no task label flips")
        return "\n".join(lines)
    lines.append(f"{len(comparison['flips'])} task label(s) flip:")
    for flip in comparison["flips"]:
        lines.append(f"  {flip['id']} task {flip['task_idx']}: {a} {flip['a']} -> {b} {flip['b']} ({', '.join(flip['rules'])})")
    totals = ", ".join(f"{rule}: {count}" for rule, count in comparison["by_rule"].items()) or "none"
    lines.append(f"by rule: {totals}")
    if comparison["arguable"]:
        apart = ", ".join(f"{rule}: {count}" for rule, count in comparison["arguable"].items())
        lines.append(f"reported apart (the most arguable rule, docs/semantic-mode.md §2.7): {apart}")
    return "\n".join(lines)
