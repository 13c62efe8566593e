"""Rich consoles that import rich only when something is printed.

``wtb --help`` and every sub-command's ``--help`` build the command line without printing through
rich, so the CLI modules hold a :class:`LazyConsole` instead of a ``rich.console.Console`` made at
import time (importing rich costs about a tenth of a second; docs/cli.md §1).
"""

from __future__ import annotations

from typing import Any


class LazyConsole:
    """Stands for ``rich.console.Console(**options)``, created on first attribute access.

    Inputs: the keyword arguments of ``rich.console.Console`` (e.g. ``stderr=True, highlight=False,
    soft_wrap=True``). Every attribute (``print``, ``is_terminal`` ...) is the real console's, so
    ``console.print(text, markup=False)`` behaves exactly as on the console itself. Raises nothing
    itself; whatever rich raises for bad options surfaces at the first use.
    """

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Any = None

    def __getattr__(self, name: str) -> Any:
        console = self.__dict__.get("_console")
        if console is None:
            from rich.console import Console

            console = self._console = Console(**self._options)
        return getattr(console, name)
