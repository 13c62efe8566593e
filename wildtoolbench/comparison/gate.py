"""``wtb gate RUN --baseline RUN_B``: pass or fail a candidate run against a baseline run of the same sessions on
the paired difference of task accuracy, list the flipped tasks, and optionally write a Markdown summary for a
pull-request comment (docs/diff.md §6).

Exit status (docs/cli.md §2): 0 the gate passed; 1 the gate failed (stderr says why), or a run folder's score
file is bad; 2 the runs cannot be paired, or no dataset file fits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from wildtoolbench.bench.diff import REGRESSED, gate_decision
from wildtoolbench.common.exits import BAD_INPUT, BadConfiguration, BadInput, Failure
from wildtoolbench.common.files import atomic_write_text
from wildtoolbench.common.numbering import step_number, task_number
from wildtoolbench.comparison.diff import counts_line, flipped_lines, step_summary
from wildtoolbench.comparison.diff_command import read_diff
from wildtoolbench.comparison.runs import RunFolderError, RunsNotComparable, compare_runs

_out = Console(highlight=False, soft_wrap=True)

GATE_FAILED = BAD_INPUT
"""Exit status of a failed gate: 1, what CI takes as a failed step (docs/cli.md §2, docs/diff.md §6)."""
NAMES = ("baseline", "candidate")
"""The sides of the gate's diff: A is the baseline, B the candidate (a regression is correct -> wrong)."""
MARKDOWN_ROWS = 50
"""Flipped tasks listed in the Markdown summary at most (the rest are counted)."""


class GateFailed(Failure):
    """The candidate is worse than the baseline by the gate's rule: exit status 1 with these lines."""

    status = GATE_FAILED


def _points(value: float) -> str:
    return f"{value * 100:+.2f}"


def gate_report(
    candidate: Path, baseline: Path, max_drop: float | None, dataset: Path | None, scoring: str | None
) -> dict[str, Any]:
    """The comparison, the diff and the decision of the gate, as one JSON-ready dict (docs/diff.md §6).

    Returns:
        ``{"comparison": wildtoolbench.comparison.runs.compare_runs(candidate, baseline), "diff":
        wildtoolbench.comparison.diff.diff_runs(baseline, candidate), "decision": wildtoolbench.bench.diff.gate_decision(...)}``.

    Raises:
        BadInput: a score file is missing or malformed (exit 1). BadConfiguration: the runs cannot be
            paired, or no dataset file fits (exit 2).
    """
    try:
        comparison = compare_runs(candidate, baseline, scoring=scoring)
    except RunFolderError as exc:
        raise BadInput(*exc.issues) from None
    except RunsNotComparable as exc:
        raise BadConfiguration(*(f"error: not comparable: {reason}" for reason in exc.reasons)) from None
    diff = read_diff(baseline, candidate, dataset, scoring)
    return {"comparison": comparison, "diff": diff, "decision": gate_decision(comparison["task"], max_drop)}


def _rule(max_drop: float | None, level: int) -> str:
    rule = f"fail when the {level}% interval of candidate - baseline (task accuracy) lies below 0"
    return rule + (f", or when the drop exceeds {max_drop:g} points" if max_drop is not None else "")


def gate_lines(report: Mapping[str, Any]) -> list[str]:
    """The lines ``wtb gate`` prints (docs/diff.md §6): both runs, both accuracies with the difference and its
    interval, the rule, the flipped tasks (regressions first) and ``gate: PASS`` / ``gate: FAIL``; the reasons of
    a failure are not among them: they are the failure's own lines, printed once on stderr (:class:`GateFailed`)."""
    comparison, diff, decision = report["comparison"], report["diff"], report["decision"]
    level = round((1 - comparison["alpha"]) * 100)
    lines = [
        f"candidate: {comparison['a']['model_name']} ({comparison['a']['path']})",
        f"baseline:  {comparison['b']['model_name']} ({comparison['b']['path']})",
        f"{comparison['sessions']} paired sessions, {comparison['tasks']} tasks; scoring {comparison['scoring']}, "
        f"language {comparison['language']}",
    ]
    for name, key in (("task accuracy", "task"), ("session accuracy", "session")):
        row = comparison[key]
        lines.append(
            f"{name}: candidate {row['a'] * 100:.2f}%, baseline {row['b'] * 100:.2f}%, difference "
            f"{_points(row['value'])} points, {level}% interval [{_points(row['low'])}, {_points(row['high'])}]"
        )
    lines += [f"rule: {_rule(decision['max_drop'], level)}", counts_line(diff, NAMES)]
    regressions = {**diff, "flipped": sorted(diff["flipped"], key=lambda task: task["flip"] != REGRESSED)}
    lines += flipped_lines(regressions, None, NAMES)
    lines += ["", "gate: PASS" if decision["passed"] else "gate: FAIL"]
    return lines


def gate_markdown(report: Mapping[str, Any], rows: int = MARKDOWN_ROWS) -> str:
    """The summary ``--markdown`` writes, fit for a pull-request comment (docs/diff.md §6): the verdict, a table
    of both accuracies, the rule, and a table of the flipped tasks (regressions first, at most ``rows``) with
    each side's calls at the first divergent step. Text from the runs (model names, ids, calls, reasons) is
    escaped (:mod:`wildtoolbench.reports.escape`): it renders as text, never as HTML or a link."""
    from wildtoolbench.reports.escape import markdown_cell, markdown_code, markdown_text

    comparison, diff, decision = report["comparison"], report["diff"], report["decision"]
    level = round((1 - comparison["alpha"]) * 100)
    verdict = "passed" if decision["passed"] else "failed"
    lines = [
        f"### WildToolBench gate: {verdict}",
        "",
        f"Candidate {markdown_code(comparison['a']['model_name'])} against baseline "
        f"{markdown_code(comparison['b']['model_name'])}: {comparison['sessions']} paired sessions, "
        f"{comparison['tasks']} tasks, scoring {markdown_text(comparison['scoring'])}, "
        f"language {markdown_text(comparison['language'])}.",
        "",
        f"| | candidate | baseline | difference | {level}% interval |",
        "|---|---:|---:|---:|---|",
    ]
    for name, key in (("task accuracy", "task"), ("session accuracy", "session")):
        row = comparison[key]
        lines.append(
            f"| {name} | {row['a'] * 100:.2f}% | {row['b'] * 100:.2f}% | {_points(row['value'])} | "
            f"[{_points(row['low'])}, {_points(row['high'])}] |"
        )
    lines += ["", f"Rule: {markdown_text(_rule(decision['max_drop'], level))}."]
    lines += [f"- {markdown_text(reason)}" for reason in decision["reasons"]]
    counts = diff["counts"]
    lines += [
        "",
        f"**{counts['total']} tasks flipped**: {counts['regressed']} regressed (correct in the baseline, wrong in "
        f"the candidate), {counts['improved']} improved.",
    ]
    flipped = sorted(diff["flipped"], key=lambda task: task["flip"] != REGRESSED)
    if flipped:
        lines += [
            "",
            "| session | task | flip | first divergent step (baseline, candidate) | baseline | candidate |",
            "|---|---:|---|---|---|---|",
        ]
        for task in flipped[:rows]:
            step = task["first_divergent_step"]
            at = "-" if step is None else f"{step_number(step['a'])}, {step_number(step['b'])}"
            lines.append(
                f"| {markdown_cell(task['id'])} | {task_number(task['task'])} | {markdown_cell(task['flip'] or 'flipped')} | {at} | "
                f"{markdown_cell(step_summary(task['a_step']))} | {markdown_cell(step_summary(task['b_step']))} |"
            )
        if len(flipped) > rows:
            lines += ["", f"... and {len(flipped) - rows} more (`wtb diff` lists them all)."]
    return "\n".join(lines) + "\n"


def gate(
    run: Path,
    baseline: Path,
    max_drop: float | None = None,
    markdown_out: Path | None = None,
    json_out: Path | None = None,
    dataset: Path | None = None,
    scoring: str | None = None,
) -> None:
    """Gate the candidate run ``run`` against ``baseline``: print :func:`gate_lines`, write the Markdown summary
    to ``markdown_out`` and the whole report as JSON to ``json_out`` (atomically, pass or fail), and raise
    :class:`GateFailed` when the gate fails.

    Args:
        run, baseline: run folders of the same sessions.
        max_drop: the largest drop of task accuracy allowed, in percentage points (``--max-drop``).
        dataset: the dataset file of the gold DAGs; ``None``: the one ``run.json`` names.
        scoring: ``"reference"`` or ``"fixed"``; ``None``: the mode each folder's ``run.json`` names.

    Raises:
        GateFailed: the gate failed (exit 1). BadInput, BadConfiguration: as :func:`gate_report`; BadInput
            also when an output file cannot be written.
    """
    report = gate_report(run, baseline, max_drop, dataset, scoring)
    outputs = []
    if markdown_out is not None:
        outputs.append((markdown_out, gate_markdown(report)))
    if json_out is not None:
        outputs.append((json_out, json.dumps(report, indent=2, ensure_ascii=False) + "\n"))
    for path, text in outputs:
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            raise BadInput(f"{path}: cannot write: {exc}") from None
    _out.print("\n".join(gate_lines(report)), markup=False)
    if not report["decision"]["passed"]:
        raise GateFailed(*(f"gate failed: {reason}" for reason in report["decision"]["reasons"]))
