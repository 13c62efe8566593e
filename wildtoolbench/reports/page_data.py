"""The data the report page (``index.html``) is built from: one entry per run, the tables, the sessions'
and tasks' rows, the session blocks, the repeated-trials tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from wildtoolbench.bench.catalog import Metric
from wildtoolbench.bench.errors import CATEGORIES, CATEGORY_LABELS
from wildtoolbench.bench.schema import TASK_TYPES, TURN_SUBTYPES
from wildtoolbench.common.shareable import shareable_path, shareable_text
from wildtoolbench.reports import plots
from wildtoolbench.reports.content import (
    RULES,
    RULES_INTRO,
    Comparison,
    RunFigures,
    run_scorings,
    shown_settings,
    side_fields,
    top_errors,
)
from wildtoolbench.reports.plot_style import run_color, run_marker_name
from wildtoolbench.reports.run_data import Dataset, Run, session_transitions
from wildtoolbench.reports.stats import (
    Interval,
)
from wildtoolbench.reports.tables import (
    TRIAL_COLUMNS,
    Row,
    run_values,
    trial_figures,
)


def interval_list(interval: Interval) -> list[float]:
    """An interval as the page stores it: ``[value, low, high]``."""
    return [interval.value, interval.low, interval.high]


def table_data(rows: Sequence[Row], columns: Sequence[Metric], ranked: bool) -> dict[str, Any]:
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


def rules_html() -> str:
    """The error categories' rules (docs/errors.md) as the page's HTML list, escaped."""
    items = "".join(
        f"<li><b>{escape(CATEGORY_LABELS[k])}</b> (<code>{k}</code>): {escape(text)}</li>" for k, text in RULES
    )
    return f"<p>{escape(RULES_INTRO)}</p><ul>{items}</ul>"


def session_block(session: dict[str, Any], trajectories: dict[str, str]) -> str:
    """A session's block: both language sides (``en``, ``zh``: env, tools, tasks, answers, types, subtypes) and
    the runs' compact trajectories."""
    gold = {"id": session["id"], "en": side_fields(session, "en"), "zh": side_fields(session, "zh")}
    runs = ",".join(f"{json.dumps(key)}:{text}" for key, text in trajectories.items())
    return '{"s":' + json.dumps(gold, ensure_ascii=False, separators=(",", ":")) + ',"r":{' + runs + "}}"


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


def page_run(number: int, run: Run, groups: dict[str, Any], figures: RunFigures) -> dict[str, Any]:
    """The page's entry of run ``number``: its identity, dataset, settings, figures with their intervals
    (``groups``: its accuracy by task type and position; ``figures``: its intervals and rank), colour and marker."""
    requests, tokens = _tokens(run)
    return {
        "key": run.key,
        "label": run.label,
        "model": run.model,
        "spec": shareable_text(run.spec),  # no absolute path of this machine (docs/cli.md §4)
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
        "byType": {k: [v["correct"], v["n"], v["interval"].low, v["interval"].high] for k, v in groups["type"].items()},
        "byPosition": {
            k: [v["correct"], v["n"], v["interval"].low, v["interval"].high] for k, v in groups["position"].items()
        },
        "color": run_color(number),
        "marker": run_marker_name(number),
        "dir": shareable_path(run.path),
        "datasetPath": shareable_path(run.dataset.path),
        "sessions": len(run.session_ids),
        "tasks": len(run.tasks),
        "failed": run.failed(),
        "task": interval_list(figures.task),
        "session": interval_list(figures.session),
        "rank": figures.rank,
        "requests": requests,
        "tokens": tokens,
        "rawResults": run.raw_results,
        "scorings": run_scorings(run),
    }


def page_session_rows(datasets: Sequence[Dataset]) -> list[list[Any]]:
    """One row per session of every dataset, in page order: id, dataset number, task type indexes, tool count,
    instruction transitions, turn subtype indexes, search text."""
    type_index = {t: i for i, t in enumerate(TASK_TYPES)}
    subtype_index = {t: i for i, t in enumerate(TURN_SUBTYPES)}
    rows = []
    for number, d in enumerate(datasets):
        for s in d.sessions:
            rows.append(
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
    return rows


def page_task_rows(runs: Sequence[Run]) -> list[list[Any]]:
    """One row per scored task of every run: run number, session position, task index, correct, error category
    index (-1: none), steps, optimal, failing step (-1: none), reason."""
    category_index = {c: i for i, c in enumerate(CATEGORIES)}
    rows = []
    for run_number, run in enumerate(runs):
        for fact in run.tasks:
            k = run.dataset.offset + run.dataset.index[fact.session_id]
            rows.append(
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
    return rows


def page_comparisons(comparisons: Sequence[Comparison]) -> list[dict[str, Any]]:
    """The page's paired comparisons: run keys, sessions, the task and session accuracy differences
    (value, low, high) and the verdict."""
    return [
        {
            "a": c.a.key,
            "b": c.b.key,
            "sessions": c.difference.sessions,
            "task": interval_list(c.difference.task),
            "session": interval_list(c.difference.session),
            "verdict": c.verdict(),
        }
        for c in comparisons
    ]


def page_datasets(datasets: Sequence[Dataset], stats: dict[str, Any], coverage: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's datasets: key, path, offset, sha256, statistics, coverage and the statistics' plot (SVG)."""
    return [
        {
            "key": d.key,
            "path": shareable_path(d.path),
            "offset": d.offset,
            "sha256": d.sha256,
            "stats": stats[d.key],
            "coverage": coverage[d.key],
            "plot": plots.dataset_panels(stats[d.key]),
        }
        for d in datasets
    ]


def page_scoring(scoring: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's scoring comparisons (:func:`wildtoolbench.reports.build.scoring_comparisons`), each flip as a row:
    id, task index, reference label, fixed label, fixes, reason."""
    return [
        {
            **{k: v for k, v in entry.items() if k != "flips"},
            "flips": [
                [f["id"], f["task_idx"], f["reference_label"], f["fixed_label"], f["fixes"], f["reason"]]
                for f in entry["flips"]
            ],
        }
        for entry in scoring
    ]
