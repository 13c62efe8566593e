"""What a built report holds, shared by the page, ``report.md`` and ``report.json``: the run figures,
the paired comparisons, the error-category rules and the comparability note.

Its own module so that :mod:`wildtoolbench.reports.build` (which makes a :class:`Report`) and
:mod:`wildtoolbench.reports.markdown` (which writes one) both import it and not each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.schema import TASK_TYPES
from wildtoolbench.bench.strategy import REFERENCE, SCORING_STRATEGIES
from wildtoolbench.bench.trials import FEW_PAIRED_SESSIONS
from wildtoolbench.common.run_folder import SCORE_FILE
from wildtoolbench.common.shareable import shareable_path, shareable_text
from wildtoolbench.reports.run_data import Run
from wildtoolbench.reports.stats import Interval, PairedDifference, clustered_wilson
from wildtoolbench.reports.tables import run_values

RULES = [
    (
        "refusal",
        "the model replied in text where only real tool calls were due, before any correct tool step, and the text does not end in a question mark",
    ),
    ("wrong_refusal", "the same, but the text ends in a question: it asks the user for what it already has"),
    (
        "early_term",
        "the model replied in text where only real tool calls were due, after at least one correct tool step",
    ),
    (
        "redundant",
        "the model called tools where a gold candidate is the final answer (a chat task, or calls after the work is done)",
    ),
    (
        "wrong_name",
        "the model called tools where a gold candidate asks the user (the information is missing), or called names that are neither the names of a candidate nor a strict sub- or superset of them (also: calls beyond the end of every gold path)",
    ),
    (
        "call_error",
        "the called names are a strict sub- or superset of a candidate's (wrong parallel split or count); also an empty reply, unparsable calls, the step limit and a session whose inference failed (each of its tasks)",
    ),
    (
        "param_type",
        "names matched, the first failing argument message is 'args invalid json format' or a 'type inconsistent' message",
    ),
    ("param_halluc", "'args not defined', 'required args missing' or 'args keys mismatch' (invented or missing keys)"),
    (
        "param_value",
        "'value not in enum', 'string similarity too low', 'value mismatch', 'rouge calculation failed'; also the two checker messages the rules do not name, 'array length mismatch' and 'comparison failed'",
    ),
]
RULES_INTRO = (
    "The paper does not publish how it assigned its error categories; these operational rules (docs/errors.md) "
    "approximate them. A failed task is classified once, by its first failing step: a name error there "
    "gives an action category, an argument error a parameter category."
)


@dataclass
class RunFigures:
    """Uncertainty figures of one run: intervals of task and session accuracy, and its rank among the
    paper's models alone (by session then task accuracy; 1 = above all of them)."""

    task: Interval
    session: Interval
    rank: int | None


@dataclass
class Comparison:
    """A paired comparison of two runs on their shared sessions."""

    a: Run
    b: Run
    difference: PairedDifference

    def verdict(self) -> str:
        """Plain-language reading of the two intervals (docs/metrics.md §10).

        Returns:
            e.g. ``"task accuracy: A higher; session accuracy: within noise"``; with fewer than
            :data:`FEW_PAIRED_SESSIONS` shared sessions a warning is appended in parentheses.
        """

        def one(name: str, interval: Interval) -> str:
            if interval.contains_zero():
                return f"{name}: within noise"
            better = self.a.label if interval.value > 0 else self.b.label
            return f"{name}: {better} higher"

        reading = f"{one('task accuracy', self.difference.task)}; {one('session accuracy', self.difference.session)}"
        if self.difference.sessions < FEW_PAIRED_SESSIONS:
            reading += (
                f" (only {self.difference.sessions} shared sessions, fewer than {FEW_PAIRED_SESSIONS}:"
                " the bootstrap interval is rough, read it as a hint)"
            )
        return reading


@dataclass
class Report:
    """What :func:`build_report` produced.

    Attributes:
        out: the report folder.
        files: paths written.
        runs: the runs, in argument order.
        figures: run key -> :class:`RunFigures`.
        comparisons: paired comparisons of every two runs on the same dataset.
    """

    out: Path
    files: list[Path]
    runs: list[Run]
    figures: dict[str, RunFigures]
    comparisons: list[Comparison] = field(default_factory=list)
    scoring: list[dict[str, Any]] = field(default_factory=list)
    """Reference vs fixed scoring (:func:`scoring_comparisons`), one entry per compared run or pair."""
    refused: list[dict[str, str]] = field(default_factory=list)
    """Pairs of runs on the same sessions that are not compared: ``{"a", "b": run keys, "why"}`` (:func:`comparable`)."""
    groups: dict[str, dict[str, dict[str, dict[str, Any]]]] = field(default_factory=dict)
    """Run key -> ``{"type": ..., "position": ...}`` of :func:`grouped_accuracy`."""
    diffs: list[dict[str, Any]] = field(default_factory=list)
    """Run-against-run diffs of every comparable pair (:func:`wildtoolbench.reports.diffs.report_diffs`, docs/diff.md §4)."""
    audit: dict[str, Any] | None = None
    """The audit section (``--audit``, :func:`wildtoolbench.reports.audit.audit_section`), ``None`` when not asked for."""


SHOWN_SETTINGS = ("temperature", "max_steps", "max_attempts", "timeout", "concurrency", "rps", "tasks")
"""The run settings (docs/settings.md) the runs table shows; the model spec, side and scoring have columns
of their own, and nothing that could hold a secret (URLs, keys) is shown."""


def shown_settings(run: Run) -> dict[str, Any]:
    """The settings of :data:`SHOWN_SETTINGS` the run recorded, in that order (absolute paths in them written
    by :func:`wildtoolbench.common.shareable.shareable_text`, docs/cli.md §4)."""
    return {k: shareable_text(run.settings[k]) for k in SHOWN_SETTINGS if k in run.settings}


def side_fields(session: dict[str, Any], language: str) -> dict[str, Any]:
    """The fields of one language side of a session dict (docs/dataset.md §2.2) under short names: ``env``,
    ``tools``, ``tasks``, ``answers``, ``types``, ``subtypes``."""
    from wildtoolbench.bench.schema import fields_for

    side = fields_for(language)
    return {
        "env": session[side.env_info],
        "tools": session[side.tools],
        "tasks": session[side.tasks],
        "answers": session[side.answer_list],
        "types": session[side.task_types],
        "subtypes": session[side.turn_subtypes],
    }


def grouped_accuracy(run: Run, group: str) -> dict[str, dict[str, Any]]:
    """A run's task accuracy per task type (``group="type"``, the English buckets, docs/metrics.md §1) or per
    task position (``"position"``: ``t1`` ...), with ``n`` and the clustered Wilson interval (docs/metrics.md §10).

    Returns:
        ``{bucket: {"correct", "n", "interval": Interval}}`` for every bucket with at least one task.
    """
    from wildtoolbench.bench.schema import bucket_labels

    per: dict[str, dict[str, list[int]]] = {}
    types: dict[str, list[str]] = {}
    for fact in run.tasks:
        if group == "type":
            if fact.session_id not in types:
                session = run.dataset.sessions[run.dataset.index[fact.session_id]]
                try:
                    types[fact.session_id] = bucket_labels(session, run.language)[0]
                except ValueError:
                    types[fact.session_id] = list(session["english_task_types"])
            bucket = types[fact.session_id][fact.task_idx]
        else:
            bucket = f"t{fact.task_idx + 1}"
        counts = per.setdefault(bucket, {}).setdefault(fact.session_id, [0, 0])
        counts[0] += int(fact.correct)
        counts[1] += 1
    order = list(TASK_TYPES) if group == "type" else sorted(per)
    out = {}
    for bucket in order:
        if bucket not in per:
            continue
        correct = [c for c, _ in per[bucket].values()]
        total = [t for _, t in per[bucket].values()]
        out[bucket] = {"correct": sum(correct), "n": sum(total), "interval": clustered_wilson(correct, total)}
    return out


def top_errors(run: Run, limit: int = 3) -> list[tuple[str, int]]:
    """The run's most frequent error categories, ``[(category, failed tasks)]``, most first (ties in table order)."""
    counts = [(k, n) for k, n in run.error_counts().items() if n]
    return sorted(counts, key=lambda item: -item[1])[:limit]


def comparable(a: Run, b: Run) -> str:
    """``""`` when a paired comparison of two runs means something, else why not: other sessions, another
    scoring mode or another side (docs/metrics.md §10)."""
    if a.dataset is not b.dataset:
        return "different datasets"
    if a.scoring != b.scoring:
        return f"different scoring modes ({a.scoring} and {b.scoring})"
    if a.language != b.language:
        return f"different sides ({a.language} and {b.language})"
    return ""


def run_facts(run: Run, figures: RunFigures) -> dict[str, Any]:
    """The runs table's facts of one run, as ``report.json`` writes them (docs/metrics.md §10): model, spec,
    side, scoring, dataset (name, path, sha256, official, sessions), date, harness version, settings, task
    and session accuracy with intervals, OP and AP (percent, ``None`` when they do not apply), the top error
    categories, the rank among the paper's models and why it has none."""
    path_values = run_values(run.metric, "orchestration", run.extra_metrics)
    return {
        "key": run.key,
        "label": run.label,
        "model": run.model,
        "model_spec": shareable_text(run.spec),  # no absolute path of this machine (docs/cli.md §4)
        "side": run.language,
        "scoring": run.scoring,
        "dataset": {
            "name": run.dataset.path.name,
            "path": shareable_path(run.dataset.path),
            "sha256": run.dataset.sha256,
            "official": run.dataset.official,
            "sessions": len(run.dataset.sessions),
        },
        "date": run.date,
        "harness_version": run.version,
        "settings": shown_settings(run),
        "dir": shareable_path(run.path),
        "sessions": len(run.session_ids),
        "tasks": len(run.tasks),
        "failed_tasks": run.failed(),
        "task_accuracy": figures.task,
        "session_accuracy": figures.session,
        "op": path_values.get("op"),
        "ap": path_values.get("ap"),
        "top_errors": top_errors(run),
        "rank": figures.rank,
        "unranked": run.rank_exclusions(),
        "scorings": run_scorings(run),
    }


def run_scorings(run: Run) -> list[dict[str, Any]]:
    """Task and session accuracy of a run under every scoring its folder holds (``score.jsonl``,
    ``score.fixed.jsonl``, ``score.semantic.jsonl``; trial 1 only), in mode order (docs/semantic-mode.md §4):
    ``[{"scoring", "tasks", "correct_tasks", "task_accuracy", "sessions", "correct_sessions", "session_accuracy"}]``.
    A score file that cannot be read is left out (the report reads the run's own one strictly)."""
    import json

    found = []
    for strategy in SCORING_STRATEGIES.values():
        path = run.path / strategy.file_name(SCORE_FILE)
        if not path.is_file():
            continue
        try:
            lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip()]
            results = [line["results"] for line in lines if isinstance(line, dict) and "trial" not in line]
            labels = [[task["label"] for task in tasks] for tasks in results]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        tasks = [label for session in labels for label in session]
        correct = sum(label == "correct" for label in tasks)
        sessions = sum(all(label == "correct" for label in session) for session in labels)
        found.append(
            {
                "scoring": strategy.name,
                "tasks": len(tasks),
                "correct_tasks": correct,
                "task_accuracy": correct / len(tasks) if tasks else None,
                "sessions": len(labels),
                "correct_sessions": sessions,
                "session_accuracy": sessions / len(labels) if labels else None,
            }
        )
    return found


def scoring_comparability(runs: Sequence[Run]) -> str:
    """The comparability line of a report whose runs, or whose runs' folders, hold more than one scoring mode
    (docs/semantic-mode.md §1): only reference figures stand beside the paper's leaderboard. ``""`` otherwise."""
    names = {run.scoring for run in runs} | {entry["scoring"] for run in runs for entry in run_scorings(run)}
    modes = [strategy for strategy in SCORING_STRATEGIES.values() if strategy.name in names]
    if len(modes) < 2:
        return ""
    return (
        f"Scoring modes mixed ({', '.join(m.name for m in modes)}): only {REFERENCE.name} figures compare with the "
        f"paper's leaderboard, which used {REFERENCE.name} scoring; "
        f"{', '.join(m.name for m in modes if not m.paper_comparable)} figures measure something else."
    )


PAPER_SCORING_NOTE = (
    f"The paper's figures use {REFERENCE.name} scoring (the published checker, docs/scoring.md); fixed and semantic "
    "scores are not its measure."
)
"""What the paper-leaderboard view says about the scoring behind the paper's rows (docs/semantic-mode.md §1)."""


OFFICIAL_SESSIONS = 256
"""Sessions of the official WildToolBench dataset, the one the paper's figures come from."""


def comparability_note(runs: Sequence[Run]) -> str:
    """The note over the tables when a run is not ranked among the paper's models (docs/metrics.md §10): the
    paper's figures are reference scoring of the English side on all 256 official sessions, so a run on other
    sessions (a demo, fixtures, generated sessions), in fixed mode or on the Chinese side is shown beside the
    paper's rows, with no rank. ``""`` when every run is ranked."""
    other = [run for run in runs if run.rank_exclusions()]
    if not other:
        return ""
    names = "; ".join(f"{run.label} ({', '.join(run.rank_exclusions())})" for run in other)
    mixed = scoring_comparability(runs)
    return (
        f"Not ranked against the paper: {names}. The paper's figures are reference scoring of the English side "
        f"on the official {OFFICIAL_SESSIONS}-session dataset; these runs are placed by value beside its rows, "
        "with no rank." + (f" {mixed}" if mixed else "")
    )
