"""``wtb data pull`` and the official data names of ``--dataset`` / ``--tools`` (``wildtoolbench``,
``wildtoolbench-en``, ``wildtoolbench-zh``; :mod:`wildtoolbench.data`).

Exit status of ``wtb data pull``: 0 when every selected file is in the cache, verified; 1 when one
is not (each failure is one line naming the file; offline, the line gives the URL to download and
the cache path to save it as). A name whose file is not pulled yet is the run's configuration
(exit 2), a name of the other kind a usage error (docs/cli.md §2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from wildtoolbench.bench.schema import infer_task_count
from wildtoolbench.common.exits import BadInput, UsageError
from wildtoolbench.data.names import NotPulledError, official_names, resolve_dataset, resolve_tools
from wildtoolbench.data.official import (
    COMMIT,
    REPOSITORY_URL,
    DataError,
    OfflineError,
    PullResult,
    data_dir,
    pull_files,
    select_pins,
)

_err = Console(stderr=True, highlight=False, soft_wrap=True)
_out = Console(highlight=False, soft_wrap=True)


class DownloadBar:
    """A rich progress bar on stderr, started at the first progress report (never during a prompt),
    shown only on a terminal; usable as the ``progress`` callback of :mod:`wildtoolbench.data.official`
    (``bar(pin, done_bytes, total_bytes_or_None)``)."""

    def __init__(self, enabled: bool = True) -> None:
        self._enabled = enabled  # and stderr a terminal: asked at the first report
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __call__(self, pin: Any, done: int, total: int | None) -> None:
        if self._enabled and self._bar is None and not _err.is_terminal:
            self._enabled = False
        if not self._enabled:
            return
        if self._bar is None:
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


def pull_data(only: str | None = None, source: Path | None = None, show_progress: bool = True) -> None:
    """Put the official files into the cache (``wtb data pull``), each verified; print one line per file
    fetched or copied, and what was already there.

    Args:
        only: ``"dataset"``, ``"tools"`` or ``None`` (all three files).
        source: a local clone of the official repository to copy from instead of downloading.
        show_progress: a download bar on stderr (on a terminal).

    Raises:
        wildtoolbench.data.official.DataError: a malformed pin table (exit 1).
        BadInput: some file is not in the cache (each failure printed first; exit 1).
    """
    pins = select_pins(only)
    bar = DownloadBar(show_progress)
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
        raise BadInput(f"{failed} of {len(pins)} file(s) not in the cache")


def dataset_path(value: Path | None, pull: bool) -> Path | None:
    """``--dataset`` value -> file path: :func:`wildtoolbench.data.names.resolve_dataset` with a download bar;
    a resolved name is printed as ``wildtoolbench: <path>`` on stderr. ``None`` stays ``None``.

    Raises:
        UsageError: the name of the official tool lists (exit 2).
        wildtoolbench.data.names.NotPulledError: the official dataset is not in the cache and ``pull`` is
            false (exit 2).
        wildtoolbench.data.official.DataError, OSError: the download or its verification failed (exit 1).
    """
    return _named(resolve_dataset, value, pull, "tools", "--dataset")


def tools_path(value: Path | None, pull: bool) -> Path | None:
    """``--tools`` value -> file path: :func:`wildtoolbench.data.names.resolve_tools`, as :func:`dataset_path`
    (the name of the official dataset is the usage error)."""
    return _named(resolve_tools, value, pull, "dataset", "--tools")


def _named(
    resolve: Callable[..., Path | None], value: Path | None, pull: bool, other_kind: str, option: str
) -> Path | None:
    bar = DownloadBar()
    try:
        path = resolve(value, pull=pull, progress=bar)
    except NotPulledError:
        raise
    except DataError as exc:
        if str(value).lower() in official_names(other_kind):  # e.g. --tools wildtoolbench: the wrong name
            raise UsageError(str(exc), option) from None
        raise
    finally:
        bar.close()
    if path is not None and value is not None and path != Path(value):
        _err.print(f"{value}: {path}", markup=False)
    return path


def official_name(given: Path | None) -> str | None:
    """The official dataset name the user typed as ``--dataset`` (``wildtoolbench``, any case, and no
    file of that name here), else ``None``."""
    if given is None:
        return None
    text = str(given).lower()
    return text if text in official_names("dataset") and not Path(given).is_file() else None


def task_count(dataset: Path, tasks: int | None) -> int:
    """``--tasks`` when given, else the count every session of ``dataset`` has
    (:func:`wildtoolbench.bench.schema.infer_task_count`, docs/dataset.md §6).

    Raises:
        wildtoolbench.bench.schema.DatasetError: the sessions have different counts (each line named).
    """
    return tasks if tasks is not None else infer_task_count(dataset)
