"""``wtb review DIR|DATASET``: review sessions in the browser (docs/review.md).

Serves a local web app: a queue of the sessions (those with audit findings first), each session with
its conversation, tools, gold DAG and findings, accept / reject with a reason, edits of gold
arguments, observations and messages (re-validated and re-audited on save), several reviewers and
their agreement; ``--export OUT`` writes the accepted and corrected sessions with the review log.
Binds to loopback unless ``--allow-remote``. Exit status: 0 done; 1 an unreadable dataset, a database
of another dataset, a port that cannot be bound; 2 a bad command line (docs/cli.md §2). The options
only: :mod:`wildtoolbench.review.command` does the work (docs/cli.md §6).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import Lang, app, lang_option, tasks_option
from wildtoolbench.cli.data import pull_option
from wildtoolbench.common.exits import exit_on_error


@app.command("review")
def review_command(
    target: Path = typer.Argument(
        ...,
        metavar="DIR|DATASET",
        help="A dataset file (JSON Lines), or a folder holding sessions.jsonl (the output of wtb generate).",
    ),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="The review database (SQLite). Default: DIR/review.sqlite3, or <dataset stem>.review.sqlite3 beside "
        "the dataset file. Created on the first start; later starts continue it.",
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on; one that is not loopback needs --allow-remote."
    ),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Allow a --host that is not loopback. The app has no login: only behind a firewall or an "
        "authenticating proxy.",
    ),
    lang: Lang | None = lang_option("Side of the dataset to review (en: english_* fields, default; zh)."),
    tasks: int | None = tasks_option(),
    export: Path | None = typer.Option(
        None,
        "--export",
        help="Do not serve: write the accepted and corrected sessions to OUT/sessions.jsonl, with their oracle "
        "replay (replay.jsonl), the review log, errata for the original dataset and a summary.",
    ),
    pull: bool = pull_option(),
) -> None:
    """Review a dataset's sessions in the browser (docs/review.md): accept, reject with a reason, or edit the
    gold; several reviewers and their agreement (Cohen's kappa); export the accepted sessions as a dataset.
    """
    from wildtoolbench.review.command import review

    with exit_on_error():
        review(
            target,
            db=db,
            host=host,
            port=port,
            allow_remote=allow_remote,
            language=lang.value if lang else "en",
            tasks=tasks,
            export=export,
            pull=pull,
        )
