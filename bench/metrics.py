"""Run-level metrics over scored sessions (docs/metrics.md; fixtures README quirks 17-20).

The metric dict has exactly the reference's keys and key order::

    {"model_name",
     "total_info": {"task": B, "session": B},
     "task_type_info": {"Single-Tool", "Multi-Tool", "Parallel Multi-Tool",
                        "Sequential Multi-Tool", "Mixed Multi-Tool", "Clarify", "Chat"},
     "layer_info": {"0", "1", "2", "3"},
     "turn_subtype_info": {"First Turn", "Subsequent Turn", "Coreferential Reference",
                           "Partial Information", "Long-Range Dependency"},
     "optimal_info": {"Total", "Parallel Multi-Tool", "Mixed Multi-Tool"},
     "progress_info": {"Total", "Sequential Multi-Tool", "Mixed Multi-Tool"}}

where an accuracy bucket B is ``{"accuracy", "correct_count", "total_count"}``
and a progress bucket ``{"rate", "complete_step", "total_step"}``; the ratio
comes first and is 0.0 when the denominator is 0. Every bucket is present even
when empty.

Metrics that are not the paper's (the ``extra`` section of :mod:`wildtoolbench.bench.catalog`) are
counted beside these buckets (:meth:`MetricsAccumulator.extra`) and never enter the
published dict; :func:`with_extra` puts them under ``"extra"`` of the dict a caller
passes on (the terminal table, ``summary_metrics.json``) and :func:`published` takes
them off again for ``metric.json``.

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.catalog import EXTRA_SECTION, METRIC_SECTIONS, Metric, extra_metrics, for_metric_dict
from wildtoolbench.bench.pairing import canonical_arguments
from wildtoolbench.bench.schema import MULTI_TOOL_TYPES, TASK_TYPES, TURN_SUBTYPES, Session, bucket_labels, fields_for
from wildtoolbench.bench.scoring import CORRECT, step_keys
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.bench.terms import FIRST_TURN, MULTI_TOOL, OPTIMAL_TYPES, PROGRESS_TYPES, SUBSEQUENT_TURN  # noqa: E402,F401

LAYERS = 4


class _Accuracy:
    def __init__(self) -> None:
        self.correct = 0
        self.total = 0

    def add(self, correct: bool) -> None:
        self.total += 1
        self.correct += int(bool(correct))

    def as_dict(self) -> dict[str, Any]:
        return {
            "accuracy": self.correct / self.total if self.total else 0.0,
            "correct_count": self.correct,
            "total_count": self.total,
        }


class _Progress:
    def __init__(self) -> None:
        self.complete = 0
        self.total = 0

    def add(self, complete: int, total: int) -> None:
        self.complete += complete
        self.total += total

    def as_dict(self) -> dict[str, Any]:
        return {
            "rate": self.complete / self.total if self.total else 0.0,
            "complete_step": self.complete,
            "total_step": self.total,
        }


def _field(session: Session | Mapping[str, Any], name: str) -> Any:
    return getattr(session, name) if isinstance(session, Session) else session[name]


def compute_metrics(
    model_name: str,
    scored: Iterable[tuple[Session | Mapping[str, Any], Sequence[Mapping[str, Any]]]],
    *,
    scoring: ScoringStrategy | str | None = None,
    language: str = "en",
    extra: bool = False,
) -> dict[str, Any]:
    """The metric dict of one model's run (docs/metrics.md), identical to the reference's.

    Args:
        model_name: stored as ``metric["model_name"]``.
        scored: ``(session, scored_tasks)`` pairs; ``session`` is a :class:`Session`
            or its dict, ``scored_tasks`` the output of ``wildtoolbench.bench.scoring.score_session``
            (one dict per task, in task order, each with ``label``, ``is_optimal``
            and the post-scoring ``inference_log``). Read once, one pair at a time
            (a generator keeps memory flat; :class:`MetricsAccumulator` is the same count
            fed pair by pair).
        language: the side that ran (docs/dataset.md §2.2); it only chooses the labels the
            tasks are counted under (:func:`wildtoolbench.bench.schema.bucket_labels`; the buckets are the
            English ones either way).
        extra: also count the catalog's extra metrics (docs/metrics.md §8) and add them under
            ``"extra"`` (:func:`with_extra`; nothing is added when none is registered).

    Returns:
        The metric dict (module docstring): task accuracy is the share of
        ``label == "correct"``; a session is correct when all its tasks are;
        task types come from ``english_task_types``; turn subtype of task i>0 is
        ``english_turn_subtypes[i-1]`` (``zh``: the Chinese labels mapped to these
        buckets, docs/metrics.md §1); the optimal-path rate counts
        ``is_optimal`` over Parallel and Mixed tasks; the accomplish-progress
        rate is (``step_*`` keys left in the scored log) / ``len(answer_list[i])``
        (Chinese-side field) over Sequential and Mixed tasks.

        Outside reference mode the dict names the mode after ``model_name`` (``"scoring": "fixed"``,
        the strategy's ``record_tag``); with fix 8 (fixed, semantic; docs/fixed-mode.md §9) the accomplish-progress
        buckets count gold nodes instead of requests: ``complete_step`` adds
        :func:`matched_gold_nodes` of the task, ``total_step`` its node count
        ``len(english_answer_list[i])`` (``zh``: ``answer_list[i]``). Every other bucket is computed as in
        reference mode.

    Raises:
        ValueError: when a session's scored task count differs from its task count, or
            (``zh``) a session's labels cannot be bucketed.
    """
    metrics = MetricsAccumulator(scoring=scoring, language=language, extra=None if extra else ())
    for session, tasks in scored:
        metrics.add(session, tasks)
    result = metrics.result(model_name)
    return with_extra(result, metrics.extra()) if extra else result


class MetricsAccumulator:
    """:func:`compute_metrics` one session at a time (docs/metrics.md §2-§5): :meth:`add` each scored
    session as it comes, :meth:`result` gives the metric dict; nothing of the sessions is kept.

    Args:
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (docs/fixed-mode.md §9),
            as in :func:`compute_metrics`.
        language: the side that ran, as in :func:`compute_metrics`.
        extra: the extra metrics to count (docs/metrics.md §8; :meth:`extra` gives them); ``None``: those
            registered in the catalog now (:func:`wildtoolbench.bench.catalog.extra_metrics`).
    """

    def __init__(
        self,
        *,
        scoring: ScoringStrategy | str | None = None,
        language: str = "en",
        extra: Sequence[Metric] | None = None,
    ) -> None:
        self.strategy = scoring_strategy(scoring)
        self.fixed = self.strategy.progress_fix
        self.language = language
        self.extra_metrics = tuple(extra_metrics() if extra is None else extra)
        self.extra_counts = {metric.key: [0, 0] for metric in self.extra_metrics}
        self.task_total = _Accuracy()
        self.session_total = _Accuracy()
        self.by_type = {name: _Accuracy() for name in (TASK_TYPES[0], MULTI_TOOL, *TASK_TYPES[1:])}
        self.by_layer = {str(i): _Accuracy() for i in range(LAYERS)}
        self.by_turn = {name: _Accuracy() for name in (FIRST_TURN, SUBSEQUENT_TURN, *TURN_SUBTYPES)}
        self.optimal = {name: _Accuracy() for name in ("Total", *OPTIMAL_TYPES)}
        self.progress = {name: _Progress() for name in ("Total", *PROGRESS_TYPES)}

    def add(
        self,
        session: Session | Mapping[str, Any],
        tasks: Sequence[Mapping[str, Any]],
        *,
        excluded: Collection[int] = (),
    ) -> None:
        """Count one scored session (``session`` a :class:`Session` or its dict, ``tasks`` its scored
        tasks in task order) into the buckets of docs/metrics.md §1-§4.

        ``excluded``: task indices an erratum takes out of the metrics (docs/audit.md §9.3): they count
        in no bucket, and the session is correct when its other tasks are (not counted when none is left).

        Raises:
            ValueError: the scored task count differs from the session's, or (``zh``) its labels
                cannot be bucketed; nothing is counted then.
        """
        fixed = self.fixed
        task_types, turn_subtypes = bucket_labels(session, self.language)
        answer_list = _field(session, fields_for(self.language).answer_list if fixed else "answer_list")
        if len(tasks) != len(task_types):
            session_id = _field(session, "id")
            raise ValueError(f"session {session_id}: {len(tasks)} scored tasks, expected {len(task_types)}")
        by_type, by_turn, optimal, progress = self.by_type, self.by_turn, self.optimal, self.progress
        all_correct = True
        for index, task in enumerate(tasks):
            if index in excluded:
                continue
            correct = task.get("label") == CORRECT
            all_correct = all_correct and correct
            task_type = task_types[index]
            self.task_total.add(correct)
            by_type[task_type].add(correct)
            if task_type in MULTI_TOOL_TYPES:
                by_type[MULTI_TOOL].add(correct)
            self.by_layer.setdefault(str(index), _Accuracy()).add(correct)
            if index == 0:
                by_turn[FIRST_TURN].add(correct)
            else:
                by_turn[SUBSEQUENT_TURN].add(correct)
                by_turn[turn_subtypes[index - 1]].add(correct)
            if task_type in OPTIMAL_TYPES:
                is_optimal = bool(task.get("is_optimal"))
                optimal["Total"].add(is_optimal)
                optimal[task_type].add(is_optimal)
            if task_type in PROGRESS_TYPES:
                if fixed:
                    complete = matched_gold_nodes(task, answer_list[index])
                else:
                    complete = len(step_keys(task.get("inference_log") or {}))
                total = len(answer_list[index])
                progress["Total"].add(complete, total)
                progress[task_type].add(complete, total)
        if not excluded or any(index not in excluded for index in range(len(tasks))):
            self.session_total.add(all_correct)
        for metric in self.extra_metrics:
            numerator, denominator = metric.count(session, tasks)  # type: ignore[misc]
            counts = self.extra_counts[metric.key]
            counts[0] += numerator
            counts[1] += denominator

    def extra(self) -> dict[str, dict[str, Any]]:
        """The extra metrics of the sessions added so far (docs/metrics.md §8): key -> a bucket of the
        metric's kind, ``{"accuracy", "correct_count", "total_count"}`` or ``{"rate", "complete_step",
        "total_step"}`` as in the metric dict; ``{}`` when no extra metric is counted."""
        out = {}
        for metric in self.extra_metrics:
            numerator, denominator = self.extra_counts[metric.key]
            ratio = numerator / denominator if denominator else 0.0
            if metric.kind == "progress":
                out[metric.key] = {"rate": ratio, "complete_step": numerator, "total_step": denominator}
            else:
                out[metric.key] = {"accuracy": ratio, "correct_count": numerator, "total_count": denominator}
        return out

    def result(self, model_name: str) -> dict[str, Any]:
        """The metric dict of the sessions added so far, stored under ``model_name`` (docs/metrics.md §5;
        see :func:`compute_metrics` for its content)."""

        def dump(buckets: Mapping[str, Any]) -> dict[str, Any]:
            return {name: bucket.as_dict() for name, bucket in buckets.items()}

        return {
            "model_name": model_name,
            **self.strategy.record_tag(),
            "total_info": {"task": self.task_total.as_dict(), "session": self.session_total.as_dict()},
            "task_type_info": dump(self.by_type),
            "layer_info": dump(self.by_layer),
            "turn_subtype_info": dump(self.by_turn),
            "optimal_info": dump(self.optimal),
            "progress_info": dump(self.progress),
        }


def matched_gold_nodes(task: Mapping[str, Any], answer_list: Sequence[Mapping[str, Any]]) -> int:
    """Gold nodes of a task that inference matched: the fixed-mode AP numerator (docs/fixed-mode.md §9).

    Counts the gold actions of every step whose ``current_action_name_label``
    is ``correct`` (the step's ``candidate_0_answer_function_list.action``:
    calls, questions and the answer alike), each gold node at most once: an
    action counts only while the gold answer list still has an unmatched node
    with the same name and arguments (a reference-mode run can match one
    question node twice, quirk 6).

    Args:
        task: a scored (or unscored) task entry with its ``inference_log``.
        answer_list: the task's gold nodes (``english_answer_list[i]``; dicts or ``wildtoolbench.bench.schema.Node``).

    Returns:
        The count, between 0 and ``len(answer_list)``.
    """
    remaining: dict[tuple[str, str], int] = {}
    for node in answer_list:
        if hasattr(node, "model_dump"):  # a wildtoolbench.bench.schema.Node
            node = node.model_dump()
        key = (node["action"]["name"], canonical_arguments(node["action"]["arguments"]))
        remaining[key] = remaining.get(key, 0) + 1
    log = task.get("inference_log") or {}
    matched = 0
    for key in step_keys(log):
        step = log[key]
        output = step.get("inference_output") if isinstance(step, Mapping) else None
        if not isinstance(output, Mapping) or output.get("current_action_name_label") != CORRECT:
            continue
        try:
            actions = step["inference_answer"]["candidate_0_answer_function_list"]["action"]
        except (KeyError, TypeError):
            continue
        for action in actions:
            node_key = (action.get("name"), canonical_arguments(action.get("arguments")))
            if remaining.get(node_key, 0) > 0:
                remaining[node_key] -= 1
                matched += 1
    return matched


def with_extra(metric: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``metric`` with the extra metrics under ``"extra"`` (docs/metrics.md §8), or ``metric`` as it is
    when ``extra`` is empty. Such a dict is what the terminal table and :func:`readable_metrics` read;
    ``metric.json`` gets :func:`published` of it."""
    return {**metric, EXTRA_SECTION: dict(extra)} if extra else dict(metric)


def published(metric: Mapping[str, Any]) -> dict[str, Any]:
    """The metric dict in the published format (docs/metrics.md §5): ``metric`` without ``"extra"``."""
    return {key: value for key, value in metric.items() if key != EXTRA_SECTION}


def metric_bucket(metric: Mapping[str, Any], entry: Metric) -> Mapping[str, Any] | None:
    """The bucket of catalog entry ``entry`` in ``metric`` (docs/metrics.md §5, §8): ``metric[section][bucket]``,
    ``metric["extra"][key]`` for an extra metric; ``None`` when the dict does not hold it."""
    if entry.bucket is not None:
        section, name = entry.bucket
        found = (metric.get(section) or {}).get(name)
    elif entry.section == EXTRA_SECTION:
        found = (metric.get(EXTRA_SECTION) or {}).get(entry.key)
    else:
        found = None
    return found if isinstance(found, Mapping) else None


def check_sections(metric: Mapping[str, Any]) -> None:
    """Raise ``KeyError`` (naming the section) when ``metric`` lacks a bucket section of the metric dict
    (docs/metrics.md §5; ``wildtoolbench.bench.catalog.METRIC_SECTIONS``)."""
    for section in METRIC_SECTIONS:
        if section not in metric:
            raise KeyError(section)


def _readable(bucket: Mapping[str, Any]) -> dict[str, Any] | None:
    if "rate" in bucket:
        if not bucket["total_step"]:
            return None
        return {"value": bucket["rate"], "completed_steps": bucket["complete_step"], "gold_steps": bucket["total_step"]}
    if not bucket["total_count"]:
        return None
    return {"value": bucket["accuracy"], "correct": bucket["correct_count"], "total": bucket["total_count"]}


def readable_metrics(metric: Mapping[str, Any], *, language: str = "en") -> dict[str, Any]:
    """The metric dict in a form meant for reading (docs/metrics.md §7): what ``summary_metrics.json`` holds.

    Args:
        metric: a dict from :func:`compute_metrics` (with ``"extra"`` when extra metrics were counted,
            :func:`with_extra`).
        language: the side that ran (written as ``language``).

    Returns:
        ``{"model_name", "language", "task_accuracy", "session_accuracy", "task_type": {...},
        "task_position": {"Task 1": ...}, "turn_subtype": {...}, "optimal_path_rate": {"Total", ...},
        "accomplish_progress_rate": {"Total", ...}}`` where each metric is
        ``{"value", "correct", "total"}`` (progress: ``{"value", "completed_steps", "gold_steps"}``),
        ``value`` a fraction between 0 and 1, or ``null`` (``None``) when the group has no task:
        unlike the reference-format ``metric.json``, an empty group never reads as 0.
        A ``metric`` that names its mode (``"scoring": "fixed"``) names it after ``language`` too;
        extra metrics (docs/metrics.md §8) come last, as ``"extra": {key: metric}``. The places and
        names are the catalog's (``wildtoolbench.bench.catalog.Metric.summary``).

    Raises:
        KeyError: ``metric`` lacks a section of the metric dict.
    """
    check_sections(metric)
    out: dict[str, Any] = {
        "model_name": metric.get("model_name"),
        "language": language,
        **({"scoring": metric["scoring"]} if "scoring" in metric else {}),
    }
    for entry in for_metric_dict(metric):
        if entry.summary is None:
            continue
        bucket = metric_bucket(metric, entry)
        if bucket is None:
            continue
        group, name = entry.summary
        if name is None:
            out[group] = _readable(bucket)
        else:
            out.setdefault(group, {})[name] = _readable(bucket)
    return out
