"""``wtb audit --stats``: the file side of a dataset's coverage and diversity (docs/coverage.md).

Finds the reference the figures are compared with (a dataset given with ``--reference``, else the
official dataset when it is in the cache, else the published figures), computes the figures
(:mod:`wildtoolbench.bench.coverage`), checks a fresh set for sessions that repeat the reference's (contamination)
and writes the whole as one JSON document.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.audit import Finding
from wildtoolbench.bench.coverage import comparison_rows, contamination, coverage_statistics, published_figures
from wildtoolbench.common.files import write_json_atomic


def cached_official_dataset() -> Path | None:
    """The official dataset's file when ``wtb data pull`` has put it in the cache (and it is the pinned
    one), else ``None`` (docs/coverage.md §8). Never downloads."""
    from wildtoolbench.data.official import OFFICIAL_DATASET, cached_file, pin_table

    pin = pin_table().get(OFFICIAL_DATASET)
    try:
        return cached_file(pin) if pin is not None else None
    except OSError:
        return None


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def coverage_report(
    dataset: str | os.PathLike[str],
    sessions: Sequence[Mapping[str, Any]],
    *,
    language: str = "en",
    reference: str | os.PathLike[str] | None = None,
    findings: Sequence[Finding] = (),
) -> dict[str, Any]:
    """The coverage and diversity document of a dataset (docs/coverage.md §10).

    Args:
        dataset: the audited file (named in the document).
        sessions: its sessions (JSON objects, as the audit read them).
        language: the side read.
        reference: the official (or any reference) dataset to compare with and check contamination
            against; ``None``: the cached official dataset when present
            (:func:`cached_official_dataset`), else the published figures. A reference that is the
            audited file itself is not compared with (the published figures are used).
        findings: the audit's findings, counted per kind and severity in the document.

    Returns:
        ``{"dataset", "language", "statistics", "reference": {"kind": "dataset"|"published", "path" or
        "source", "statistics"?}, "comparison", "contamination", "findings"}``; ``contamination`` is
        ``None`` when no reference dataset was at hand.

    Raises:
        wildtoolbench.bench.schema.DatasetError: the reference file cannot be read at all.
    """
    from wildtoolbench.audit.run import count_by_kind, read_dataset

    path = Path(reference) if reference is not None else cached_official_dataset()
    if path is not None and _same_file(path, dataset):
        path = None
    statistics = coverage_statistics(sessions, language)
    document: dict[str, Any] = {"dataset": os.fspath(dataset), "language": language, "statistics": statistics}
    if path is None:
        document["reference"] = {"kind": "published", "source": published_figures()["source"]}
        document["comparison"] = comparison_rows(statistics)
        document["contamination"] = None
    else:
        other = read_dataset(path, language=language).sessions
        reference_statistics = coverage_statistics(other, language)
        document["reference"] = {"kind": "dataset", "path": os.fspath(path), "statistics": reference_statistics}
        document["comparison"] = comparison_rows(statistics, reference_statistics)
        document["contamination"] = contamination(sessions, other, language)
    document["findings"] = count_by_kind(findings)
    return document


def write_coverage(path: str | os.PathLike[str], document: Mapping[str, Any]) -> None:
    """``--stats-json OUT``: the document of :func:`coverage_report`, as one JSON file (atomic)."""
    write_json_atomic(path, document)


__all__ = ["cached_official_dataset", "coverage_report", "write_coverage"]
