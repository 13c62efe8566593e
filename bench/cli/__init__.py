"""The ``wtb`` command line: ``validate``, ``score``, ``eval``, ``generate``.

Each sub-command lives in its own module below and registers itself on :data:`app`.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="wtb",
    help="WildToolBench on LangGraph: generate multi-turn tool-use sessions and evaluate models on them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


@app.callback()
def _root() -> None:
    """WildToolBench on LangGraph: generate multi-turn tool-use sessions and evaluate models on them."""

# Sub-command modules register on `app` when imported.
from bench.cli import score as _score  # noqa: E402,F401
from bench.cli import eval as _eval  # noqa: E402,F401
from bench.cli import generate as _generate  # noqa: E402,F401


def main() -> None:
    """Console-script entry point."""
    app()
