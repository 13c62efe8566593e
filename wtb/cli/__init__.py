"""The ``wtb`` command line: ``validate``, ``score``, ``eval``, ``generate``.

Each sub-command lives in its own module below and registers itself on :data:`app`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Optional

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
    ``eval`` and ``score``: tasks per session; ``None`` when not given (then :func:`resolve_tasks`
    infers it; docs/dataset.md §6)."""
    return typer.Option(
        None, "--tasks", min=1,
        help="Tasks per session. Default: the count the dataset's sessions share (4 in the benchmark, N for "
        "`wtb generate --layers N`); sessions of different counts are an error naming the lines. Given, every "
        "session is checked against it.",
    )


def scoring_option() -> Any:
    """The ``--scoring reference|fixed`` option of ``wtb score`` (docs/fixed-mode.md)."""
    return typer.Option(
        "reference",
        "--scoring",
        help="'reference' (default) reproduces the published scoring, quirks included; 'fixed' applies the "
        "scoring fixes 5-8 of docs/fixed-mode.md, written to score.fixed.jsonl and metric.fixed.json.",
    )


def resolve_tasks(dataset: Any, tasks: Optional[int]) -> int:
    """``--tasks`` when given, else the count every session of ``dataset`` has
    (:func:`bench.schema.infer_task_count`, docs/dataset.md §6).

    Raises:
        bench.schema.DatasetError: the sessions have different counts (each line named).
    """
    from bench.schema import infer_task_count

    return tasks if tasks is not None else infer_task_count(dataset)


class Lang(str, Enum):
    """``--lang`` values: the side of the dataset (docs/dataset.md §2.2)."""

    en = "en"
    zh = "zh"


def lang_option(help_text: str) -> Any:
    """The ``--lang en|zh`` option (a typer ``OptionInfo`` used as a parameter default); ``None`` when not given."""
    return typer.Option(None, "--lang", help=help_text, case_sensitive=False)


# Sub-command modules register on `app` when imported.
from wtb.cli import data as _data  # noqa: E402,F401
from wtb.cli import eval as _eval  # noqa: E402,F401
from wtb.cli import generate as _generate  # noqa: E402,F401
from wtb.cli import score as _score  # noqa: E402,F401
from wtb.cli import report as _report  # noqa: E402,F401


def main() -> None:
    """Console-script entry point."""
    app()
