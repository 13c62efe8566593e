"""``report.md``: the report's tables and figures as Markdown (readable on GitHub or in a terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wildtoolbench.bench.catalog import Metric
from wildtoolbench.bench.errors import CATEGORY_LABELS
from wildtoolbench.bench.schema import TASK_TYPES
from wildtoolbench.report.content import RULES, RULES_INTRO, Report, comparability_note, run_facts
from wildtoolbench.report.escape import markdown_code, markdown_text
from wildtoolbench.report.tables import TRIAL_COLUMNS, Row, format_percent, paper_data, table_columns, trial_figures

if TYPE_CHECKING:
    from wildtoolbench.report.run_data import Dataset

FAILED_TASKS_LISTED = 100
"""Failed tasks listed per run in report.md (all of them are in tasks.csv and the page)."""


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], right: int = 0) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" if i < len(header) - right else "---:" for i in range(len(header))) + "|")
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    return lines


def _percent(ratio: float) -> str:
    return f"{ratio * 100:.2f}%"


def _legend(columns: Sequence[Metric]) -> list[str]:
    return ["Columns: " + "; ".join(f"{c.short} = {c.description}" for c in columns) + ".", ""]


SIDES = {"en": "English", "zh": "Chinese"}


def rank_text(rank: int | None, unranked: Sequence[str], models: int) -> str:
    """A run's rank as the report writes it: ``"43 of 58"`` (among the paper's ``models`` and the run), or
    ``"unranked (why)"`` (docs/metrics.md §10)."""
    if rank is None:
        return f"unranked ({', '.join(unranked)})" if unranked else "unranked"
    return f"{rank} of {models + 1}"


def _ranked(rows: Sequence[Row], keys: Sequence[str]) -> list[list[Any]]:
    out = []
    for row in rows:
        name = f"**{markdown_text(row.model)}** (ours)" if row.source == "run" else markdown_text(row.model)
        if row.unranked:
            name += " (unranked: " + markdown_text(", ".join(row.unranked)) + ")"
        out.append(
            [
                row.rank if row.rank is not None else "–",
                name,
                markdown_text(row.group),
                *(format_percent(row.values.get(k)) for k in keys),
            ]
        )
    return out


def report_markdown(
    report: Report,
    main_rows: Sequence[Row],
    orch_rows: Sequence[Row],
    err_rows: Sequence[Row],
    stats: Mapping[str, Mapping[str, Any]],
    datasets: Sequence[Dataset],
    coverage: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The Markdown text of ``report.md``.

    Args:
        report: the built report (runs, intervals, comparisons).
        main_rows, orch_rows, err_rows: the three tables (:mod:`wildtoolbench.report.tables`).
        stats: dataset key -> :func:`wildtoolbench.report.dataset_stats.dataset_statistics`.
        datasets: the datasets of the runs.
        coverage: dataset key -> :func:`wildtoolbench.report.dataset_stats.dataset_coverage` (docs/coverage.md), shown
            under each dataset's statistics when given.
    """
    paper = paper_data()
    main, orchestration, errors = (table_columns(t, report.runs) for t in ("main", "orchestration", "errors"))
    lines = ["# WildToolBench report", ""]
    lines.append("Open `index.html` for the interactive version (sortable tables, dataset browser, trajectories).")
    lines.append("")
    lines += ["## Runs", ""]
    rows = []
    for run in report.runs:
        facts = run_facts(run, report.figures[run.key])
        task, session = facts["task_accuracy"], facts["session_accuracy"]
        dataset = facts["dataset"]
        settings = ", ".join(f"{k}={v}" for k, v in facts["settings"].items())
        rows.append(
            [
                markdown_text(run.label),
                markdown_code(facts["model_spec"] or run.model),
                SIDES.get(run.language, run.language),
                run.scoring,
                f"{markdown_text(dataset['name'])} ({len(run.session_ids)} of {dataset['sessions']} sessions"
                f"{', official' if dataset['official'] else ''}; sha256 {dataset['sha256'][:12]})",
                facts["date"],
                markdown_text(facts["harness_version"] or "?"),
                markdown_text(settings),
                f"{_percent(task.value)} [{_percent(task.low)}, {_percent(task.high)}]",
                f"{_percent(session.value)} [{_percent(session.low)}, {_percent(session.high)}]",
                format_percent(facts["op"]),
                format_percent(facts["ap"]),
                ", ".join(f"{CATEGORY_LABELS[k]} {n}" for k, n in facts["top_errors"]) or "none",
                rank_text(facts["rank"], facts["unranked"], len(paper["main"])),
            ]
        )
    note = comparability_note(report.runs)
    if note:
        lines += [f"**{markdown_text(note)}**", ""]
    lines += _table(
        [
            "run",
            "model spec",
            "side",
            "scoring",
            "dataset",
            "date (UTC)",
            "harness",
            "settings",
            "task accuracy [95% CI]",
            "session accuracy [95% CI]",
            "OP",
            "AP",
            "top error categories (tasks)",
            f"rank among the paper's {len(paper['main'])} models",
        ],
        rows,
    )
    lines += [
        "",
        "The brackets are 95% Wilson score intervals (docs/metrics.md §10): session accuracy on the sessions, task "
        "accuracy on the effective number of tasks (the tasks of a session are not independent; sessions are the "
        "clusters). Another draw of sessions like these could plausibly give any accuracy inside the interval.",
        "",
    ]
    lines += ["## Accuracy by task type and position", ""]
    header = ["run", *TASK_TYPES, *(f"task {i}" for i in range(1, 5))]
    rows = []
    for run in report.runs:
        groups = report.groups.get(run.key, {})
        cells = []
        for group, keys in (("type", TASK_TYPES), ("position", [f"t{i}" for i in range(1, 5)])):
            for key in keys:
                found = groups.get(group, {}).get(key)
                cells.append(
                    ""
                    if found is None
                    else f"{_percent(found['interval'].value)} of {found['n']} [{_percent(found['interval'].low)}, "
                    f"{_percent(found['interval'].high)}]"
                )
        rows.append([markdown_text(run.label), *cells])
    lines += _table(header, rows)
    lines += [
        "",
        "Each cell: task accuracy of n tasks [95% interval, as above]; empty where the run has no task of that kind.",
        "",
    ]
    if report.comparisons:
        lines += ["## Paired differences", ""]
        rows = []
        for c in report.comparisons:
            d = c.difference
            rows.append(
                [
                    markdown_text(c.a.label),
                    markdown_text(c.b.label),
                    d.sessions,
                    f"{d.task.value * 100:+.2f} [{d.task.low * 100:+.2f}, {d.task.high * 100:+.2f}]",
                    f"{d.session.value * 100:+.2f} [{d.session.low * 100:+.2f}, {d.session.high * 100:+.2f}]",
                    c.verdict(),
                ]
            )
        lines += _table(
            ["A", "B", "shared sessions", "task acc. A − B, pp [95% CI]", "session acc. A − B, pp [95% CI]", "verdict"],
            rows,
        )
        lines += [
            "",
            "Paired bootstrap: each resample draws the same sessions for both runs. A difference whose "
            "interval holds 0 is within noise: these sessions cannot tell the two runs apart.",
            "",
        ]
    if report.refused:
        labels = {run.key: markdown_text(run.label) for run in report.runs}
        lines += ["Not compared (same sessions, but the difference would mix what it measures):", ""]
        lines += [f"- {labels[r['a']]} and {labels[r['b']]}: {markdown_text(r['why'])}" for r in report.refused]
        lines.append("")

    lines += [
        "## Leaderboard",
        "",
        f"Runs placed among the paper's {len(paper['main'])} models by session accuracy, then task "
        "accuracy; a rank is 1 + the paper's models strictly better (docs/metrics.md §10), and only runs in "
        "reference scoring of the English side on all official sessions get one. Percentages; empty where a run "
        f"has no task of that kind. Paper figures: {paper['source']}",
        "",
    ]
    lines += _legend(main)
    lines += _table(
        ["rank", "model", "group", *(c.short for c in main)],
        _ranked(main_rows, [c.key for c in main]),
        len(main),
    )
    lines += ["", "## Tool orchestration", "", "Ranked by multi-tool accuracy, then optimal path rate.", ""]
    lines += _legend(orchestration)
    lines += _table(
        ["rank", "model", "group", *(c.short for c in orchestration)],
        _ranked(orch_rows, [c.key for c in orchestration]),
        len(orchestration),
    )

    lines += [
        "",
        "## Error analysis",
        "",
        "Share of failed tasks per category, %; for runs the count follows in parentheses.",
        "",
    ]
    rows = []
    for row in err_rows:
        cells = []
        for column in errors:
            value = format_percent(row.values.get(column.key))
            cells.append(f"{value} ({row.extra[column.key + '_count']})" if row.source == "run" else value)
        name = f"**{markdown_text(row.model)}** (ours)" if row.source == "run" else markdown_text(row.model)
        rows.append([name, markdown_text(row.group), *cells, row.extra.get("failed_tasks", "")])
    lines += _table(["model", "group", *(c.label for c in errors), "failed tasks"], rows, len(errors) + 1)
    lines += ["", "How a category is assigned: " + RULES_INTRO, ""]
    lines += [f"- **{CATEGORY_LABELS[key]}** (`{key}`): {text}." for key, text in RULES]

    lines += [
        "",
        "## Failed tasks",
        "",
        f"First failing step and its reason (at most {FAILED_TASKS_LISTED} per run here; "
        "`tasks.csv` and the page list all of them).",
        "",
    ]
    for run in report.runs:
        failed = [t for t in run.tasks if not t.correct]
        lines += [f"### {markdown_text(run.label)}: {len(failed)} failed task{'' if len(failed) == 1 else 's'}", ""]
        if not failed:
            lines += ["None.", ""]
            continue
        rows = []
        for fact in failed[:FAILED_TASKS_LISTED]:
            k = run.dataset.offset + run.dataset.index[fact.session_id]
            link = f"[task {fact.task_idx + 1}](index.html#traj/{run.key}/{k}/{fact.task_idx})"
            step = "" if fact.failing_step is None else fact.failing_step
            category = CATEGORY_LABELS[fact.category or "call_error"]
            rows.append([markdown_text(fact.session_id), link, category, step, markdown_text(fact.reason or "")])
        lines += _table(["session", "task", "category", "step", "reason"], rows)
        if len(failed) > FAILED_TASKS_LISTED:
            lines.append(f"\n... and {len(failed) - FAILED_TASKS_LISTED} more in `tasks.csv`.")
        lines.append("")

    lines += ["## Dataset statistics", ""]
    for dataset in datasets:
        s = stats[dataset.key]
        lines += [
            f"{markdown_code(dataset.path)}: {s['sessions']} sessions, {s['tasks']} tasks, {s['calls']} gold tool calls, "
            f"{s['ask_nodes']} clarification questions.",
            "",
        ]
        for title, key in (
            ("task type", "task_types"),
            ("turn subtype", "turn_subtypes"),
            ("real calls per task", "calls_per_task"),
            ("calls per DAG layer", "layer_widths"),
            ("tools per session", "tools_per_session"),
            ("instruction transitions", "transitions"),
        ):
            lines += _table([title, "count"], [[markdown_text(k), v] for k, v in s[key].items()], 1) + [""]
        if coverage is not None:
            lines += coverage_markdown(coverage[dataset.key])

    lines += ["## Plots", ""]
    for name, caption in (
        ("order", "Accuracy by task position"),
        ("type", "Accuracy by task type"),
        ("transitions", "Accuracy by instruction transitions"),
        ("errors", "Error distribution"),
        ("scatter", "Task against session accuracy"),
    ):
        lines += [f"![{caption}](plots/{name}.svg)", ""]
    lines += trials_markdown(report)
    lines += scoring_markdown(report)
    lines += audit_markdown(report)
    return "\n".join(lines).rstrip() + "\n"


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
    lines += _table(["figure", "bucket", "this set", "official"], rows, 2) + [""]
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
            lines += _table(["kind", "errors", "warnings"], counts, 2) + [""]
        rows = [
            [markdown_text(session_id), "-" if task is None else task, kind, severity, markdown_text(message)]
            for session_id, _, found in entry["sessions"]
            for task, kind, severity, message in found
        ]
        if rows:
            lines += _table(["session", "task", "kind", "severity", "message"], rows[:AUDIT_FINDINGS_LISTED]) + [""]
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
            lines += _table(
                ["group", "metric", "without", "with errata"],
                [[section, name, f"{a} ({ca})", f"{b} ({cb})"] for section, name, a, ca, b, cb in entry["rows"]],
                2,
            ) + [""]
        for entry in errata["skipped"]:
            lines += [f"{markdown_text(labels[entry['key']])}: not rescored ({entry['why']}).", ""]
    return lines


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
                f"{_percent(entry['reference_correct'] / tasks)}",
                f"{_percent(entry['fixed_correct'] / tasks)}",
                len(entry["flips"]),
                by_fix,
            ]
        )
    lines += _table(
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
        lines += _table(["session", "task", "reference", "fixed", "fixes", "why"], flip_rows)
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
    lines += _table(list(TRIAL_COLUMNS), [[markdown_text(c) for c in row] for row in summary], 1)
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
    lines += _table(["task type", *(markdown_text(h) for h in header)], flips, 1)
    return lines + [""]
