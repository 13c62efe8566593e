"""The optional sections of ``report.md``: dataset coverage (docs/coverage.md), the audit (docs/audit.md),
accuracy under each scoring a run folder holds (docs/semantic-mode.md §4), reference against fixed scoring
(docs/fixed-mode.md §10) and repeated trials (docs/trials.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wildtoolbench.reports.content import Report, run_scorings, scoring_comparability
from wildtoolbench.reports.escape import markdown_code, markdown_text
from wildtoolbench.reports.markdown_tables import percent, table
from wildtoolbench.reports.tables import TRIAL_COLUMNS, trial_figures


def coverage_markdown(coverage: Mapping[str, Any]) -> list[str]:
    """A dataset's coverage against the official set's published figures and its diversity figures
    (docs/coverage.md §2-§8), as Markdown lines."""
    rows = [
        [
            markdown_text(r["figure"]),
            markdown_text(r["key"] or ""),
            r["this"],
            "-" if r["official"] is None else r["official"],
        ]
        for r in coverage["comparison"]
    ]
    stats = coverage["statistics"]
    messages = stats["messages"]
    similarity = messages["self_similarity"]
    arguments = stats["arguments"]

    def number(value: Any) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = ["Coverage beside the official set's published figures (`docs/coverage.md` of wtb):", ""]
    lines += table(["figure", "bucket", "this set", "official"], rows, 2) + [""]
    lines += [
        "Multi-Tool gold DAG shapes: "
        + ", ".join(f"{k} {v}" for k, v in stats["topology"]["multi_tool"].items() if v)
        + f"; tools called {stats['tools']['called']} of {stats['tools']['offered']} offered; "
        f"distinct-1/2/3 of the user messages {number(messages['distinct_1'])} / {number(messages['distinct_2'])} / "
        f"{number(messages['distinct_3'])}; self-similarity (bigram Jaccard, mean of pairs / mean nearest) "
        f"{number(similarity['mean_pairwise'])} / {number(similarity['mean_nearest'])}; gold argument values "
        f"{arguments['distinct']} distinct of {arguments['values']}.",
        "",
    ]
    return lines


AUDIT_FINDINGS_LISTED = 200
"""Findings listed in ``report.md``'s audit section (the page lists them all)."""


def audit_markdown(report: Report) -> list[str]:
    """The "Audit" section (``wtb report --audit``, docs/audit.md): findings per kind and severity and per
    session for each dataset, and each run's scores without and with errata when an errata file was given;
    no lines without the section."""
    audit = report.audit
    if audit is None:
        return []
    lines = ["## Audit", ""]
    for entry in audit["datasets"]:
        runs = f", failed_by_all over {', '.join(entry['runs'])}" if entry["runs"] else ""
        lines += [
            f"{markdown_code(entry['path'])} ({entry['language']} side{runs}): {entry['sessions_audited']} sessions "
            f"audited, {entry['findings']} finding(s) (`docs/audit.md` of wtb).",
            "",
        ]
        if entry["counts"]:
            counts = [[k, v.get("error", 0), v.get("warning", 0)] for k, v in entry["counts"].items()]
            lines += table(["kind", "errors", "warnings"], counts, 2) + [""]
        rows = [
            [markdown_text(session_id), "-" if task is None else task, kind, severity, markdown_text(message)]
            for session_id, _, found in entry["sessions"]
            for task, kind, severity, message in found
        ]
        if rows:
            lines += table(["session", "task", "kind", "severity", "message"], rows[:AUDIT_FINDINGS_LISTED]) + [""]
            if len(rows) > AUDIT_FINDINGS_LISTED:
                lines += [f"... and {len(rows) - AUDIT_FINDINGS_LISTED} more in `index.html` and `report.json`.", ""]
    errata = audit["errata"]
    if errata is not None:
        lines += [f"### Scores without and with errata ({markdown_code(errata['path'])})", ""]
        labels = {run.key: run.label for run in report.runs}
        for entry in errata["runs"]:
            lines += [
                f"{markdown_text(labels[entry['key']])}: {entry['excluded']} task(s) excluded, "
                f"{entry['argument_changes']} gold argument change(s) ({entry['rewritten']} logged gold call(s) "
                f"rewritten), {entry['pending']} pending, {entry['other_changes']} other correction(s) not "
                "reflected by rescoring.",
                "",
            ]
            lines += table(
                ["group", "metric", "without", "with errata"],
                [[section, name, f"{a} ({ca})", f"{b} ({cb})"] for section, name, a, ca, b, cb in entry["rows"]],
                2,
            ) + [""]
        for entry in errata["skipped"]:
            lines += [f"{markdown_text(labels[entry['key']])}: not rescored ({entry['why']}).", ""]
    return lines


def scorings_markdown(report: Report) -> list[str]:
    """The "Accuracy under each scoring" section: per run, task and session accuracy under every scoring its folder
    holds, with the comparability line (docs/semantic-mode.md §4); no lines when no folder holds two scorings."""
    per_run = [(run, run_scorings(run)) for run in report.runs]
    if all(len(found) < 2 for _, found in per_run):
        return []
    lines = ["## Accuracy under each scoring", ""]
    note = scoring_comparability(report.runs)
    if note:
        lines += [f"**{markdown_text(note)}**", ""]
    rows = [
        [
            markdown_text(run.label),
            entry["scoring"],
            entry["tasks"],
            "-" if entry["task_accuracy"] is None else percent(entry["task_accuracy"]),
            "-" if entry["session_accuracy"] is None else percent(entry["session_accuracy"]),
        ]
        for run, found in per_run
        for entry in found
    ]
    lines += table(["run", "scoring", "tasks", "task accuracy", "session accuracy"], rows)
    return lines + [""]


def scoring_markdown(report: Report, limit: int = 100) -> list[str]:
    """The "Reference and fixed scoring" section: task accuracy in both modes and the label flips with
    the fix responsible (docs/fixed-mode.md); no lines when nothing was compared."""
    if not report.scoring:
        return []
    labels = {run.key: markdown_text(run.label) for run in report.runs}
    lines = [
        "## Reference and fixed scoring",
        "",
        "Fixed mode corrects eight quirks of the published evaluation (docs/fixed-mode.md); its numbers are "
        "not comparable with the paper's. A rescoring applies fixes 5-8 to the same trajectories; a fixed "
        "run also applies the inference fixes 1-4.",
        "",
    ]
    rows = []
    for entry in report.scoring:
        fixed = "rescored" if entry["fixed"] is None else labels[entry["fixed"]]
        tasks = max(entry["tasks"], 1)
        by_fix = ", ".join(f"fix {fix}: {count}" for fix, count in entry["by_fix"].items()) or "none"
        rows.append(
            [
                labels[entry["reference"]],
                fixed,
                entry["tasks"],
                f"{percent(entry['reference_correct'] / tasks)}",
                f"{percent(entry['fixed_correct'] / tasks)}",
                len(entry["flips"]),
                by_fix,
            ]
        )
    lines += table(
        ["reference run", "fixed", "tasks", "task acc. reference", "task acc. fixed", "flips", "flips by fix"], rows
    )
    lines.append("")
    for entry in report.scoring:
        if not entry["flips"]:
            continue
        fixed = "rescored" if entry["fixed"] is None else labels[entry["fixed"]]
        lines += [f"### Flips: {labels[entry['reference']]} -> {fixed}", ""]
        flip_rows = [
            [
                markdown_text(f["id"]),
                f["task_idx"] + 1,
                markdown_text(f["reference_label"]),
                markdown_text(f["fixed_label"]),
                ", ".join(str(x) for x in f["fixes"]),
                markdown_text(f["reason"]),
            ]
            for f in entry["flips"][:limit]
        ]
        lines += table(["session", "task", "reference", "fixed", "fixes", "why"], flip_rows)
        if len(entry["flips"]) > limit:
            lines.append(f"... and {len(entry['flips']) - limit} more (report.json)")
        lines.append("")
    return lines


def trials_markdown(report: Report) -> list[str]:
    """The "Repeated trials" section (docs/trials.md §3-§5): per run with trials its K, task and session
    pass^1 and pass^K with intervals, the flip rate and stable share, the pass^k curve and the flip rate per
    task type; no lines when no run has trials."""
    summary, header, flips = trial_figures(report.runs)
    if not summary:
        return []
    lines = ["## Repeated trials", ""]
    lines += table(list(TRIAL_COLUMNS), [[markdown_text(c) for c in row] for row in summary], 1)
    lines += [
        "",
        "pass^k is the unbiased estimate that all k trials of a task are correct (tau-bench's estimator, "
        "docs/trials.md §3), with a 95% jackknife interval over sessions (§2); the flip rate is the share of tasks "
        "whose verdict differs between trials (§4). Trial 1 is the run's metric.json.",
        "",
        "![pass^k over trials](plots/passk.svg)",
        "",
        "### Flip rate by task type",
        "",
    ]
    lines += table(["task type", *(markdown_text(h) for h in header)], flips, 1)
    return lines + [""]
