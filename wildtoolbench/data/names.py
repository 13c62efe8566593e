"""Names for the official data in ``--dataset`` and ``--tools``.

``wildtoolbench`` names the official dataset, ``wildtoolbench-en`` and ``wildtoolbench-zh`` the
official tool lists (the pins of :mod:`wildtoolbench.data.official`). A name resolves to the verified
file in the cache; a file not pulled yet is pulled first, with the user's consent on a terminal,
or without asking when the caller passes ``pull=True`` (``--pull``). Anything else, and an
existing file that happens to carry a name, is a plain path and is returned unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from wildtoolbench.data.official import (
    COMMIT,
    REPOSITORY,
    DataError,
    Pin,
    ProgressCallback,
    cache_path,
    cached_file,
    pin_table,
    pull_file,
)

PathLike = str | Path
_NOUNS = {"dataset": "dataset", "tools": "tool list"}


class NotPulledError(DataError):
    """A name refers to official data that is not in the cache, and it may not be pulled now
    (not a terminal and no ``--pull``, or the user declined). ``command`` is what to run."""

    def __init__(self, message: str, *, name: str, command: str) -> None:
        super().__init__(message)
        self.name = name
        self.command = command


def official_names(kind: str) -> list[str]:
    """The names of one kind (``"dataset"`` or ``"tools"``) in the pin table, in table order."""
    return [pin.name for pin in pin_table().values() if pin.kind == kind]


def resolve_dataset(
    value: PathLike | None,
    *,
    pull: bool = False,
    interactive: bool | None = None,
    confirm: Callable[[str], bool] | None = None,
    progress: ProgressCallback | None = None,
) -> Path | None:
    """The dataset file meant by a ``--dataset`` value.

    Inputs: ``value``, a path or the name ``wildtoolbench`` (``None`` stays ``None``); ``pull``,
    pull a missing file without asking; ``interactive``, whether the user can be asked (default:
    standard input is a terminal); ``confirm``, the question asker (default ``typer.confirm``);
    ``progress``, the download progress callback.

    Returns the verified cache path for a name, else ``Path(value)`` unchanged.

    Raises:
        NotPulledError: the named file is not cached and may not be pulled (its message names
            ``wtb data pull``).
        DataError: a tool-list name was given, or the pull failed (see
            :func:`wildtoolbench.data.official.pull_file`; ``OSError`` too when the cache is not writable).
    """
    return _resolve(value, "dataset", pull=pull, interactive=interactive, confirm=confirm, progress=progress)


def resolve_tools(
    value: PathLike | None,
    *,
    pull: bool = False,
    interactive: bool | None = None,
    confirm: Callable[[str], bool] | None = None,
    progress: ProgressCallback | None = None,
) -> Path | None:
    """The tool-list file meant by a ``--tools`` value: a path, or ``wildtoolbench-en`` /
    ``wildtoolbench-zh``. Inputs, output and errors as :func:`resolve_dataset` (a dataset name
    given here is a :class:`DataError`)."""
    return _resolve(value, "tools", pull=pull, interactive=interactive, confirm=confirm, progress=progress)


def _resolve(
    value: PathLike | None,
    kind: str,
    *,
    pull: bool,
    interactive: bool | None,
    confirm: Callable[[str], bool] | None,
    progress: ProgressCallback | None,
) -> Path | None:
    if value is None:
        return None
    path = Path(value)
    if path.is_file():
        return path
    table = pin_table()
    pin = table.get(str(value).lower())
    if pin is None:
        return path
    if pin.kind != kind:
        wanted = ", ".join(p.name for p in table.values() if p.kind == kind)
        raise DataError(f"{value}: names the official {_NOUNS[pin.kind]}, not a {_NOUNS[kind]} (names here: {wanted})")
    cached = cached_file(pin)
    if cached is not None:
        return cached
    if not pull:
        if interactive is None:
            interactive = sys.stdin.isatty()
        command = "wtb data pull" if kind == "dataset" else "wtb data pull --only tools"
        if not interactive:
            raise NotPulledError(
                f"{pin.name}: the official {_NOUNS[kind]} is not downloaded yet; run `{command}` first "
                f"(or add --pull to download it now) - it goes to {cache_path(pin)}",
                name=pin.name,
                command=command,
            )
        if not (confirm or _ask)(_question(pin)):
            raise NotPulledError(
                f"{pin.name}: not downloaded; `{command}` downloads it", name=pin.name, command=command
            )
    return pull_file(pin, progress=progress).path


def _question(pin: Pin) -> str:
    return (
        f"{pin.name} ({pin.path} of github.com/{REPOSITORY} at {COMMIT[:7]}) is not downloaded yet. "
        f"Download it into {cache_path(pin)} now?"
    )


def _ask(question: str) -> bool:
    import typer

    return typer.confirm(question, default=True, err=True)
