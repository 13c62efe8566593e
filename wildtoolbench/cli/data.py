"""``wtb data pull``: the official WildToolBench files into the cache; the ``--pull`` option of the
commands that accept the official names (``--dataset wildtoolbench``, ``--tools wildtoolbench-en``).

The options and their help only: :mod:`wildtoolbench.data.command` does the work and resolves the names
(docs/cli.md §6). Exit status of ``wtb data pull``: 0 when every selected file is in the cache,
verified; 1 when one is not (each failure is one line naming the file; offline, the line gives the
URL to download and the cache path to save it as).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

import typer

from wildtoolbench.cli import Group, app
from wildtoolbench.common.exits import exit_on_error

data_app = typer.Typer(
    name="data",
    cls=Group,
    help="The official WildToolBench data: download it, verify it, keep it in the cache.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(data_app, name="data")


class Only(str, Enum):
    """``--only`` values: one kind of official file."""

    dataset = "dataset"
    tools = "tools"


def pull_option() -> Any:
    """The ``--pull`` flag (a typer ``OptionInfo`` used as a parameter default) of the commands that
    accept the official data names: download a named file that is not cached without asking."""
    return typer.Option(
        False,
        "--pull",
        help="If a file argument (--dataset, --tools or the dataset to check) names the official data "
        "(wildtoolbench, wildtoolbench-en, wildtoolbench-zh) "
        "and it is not in the cache yet, download it without asking (as `wtb data pull` does).",
    )


@data_app.command("pull")
def pull(
    only: Only | None = typer.Option(
        None, "--only", help="Only the dataset, or only the two tool lists. Default: all three files."
    ),
    source: Path | None = typer.Option(
        None,
        "--from",
        exists=True,
        file_okay=False,
        help="Copy from a local clone or checkout of github.com/yupeijei1997/WildToolBench (at the pinned commit) "
        "instead of downloading; files are verified the same way.",
    ),
    show_progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a download progress bar (on a terminal)."
    ),
) -> None:
    """Download the official WildToolBench files at the pinned commit into the cache, each verified by its
    git blob id: the dataset (name: wildtoolbench) and the English and Chinese tool lists (wildtoolbench-en,
    wildtoolbench-zh). Files already in the cache and verified are left alone.

    Cache: $WTB_CACHE_DIR (default ~/.cache/wtb) under data/<commit>/. $WTB_DATA_URL replaces the base URL
    (the repository paths are looked up under it).
    """
    from wildtoolbench.data.command import pull_data

    with exit_on_error():
        pull_data(only.value if only else None, source, show_progress)
