"""The ``wtb`` command line: ``validate``, ``score``, ``eval``, ``generate``, ``report``, ``compare``, ``audit``,
``diff``, ``gate``, ``review``, ``variants``, ``ablate``, ``data``.

Each sub-command lives in its own module below and registers itself on :data:`app`. The modules
parse: they hold the options and their help, and each command body makes one call into the
application layer, :mod:`wildtoolbench.cli` (docs/cli.md §6), inside
:func:`wildtoolbench.common.exits.exit_on_error`, the one exit-status rule of every sub-command (docs/cli.md
§2, :data:`EXIT_STATUS_HELP`). The modules import only typer and the light :mod:`wildtoolbench.common.exits`
at the top: ``wtb --help`` and every ``--help`` build the command line without the scoring core,
pydantic, LangGraph, LangChain or rich, which the application layer imports when a command runs
(docs/cli.md §1).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import typer
from typer.core import TyperGroup

EXIT_STATUS_HELP = (
    "Exit status: 0 done; 1 an input file's content is bad (every problem named as file:line: field: message), "
    "or the output folder holds a different run; 2 the command line or the run's configuration is wrong "
    "(an unknown option value, a file named on the command line that does not exist, ids that select no "
    "session, a bad model spec): nothing is written; 3 some sessions hit infrastructure errors (run the same "
    "command again to retry them); 130 interrupted (run it again to resume)."
)
"""The epilog of ``wtb --help``: the exit statuses of every sub-command (docs/cli.md §2)."""


class Group(TyperGroup):
    """The command groups of ``wtb`` (``wtb`` itself, ``wtb data``): typer's group, with the flags a
    group parses before handing over to a sub-command (``--help``, ``--install-completion``,
    ``--show-completion``) ``False`` when not given instead of ``None``.

    Typer runs a ``None`` value through a pydantic type adapter, and building one imports pydantic
    (about 0.15 s); a ``False`` flag skips it. So ``wtb eval --help`` imports no pydantic, as
    ``wtb --help`` does (docs/cli.md §1). Parsing, help text and errors are typer's own.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Set the unset-flag default to ``False``, then parse ``args`` as typer does; returns the
        remaining arguments (the sub-command and its own arguments). Raises click's usage errors."""
        for param in self.get_params(ctx):
            if getattr(param, "is_flag", False) and param.default is None:
                param.default = False
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        """Run the sub-command as typer does; a usage error keeps click's wording: the ``"Value error, "``
        that typer's pydantic coercion puts before a choice's message is removed (docs/cli.md §2)."""
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            if isinstance(exc.message, str) and exc.message.startswith(PYDANTIC_VALUE_ERROR):
                exc.message = exc.message[len(PYDANTIC_VALUE_ERROR) :]
            raise


PYDANTIC_VALUE_ERROR = "Value error, "
"""What pydantic puts before the message of a validator's ``ValueError`` (typer 0.2x coerces option
values with pydantic, so an unknown ``--scoring`` / ``--lang`` choice read ``Value error, 'fixd' is not
one of ...``); :class:`Group` removes it."""


app = typer.Typer(
    name="wtb",
    cls=Group,
    help="WildToolBench on LangGraph: generate multi-turn tool-use sessions and evaluate models on them.",
    epilog=EXIT_STATUS_HELP,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    # Plain click help: it wraps long option texts at any width; rich's panels cut them with "…"
    # when the output is not a terminal (80 columns).
    rich_markup_mode=None,
)


def tasks_option() -> Any:
    """The ``--tasks N`` option (a typer ``OptionInfo`` used as a parameter default) of ``wtb validate``,
    ``eval`` and ``score``: tasks per session; ``None`` when not given (then
    :func:`wildtoolbench.data.command.task_count` infers it; docs/dataset.md §6)."""
    return typer.Option(
        None,
        "--tasks",
        min=1,
        help="Tasks per session. Default: the count the dataset's sessions share (4 in the benchmark, N for "
        "`wtb generate --layers N`); sessions of different counts are an error naming the lines, except in a "
        "variant set (wtb variants), where each session has its own. Given, every session is checked against it.",
    )


class Scoring(str, Enum):
    """``--scoring`` values: the scoring mode (docs/fixed-mode.md §1); any other value is a usage error (exit 2)."""

    reference = "reference"
    fixed = "fixed"
    semantic = "semantic"


def scoring_option() -> Any:
    """The ``--scoring reference|fixed|semantic`` option of ``wtb score`` (docs/fixed-mode.md §1): a :class:`Scoring`,
    ``reference`` when not given."""
    return typer.Option(
        Scoring.reference,
        "--scoring",
        case_sensitive=False,
        help="'reference' (default) reproduces the published scoring, quirks included; 'fixed' applies the "
        "scoring fixes 5-8 of docs/fixed-mode.md, written to score.fixed.jsonl and metric.fixed.json; 'semantic' "
        "adds the equivalence rules of docs/semantic-mode.md (score.semantic.jsonl, metric.semantic.json).",
    )


class Lang(str, Enum):
    """``--lang`` values: the side of the dataset (docs/dataset.md §2.2)."""

    en = "en"
    zh = "zh"


def lang_option(help_text: str) -> Any:
    """The ``--lang en|zh`` option (a typer ``OptionInfo`` used as a parameter default); ``None`` when not given."""
    return typer.Option(None, "--lang", help=help_text, case_sensitive=False)


# Sub-command modules register on `app` when imported; `wtb --help` lists them in this order.
# isort: off
from wildtoolbench.cli import data as _data  # noqa: E402,F401
from wildtoolbench.cli import eval as _eval  # noqa: E402,F401
from wildtoolbench.cli import generate as _generate  # noqa: E402,F401
from wildtoolbench.cli import score as _score  # noqa: E402,F401
from wildtoolbench.cli import report as _report  # noqa: E402,F401
from wildtoolbench.cli import compare as _compare  # noqa: E402,F401
from wildtoolbench.cli import audit as _audit  # noqa: E402,F401
from wildtoolbench.cli import diff as _diff  # noqa: E402,F401
from wildtoolbench.cli import gate as _gate  # noqa: E402,F401
from wildtoolbench.cli import review as _review  # noqa: E402,F401
from wildtoolbench.cli import variants as _variants  # noqa: E402,F401
from wildtoolbench.cli import ablate as _ablate  # noqa: E402,F401
# isort: on


def main() -> None:
    """Console-script entry point."""
    app()
