"""The evaluators of a LangSmith experiment, pure functions over plain data: per session one feedback per task
(label, argument label, optimal) and ``session_correct``; the summary's metrics are the feedback keys of the
metric catalog (docs/metrics.md §8), computed with the project's scoring, so they are the numbers of ``wtb score``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.catalog import EXTRA_SECTION, for_metric_dict
from wildtoolbench.bench.metrics import compute_metrics, metric_bucket
from wildtoolbench.bench.schema import Session
from wildtoolbench.bench.scoring import CORRECT, INFERENCE_ERROR_PREFIX, score_session


def field_of(obj: Any, name: str) -> Any:
    """Attribute or key ``name`` of a LangSmith run or example (an object or a dict), ``None`` when absent."""
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
    outputs = field_of(run, "outputs") or {}
    record = outputs.get("record") if isinstance(outputs, Mapping) else None
    if isinstance(record, Mapping):
        return dict(record)
    session = (field_of(example, "inputs") or {})["session"]
    error = field_of(run, "error") or "target returned no record"
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
    outputs = field_of(run, "outputs") or {}
    if isinstance(outputs, Mapping) and isinstance(outputs.get("record"), Mapping):
        return None
    error = str(field_of(run, "error") or "").strip()
    return error.splitlines()[0] if error else "target returned no record"


def score_example(run: Any, example: Any) -> tuple[Session, list[dict[str, Any]]]:
    """Score one target run against its example with :func:`wildtoolbench.bench.scoring.score_session`.

    Returns:
        ``(session, scored_tasks)`` as ``compute_metrics`` takes them.
    """
    session = Session.model_validate((field_of(example, "inputs") or {})["session"])
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
