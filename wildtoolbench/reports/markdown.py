"""``report.md``: the report's tables and figures as Markdown (readable on GitHub or in a terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wildtoolbench.bench.errors import CATEGORY_LABELS
from wildtoolbench.bench.schema import TASK_TYPES
from wildtoolbench.common.shareable import shareable_path
from wildtoolbench.reports.content import PAPER_SCORING_NOTE, RULES, RULES_INTRO, Report, comparability_note, run_facts
from wildtoolbench.reports.escape import markdown_code, markdown_text
from wildtoolbench.reports.markdown_sections import (
    audit_markdown,
    coverage_markdown,
    scoring_markdown,
    scorings_markdown,
    trials_markdown,
)
from wildtoolbench.reports.markdown_tables import SIDES, legend, percent, rank_text, ranked, table
from wildtoolbench.reports.tables import Row, format_percent, paper_data, table_columns

if TYPE_CHECKING:
    from wildtoolbench.reports.run_data import Dataset

FAILED_TASKS_LISTED = 100
"""Failed tasks listed per run in report.md (all of them are in tasks.csv and the page)."""


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
        main_rows, orch_rows, err_rows: the three tables (:mod:`wildtoolbench.reports.tables`).
        stats: dataset key -> :func:`wildtoolbench.reports.dataset_stats.dataset_statistics`.
        datasets: the datasets of the runs.
        coverage: dataset key -> :func:`wildtoolbench.reports.dataset_stats.dataset_coverage` (docs/coverage.md), shown
            under each dataset's statistics when given.
    """
    paper = paper_data()
    main, orchestration, errors = (table_columns(t, report.runs) for t in ("main", "orchestration", "errors"))
    lines = ["# WildToolBench report", ""]
    lines.append("Open `index.html` for the interactive version (sortable tables, dataset browser, trajectories).")
    lines.append("")
    lines += _runs_section(report, paper)
    lines += scorings_markdown(report)
    lines += _groups_section(report)
    lines += _comparisons_section(report)
    lines += _leaderboard_sections(main_rows, orch_rows, main, orchestration, paper)
    lines += _errors_section(err_rows, errors)
    lines += _failed_section(report)
    lines += _datasets_section(datasets, stats, coverage)
    lines += _plots_section()
    lines += trials_markdown(report)
    lines += scoring_markdown(report)
    lines += audit_markdown(report)
    return "\n".join(lines).rstrip() + "\n"


def _runs_section(report: Report, paper: Mapping[str, Any]) -> list[str]:
    """The runs table: identity, dataset, settings, accuracy with intervals, OP, AP, top errors, rank."""
    lines: list[str] = []
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
                f"{percent(task.value)} [{percent(task.low)}, {percent(task.high)}]",
                f"{percent(session.value)} [{percent(session.low)}, {percent(session.high)}]",
                format_percent(facts["op"]),
                format_percent(facts["ap"]),
                ", ".join(f"{CATEGORY_LABELS[k]} {n}" for k, n in facts["top_errors"]) or "none",
                rank_text(facts["rank"], facts["unranked"], len(paper["main"])),
            ]
        )
    note = comparability_note(report.runs)
    if note:
        lines += [f"**{markdown_text(note)}**", ""]
    lines += table(
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
    return lines


def _groups_section(report: Report) -> list[str]:
    """Accuracy by task type and by position, with intervals."""
    lines: list[str] = []
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
                    else f"{percent(found['interval'].value)} of {found['n']} [{percent(found['interval'].low)}, "
                    f"{percent(found['interval'].high)}]"
                )
        rows.append([markdown_text(run.label), *cells])
    lines += table(header, rows)
    lines += [
        "",
        "Each cell: task accuracy of n tasks [95% interval, as above]; empty where the run has no task of that kind.",
        "",
    ]
    return lines


def _comparisons_section(report: Report) -> list[str]:
    """The paired differences and the pairs not compared."""
    lines: list[str] = []
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
        lines += table(
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
    return lines


def _leaderboard_sections(
    main_rows: Sequence[Row],
    orch_rows: Sequence[Row],
    main: Sequence[Any],
    orchestration: Sequence[Any],
    paper: Mapping[str, Any],
) -> list[str]:
    """The leaderboard and the tool orchestration table, among the paper's models."""
    lines: list[str] = []
    lines += [
        "## Leaderboard",
        "",
        f"Runs placed among the paper's {len(paper['main'])} models by session accuracy, then task "
        "accuracy; a rank is 1 + the paper's models strictly better (docs/metrics.md §10), and only runs in "
        "reference scoring of the English side on all official sessions get one. Percentages; empty where a run "
        f"has no task of that kind. {PAPER_SCORING_NOTE} Paper figures: {paper['source']}",
        "",
    ]
    lines += legend(main)
    lines += table(
        ["rank", "model", "group", *(c.short for c in main)],
        ranked(main_rows, [c.key for c in main]),
        len(main),
    )
    lines += ["", "## Tool orchestration", "", "Ranked by multi-tool accuracy, then optimal path rate.", ""]
    lines += legend(orchestration)
    lines += table(
        ["rank", "model", "group", *(c.short for c in orchestration)],
        ranked(orch_rows, [c.key for c in orchestration]),
        len(orchestration),
    )
    return lines


def _errors_section(err_rows: Sequence[Row], errors: Sequence[Any]) -> list[str]:
    """The error analysis table and how a category is assigned."""
    lines: list[str] = []
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
    lines += table(["model", "group", *(c.label for c in errors), "failed tasks"], rows, len(errors) + 1)
    lines += ["", "How a category is assigned: " + RULES_INTRO, ""]
    lines += [f"- **{CATEGORY_LABELS[key]}** (`{key}`): {text}." for key, text in RULES]
    return lines


def _failed_section(report: Report) -> list[str]:
    """Each run's failed tasks with the first failing step and its reason."""
    lines: list[str] = []
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
            step = "" if fact.failing_step is None else fact.failing_step + 1  # docs/terms.md §5.1
            category = CATEGORY_LABELS[fact.category or "call_error"]
            rows.append([markdown_text(fact.session_id), link, category, step, markdown_text(fact.reason or "")])
        lines += table(["session", "task", "category", "step", "reason"], rows)
        if len(failed) > FAILED_TASKS_LISTED:
            lines.append(f"\n... and {len(failed) - FAILED_TASKS_LISTED} more in `tasks.csv`.")
        lines.append("")
    return lines


def _datasets_section(
    datasets: Sequence[Dataset],
    stats: Mapping[str, Mapping[str, Any]],
    coverage: Mapping[str, Mapping[str, Any]] | None,
) -> list[str]:
    """Each dataset's statistics and, when given, its coverage."""
    lines: list[str] = []
    lines += ["## Dataset statistics", ""]
    for dataset in datasets:
        s = stats[dataset.key]
        lines += [
            f"{markdown_code(shareable_path(dataset.path))}: {s['sessions']} sessions, {s['tasks']} tasks, {s['calls']} gold tool calls, "
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
            lines += table([title, "count"], [[markdown_text(k), v] for k, v in s[key].items()], 1) + [""]
        if coverage is not None:
            lines += coverage_markdown(coverage[dataset.key])
    return lines


def _plots_section() -> list[str]:
    """The plots, as links to their SVG files."""
    lines: list[str] = []
    lines += ["## Plots", ""]
    for name, caption in (
        ("order", "Accuracy by task position"),
        ("type", "Accuracy by task type"),
        ("transitions", "Accuracy by instruction transitions"),
        ("errors", "Error distribution"),
        ("scatter", "Task against session accuracy"),
    ):
        lines += [f"![{caption}](plots/{name}.svg)", ""]
    return lines
