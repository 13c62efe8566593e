"""Build a report from run folders: ``index.html``, ``report.md``, CSV tables, ``report.json`` and plot files.

Entry point: :func:`build_report` (used by ``wtb report`` and ``wtb eval --report``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from wildtoolbench.bench.catalog import REPORT_TABLES, Metric
from wildtoolbench.bench.errors import CATEGORIES, CATEGORY_LABELS, PARAMETER_CATEGORIES
from wildtoolbench.bench.schema import TASK_TYPES, TURN_SUBTYPES
from wildtoolbench.bench.terms import FIXES
from wildtoolbench.common.files import atomic_write_text
from wildtoolbench.report import dataset_stats, plots
from wildtoolbench.report.content import (
    RULES,
    RULES_INTRO,
    Comparison,
    Report,
    RunFigures,
    comparability_note,
    comparable,
    grouped_accuracy,
    run_facts,
    shown_settings,
    side_fields,
    top_errors,
)
from wildtoolbench.report.diffs import json_diffs, page_diffs, report_diffs
from wildtoolbench.report.html import page_chunks
from wildtoolbench.report.markdown import report_markdown
from wildtoolbench.report.run_data import Run, session_transitions
from wildtoolbench.report.runs import load_runs
from wildtoolbench.report.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    SessionOutcomes,
    accuracy_intervals,
    paired_bootstrap,
)
from wildtoolbench.report.tables import (
    ERROR_EXTRA_KEYS,
    TRIAL_COLUMNS,
    Row,
    error_rows,
    leaderboard_rows,
    orchestration_rows,
    paper_data,
    rows_csv,
    run_values,
    table_columns,
    tasks_csv,
    trial_figures,
)

FILES = ("index.html", "report.md", "leaderboard.csv", "orchestration.csv", "errors.csv", "tasks.csv", "report.json")
"""The files a report folder holds (plus ``plots/*.svg``)."""


def scoring_comparisons(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Reference and fixed scoring side by side, with every task whose label flips and the fix responsible
    (docs/fixed-mode.md §10).

    Two kinds of entry: a reference run with its ``result.jsonl`` is rescored in fixed mode (scoring
    fixes 5-8, no model calls); and a reference run and a ``--scoring fixed`` run of the same model on
    the same dataset are compared (fixes 1-8).

    Returns:
        ``[{"reference": run key, "fixed": run key or None, "kind": "rescoring"|"runs", "sessions",
        "tasks", "reference_correct", "fixed_correct", "by_fix": {fix: flips}, "flips": [...]}]``
        (flips as :func:`wildtoolbench.bench.compare.compare_run` gives them).

    Raises:
        ReportError: a result file cannot be compared (named with its line).
    """
    from wildtoolbench.bench.schema import DatasetError
    from wildtoolbench.common.run_folder import RESULT_FILE
    from wildtoolbench.report.run_data import ReportError
    from wildtoolbench.score.run import compare_run_files

    entries = []
    tasks = {run.key: len(run.tasks) // max(len(run.session_ids), 1) for run in runs}
    references = [run for run in runs if run.scoring == "reference" and (run.path / RESULT_FILE).is_file()]
    for reference in references:
        partners = [None] + [
            run
            for run in runs
            if run.scoring == "fixed"
            and run.model == reference.model
            and run.dataset is reference.dataset
            and (run.path / RESULT_FILE).is_file()
        ]
        for fixed in partners:
            try:
                found = compare_run_files(
                    reference.dataset.path,
                    reference.path / RESULT_FILE,
                    None if fixed is None else fixed.path / RESULT_FILE,
                    tasks=tasks[reference.key],
                )
            except DatasetError as exc:
                raise ReportError("; ".join(str(issue) for issue in exc.issues)) from None
            entries.append(
                {
                    "reference": reference.key,
                    "fixed": None if fixed is None else fixed.key,
                    "kind": "rescoring" if fixed is None else "runs",
                    **found,
                }
            )
    return entries


def session_outcomes(run: Run) -> SessionOutcomes:
    """Per-session correct/total task counts of a run, in ``score.jsonl`` order."""
    correct: dict[str, int] = {}
    total: dict[str, int] = {}
    for fact in run.tasks:
        correct[fact.session_id] = correct.get(fact.session_id, 0) + int(fact.correct)
        total[fact.session_id] = total.get(fact.session_id, 0) + 1
    ids = run.session_ids
    return SessionOutcomes.from_lists(ids, [correct[i] for i in ids], [total[i] for i in ids])


def _interval_list(interval: Interval) -> list[float]:
    return [interval.value, interval.low, interval.high]


def _transition_counts(run: Run) -> dict[int, tuple[int, int]]:
    counts: dict[int, list[int]] = {}
    for fact in run.tasks:
        session = run.dataset.sessions[run.dataset.index[fact.session_id]]
        entry = counts.setdefault(session_transitions(session["english_task_types"]), [0, 0])
        entry[0] += int(fact.correct)
        entry[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}


def _grouped_json(groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {k: {"correct": v["correct"], "n": v["n"], **_interval_json(v["interval"])} for k, v in groups.items()}


def _table_data(rows: Sequence[Row], columns: Sequence[Metric], ranked: bool) -> dict[str, Any]:
    """One table of the page: its columns' keys, titles and headers (the catalog's, docs/metrics.md §8) and rows."""
    return {
        "keys": [c.key for c in columns],
        "labels": {c.key: c.description for c in columns},
        "short": {c.key: c.short for c in columns},
        "ranked": ranked,
        "rows": [
            {
                "model": r.model,
                "source": r.source,
                "group": r.group,
                "run": r.run,
                "rank": r.rank,
                "values": dict(r.values),
                "extra": r.extra,
                "unranked": r.unranked,
            }
            for r in rows
        ],
    }


def _tokens(run: Run) -> tuple[int | None, str]:
    totals = (run.summary or {}).get("selected_sessions") or (run.summary or {}).get("this_run")
    tin = sum(t.input_tokens for t in run.tasks)
    tout = sum(t.output_tokens for t in run.tasks)
    requests = totals.get("requests") if isinstance(totals, dict) else None
    return requests, f"{tin:,} / {tout:,}"


def _rules_html() -> str:
    items = "".join(
        f"<li><b>{escape(CATEGORY_LABELS[k])}</b> (<code>{k}</code>): {escape(text)}</li>" for k, text in RULES
    )
    return f"<p>{escape(RULES_INTRO)}</p><ul>{items}</ul>"


def _session_block(session: dict[str, Any], trajectories: dict[str, str]) -> str:
    """A session's block: both language sides (``en``, ``zh``: env, tools, tasks, answers, types, subtypes) and
    the runs' compact trajectories."""
    gold = {"id": session["id"], "en": side_fields(session, "en"), "zh": side_fields(session, "zh")}
    runs = ",".join(f"{json.dumps(key)}:{text}" for key, text in trajectories.items())
    return '{"s":' + json.dumps(gold, ensure_ascii=False, separators=(",", ":")) + ',"r":{' + runs + "}}"


def build_report(
    run_dirs: Sequence[os.PathLike[str] | str],
    out_dir: os.PathLike[str] | str,
    *,
    dataset: os.PathLike[str] | str | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    title: str | None = None,
    audit: bool = False,
    errata: os.PathLike[str] | str | None = None,
) -> Report:
    """Read run folders and write the report into ``out_dir``.

    Args:
        run_dirs: run folders (``wtb eval --out``), each with ``metric.json`` and ``score.jsonl``.
        out_dir: report folder, created if needed; existing report files are replaced.
        dataset: dataset file for folders whose ``run.json`` names none (``wtb score`` output).
        seed: bootstrap seed (same seed and runs, same intervals).
        resamples: bootstrap resamples.
        title: page title (default: the run labels).
        audit: add the audit section (every dataset audited, docs/audit.md; :mod:`wildtoolbench.report.audit`).
        errata: an errata file: the audit section also shows each run scored without and with it
            (docs/audit.md §9.3); implies ``audit``.

    Returns:
        A :class:`Report` with the written paths, per-run intervals and paired comparisons.

    Raises:
        ReportError: a run folder or its dataset cannot be read (see :func:`wildtoolbench.report.runs.load_report_run`),
            or the errata file is bad or does not apply.
        ValueError: ``resamples`` < 1.
        OSError: the report folder cannot be written.
    """
    out = Path(out_dir)
    runs, datasets = load_runs(run_dirs, Path(dataset) if dataset is not None else None)
    paper = paper_data()
    columns = {table: table_columns(table, runs) for table in REPORT_TABLES}

    main_rows = leaderboard_rows(runs)
    orch_rows = orchestration_rows(runs)
    err_rows = error_rows(runs)
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    rank = {r.run: r.rank for r in main_rows if r.run}
    outcomes = {run.key: session_outcomes(run) for run in runs}
    figures = {}
    for run in runs:
        intervals = accuracy_intervals(outcomes[run.key])
        figures[run.key] = RunFigures(intervals["task"], intervals["session"], rank.get(run.key))
    scoring = scoring_comparisons(runs)
    comparisons = []
    refused = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            why = comparable(a, b)
            if why:
                if a.dataset is b.dataset:  # same sessions: say why they are not paired
                    refused.append({"a": a.key, "b": b.key, "why": why})
                continue
            difference = paired_bootstrap(outcomes[a.key], outcomes[b.key], resamples=resamples, seed=seed)
            if difference is not None:
                comparisons.append(Comparison(a, b, difference))
    groups = {run.key: {g: grouped_accuracy(run, g) for g in ("type", "position")} for run in runs}
    diffs = report_diffs(runs)

    trial_runs = [(index, run) for index, run in enumerate(runs) if run.trials is not None]
    figures_svg = {
        "order": plots.accuracy_by_order(
            [(run.label, groups[run.key]["position"]) for run in runs],
            [[row[k] for k in ("t1", "t2", "t3", "t4")] for row in paper["main"]],
        ),
        "type": plots.accuracy_by_type([(run.label, groups[run.key]["type"]) for run in runs]),
        "transitions": plots.accuracy_by_transitions(
            [(run.label, _transition_counts(run)) for run in runs],
            {
                int(k): v
                for k, v in dataset_stats.dataset_statistics(
                    [runs[0].dataset.sessions[runs[0].dataset.index[s]] for s in runs[0].session_ids]
                )["transitions"].items()
            },
        ),
        "errors": plots.error_distribution(
            [(r.model, r.values, r.extra.get("failed_tasks", 0)) for r in err_rows if r.source == "run"],
            paper["errors"],
        ),
        "scatter": plots.task_vs_session(
            [
                (
                    run.label,
                    figures[run.key].task.value * 100,
                    figures[run.key].session.value * 100,
                    len(run.session_ids),
                )
                for run in runs
            ],
            [(row["model"], row["task"], row["session"]) for row in paper["main"]],
        ),
    }
    if trial_runs:  # runs of `wtb eval --trials`: the pass^k curve (docs/trials.md §3)
        figures_svg["passk"] = plots.pass_hat_k_curve(
            [(index, run.label, run.trials["task"].get("pass_hat_k", {})) for index, run in trial_runs]
        )

    stats = {d.key: dataset_stats.dataset_statistics(d.sessions) for d in datasets}
    coverage = {d.key: dataset_stats.dataset_coverage(d.sessions) for d in datasets}
    audit_data = None
    if audit or errata is not None:
        from wildtoolbench.report.audit import audit_section

        audit_data = audit_section(runs, datasets, errata)
    type_index = {t: i for i, t in enumerate(TASK_TYPES)}
    subtype_index = {t: i for i, t in enumerate(TURN_SUBTYPES)}
    sessions_rows = []
    for number, d in enumerate(datasets):
        for s in d.sessions:
            sessions_rows.append(
                [
                    s["id"],
                    number,
                    [type_index[t] for t in s["english_task_types"]],
                    len(s["english_tools"]),
                    session_transitions(s["english_task_types"]),
                    [subtype_index[t] for t in s["english_turn_subtypes"]],
                    search_text(s),
                ]
            )
    category_index = {c: i for i, c in enumerate(CATEGORIES)}
    task_rows = []
    for run_number, run in enumerate(runs):
        for fact in run.tasks:
            k = run.dataset.offset + run.dataset.index[fact.session_id]
            task_rows.append(
                [
                    run_number,
                    k,
                    fact.task_idx,
                    int(fact.correct),
                    category_index.get(fact.category, -1) if fact.category else -1,
                    fact.steps,
                    int(fact.optimal),
                    -1 if fact.failing_step is None else fact.failing_step,
                    fact.reason or "",
                ]
            )

    page_runs = []
    for number, run in enumerate(runs):
        requests, tokens = _tokens(run)
        page_runs.append(
            {
                "key": run.key,
                "label": run.label,
                "model": run.model,
                "spec": run.spec,
                "lang": run.language,
                "scoring": run.scoring,
                "date": run.date,
                "version": run.version,
                "settings": shown_settings(run),
                "datasetName": run.dataset.path.name,
                "datasetSha": run.dataset.sha256,
                "official": run.dataset.official,
                "datasetSessions": len(run.dataset.sessions),
                "unranked": run.rank_exclusions(),
                "op": run_value(run, "op", "orchestration"),
                "ap": run_value(run, "ap", "orchestration"),
                "topErrors": top_errors(run),
                "byType": {
                    k: [v["correct"], v["n"], v["interval"].low, v["interval"].high]
                    for k, v in groups[run.key]["type"].items()
                },
                "byPosition": {
                    k: [v["correct"], v["n"], v["interval"].low, v["interval"].high]
                    for k, v in groups[run.key]["position"].items()
                },
                "color": plots.run_color(number),
                "marker": plots.run_marker_name(number),
                "dir": str(run.path),
                "datasetPath": str(run.dataset.path),
                "sessions": len(run.session_ids),
                "tasks": len(run.tasks),
                "failed": run.failed(),
                "task": _interval_list(figures[run.key].task),
                "session": _interval_list(figures[run.key].session),
                "rank": figures[run.key].rank,
                "requests": requests,
                "tokens": tokens,
                "rawResults": run.raw_results,
            }
        )
    title = title or "WildToolBench report: " + ", ".join(run.label for run in runs)
    data = {
        "title": title,
        "paperSource": paper["source"],
        "paperModels": len(paper["main"]),
        "seed": seed,
        "resamples": resamples,
        "runs": page_runs,
        "comparisons": [
            {
                "a": c.a.key,
                "b": c.b.key,
                "sessions": c.difference.sessions,
                "task": _interval_list(c.difference.task),
                "session": _interval_list(c.difference.session),
                "verdict": c.verdict(),
            }
            for c in comparisons
        ],
        "refused": refused,
        "diffs": [{k: v for k, v in d.items() if k != "flipped"} for d in diffs],
        "fixes": {str(k): v for k, v in FIXES.items()},
        "tables": {
            "main": _table_data(main_rows, columns["main"], True),
            "orchestration": _table_data(orch_rows, columns["orchestration"], True),
            "errors": _table_data(err_rows, columns["errors"], False),
        },
        "plots": figures_svg,
        "trialsHtml": trials_html(runs),
        "datasets": [
            {
                "key": d.key,
                "path": str(d.path),
                "offset": d.offset,
                "sha256": d.sha256,
                "stats": stats[d.key],
                "coverage": coverage[d.key],
                "plot": plots.dataset_panels(stats[d.key]),
            }
            for d in datasets
        ],
        "sessions": sessions_rows,
        "audit": audit_data,
        "types": list(TASK_TYPES),
        "typeShort": [plots.TYPE_SHORT[t] for t in TASK_TYPES],
        "subtypes": list(TURN_SUBTYPES),
        "categories": [
            [c, CATEGORY_LABELS[c], "parameter" if c in PARAMETER_CATEGORIES else "action"] for c in CATEGORIES
        ],
        "tasks": task_rows,
        "rulesHtml": _rules_html(),
        "comparability": comparability_note(runs),
        "scoring": [
            {
                **{k: v for k, v in entry.items() if k != "flips"},
                "flips": [
                    [f["id"], f["task_idx"], f["reference_label"], f["fixed_label"], f["fixes"], f["reason"]]
                    for f in entry["flips"]
                ],
            }
            for entry in scoring
        ],
    }

    def blocks():
        for d in datasets:
            for position, s in enumerate(d.sessions):
                trajectories = {
                    run.key: run.trajectories[s["id"]]
                    for run in runs
                    if run.dataset is d and s["id"] in run.trajectories
                }
                yield d.offset + position, _session_block(s, trajectories)

    out.mkdir(parents=True, exist_ok=True)
    written = []
    index = out / "index.html"
    tmp = out / ".index.html.tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for chunk in page_chunks(title, data, blocks(), [d["flipped"] for d in page_diffs(diffs, runs)]):
            handle.write(chunk)
    os.replace(tmp, index)
    written.append(index)

    report = Report(out, written, runs, figures, comparisons, scoring, refused, groups, diffs, audit_data)
    texts = {
        "leaderboard.csv": rows_csv(main_rows, [c.key for c in columns["main"]]),
        "orchestration.csv": rows_csv(orch_rows, [c.key for c in columns["orchestration"]]),
        "errors.csv": rows_csv(err_rows, [c.key for c in columns["errors"]], ERROR_EXTRA_KEYS),
        "tasks.csv": tasks_csv(runs),
        "report.md": report_markdown(report, main_rows, orch_rows, err_rows, stats, datasets, coverage),
        "report.json": json.dumps(report_json(report, err_rows, seed, resamples), indent=1, ensure_ascii=False) + "\n",
    }
    for name, svg in figures_svg.items():
        texts[f"plots/{name}.svg"] = svg + "\n"
    for name, text in texts.items():
        atomic_write_text(out / name, text)
        written.append(out / name)
    return report


def run_value(run: Run, key: str, table: str = "main") -> float | None:
    """A run's value (percent) for ``key`` in ``table`` (``main`` or ``orchestration``), ``None`` when it does not apply."""
    return run_values(run.metric, table, run.extra_metrics)[key]


def search_text(session: dict[str, Any]) -> str:
    """What the page's search looks through for a session, lower-cased: its id, the task texts and tool names
    of both sides."""
    names = [
        str((t.get("function") or {}).get("name") or "") for side in ("english_tools", "tools") for t in session[side]
    ]
    return "\n".join([session["id"], *session["english_tasks"], *session["tasks"], *names]).lower()


def type_values(run: Run) -> dict[str, float | None]:
    """A run's task accuracy (percent) per task type, ``None`` for a type without tasks."""
    out = {}
    for name in TASK_TYPES:
        bucket = (run.metric.get("task_type_info") or {}).get(name) or {}
        out[name] = bucket["accuracy"] * 100.0 if bucket.get("total_count") else None
    return out


def report_json(report: Report, err_rows: Sequence[Row], seed: int, resamples: int) -> dict[str, Any]:
    """The machine-readable figures of a report (``report.json``): per run its metric totals, intervals,
    rank, error counts and, when it has any, its extra metrics (``summary_metrics.json["extra"]``,
    docs/metrics.md §8); the runs table's facts (:func:`wildtoolbench.report.content.run_facts`); per task type and
    position the counts and intervals; the paired comparisons and the pairs not compared; the interval
    methods and bootstrap settings (docs/metrics.md §10); per comparable pair the tasks that flipped with
    their first divergent step (``diffs``, :func:`wildtoolbench.report.diffs.report_diffs`, docs/diff.md §4); the audit
    section (``audit``, ``null`` without ``--audit``; :func:`wildtoolbench.report.audit.audit_section`, docs/audit.md)."""
    errors = {r.run: r for r in err_rows if r.run}
    labels = {run.key: run.label for run in report.runs}

    def facts(run: Run) -> dict[str, Any]:
        found = run_facts(run, report.figures[run.key])
        found["task_accuracy"] = _interval_json(found["task_accuracy"])
        found["session_accuracy"] = _interval_json(found["session_accuracy"])
        found["top_errors"] = [{"category": k, "tasks": n} for k, n in found["top_errors"]]
        found["errors"] = {k: errors[run.key].extra[f"{k}_count"] for k in CATEGORIES}
        found["task_type"] = _grouped_json(report.groups[run.key]["type"])
        found["task_position"] = _grouped_json(report.groups[run.key]["position"])
        if run.extra_metrics:
            found["extra_metrics"] = run.extra_metrics
        return found

    return {
        "intervals": {
            "level": 0.95,
            "proportions": "wilson",
            "task_accuracy": "wilson on the effective number of tasks (sessions as clusters)",
            "session_accuracy": "wilson on sessions",
        },
        "bootstrap": {
            "seed": seed,
            "resamples": resamples,
            "level": 0.95,
            "unit": "session",
            "used_for": "paired differences",
        },
        "rank": "1 + the paper's models strictly better by session then task accuracy; null when not ranked",
        "runs": [facts(run) for run in report.runs],
        "comparisons": [
            {
                "a": c.a.label,
                "b": c.b.label,
                "sessions": c.difference.sessions,
                "task_accuracy_difference": _interval_json(c.difference.task),
                "session_accuracy_difference": _interval_json(c.difference.session),
                "within_noise": {
                    "task": c.difference.task.contains_zero(),
                    "session": c.difference.session.contains_zero(),
                },
                "verdict": c.verdict(),
            }
            for c in report.comparisons
        ],
        "not_compared": [{"a": labels[r["a"]], "b": labels[r["b"]], "why": r["why"]} for r in report.refused],
        "scoring": report.scoring,
        "diffs": json_diffs(report.diffs, report.runs),
        "audit": report.audit,
    }


def _interval_json(interval: Interval) -> dict[str, float]:
    return {"value": interval.value, "low": interval.low, "high": interval.high}


def trials_html(runs: Sequence[Run]) -> str:
    """The repeated-trials tables as HTML for the page's plots view (escaped; ``""`` when no run has trials)."""
    summary, header, flips = trial_figures(runs)
    if not summary:
        return ""

    def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
        cells = "".join(f"<th>{escape(h)}</th>" for h in head)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"

    return (
        '<h3>Repeated trials</h3><p class="note">pass^k: all k trials of a task correct (unbiased estimate, '
        "docs/trials.md §3); flip rate: tasks whose verdict differs between trials.</p>"
        + table(TRIAL_COLUMNS, summary)
        + "<h3>Flip rate by task type</h3>"
        + table(["task type", *header], flips)
    )
