"""The dataset file of a run for a report: the one ``run.json`` names (unchanged since the run), read and
validated once per file, and whether it is the official dataset (docs/metrics.md §10)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from wildtoolbench.bench.schema import MIXED_TASKS, DatasetError, load_sessions, task_counts
from wildtoolbench.common.run_folder import (
    RUN_FILE,
)
from wildtoolbench.data.official import OFFICIAL_DATASET
from wildtoolbench.reports.run_data import Dataset, ReportError, read_json


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes (as ``run.json`` records it).

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_dataset_file(run_dir: Path, override: Path | None) -> Path:
    """The dataset file of a run: the one ``run.json`` names, else ``override``.

    Raises:
        ReportError: ``run.json`` names a file whose content changed since the run
            (sha256 differs), or no dataset can be found.
    """
    info_path = run_dir / RUN_FILE
    if info_path.is_file():
        info = read_json(info_path)
        named = Path(str(info.get("dataset", ""))) if isinstance(info, dict) and info.get("dataset") else None
        if named is not None and named.is_file():
            recorded = info.get("dataset_sha256")
            if recorded and file_sha256(named) != recorded:
                raise ReportError(
                    f"{info_path}: the dataset {named} changed since the run (sha256 differs); "
                    "the report would pair results with other sessions"
                )
            return named
        if override is None:
            raise ReportError(f"{info_path}: names the dataset {named}, which is not there; pass --dataset")
    if override is None:
        raise ReportError(f"{run_dir}: no {RUN_FILE} naming the dataset (a `wtb score` folder?); pass --dataset")
    if not override.is_file():
        raise ReportError(f"{override}: dataset file not found")
    return override


def load_report_dataset(path: Path, key: str, tasks: int) -> Dataset:
    """Read and validate a dataset file (docs/dataset.md) for the report: ``tasks`` per session, or each
    session against its own count when the file is a variant set (docs/variants.md §2).

    Raises:
        ReportError: the file is missing or malformed (the first problems are listed).
    """
    if task_counts(path)[0] == MIXED_TASKS:
        tasks = MIXED_TASKS
    try:
        sessions = [s.to_dict() for s in load_sessions(path, tasks=tasks)]
    except DatasetError as exc:
        shown = "; ".join(str(i) for i in exc.issues[:5])
        raise ReportError(f"{path}: not a valid dataset ({len(exc.issues)} problem(s)): {shown}") from None
    return Dataset(
        key, path, file_sha256(path), sessions, {s["id"]: i for i, s in enumerate(sessions)}, official=is_official(path)
    )


def is_official(path: Path) -> bool:
    """Whether ``path`` holds exactly the official dataset's bytes (its git blob id is the one pinned under
    :data:`OFFICIAL_DATASET`, docs/metrics.md §10).

    Raises:
        ReportError: ``WTB_DATA_PINS`` names an unreadable or malformed pin table.
    """
    from wildtoolbench.data.official import PinsError, git_blob_id, pin_table

    try:
        pin = pin_table().get(OFFICIAL_DATASET)
    except PinsError as exc:
        raise ReportError(str(exc)) from None
    return pin is not None and git_blob_id(path) == pin.blob
