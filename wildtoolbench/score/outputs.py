"""The files a scoring writes into a run folder, by scoring mode (docs/fixed-mode.md §1, docs/metrics.md §7,
docs/trials.md §5), and their removal when a rescoring fails (docs/evaluation.md §5)."""

from __future__ import annotations

import os
from pathlib import Path

from wildtoolbench.bench.terms import check_scoring_mode
from wildtoolbench.common.run_folder import (
    FIXED_METRIC_FILE,
    FIXED_SCORE_FILE,
    FIXED_SUMMARY_METRICS_FILE,
    FIXED_TRIALS_FILE,
    FIXED_TRIALS_SCORE_FILE,
    FIXED_TRIALS_SUMMARY_FILE,
    METRIC_FILE,
    SCORE_FILE,
    SUMMARY_METRICS_FILE,
    TRIALS_FILE,
    TRIALS_SCORE_FILE,
    TRIALS_SUMMARY_FILE,
)


def score_files(scoring: str = "reference") -> tuple[str, str]:
    """``(score file, metric file)`` names of a scoring mode: ``score.jsonl`` / ``metric.json`` in reference
    mode, ``score.fixed.jsonl`` / ``metric.fixed.json`` in fixed mode, so both can sit in one run
    directory (docs/fixed-mode.md §1). Raises ValueError for an unknown mode."""
    return (
        (FIXED_SCORE_FILE, FIXED_METRIC_FILE) if check_scoring_mode(scoring) == "fixed" else (SCORE_FILE, METRIC_FILE)
    )


def summary_metrics_file(scoring: str = "reference") -> str:
    """The readable metrics file of a scoring mode (docs/metrics.md §7): ``summary_metrics.json``, or
    ``summary_metrics.fixed.json`` in fixed mode (beside :func:`score_files`). Raises ValueError for an unknown mode."""
    return FIXED_SUMMARY_METRICS_FILE if check_scoring_mode(scoring) == "fixed" else SUMMARY_METRICS_FILE


def score_outputs(scoring: str | None = None) -> tuple[str, ...]:
    """The file names a scoring writes into a run folder: the score, metric and readable metric files of
    ``scoring`` (:func:`score_files`, :func:`summary_metrics_file`) and the trial files (:func:`trial_files`,
    docs/trials.md §5), or of both modes when ``None``
    (docs/evaluation.md §5). Raises ValueError for an unknown mode."""
    modes = ("reference", "fixed") if scoring is None else (scoring,)
    return tuple(
        name for mode in modes for name in (*score_files(mode), summary_metrics_file(mode), *trial_files(mode))
    )


def remove_scores(out_dir: str | os.PathLike[str], scoring: str | None = None) -> list[Path]:
    """Delete the score outputs of ``scoring`` (both modes when ``None``) from ``out_dir``, so that no metric
    is shown beside results it was not computed from (docs/evaluation.md §5).

    Returns:
        The files removed (missing ones are skipped).

    Raises:
        OSError: a file exists but cannot be removed (the error names it).
    """
    removed = []
    for name in score_outputs(scoring):
        path = Path(out_dir) / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def trial_files(scoring: str = "reference") -> tuple[str, str, str]:
    """``(score lines of trials 2.., trials.json, full trial summary)`` file names of a scoring mode
    (docs/trials.md §5). Raises ValueError for an unknown mode."""
    if check_scoring_mode(scoring) == "fixed":
        return FIXED_TRIALS_SCORE_FILE, FIXED_TRIALS_FILE, FIXED_TRIALS_SUMMARY_FILE
    return TRIALS_SCORE_FILE, TRIALS_FILE, TRIALS_SUMMARY_FILE
