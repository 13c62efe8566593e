"""The gold replayed as a model's run and scored: the ``scorer_sensitive`` check (docs/audit.md §7).

:func:`gold_record` runs the step loop of docs/evaluation.md §3 with an *oracle* candidate that
answers every step with the gold itself (the first optimal path's calls with the gold arguments, the
gold question at an ask step, the gold reply at the end), in reference or fixed mode, and returns
the result record docs/evaluation.md §5 describes. Scoring that record
(:func:`wildtoolbench.bench.scoring.score_session`) says whether a perfect model can score correct on each task.

Pure module: no I/O, no LangGraph (the same harness functions the evaluation graph's nodes call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.args import float_to_number
from wildtoolbench.bench.harness import (
    InferenceError,
    close_task_result,
    error_record,
    match_step,
    new_task_result,
    session_record,
    step_log,
    tracker_after,
    with_language,
)
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.scoring import CORRECT, ScoringError, score_session, step_keys
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER

ORACLE_MODEL = "gold-oracle"


class GoldNotReplayable(InferenceError):
    """A gold step that no response can match (a question together with another node, quirk 11)."""


def _responses(answer_list: Sequence[Mapping[str, Any]], path: Sequence[Sequence[int]], task: int) -> list[dict]:
    responses = []
    for step, nodes in enumerate(path):
        names = [answer_list[i]["action"]["name"] for i in nodes]
        if ASK_USER in names or PREPARE_TO_ANSWER in names:
            if len(nodes) != 1:
                raise GoldNotReplayable(
                    "", f"task {task + 1}: gold step {step + 1} holds {names}: no reply can match it (quirk 11)"
                )
            observation = answer_list[nodes[0]]["observation"]
            responses.append({"content": observation if isinstance(observation, str) else json.dumps(observation)})
            continue
        calls = [
            {
                "id": f"call_{task}_{step}_{j}",
                "type": "function",
                "function": {
                    "name": answer_list[i]["action"]["name"],
                    "arguments": json.dumps(answer_list[i]["action"]["arguments"], ensure_ascii=False),
                },
            }
            for j, i in enumerate(nodes)
        ]
        responses.append({"content": None, "tool_calls": calls})
    return responses


def _replay_task(
    answer_list: Sequence[Mapping[str, Any]], task: int, message: str, tools: list, scoring: ScoringStrategy
) -> dict[str, Any]:
    tracker = tracker_after(answer_list, [], scoring=scoring)
    result = new_task_result(task, {"role": "user", "content": message})
    responses = _responses(answer_list, tracker.gold_path, task)
    for step, response in enumerate(responses):
        response = {"reasoning_content": None, "tool_calls": None, **response}
        outcome = match_step(tracker, answer_list, step, response, scoring=scoring, tools=tools)
        result["inference_log"][f"step_{step}"] = step_log([], [], response, outcome)
        if outcome.task_end:
            return close_task_result(result, outcome.task_correct, step, tracker.min_length)
        if outcome.prune is not None:
            tracker.prune(step, outcome.prune)
    result["error_reason"] = "the gold path ended without a final answer"
    return close_task_result(result, False, len(responses) - 1, tracker.min_length)


def gold_record(
    session: Mapping[str, Any], *, scoring: ScoringStrategy | str | None = None, language: str = "en"
) -> dict[str, Any]:
    """The result record of an oracle that answers every step with the gold (docs/audit.md §7.1).

    Args:
        session: a valid session dict (docs/dataset.md).
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default reference):
            the step rules the oracle is judged by (docs/fixed-mode.md §2-§5).
        language: the side replayed (docs/dataset.md §2.2).

    Returns:
        ``{"id", "model_name": "gold-oracle", "result": [per task]}`` (docs/evaluation.md §5), or the
        ``"Error during inference: ..."`` record when the reference harness cannot replay a task's gold
        (quirk 11): the published evaluation then scores the whole session as wrong.
    """
    side = fields_for(language)
    scoring = scoring_strategy(scoring)
    tools = float_to_number(session[side.tools], scoring=scoring)
    results = []
    try:
        for task, (answer_list, message) in enumerate(zip(session[side.answer_list], session[side.tasks])):
            results.append(_replay_task(answer_list, task, message, tools, scoring))
    except InferenceError as exc:
        where = f"task {len(results)}: "
        cause = f"{exc} ({exc.detail})" if str(exc) else exc.detail
        message = f"the reference harness cannot replay the gold, {where}{cause.removeprefix(where)}"
        record = error_record(session["id"], ORACLE_MODEL, message, scoring=scoring)
    else:
        record = session_record(session["id"], ORACLE_MODEL, results, scoring=scoring)
    return with_language(record, language)


@dataclass(frozen=True)
class GoldLabel:
    """How the gold of one task scores (docs/audit.md §7).

    Attributes:
        label: ``"correct"`` or ``"error"``.
        optimal: the scored task's ``is_optimal``.
        reason: the first error (a step's name error or argument check result), or ``None``.
    """

    label: str
    optimal: bool
    reason: str | None


def _number(key: str) -> str:
    """``step_<s>`` of an inference log as the step number people read, ``s + 1`` (docs/terms.md §5.1)."""
    index = key.rpartition("_")[2]
    return str(int(index) + 1) if index.isdigit() else index


def first_failure(task: Mapping[str, Any]) -> str | None:
    """The first failing step of a scored task as ``"step <n>: <reason>"`` (docs/audit.md §8; ``n`` counts
    from 1, docs/terms.md §5.1: log key ``step_0`` is step 1), the task-level ``error_reason`` when no step
    failed, or ``None`` for a correct task."""
    if task.get("label") == CORRECT:
        return None
    log = task.get("inference_log") or {}
    for key in step_keys(log):
        output = (log[key] or {}).get("inference_output") or {}
        if output.get("current_action_name_label") != CORRECT:
            return f"step {_number(key)}: {output.get('error_reason') or 'action name error'}"
        if output.get("current_action_arguments_label") == "error":
            results = output.get("current_action_arguments_check_result") or []
            reason = next((r for r in results if r != CORRECT), "argument error")
            return f"step {_number(key)}: {reason}"
    return str(task.get("error_reason") or "task not completed")


def gold_labels(
    session: Mapping[str, Any], *, scoring: ScoringStrategy | str | None = None, language: str = "en"
) -> list[GoldLabel]:
    """The labels the gold of each task gets when replayed and scored in ``scoring`` mode (docs/audit.md §7.1).

    Raises:
        ScoringError: the scorer cannot check a gold call (a tool missing from the session's tools;
            the audit reports that as ``unknown_tool``).
    """
    record = gold_record(session, scoring=scoring, language=language)
    scored = score_session(record, session, scoring=scoring, language=language)
    return [GoldLabel(task["label"], bool(task.get("is_optimal")), first_failure(task)) for task in scored]


__all__ = ["GoldLabel", "GoldNotReplayable", "ScoringError", "first_failure", "gold_labels", "gold_record"]
