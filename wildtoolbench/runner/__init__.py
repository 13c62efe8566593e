"""Batch layer of ``wtb eval``: many sessions through the evaluation graph, checkpointed per session.

Layers (as in tau2-bench): the evaluation graph runs one session
(``graphs/evaluation.py``); :func:`evaluate_session` (:mod:`wildtoolbench.runner.invoke`) turns one graph run into
one docs/evaluation.md §5 record and never raises for a failing model; :func:`arun_eval`
(:mod:`wildtoolbench.runner.batch`) owns concurrency, the result store (:mod:`wildtoolbench.runner.store`), resume
(:mod:`wildtoolbench.runner.identity`), accounting (:mod:`wildtoolbench.runner.accounting`) and the progress bar.

Result file ``DIR/result.jsonl`` (:class:`ResultFile`):

- one line per session, appended as soon as the session finishes by the run's single
  writer task: the sessions that finish while a write is under way are appended together
  (one ``write``) with ONE ``fsync``, and each counts as done (summary, progress bar,
  ``on_record``) only after that fsync; session workers never wait for the disk;
- on start, a torn last line (no final newline, left by a crash) is dropped
  and its session runs again; sessions already in the file are skipped;
- at the end the file is rewritten sorted by id (atomically: temp file + rename).

A second run on the same directory while one is active is refused (lock file
``DIR/.wtb-eval.lock``).

Sessions (:func:`open_dataset`, :class:`DatasetSessions`): the dataset file is validated line by
line, then only each session's id and the byte range of its line are kept; a worker parses a
session when it takes it, so a run holds the sessions in flight, not the dataset.

Infrastructure errors (issue 6): a model request that still fails after its
retries (``wildtoolbench.models.transport.ModelRequestError``) leaves nothing to
score, so its session gets no line in ``result.jsonl``; it is appended to
``DIR/errors.jsonl`` instead, listed in the run summary, and run again by the
next resume (at the end of a run ``errors.jsonl`` keeps only the latest entry
of each session still without a result). This differs from the reference
harness on purpose: it scored such sessions as ``"Error during inference"``.
Reference-mode inference failures (quirk 11), a request the provider refused
for its content (HTTP 400/413/422, e.g. the context length of the model
exceeded: re-running cannot change it) and any other exception still give an
``"Error during inference: ..."`` record, which is scored.

Accounting: every session record carries a top-level ``"usage"`` key
(model requests, tries, provider-reported input/output tokens, retried
requests, wall time in seconds, cost in USD when prices are given); scoring
ignores it. ``DIR/summary.json`` holds the run's totals, the retried requests
and the infrastructure errors (:class:`RunSummary`).
"""

from wildtoolbench.runner.accounting import Prices, RunSummary, summary_json
from wildtoolbench.runner.batch import arun_eval, run_eval
from wildtoolbench.runner.identity import dataset_identity
from wildtoolbench.runner.invoke import (
    SessionOutcome,
    evaluate_session,
    recorded_model_name,
    run_session,
)
from wildtoolbench.runner.selection import (
    DatasetSessions,
    load_dataset,
    normalise_id,
    open_dataset,
    select_sessions,
    session_ids,
    session_sort_key,
)
from wildtoolbench.runner.store import (
    ERRORS_FILE,
    LOCK_FILE,
    RESULT_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    RecordInfo,
    ResultFile,
)

__all__ = [
    "ERRORS_FILE",
    "LOCK_FILE",
    "RESULT_FILE",
    "RUN_FILE",
    "SUMMARY_FILE",
    "DatasetSessions",
    "Prices",
    "RecordInfo",
    "ResultFile",
    "RunSummary",
    "SessionOutcome",
    "arun_eval",
    "dataset_identity",
    "evaluate_session",
    "load_dataset",
    "normalise_id",
    "open_dataset",
    "recorded_model_name",
    "run_eval",
    "run_session",
    "select_sessions",
    "session_ids",
    "session_sort_key",
    "summary_json",
]
