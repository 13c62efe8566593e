"""Build a report from run folders: ``index.html``, ``report.md``, CSV tables, ``report.json`` and plot files.

Entry point: :func:`build_report` (used by ``wtb report`` and ``wtb eval --report``). The page's data is
assembled by :mod:`wildtoolbench.reports.page_data`, ``report.json`` by :mod:`wildtoolbench.reports.report_json`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.catalog import REPORT_TABLES
from wildtoolbench.bench.errors import CATEGORIES, CATEGORY_LABELS, PARAMETER_CATEGORIES
from wildtoolbench.bench.schema import TASK_TYPES, TURN_SUBTYPES
from wildtoolbench.bench.strategy import FIXED
from wildtoolbench.bench.terms import FIXES
from wildtoolbench.common.files import atomic_write_text
from wildtoolbench.reports import dataset_stats, plots
from wildtoolbench.reports.ablation import Ablation, ablation_markdown, expand_folders, load_ablation, page_ablation
from wildtoolbench.reports.content import (
    PAPER_SCORING_NOTE,
    Comparison,
    Report,
    RunFigures,
    comparability_note,
    comparable,
    grouped_accuracy,
    scoring_comparability,
)
from wildtoolbench.reports.diffs import page_diffs, report_diffs
from wildtoolbench.reports.html import page_chunks
from wildtoolbench.reports.markdown import report_markdown
from wildtoolbench.reports.page_data import (
    page_comparisons,
    page_datasets,
    page_run,
    page_scoring,
    page_session_rows,
    page_task_rows,
    rules_html,
    session_block,
    table_data,
    trials_html,
)
from wildtoolbench.reports.plot_style import TYPE_SHORT
from wildtoolbench.reports.report_json import report_json
from wildtoolbench.reports.run_data import Dataset, Run, session_transitions
from wildtoolbench.reports.runs import load_runs
from wildtoolbench.reports.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    SessionOutcomes,
    accuracy_intervals,
    paired_bootstrap,
)
from wildtoolbench.reports.tables import (
    ERROR_EXTRA_KEYS,
    Row,
    error_rows,
    leaderboard_rows,
    orchestration_rows,
    paper_data,
    rows_csv,
    table_columns,
    tasks_csv,
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
    from wildtoolbench.reports.run_data import ReportError
    from wildtoolbench.scoring.run import compare_run_files

    entries = []
    tasks = {run.key: _task_count(run) for run in runs}
    references = [run for run in runs if run.strategy.is_reference and (run.path / RESULT_FILE).is_file()]
    for reference in references:
        partners = [None] + [
            run
            for run in runs
            if run.strategy is FIXED
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


def _task_count(run: Run) -> int:
    """Tasks per session of a run's dataset; :data:`MIXED_TASKS` for a variant set (docs/variants.md §2)."""
    from wildtoolbench.bench.schema import MIXED_TASKS

    counts = {len(session["english_tasks"]) for session in run.dataset.sessions}
    return MIXED_TASKS if len(counts) > 1 else len(run.tasks) // max(len(run.session_ids), 1)


def session_outcomes(run: Run) -> SessionOutcomes:
    """Per-session correct/total task counts of a run, in ``score.jsonl`` order."""
    correct: dict[str, int] = {}
    total: dict[str, int] = {}
    for fact in run.tasks:
        correct[fact.session_id] = correct.get(fact.session_id, 0) + int(fact.correct)
        total[fact.session_id] = total.get(fact.session_id, 0) + 1
    ids = run.session_ids
    return SessionOutcomes.from_lists(ids, [correct[i] for i in ids], [total[i] for i in ids])


def _transition_counts(run: Run) -> dict[int, tuple[int, int]]:
    counts: dict[int, list[int]] = {}
    for fact in run.tasks:
        session = run.dataset.sessions[run.dataset.index[fact.session_id]]
        entry = counts.setdefault(session_transitions(session["english_task_types"]), [0, 0])
        entry[0] += int(fact.correct)
        entry[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}


# Over 100 lines with its docstring (the report's files and sections): the code is under 80 lines.
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
        run_dirs: run folders (``wtb eval --out``), each with ``metric.json`` and ``score.jsonl``; an ablation
            folder (``wtb ablate --out``), or a folder holding ablation folders, stands for their run folders and
            adds the Ablation view (:func:`wildtoolbench.reports.ablation.expand_folders`, docs/variants.md §6.7).
        out_dir: report folder, created if needed; existing report files are replaced.
        dataset: dataset file for folders whose ``run.json`` names none (``wtb score`` output).
        seed: bootstrap seed (same seed and runs, same intervals).
        resamples: bootstrap resamples.
        title: page title (default: the run labels).
        audit: add the audit section (every dataset audited, docs/audit.md; :mod:`wildtoolbench.reports.audit`).
        errata: an errata file: the audit section also shows each run scored without and with it
            (docs/audit.md §9.3); implies ``audit``.

    Returns:
        A :class:`Report` with the written paths, per-run intervals and paired comparisons.

    Raises:
        ReportError: a run folder or its dataset cannot be read (see :func:`wildtoolbench.reports.runs.load_report_run`),
            or the errata file is bad or does not apply.
        ValueError: ``resamples`` < 1.
        OSError: the report folder cannot be written.
    """
    out = Path(out_dir)
    run_dirs, ablation_dirs = expand_folders(run_dirs)
    ablations = [load_ablation(folder) for folder in ablation_dirs]
    runs, datasets = load_runs(run_dirs, Path(dataset) if dataset is not None else None)
    paper = paper_data()
    columns = {table: table_columns(table, runs) for table in REPORT_TABLES}

    main_rows, orch_rows, err_rows = leaderboard_rows(runs), orchestration_rows(runs), error_rows(runs)
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    rank = {r.run: r.rank for r in main_rows if r.run}
    outcomes = {run.key: session_outcomes(run) for run in runs}
    figures = {run.key: _run_figures(outcomes[run.key], rank.get(run.key)) for run in runs}
    scoring = scoring_comparisons(runs)
    comparisons, refused = _paired_comparisons(runs, outcomes, resamples, seed)
    groups = {run.key: {g: grouped_accuracy(run, g) for g in ("type", "position")} for run in runs}
    diffs = report_diffs(runs)
    figures_svg = _plots(runs, groups, figures, err_rows, paper)

    stats = {d.key: dataset_stats.dataset_statistics(d.sessions) for d in datasets}
    coverage = {d.key: dataset_stats.dataset_coverage(d.sessions) for d in datasets}
    audit_data = None
    if audit or errata is not None:
        from wildtoolbench.reports.audit import audit_section

        audit_data = audit_section(runs, datasets, errata)
    title = title or "WildToolBench report: " + ", ".join(run.label for run in runs)
    data = {
        "title": title,
        "paperSource": paper["source"],
        "paperModels": len(paper["main"]),
        "seed": seed,
        "resamples": resamples,
        "runs": [page_run(number, run, groups[run.key], figures[run.key]) for number, run in enumerate(runs)],
        "comparisons": page_comparisons(comparisons),
        "refused": refused,
        "diffs": [{k: v for k, v in d.items() if k != "flipped"} for d in diffs],
        "fixes": {str(k): v for k, v in FIXES.items()},
        "tables": {
            "main": table_data(main_rows, columns["main"], True),
            "orchestration": table_data(orch_rows, columns["orchestration"], True),
            "errors": table_data(err_rows, columns["errors"], False),
        },
        "plots": figures_svg,
        "trialsHtml": trials_html(runs),
        "datasets": page_datasets(datasets, stats, coverage),
        "sessions": page_session_rows(datasets),
        "audit": audit_data,
        "types": list(TASK_TYPES),
        "typeShort": [TYPE_SHORT[t] for t in TASK_TYPES],
        "subtypes": list(TURN_SUBTYPES),
        "categories": [
            [c, CATEGORY_LABELS[c], "parameter" if c in PARAMETER_CATEGORIES else "action"] for c in CATEGORIES
        ],
        "tasks": page_task_rows(runs),
        "rulesHtml": rules_html(),
        "comparability": comparability_note(runs),
        "scoringComparability": scoring_comparability(runs),
        "paperScoring": PAPER_SCORING_NOTE,
        "scoring": page_scoring(scoring),
        "ablations": _page_ablations(ablations, runs),
    }

    out.mkdir(parents=True, exist_ok=True)
    written = [_write_page(out / "index.html", title, data, runs, datasets, diffs)]
    report = Report(out, written, runs, figures, comparisons, scoring, refused, groups, diffs, audit_data)
    texts = {
        "leaderboard.csv": rows_csv(main_rows, [c.key for c in columns["main"]]),
        "orchestration.csv": rows_csv(orch_rows, [c.key for c in columns["orchestration"]]),
        "errors.csv": rows_csv(err_rows, [c.key for c in columns["errors"]], ERROR_EXTRA_KEYS),
        "tasks.csv": tasks_csv(runs),
        "report.md": report_markdown(report, main_rows, orch_rows, err_rows, stats, datasets, coverage)
        + ("\n" + ablation_markdown(data["ablations"]) if data["ablations"] else ""),
        "report.json": json.dumps(report_json(report, err_rows, seed, resamples), indent=1, ensure_ascii=False) + "\n",
        **{f"plots/{name}.svg": svg + "\n" for name, svg in figures_svg.items()},
    }
    for name, text in texts.items():
        atomic_write_text(out / name, text)
        written.append(out / name)
    return report


def _page_ablations(ablations: Sequence[Ablation], runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The Ablation view's entries (docs/variants.md §6.7): each ablation with the run of its run folder."""
    by_folder = {run.path.resolve(): run for run in runs}
    return [page_ablation(ablation, by_folder[ablation.run_dir.resolve()]) for ablation in ablations]


def _run_figures(outcomes: SessionOutcomes, rank: int | None) -> RunFigures:
    """A run's task and session accuracy with their intervals (docs/metrics.md §10), and its rank."""
    intervals = accuracy_intervals(outcomes)
    return RunFigures(intervals["task"], intervals["session"], rank)


def _paired_comparisons(
    runs: Sequence[Run], outcomes: dict[str, SessionOutcomes], resamples: int, seed: int
) -> tuple[list[Comparison], list[dict[str, Any]]]:
    """Every pair of comparable runs with its paired bootstrap difference, and the pairs on the same sessions
    that are not compared, with why (``[{"a", "b", "why"}]``)."""
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
    return comparisons, refused


def _plots(
    runs: Sequence[Run],
    groups: dict[str, dict[str, Any]],
    figures: dict[str, RunFigures],
    err_rows: Sequence[Row],
    paper: dict[str, Any],
) -> dict[str, str]:
    """The report's plots as SVG text, by name: accuracy by task order, by type, by instruction transitions,
    the error distribution, task against session accuracy, and pass^k when a run has trials."""
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
    return figures_svg


def _write_page(
    index: Path,
    title: str,
    data: dict[str, Any],
    runs: Sequence[Run],
    datasets: Sequence[Dataset],
    diffs: list[dict[str, Any]],
) -> Path:
    """Write ``index.html`` chunk by chunk (one session block in memory at a time) and put it in place.
    Returns ``index``. Raises OSError when it cannot be written."""

    def blocks():
        for d in datasets:
            for position, s in enumerate(d.sessions):
                trajectories = {
                    run.key: run.trajectories[s["id"]]
                    for run in runs
                    if run.dataset is d and s["id"] in run.trajectories
                }
                yield d.offset + position, session_block(s, trajectories)

    tmp = index.with_name(".index.html.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        flipped = [d["flipped"] for d in page_diffs(diffs, runs)]
        for chunk in page_chunks(title, data, blocks(), flipped, ablation=bool(data["ablations"])):
            handle.write(chunk)
    os.replace(tmp, index)
    return index
