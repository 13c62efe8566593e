"""``wtb data pull``: the official WildToolBench files into the cache; the ``--pull`` option and the
name resolution used by ``wtb eval``, ``score``, ``validate`` (``--dataset wildtoolbench``) and
``generate`` (``--tools wildtoolbench-en`` / ``wildtoolbench-zh``).

Exit status of ``wtb data pull``: 0 when every selected file is in the cache, verified; 1 when one
is not (each failure is one line naming the file; offline, the line gives the URL to download and
the cache path to save it as).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from wtb.cli import Group, app
from wtb.cli._console import LazyConsole

_err = LazyConsole(stderr=True, highlight=False, soft_wrap=True)
_out = LazyConsole(highlight=False, soft_wrap=True)

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
        help="If --dataset / --tools names the official data (wildtoolbench, wildtoolbench-en, wildtoolbench-zh) "
        "and it is not in the cache yet, download it without asking (as `wtb data pull` does).",
    )


class _DownloadBar:
    """A rich progress bar on stderr, started at the first progress report (never during a prompt),
    shown only on a terminal; usable as the ``progress`` callback of :mod:`wtb.datasets.official`."""

    def __init__(self, enabled: bool = True) -> None:
        self._enabled = enabled  # and stderr a terminal: asked at the first report (asking imports rich)
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __call__(self, pin: Any, done: int, total: int | None) -> None:
        if self._enabled and self._bar is None and not _err.is_terminal:
            self._enabled = False
        if not self._enabled:
            return
        if self._bar is None:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=_err,
                transient=True,
            )
            self._bar.start()
        if pin.name not in self._tasks:
            self._tasks[pin.name] = self._bar.add_task(pin.name, total=total)
        self._bar.update(self._tasks[pin.name], completed=done, total=total)

    def close(self) -> None:
        """Stop and clear the bar (if it was started); the next report starts a new one."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._tasks.clear()


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
    from wtb.datasets.official import (
        COMMIT,
        REPOSITORY_URL,
        DataError,
        OfflineError,
        PullResult,
        data_dir,
        pull_files,
        select_pins,
    )

    try:
        pins = select_pins(only.value if only else None)
    except DataError as exc:
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(1) from None
    bar = _DownloadBar(show_progress)
    results: list[PullResult] = []
    failed = offline = 0
    try:
        for pin, outcome in pull_files(pins, source=source, progress=bar):
            bar.close()  # one transient bar per file, replaced by the file's line
            if isinstance(outcome, PullResult):
                results.append(outcome)
                if outcome.action != "cached":
                    _out.print(f"{pin.name}: {outcome.action} {outcome.origin} -> {outcome.path}", markup=False)
                continue
            failed += 1
            offline += isinstance(outcome, OfflineError)
            _err.print(f"error: {pin.name}: {outcome}", markup=False)
    finally:
        bar.close()
    if offline:
        _err.print(
            f"or, with a clone of {REPOSITORY_URL} at commit {COMMIT}: wtb data pull --from <the clone>", markup=False
        )
    kept = [r for r in results if r.action == "cached"]
    if kept and len(kept) == len(pins):
        _out.print(
            f"nothing to do: {', '.join(r.pin.name for r in kept)} already in the cache and verified ({data_dir()})",
            markup=False,
        )
    elif kept:
        _out.print(f"already in the cache and verified: {', '.join(r.pin.name for r in kept)}", markup=False)
    if failed:
        _err.print(f"{failed} of {len(pins)} file(s) not in the cache", markup=False)
        raise typer.Exit(1)


def named_dataset(value: Path | None, pull: bool) -> Path | None:
    """``--dataset`` value -> file path for the CLI: :func:`wtb.datasets.names.resolve_dataset`, with a
    progress bar and errors turned into one line on stderr and exit status 2 (not pulled yet), a usage
    error (exit 2: the name of the official tool lists) or exit status 1 (the download or its
    verification failed; docs/cli.md §2)."""
    from wtb.datasets.names import resolve_dataset

    return _named(resolve_dataset, value, pull, "tools", "--dataset")


def named_tools(value: Path | None, pull: bool) -> Path | None:
    """``--tools`` value -> file path for the CLI: :func:`wtb.datasets.names.resolve_tools`, errors
    handled as in :func:`named_dataset` (the name of the official dataset is a usage error)."""
    from wtb.datasets.names import resolve_tools

    return _named(resolve_tools, value, pull, "dataset", "--tools")


def _named(
    resolve: Callable[..., Path | None], value: Path | None, pull: bool, other_kind: str, option: str
) -> Path | None:
    from wtb.datasets.names import NotPulledError, official_names
    from wtb.datasets.official import DataError

    bar = _DownloadBar()
    try:
        path = resolve(value, pull=pull, progress=bar)
    except NotPulledError as exc:
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    except DataError as exc:
        if str(value).lower() in official_names(other_kind):  # e.g. --tools wildtoolbench: the wrong name
            raise typer.BadParameter(str(exc), param_hint=f"'{option}'") from None
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(1) from None
    except OSError as exc:
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(1) from None
    finally:
        bar.close()
    if path is not None and value is not None and path != Path(value):
        _err.print(f"{value}: {path}", markup=False)
    return path
