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

The evaluators are pure functions over plain data; only :func:`upload_dataset` and
:func:`run_experiment` talk to LangSmith.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.catalog import EXTRA_SECTION, for_metric_dict
from wildtoolbench.bench.metrics import compute_metrics, metric_bucket
from wildtoolbench.bench.schema import Session
from wildtoolbench.bench.scoring import CORRECT, INFERENCE_ERROR_PREFIX, score_session
from wildtoolbench.tracing import make_client, project_version, redact, redact_record

EXAMPLE_NAMESPACE = uuid.UUID("5b7c3f0e-2a41-4e55-9d0c-8f1f5e0c7a11")
"""Namespace of the deterministic example ids (uuid5)."""

RunSession = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""``async (session dict) -> result record`` (docs/evaluation.md §5): one session through the evaluation graph."""


# --------------------------------------------------------------------------- dataset


def example_id(dataset_name: str, session_id: str) -> uuid.UUID:
    """Deterministic LangSmith example id of ``session_id`` in dataset ``dataset_name`` (uuid5)."""
    return uuid.uuid5(EXAMPLE_NAMESPACE, f"{dataset_name}/{session_id}")


def _as_dict(session: Session | Mapping[str, Any]) -> dict[str, Any]:
    return session.to_dict() if isinstance(session, Session) else dict(session)


def session_example(dataset_name: str, session: Session | Mapping[str, Any]) -> dict[str, Any]:
    """The LangSmith example of one session.

    Returns:
        ``{"id", "inputs": {"session": <session dict>}, "reference_outputs": {"answer_list", "task_types",
        "turn_subtypes"}, "metadata": {"session_id", "task_types", "turn_subtypes"}}`` where
        ``answer_list`` / ``task_types`` / ``turn_subtypes`` are the ``english_*`` fields.
    """
    data = _as_dict(session)
    return {
        "id": str(example_id(dataset_name, data["id"])),
        "inputs": {"session": data},
        "reference_outputs": {
            "answer_list": data.get("english_answer_list"),
            "task_types": data.get("english_task_types"),
            "turn_subtypes": data.get("english_turn_subtypes"),
        },
        "metadata": {
            "session_id": data["id"],
            "task_types": data.get("english_task_types"),
            "turn_subtypes": data.get("english_turn_subtypes"),
        },
    }


@dataclasses.dataclass
class UploadReport:
    """What :func:`upload_dataset` did: dataset id, and example ids created / already present."""

    dataset_id: str
    dataset_created: bool
    created: list[str]
    existing: list[str]


def upload_dataset(
    client: Any,
    dataset_name: str,
    sessions: Iterable[Session | Mapping[str, Any]],
    *,
    description: str | None = None,
) -> UploadReport:
    """Create (or reuse) LangSmith dataset ``dataset_name`` holding one example per session; idempotent.

    Args:
        client: a ``langsmith.Client``.
        dataset_name: dataset name in LangSmith.
        sessions: sessions (docs/dataset.md), as :class:`Session` or dicts.
        description: dataset description for a new dataset.

    Returns:
        :class:`UploadReport`. Examples whose deterministic id is already in the dataset are not
        sent again (their content is not updated either).

    Raises:
        langsmith.utils.LangSmithError: API failures.
        ValueError: two sessions with the same id.
    """
    examples = [session_example(dataset_name, s) for s in sessions]
    ids = [e["id"] for e in examples]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate session ids in the sessions uploaded to {dataset_name!r}")
    created_dataset = False
    if client.has_dataset(dataset_name=dataset_name):
        dataset = client.read_dataset(dataset_name=dataset_name)
    else:
        dataset = client.create_dataset(
            dataset_name,
            description=description or "WildToolBench sessions (one example per session)",
            metadata={"project_version": project_version()},
        )
        created_dataset = True
    present = {str(e.id) for e in client.list_examples(dataset_id=dataset.id)}
    missing = [e for e in examples if e["id"] not in present]
    if missing:
        client.create_examples(dataset_id=dataset.id, examples=missing)
    return UploadReport(
        dataset_id=str(dataset.id),
        dataset_created=created_dataset,
        created=[e["id"] for e in missing],
        existing=[i for i in ids if i in present],
    )


# --------------------------------------------------------------------------- scoring glue


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def record_of(run: Any, example: Any, model_name: str = "unknown") -> dict[str, Any]:
    """The result record a target run produced, or an inference-error record when the run failed.

    Args:
        run: a LangSmith ``Run`` (or dict) whose ``outputs`` is ``{"record": ...}``.
        example: the LangSmith ``Example`` (or dict) of the session.
        model_name: model name for the error record.

    Returns:
        A docs/evaluation.md §5 record; a run without a record scores as ``"Error during inference: <error>"``.
    """
    outputs = _field(run, "outputs") or {}
    record = outputs.get("record") if isinstance(outputs, Mapping) else None
    if isinstance(record, Mapping):
        return dict(record)
    session = (_field(example, "inputs") or {})["session"]
    error = _field(run, "error") or "target returned no record"
    return {"id": session["id"], "model_name": model_name, "result": f"{INFERENCE_ERROR_PREFIX}: {error}"}


def unscored(run: Any) -> str | None:
    """Why a target run has nothing to score, or ``None`` when it returned a record.

    The target raises when a session hit an infrastructure error (``wildtoolbench.runner.evaluate_session``: a
    model request that failed for good: a refused connection, HTTP 401/403/404, timeouts after the
    retries), so its run has an error and no record; such a session is not scored, as in a local run
    (docs/guides/faults.md), and none of its feedback is posted.

    Returns:
        The first line of the run's error (``"ModelRequestError('model request failed ...')"``), or
        ``"target returned no record"``.
    """
    outputs = _field(run, "outputs") or {}
    if isinstance(outputs, Mapping) and isinstance(outputs.get("record"), Mapping):
        return None
    error = str(_field(run, "error") or "").strip()
    return error.splitlines()[0] if error else "target returned no record"


def score_example(run: Any, example: Any) -> tuple[Session, list[dict[str, Any]]]:
    """Score one target run against its example with :func:`wildtoolbench.bench.scoring.score_session`.

    Returns:
        ``(session, scored_tasks)`` as ``compute_metrics`` takes them.
    """
    session = Session.model_validate((_field(example, "inputs") or {})["session"])
    return session, score_session(record_of(run, example), session)


def _task_results(run: Any, example: Any, key: str) -> dict[str, Any]:
    session, tasks = score_example(run, example)
    results = []
    for index, task in enumerate(tasks):
        task_type = session.english_task_types[index]
        if key == "label":
            value = task.get("label")
            score = int(value == CORRECT)
        elif key == "argument_label":
            value = task.get("action_arguments_label")
            if value is None:
                # no label when names already failed (docs/scoring.md): the arguments were not judged
                results.append(
                    {
                        "key": f"task_{index + 1}_argument_label",
                        "score": None,
                        "value": "not checked",
                        "comment": f"{task_type}; name label {task.get('action_name_label')}",
                    }
                )
                continue
            score = int(value == CORRECT)
        else:  # optimal
            value = bool(task.get("is_optimal"))
            score = int(value)
        results.append({"key": f"task_{index + 1}_{key}", "score": score, "value": str(value), "comment": task_type})
    return {"results": results}


def task_label_evaluator(run: Any, example: Any) -> dict[str, Any]:
    """Per-task feedback ``task_<n>_label``: 1 when task n is ``correct`` (docs/scoring.md), else 0; none
    for a run with nothing to score (:func:`unscored`)."""
    return {"results": []} if unscored(run) else _task_results(run, example, "label")


def argument_label_evaluator(run: Any, example: Any) -> dict[str, Any]:
    """Per-task feedback ``task_<n>_argument_label``: 1 correct / 0 error / none when names failed first;
    none for a run with nothing to score (:func:`unscored`)."""
    return {"results": []} if unscored(run) else _task_results(run, example, "argument_label")


def optimal_evaluator(run: Any, example: Any) -> dict[str, Any]:
    """Per-task feedback ``task_<n>_optimal``: 1 when task n ended on an optimal path (``is_optimal``); none
    for a run with nothing to score (:func:`unscored`)."""
    return {"results": []} if unscored(run) else _task_results(run, example, "optimal")


def session_correct_evaluator(run: Any, example: Any) -> dict[str, Any]:
    """Feedback ``session_correct``: 1 when all tasks of the session are correct (docs/metrics.md); none for a
    run with nothing to score (:func:`unscored`)."""
    if unscored(run):
        return {"results": []}
    _, tasks = score_example(run, example)
    return {"key": "session_correct", "score": int(all(t.get("label") == CORRECT for t in tasks))}


PER_SESSION_EVALUATORS = (task_label_evaluator, argument_label_evaluator, optimal_evaluator, session_correct_evaluator)


def metric_feedback(metric: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Summary feedback from a metric dict of :func:`wildtoolbench.bench.metrics.compute_metrics` (docs/metrics.md §8).

    Returns:
        One ``{"key", "score"}`` per catalog entry with a feedback key (``wildtoolbench.bench.catalog.Metric.feedback``),
        in catalog order: ``task_accuracy``, ``session_accuracy``, ``accuracy/<task type>`` for the six
        task types and ``Multi-Tool`` (with a ``"c/t tasks"`` comment), ``optimal_path_rate``,
        ``accomplish_progress_rate``, then ``extra/<key>`` for the extra metrics the dict holds
        (``metric["extra"]``). Scores are fractions in [0, 1] (the leaderboard shows them as percentages).
    """
    out = []
    for entry in for_metric_dict(metric):
        bucket = metric_bucket(metric, entry) if entry.feedback else None
        if bucket is None:
            continue
        progress = "rate" in bucket
        item: dict[str, Any] = {"key": entry.feedback, "score": bucket["rate" if progress else "accuracy"]}
        if entry.section in ("task_type", EXTRA_SECTION):
            counts = (
                f"{bucket['complete_step']}/{bucket['total_step']} steps"
                if progress
                else f"{bucket['correct_count']}/{bucket['total_count']} tasks"
            )
            item["comment"] = counts
        out.append(item)
    return out


def summary_evaluator(runs: Sequence[Any], examples: Sequence[Any]) -> dict[str, Any]:
    """Experiment-level feedback (``aevaluate`` summary evaluator): the run metrics of docs/metrics.md.

    Args:
        runs: the target runs, in the order of ``examples``.
        examples: the LangSmith examples (sessions).

    Returns:
        ``{"results": metric_feedback(compute_metrics(..., extra=True))}`` (the extra metrics of the
        catalog included, docs/metrics.md §8) over the runs that returned a record (:func:`unscored`);
        ``{"results": []}`` when none did.
    """
    pairs = [(run, example) for run, example in zip(runs, examples) if not unscored(run)]
    if not pairs:
        return {"results": []}
    scored = [score_example(run, example) for run, example in pairs]
    records = [record_of(r, e) for r, e in pairs]
    model_names = {record.get("model_name") for record in records}
    model_name = next(iter(model_names)) if len(model_names) == 1 else "mixed"
    metric = compute_metrics(str(model_name), scored, language=run_language(records), extra=True)
    return {"results": metric_feedback(metric)}


def run_language(records: Iterable[Mapping[str, Any]]) -> str:
    """The dataset side an experiment ran (docs/dataset.md §2.2): ``zh`` when a record says so (a record
    of a failed target run carries no language), else ``en``."""
    return "zh" if any(record.get("language") == "zh" for record in records) else "en"


# --------------------------------------------------------------------------- experiment


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
    wanted = {_as_dict(s)["id"] for s in sessions}
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
            session_id = str(((_field(row["example"], "inputs") or {})["session"])["id"])
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
