"""LangSmith experiments: sessions as a LangSmith dataset, the evaluation graph as ``aevaluate`` target.

Flow (issue 5, part 2)::

    upload_dataset(client, "wtb-demo", sessions)          # idempotent: deterministic example ids
    await run_experiment(sessions=..., dataset_name="wtb-demo", model="openai:gpt-4o",
                         run_session=..., settings={...})

- Each session is one example: ``inputs = {"session": <the session dict, docs/dataset.md>}``, reference
  outputs = the gold side (answer lists, task types, turn subtypes), metadata = id and task types.
  The example id is ``uuid5(EXAMPLE_NAMESPACE, "<dataset name>/<session id>")``; before creating,
  the dataset's existing ids are listed and only the missing examples are sent, so re-running
  never duplicates an example.
- The target runs the evaluation graph on ``inputs["session"]`` and returns ``{"record": <docs/evaluation.md §5
  result record>}``.
- Per-session evaluators (one feedback per task, keys ``task_<n>_label``,
  ``task_<n>_argument_label``, ``task_<n>_optimal`` with ``n`` 1-based, plus ``session_correct``)
  and the summary evaluator (``task_accuracy``, ``session_accuracy``, ``optimal_path_rate``,
  ``accomplish_progress_rate``, ``accuracy/<task type>``: the feedback keys of the metric catalog,
  docs/metrics.md §8, plus ``extra/<key>`` per extra metric) are computed with the project's
  scoring functions (:func:`wildtoolbench.bench.scoring.score_session`, :func:`wildtoolbench.bench.metrics.compute_metrics`):
  the numbers in LangSmith are the numbers of ``wtb score``.

The evaluators (:mod:`wildtoolbench.tracing.evaluators`) are pure functions over plain data; only
:func:`wildtoolbench.tracing.examples.upload_dataset` and :func:`run_experiment` talk to LangSmith.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.metrics import compute_metrics
from wildtoolbench.bench.schema import Session
from wildtoolbench.tracing import make_client, project_version, redact, redact_record
from wildtoolbench.tracing.evaluators import (
    PER_SESSION_EVALUATORS,
    field_of,
    record_of,
    run_language,
    score_example,
    summary_evaluator,
    unscored,
)
from wildtoolbench.tracing.examples import UploadReport, as_dict, upload_dataset

RunSession = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""``async (session dict) -> result record`` (docs/evaluation.md §5): one session through the evaluation graph."""


def make_experiment_client(**kwargs: Any) -> Any:
    """A redacting LangSmith client (see :func:`wildtoolbench.tracing.make_client`) that can wait for its feedback.

    ``aevaluate`` (langsmith 0.15) posts per-example feedback from a thread pool that it never
    joins, so scores can still be in flight when the experiment returns (and are lost if the
    process or server stops). This client routes that feedback through its own pool and
    ``client.wait_for_feedback()`` blocks until every score has been sent; :func:`run_experiment`
    calls it. Keyword arguments go to ``langsmith.Client``.
    """
    return make_client(client_class=_feedback_client_class(), **kwargs)


@functools.lru_cache(maxsize=1)
def _feedback_client_class() -> type:
    import concurrent.futures
    import threading

    import langsmith

    class FeedbackJoiningClient(langsmith.Client):
        """``langsmith.Client`` whose evaluation feedback goes through a pool that can be joined."""

        def _log_evaluation_feedback(self, *args: Any, _executor: Any = None, **kwargs: Any) -> Any:
            with self._wtb_lock:
                if self._wtb_pool is None:
                    self._wtb_pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
                pool = self._wtb_pool
            return super()._log_evaluation_feedback(*args, _executor=pool, **kwargs)

        def wait_for_feedback(self) -> None:
            """Block until every feedback submitted so far has been sent."""
            with self._wtb_lock:
                pool, self._wtb_pool = self._wtb_pool, None
            if pool is not None:
                pool.shutdown(wait=True)

    FeedbackJoiningClient._wtb_pool = None
    FeedbackJoiningClient._wtb_lock = threading.Lock()
    return FeedbackJoiningClient


def experiment_metadata(
    model: str,
    settings: Mapping[str, Any] | None = None,
    dataset_name: str | None = None,
    candidate: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Experiment metadata: model spec, settings (redacted), dataset name, project version, and for a ``graph:``
    candidate what its results depend on (``candidate``: the source's sha256, the models its graph holds,
    its declared model; ``wildtoolbench.runner.identity.candidate_identity``), so that two experiments of one
    agent file with different models carry different metadata."""
    meta: dict[str, Any] = {"model": model, "project_version": project_version(), "benchmark": "WildToolBench"}
    if dataset_name:
        meta["dataset"] = dataset_name
    if settings:
        meta["settings"] = redact(dict(settings))
    if candidate:
        meta["candidate"] = redact(dict(candidate))
    return meta


def default_experiment_prefix(model: str) -> str:
    """``wtb-<provider>-<model name>`` with only ``[A-Za-z0-9._-]`` kept (a replay file path keeps its file name)."""
    provider, _, name = model.partition(":")
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"wtb-{provider}-{name}").strip("-")


def make_target(
    run_session: RunSession, failures: dict[str, str] | None = None
) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """Wrap ``run_session`` as an ``aevaluate`` target: ``inputs -> {"record": redacted record}``.

    Args:
        run_session: ``async (session dict) -> record``; it raises when the session has nothing to score.
        failures: filled with ``{session id: the error's message, redacted}`` for each session whose
            ``run_session`` raised (the target re-raises: LangSmith shows the run as failed).
    """

    async def evaluation_graph(inputs: dict[str, Any]) -> dict[str, Any]:
        try:
            record = await run_session(inputs["session"])
        except Exception as exc:
            if failures is not None:
                failures[str(inputs["session"].get("id"))] = redact(str(exc) or type(exc).__name__)
            raise
        return {"record": redact_record(record)}

    return evaluation_graph


@dataclasses.dataclass
class ExperimentOutcome:
    """Result of :func:`run_experiment`: experiment name, upload report, records (by session id), metric dict,
    and the sessions with nothing to score (``infrastructure_errors``: ``{"id", "model_name", "error"}``
    each, :func:`unscored`)."""

    experiment_name: str
    upload: UploadReport
    records: dict[str, dict[str, Any]]
    metric: dict[str, Any]
    infrastructure_errors: list[dict[str, Any]] = dataclasses.field(default_factory=list)


async def run_experiment(
    *,
    sessions: Sequence[Session | Mapping[str, Any]],
    dataset_name: str,
    model: str,
    run_session: RunSession,
    settings: Mapping[str, Any] | None = None,
    client: Any = None,
    experiment_prefix: str | None = None,
    max_concurrency: int = 4,
    upload_results: bool = True,
    candidate: Mapping[str, Any] | None = None,
) -> ExperimentOutcome:
    """Upload ``sessions`` as dataset ``dataset_name`` and run a LangSmith experiment on it.

    Args:
        sessions: the sessions to evaluate (uploaded idempotently, see :func:`upload_dataset`).
        dataset_name: LangSmith dataset name.
        model: the candidate's model spec (experiment metadata, default experiment prefix).
        run_session: ``async (session dict) -> result record``; runs the evaluation graph.
        settings: run settings recorded as experiment metadata (temperature, base URL, ...; redacted).
        client: a client from :func:`make_experiment_client` (default); with a plain
            ``langsmith.Client`` some per-example feedback may still be in flight on return.
        experiment_prefix: experiment name prefix (default ``wtb-<model>``).
        max_concurrency: sessions evaluated at once.
        upload_results: ``False`` runs locally without sending runs or feedback (the dataset is still
            uploaded).
        candidate: what a ``graph:`` candidate's results depend on, for the metadata (:func:`experiment_metadata`).

    Returns:
        :class:`ExperimentOutcome` with the records of the sessions of this call that returned one, the
        metric dict computed by the scoring core over them, and the sessions whose target run failed
        (an infrastructure error: not scored, no feedback; :func:`unscored`).

    Raises:
        langsmith.utils.LangSmithError: API failures.
    """
    from langsmith import aevaluate

    client = client or make_experiment_client()
    report = upload_dataset(client, dataset_name, sessions)
    wanted = {as_dict(s)["id"] for s in sessions}
    examples = [e for e in client.list_examples(dataset_id=report.dataset_id) if e.inputs["session"]["id"] in wanted]
    examples.sort(key=lambda e: e.inputs["session"]["id"])
    failures: dict[str, str] = {}
    results = await aevaluate(
        make_target(run_session, failures),
        data=examples,
        evaluators=list(PER_SESSION_EVALUATORS),
        summary_evaluators=[summary_evaluator],
        metadata=experiment_metadata(model, settings, dataset_name, candidate),
        experiment_prefix=experiment_prefix or default_experiment_prefix(model),
        description=f"WildToolBench evaluation of {model}",
        max_concurrency=max_concurrency,
        client=client,
        upload_results=upload_results,
    )
    rows = [row async for row in results]
    await results.wait()
    wait_for_feedback = getattr(client, "wait_for_feedback", None)
    if wait_for_feedback is not None:
        await asyncio.to_thread(wait_for_feedback)
    records = {}
    scored = []
    errors = []
    for row in rows:
        problem = unscored(row["run"])
        if problem is not None:
            session_id = str(((field_of(row["example"], "inputs") or {})["session"])["id"])
            errors.append({"id": session_id, "model_name": model, "error": failures.get(session_id, problem)})
            continue
        record = record_of(row["run"], row["example"], model)
        records[record["id"]] = record
        scored.append(score_example(row["run"], row["example"]))
    metric = compute_metrics(
        next(iter(records.values()))["model_name"] if records else model,
        scored,
        language=run_language(records.values()),
    )
    client.flush()
    return ExperimentOutcome(
        experiment_name=results.experiment_name,
        upload=report,
        records=records,
        metric=metric,
        infrastructure_errors=sorted(errors, key=lambda e: e["id"]),
    )
