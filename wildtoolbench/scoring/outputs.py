"""The files a scoring writes into a run folder, by scoring mode (docs/fixed-mode.md §1, docs/metrics.md §7,
docs/trials.md §5), and their removal when a rescoring fails (docs/evaluation.md §5)."""

from __future__ import annotations

import os
from pathlib import Path

from wildtoolbench.bench.strategy import SCORING_STRATEGIES, ScoringStrategy, scoring_strategy
from wildtoolbench.common.run_folder import (
    METRIC_FILE,
    SCORE_FILE,
    SUMMARY_METRICS_FILE,
    TRIALS_FILE,
    TRIALS_SCORE_FILE,
    TRIALS_SUMMARY_FILE,
)


def score_files(scoring: ScoringStrategy | str | None = None) -> tuple[str, str]:
    """``(score file, metric file)`` names of a scoring mode: ``score.jsonl`` / ``metric.json`` in reference
    mode, ``score.fixed.jsonl`` / ``metric.fixed.json`` in fixed mode (the strategy's ``file_name``), so every
    mode can sit in one run directory (docs/fixed-mode.md §1). Raises ValueError for an unknown mode."""
    strategy = scoring_strategy(scoring)
    return strategy.file_name(SCORE_FILE), strategy.file_name(METRIC_FILE)


def summary_metrics_file(scoring: ScoringStrategy | str | None = None) -> str:
    """The readable metrics file of a scoring mode (docs/metrics.md §7): ``summary_metrics.json``, or
    ``summary_metrics.fixed.json`` in fixed mode (beside :func:`score_files`). Raises ValueError for an unknown mode."""
    return scoring_strategy(scoring).file_name(SUMMARY_METRICS_FILE)


def score_outputs(scoring: ScoringStrategy | str | None = None) -> tuple[str, ...]:
    """The file names a scoring writes into a run folder: the score, metric and readable metric files of
    ``scoring`` (:func:`score_files`, :func:`summary_metrics_file`) and the trial files (:func:`trial_files`,
    docs/trials.md §5), or of every mode when ``None``
    (docs/evaluation.md §5). Raises ValueError for an unknown mode."""
    modes = tuple(SCORING_STRATEGIES.values()) if scoring is None else (scoring_strategy(scoring),)
    return tuple(
        name for mode in modes for name in (*score_files(mode), summary_metrics_file(mode), *trial_files(mode))
    )


def remove_scores(out_dir: str | os.PathLike[str], scoring: ScoringStrategy | str | None = None) -> list[Path]:
    """Delete the score outputs of ``scoring`` (every mode when ``None``) from ``out_dir``, so that no metric
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


def trial_files(scoring: ScoringStrategy | str | None = None) -> tuple[str, str, str]:
    """``(score lines of trials 2.., trials.json, full trial summary)`` file names of a scoring mode
    (docs/trials.md §5; the strategy's ``file_name``). Raises ValueError for an unknown mode."""
    strategy = scoring_strategy(scoring)
    return tuple(strategy.file_name(name) for name in (TRIALS_SCORE_FILE, TRIALS_FILE, TRIALS_SUMMARY_FILE))  # type: ignore[return-value]
