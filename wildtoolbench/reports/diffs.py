"""The report's run-against-run diffs: for every two comparable runs, the tasks whose label flipped and the
first step where their trajectories diverge (docs/diff.md, shown by the page's Diff view).

Built on :func:`wildtoolbench.bench.diff.diff_task` over the scored tasks and gold DAGs the report has already read
(:class:`wildtoolbench.reports.run_data.Run`), so no file is read twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wildtoolbench.bench.diff import DiffInputError, diff_task, flip_counts
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.reports.content import comparable
from wildtoolbench.reports.run_data import ReportError, Run


def _natural_key(session_id: str) -> tuple:
    from wildtoolbench.scoring.results import natural_id_key

    return natural_id_key(session_id)


def pair_diff(a: Run, b: Run) -> dict[str, Any]:
    """Diff two runs of the same sessions task by task, A to B (docs/diff.md §3, §4).

    Args:
        a, b: runs that :func:`wildtoolbench.reports.content.comparable` pairs (same dataset, scoring mode and side).

    Returns:
        ``{"a": a.key, "b": b.key, "sessions": shared sessions, "tasks": tasks compared, "counts":
        {"regressed", "improved", "total"}, "flipped": [wildtoolbench.bench.diff.diff_task(...) per task whose label
        differs, sessions in natural id order, tasks in order]}``.

    Raises:
        ReportError: a flipped task's scored log cannot be diffed (``score file:line: field: message``), or
            the dataset has fewer tasks than a score line.
    """
    answers_field = fields_for(a.language).answer_list
    sessions = sorted((s for s in a.session_ids if s in b.scored), key=_natural_key)
    flipped = []
    tasks = 0
    for session_id in sessions:
        (line_a, scored_a), (line_b, scored_b) = a.scored[session_id], b.scored[session_id]
        answer_lists = a.dataset.sessions[a.dataset.index[session_id]][answers_field]
        tasks += min(len(scored_a), len(scored_b))
        for t, (task_a, task_b) in enumerate(zip(scored_a, scored_b)):
            readable = isinstance(task_a, dict) and isinstance(task_b, dict)
            if not readable or task_a.get("label") == task_b.get("label"):
                continue
            if t >= len(answer_lists):
                raise ReportError(f"{a.dataset.path}: session {session_id!r} has no task {t} (another dataset?)")
            try:
                flipped.append(diff_task(session_id, t, task_a, task_b, answer_lists[t]))
            except DiffInputError as exc:
                run, line = (a, line_a) if exc.field.startswith("a.") else (b, line_b)
                raise ReportError(f"{run.score_path}:{line}: {exc.field[2:]}: {exc.message}") from None
    return {
        "a": a.key,
        "b": b.key,
        "sessions": len(sessions),
        "tasks": tasks,
        "counts": flip_counts(flipped),
        "flipped": flipped,
    }


def report_diffs(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """:func:`pair_diff` of every two runs that a paired difference compares (:func:`comparable`, docs/diff.md §1),
    in argument order (A the earlier run); a pair sharing no session is left out."""
    found = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if comparable(a, b):
                continue
            diff = pair_diff(a, b)
            if diff["sessions"]:
                found.append(diff)
    return found


def page_diffs(diffs: Sequence[dict[str, Any]], runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The diffs as the page reads them: each flipped task also carries ``k``, its session's position in the
    page's session list (for the links to its trajectories)."""
    by_key = {run.key: run for run in runs}
    out = []
    for diff in diffs:
        dataset = by_key[diff["a"]].dataset
        flipped = [{**task, "k": dataset.offset + dataset.index[task["id"]]} for task in diff["flipped"]]
        out.append({**diff, "flipped": flipped})
    return out


def json_diffs(diffs: Sequence[dict[str, Any]], runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The diffs as ``report.json`` writes them: the runs named by their labels, as the comparisons are."""
    labels = {run.key: run.label for run in runs}
    return [{**diff, "a": labels[diff["a"]], "b": labels[diff["b"]]} for diff in diffs]
