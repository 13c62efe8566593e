"""``wtb validate`` and ``wtb score``: check a dataset file; score a result file (docs/dataset.md, docs/scoring.md).

The options and their help only: :mod:`wildtoolbench.scoring.command` does the work (docs/cli.md §6). Bad input
never produces a traceback: every problem is printed as ``file:line: field: message`` on stderr and the
command exits with code 1; a file named on the command line that does not exist, or an unknown
``--scoring`` / ``--lang``, is a usage error (exit 2; docs/cli.md §2).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import Lang, Scoring, app, lang_option, scoring_option, tasks_option
from wildtoolbench.cli.data import pull_option
from wildtoolbench.common.exits import exit_on_error


@app.command("validate")
def validate(
    path: Path = typer.Argument(
        ..., help="Dataset file (JSON Lines, one session per line), or wildtoolbench (the official data)."
    ),
    tasks: int | None = tasks_option(),
    lang: Lang | None = lang_option(
        "Also check that the sessions can be evaluated on this side (zh: every Chinese label maps to a "
        "metric bucket), and count the tasks under its labels. Both sides are always checked field by field."
    ),
    pull: bool = pull_option(),
) -> None:
    """Check a dataset file against the session schema (docs/dataset.md).

    Prints every problem as `file:line: field: message` and exits 1, or prints a
    one-line summary (sessions, tasks per type, turn subtypes) and exits 0.
    """
    from wildtoolbench.scoring.command import validate_dataset

    with exit_on_error():
        validate_dataset(path, tasks, lang.value if lang else None, pull)


@app.command("score")
def score(
    run_folder: Path | None = typer.Argument(
        None,
        help="A finished run folder (wtb eval --out): re-grade its stored replies in --scoring mode into the folder, "
        "without model calls, and name the tasks that need a re-run (docs/semantic-mode.md §4). Replaces "
        "--results and --out; --dataset only when run.json names none.",
    ),
    dataset: Path | None = typer.Option(
        None, "--dataset", help="Dataset file the run was made on (sessions, JSON Lines), or wildtoolbench."
    ),
    results: Path | None = typer.Option(None, "--results", help="Result file: one record per session (JSON Lines)."),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Output folder for score.jsonl, metric.json and summary_metrics.json (score.fixed.jsonl, "
        "metric.fixed.json and summary_metrics.fixed.json with --scoring fixed).",
    ),
    tasks: int | None = tasks_option(),
    scoring: Scoring = scoring_option(),
    lang: Lang | None = lang_option(
        "Side of the dataset the results were made on (en: english_* fields, zh: the Chinese ones). "
        'Default: what the records say (a `wtb eval --lang zh` record carries "language": "zh"), else en.'
    ),
    pull: bool = pull_option(),
    errata: Path | None = typer.Option(
        None,
        "--errata",
        help="An errata file (docs/audit.md §9): also score with it applied, written to OUT/metric.errata.json "
        "and OUT/summary_metrics.errata.json (metric.json stays the published score), and print both.",
    ),
    model_name: str | None = typer.Option(
        None,
        "--model-name",
        help="Model of the records that name none: the published runner writes a failed session as "
        '{"id", "result": "Error during inference: ..."} without model_name. Default: the model the '
        "file's other records name.",
    ),
) -> None:
    """Score a result file against its dataset (docs/scoring.md): writes OUT/score.jsonl, OUT/metric.json
    (the published format) and OUT/summary_metrics.json (empty groups are null), prints the table.

    `wtb score RUN_FOLDER --scoring MODE` re-grades a finished run folder in place (docs/semantic-mode.md §4).
    With --scoring semantic (docs/semantic-mode.md) the equivalence rules are applied too.

    With --scoring fixed (docs/fixed-mode.md) the scoring fixes 5-8 are applied, without model calls, and
    OUT/score.fixed.jsonl, OUT/metric.fixed.json and OUT/summary_metrics.fixed.json are written; on a
    reference run it also prints how many task labels flip, by fix, and how the accomplish progress
    rate changes (fix 8 counts gold nodes, docs/fixed-mode.md §9).
    """
    from wildtoolbench.scoring.command import score_command

    with exit_on_error():
        score_command(
            run_folder, dataset, results, out, tasks, scoring.value, lang.value if lang else None, pull, model_name, errata
        )
