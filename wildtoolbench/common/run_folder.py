"""The names of the files a run folder holds, written once (docs/cli.md §3; docs/evaluation.md §5).

``wtb eval`` writes the result store, the lock, ``run.json`` and ``summary.json``
(:mod:`wildtoolbench.runner.store`); ``wtb eval`` and ``wtb score`` write the score outputs of a scoring mode
(:mod:`wildtoolbench.scoring.run`); ``wtb report`` and ``wtb compare`` read them. This module imports nothing, so
every reader may use it without loading the runner.
"""

from __future__ import annotations

RESULT_FILE = "result.jsonl"
"""One result record per session (docs/evaluation.md §5), appended as sessions finish."""

ERRORS_FILE = "errors.jsonl"
"""Sessions that hit infrastructure errors (not scored; the same command runs them again)."""

LOCK_FILE = ".wtb-eval.lock"
"""The run lock: one ``wtb eval`` at a time writes in a folder."""

RUN_FILE = "run.json"
"""``{"dataset", "dataset_sha256", "model_name", "scoring", "settings"}`` of the results in the directory,
written by :mod:`wildtoolbench.runner.identity` (resume check, resolved settings; ``settings.language`` is the side of
the dataset the results were made on)."""

SUMMARY_FILE = "summary.json"
"""The run's accounting (written by :mod:`wildtoolbench.runner.accounting`)."""

SCORE_FILE = "score.jsonl"
"""The scored sessions of reference mode (docs/scoring.md)."""

METRIC_FILE = "metric.json"
"""The metric dict in the published format (docs/metrics.md §5): an empty group reads 0.0 there."""

SUMMARY_METRICS_FILE = "summary_metrics.json"
"""The same metrics for reading (docs/metrics.md §7): an empty group is ``null``, the language is named."""

FIXED_SCORE_FILE = "score.fixed.jsonl"
""":data:`SCORE_FILE` of fixed mode (docs/fixed-mode.md §1)."""

FIXED_METRIC_FILE = "metric.fixed.json"
""":data:`METRIC_FILE` of fixed mode (docs/fixed-mode.md §1)."""

FIXED_SUMMARY_METRICS_FILE = "summary_metrics.fixed.json"
""":data:`SUMMARY_METRICS_FILE` of fixed mode (docs/fixed-mode.md §1)."""

TRIALS_RESULT_FILE = "result.trials.jsonl"
"""The records of trials 2, 3, ... of ``wtb eval --trials K`` (each with ``"trial"``; trial 1 is in
:data:`RESULT_FILE`, docs/trials.md §5)."""

TRIALS_SCORE_FILE = "score.trials.jsonl"
"""The score lines of trials 2, 3, ... (each with ``"trial"``) in reference mode (docs/trials.md §5)."""

FIXED_TRIALS_SCORE_FILE = "score.trials.fixed.jsonl"
""":data:`TRIALS_SCORE_FILE` of fixed mode."""

TRIALS_FILE = "trials.json"
"""pass^k, pass@k and flip rate over the trials of a run (docs/trials.md §5), reference mode."""

FIXED_TRIALS_FILE = "trials.fixed.json"
""":data:`TRIALS_FILE` of fixed mode."""

TRIALS_SUMMARY_FILE = "trials_summary.json"
"""The full trial summary (intervals, per-trial accuracy, buckets; ``wildtoolbench.bench.trials.summarize_trials``), reference mode."""

FIXED_TRIALS_SUMMARY_FILE = "trials_summary.fixed.json"
""":data:`TRIALS_SUMMARY_FILE` of fixed mode."""

UNTIL_DECIDED_FILE = "until_decided.json"
"""What ``wtb eval --until-decided`` decided and what it cost (docs/trials.md §7)."""
