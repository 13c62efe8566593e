"""The ``wtb`` command line: ``validate``, ``score``, ``eval``, ``generate``.

Each sub-command lives in its own module below and registers itself on :data:`app`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import typer

app = typer.Typer(
    name="wtb",
    help="WildToolBench on LangGraph: generate multi-turn tool-use sessions and evaluate models on them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    # Plain click help: it wraps long option texts at any width; rich's panels cut them with "…"
    # when the output is not a terminal (80 columns).
    rich_markup_mode=None,
)


def tasks_option() -> Any:
    """The ``--tasks N`` option (a typer ``OptionInfo`` used as a parameter default) of ``wtb validate``,
    ``eval`` and ``score``: tasks per session, default 4 (docs/dataset.md)."""
    return typer.Option(
        4, "--tasks", min=1, help="Tasks per session: 4 in the benchmark; N for sessions made by `wtb generate --layers N`."
    )


class Lang(str, Enum):
    """``--lang`` values: the side of the dataset (docs/dataset.md §2.2)."""

    en = "en"
    zh = "zh"


def lang_option(help_text: str) -> Any:
    """The ``--lang en|zh`` option (a typer ``OptionInfo`` used as a parameter default); ``None`` when not given."""
    return typer.Option(None, "--lang", help=help_text, case_sensitive=False)


# Sub-command modules register on `app` when imported.
from wtb.cli import eval as _eval  # noqa: E402,F401
from wtb.cli import generate as _generate  # noqa: E402,F401
from wtb.cli import score as _score  # noqa: E402,F401
from wtb.cli import data as _data  # noqa: E402,F401


def main() -> None:
    """Console-script entry point."""
    app()
