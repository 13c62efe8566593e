"""Error taxonomy for reports: one category per failed task, from its first failing step (docs/errors.md).

The paper splits each model's errors into six action errors and three parameter
errors but does not publish how it assigned them. This module applies the
operational rules of docs/errors.md to a scored task (one entry of ``results`` in
``score.jsonl``, i.e. the output of :func:`wildtoolbench.bench.scoring.score_task`, or of
:func:`wildtoolbench.bench.scoring.inference_error_tasks`). Nothing here changes a score.

Action errors (a name error at the failing step, docs/evaluation.md §3):

==================  ============================================================
``refusal``         text reply where only real-tool candidates exist, no tool
                    step done yet, text not ending in ``?`` / ``？``
``wrong_refusal``   the same, but the text ends in a question
``early_term``      text reply where only real-tool candidates exist, after at
                    least one correct real-tool step
``redundant``       tool calls where a candidate is the answer step
``wrong_name``      tool calls where a candidate is an ask step, or whose name
                    multiset is not equal to, nor a strict sub- or superset
                    of, any candidate's
``call_error``      tool calls whose names are a strict sub- or superset of a
                    candidate's; also unparsable calls, an empty reply, the
                    step limit and whole-session inference failures
==================  ============================================================

The rules are checked in the order of the table for text replies, and for tool
calls in the order redundant, wrong_name (ask candidate), call_error, then
wrong_name. Calls at a step beyond every gold path (``current step: s,
idx_list is None``) have no candidate at all, so the last rule makes them
``wrong_name``.

Parameter errors (names matched, the argument check failed, docs/arguments.md, docs/scoring.md), by
the first failing check message of the step: ``param_type``,
``param_halluc``, ``param_value`` (see :func:`argument_error_category`).

Pure module: no I/O, no framework imports.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.schema import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS

__all__ = [
    "ACTION_CATEGORIES",
    "PARAMETER_CATEGORIES",
    "CATEGORIES",
    "CATEGORY_LABELS",
    "TaskError",
    "argument_error_category",
    "name_error_category",
    "classify_task",
    "error_counts",
]

ACTION_CATEGORIES: tuple[str, ...] = ("refusal", "wrong_name", "wrong_refusal", "redundant", "call_error", "early_term")
"""The six action-error categories, in the order of the paper's error table."""

PARAMETER_CATEGORIES: tuple[str, ...] = ("param_type", "param_halluc", "param_value")
"""The three parameter-error categories, in the order of the paper's error table."""

CATEGORIES: tuple[str, ...] = ACTION_CATEGORIES + PARAMETER_CATEGORIES
"""All nine categories (the keys of ``errors`` in the paper's leaderboard data)."""

CATEGORY_LABELS: dict[str, str] = {
    "refusal": "Refusal",
    "wrong_name": "Wrong name / missing info",
    "wrong_refusal": "Wrong refusal",
    "redundant": "Redundant call",
    "call_error": "Call error",
    "early_term": "Early termination",
    "param_type": "Parameter type",
    "param_halluc": "Parameter hallucination",
    "param_value": "Parameter value",
}
"""Human-readable names of the categories."""

_EMPTY_REPLY = "tool_calls and content are None or empty"
_PARSE_FAILED = "parse tool_calls failed"
_INFERENCE_ERROR = "Error during inference"
_STEP_KEY = re.compile(r"^step_(\d+)$")
_CANDIDATE_KEY = re.compile(r"^candidate_(\d+)_answer_function_list$")

# First matching rule wins; patterns are substrings of the wildtoolbench.bench.args messages.
_ARGUMENT_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("param_type", ("args invalid json format", "type inconsistent")),
    ("param_halluc", ("args not defined", "args missing", "args keys mismatch")),
    ("param_value", ("not in enum", "string similarity too low", "value mismatch", "rouge calculation failed")),
)


@dataclass(frozen=True)
class TaskError:
    """The category of one failed task (docs/errors.md).

    Attributes:
        category: one of :data:`CATEGORIES`.
        reason: the first failing step's reason: the argument-check message for a
            parameter error; for an action error the step's ``error_reason`` with
            what was called and what the candidates were; for a task without a
            failing step, the task's own ``error_reason``.
        step: index of the first failing step, or ``None`` when the failure is not
            tied to a step (whole-session inference failure, step limit).
    """

    category: str
    reason: str
    step: int | None = None

    @property
    def kind(self) -> str:
        """``"parameter"`` for the three parameter categories, else ``"action"`` (docs/errors.md)."""
        return "parameter" if self.category in PARAMETER_CATEGORIES else "action"


def argument_error_category(message: str) -> str:
    """The parameter-error category of one argument-check message (docs/errors.md, messages of docs/arguments.md).

    Args:
        message: a check result other than ``"correct"``, e.g.
            ``"error_schema: nested args type inconsistent"``.

    Returns:
        ``"param_type"`` for ``args invalid json format`` and every ``type
        inconsistent`` message; ``"param_halluc"`` for ``args not defined``,
        ``required (nested) args missing`` and ``args keys mismatch``;
        ``"param_value"`` for ``value not in enum``, ``string similarity too
        low``, ``value mismatch``, ``rouge calculation failed``, and for the two
        messages docs/errors.md does not name (``array length mismatch``,
        ``comparison failed``), which also say the value is wrong.
    """
    for category, patterns in _ARGUMENT_RULES:
        if any(pattern in message for pattern in patterns):
            return category
    return "param_value"


def _step_keys(log: Mapping[str, Any]) -> list[str]:
    found = [(int(m.group(1)), key) for key in log if (m := _STEP_KEY.match(key))]
    return [key for _, key in sorted(found)]


def _candidate_names(step: Mapping[str, Any]) -> list[list[str]]:
    """Name lists of the step's recorded candidates (``inference_answer``), in candidate order."""
    answer = step.get("inference_answer")
    if not isinstance(answer, Mapping):
        return []
    entries = sorted((int(m.group(1)), value) for key, value in answer.items() if (m := _CANDIDATE_KEY.match(key)))
    names = []
    for _, entry in entries:
        actions = entry.get("action") if isinstance(entry, Mapping) else None
        if isinstance(actions, list):
            names.append([a.get("name") for a in actions if isinstance(a, Mapping) and isinstance(a.get("name"), str)])
    return names


def _call_names(tool_calls: Any) -> list[str] | None:
    """Names of the predicted calls, or ``None`` when a call has no readable name."""
    names = []
    for call in tool_calls or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str):
            return None
        names.append(name)
    return names


def _strict_sub_or_superset(predicted: Counter, candidate: Counter) -> bool:
    if predicted == candidate:
        return False
    return all(predicted[k] <= candidate[k] for k in predicted) or all(candidate[k] <= predicted[k] for k in candidate)


def _ends_in_question(text: str) -> bool:
    stripped = text.rstrip()
    return stripped.endswith(("?", "？"))


def _describe(names: Sequence[Sequence[str]], limit: int = 4) -> str:
    shown = ["[" + ", ".join(n) + "]" for n in dict.fromkeys(tuple(n) for n in names)]
    more = f" (+{len(shown) - limit} more)" if len(shown) > limit else ""
    return " | ".join(shown[:limit]) + more if shown else "none recorded"


def name_error_category(
    output: Mapping[str, Any], candidates: Sequence[Sequence[str]], tool_steps_done: int
) -> tuple[str, str]:
    """Category and reason of a name-error step (the action-error rules of docs/errors.md).

    Args:
        output: the step's ``inference_output`` (``content``, ``tool_calls``, ``error_reason``).
        candidates: the name lists of the step's gold candidates (docs/evaluation.md §3), as recorded
            in its ``inference_answer`` (empty when none were recorded).
        tool_steps_done: correct real-tool steps of the task before this one.

    Returns:
        ``(category, reason)``; ``reason`` is the step's ``error_reason`` followed by
        what the model did and the candidate names.
    """
    content = output.get("content")
    tool_calls = output.get("tool_calls")
    error_reason = str(output.get("error_reason") or "name error")
    expected = f"candidates: {_describe(candidates)}"
    if error_reason.startswith(_PARSE_FAILED):
        return "call_error", error_reason
    if not tool_calls:
        if not content or error_reason == _EMPTY_REPLY:
            return "call_error", _EMPTY_REPLY
        text = str(content)
        reason = f"{error_reason}: replied in text; {expected}"
        if tool_steps_done >= 1:
            return "early_term", reason
        return ("wrong_refusal" if _ends_in_question(text) else "refusal"), reason
    names = _call_names(tool_calls)
    if names is None:
        return "call_error", f"{error_reason}: a tool call without a readable name"
    reason = f"{error_reason}: called [{', '.join(sorted(names))}]; {expected}"
    flat = [set(c) for c in candidates]
    if any(PREPARE_TO_ANSWER in c for c in flat):
        return "redundant", reason
    if any(ASK_USER in c for c in flat):
        return "wrong_name", reason
    predicted = Counter(names)
    if any(_strict_sub_or_superset(predicted, Counter(c)) for c in candidates):
        return "call_error", reason
    return "wrong_name", reason


def classify_task(task: Mapping[str, Any]) -> TaskError | None:
    """The error category of one scored task, or ``None`` when it is correct (docs/errors.md).

    Args:
        task: one scored task (``label``, ``inference_log`` with ``step_<s>``
            entries whose ``inference_output`` carries ``current_action_name_label``
            and, for checked call steps, ``current_action_arguments_label`` and
            ``current_action_arguments_check_result``), as written to ``score.jsonl``.

    Returns:
        ``None`` for ``label == "correct"``; otherwise a :class:`TaskError` for the
        FIRST failing step in step order: a name error (action categories, see
        :func:`name_error_category`) or an argument error (parameter categories by
        the first message that is not ``"correct"``, see
        :func:`argument_error_category`). A failed task without a failing step
        (whole-session ``Error during inference``, the step limit) is ``call_error``
        with the task's ``error_reason``.

    Raises:
        ValueError: ``task`` is not a mapping or has no ``label``.
    """
    if not isinstance(task, Mapping) or "label" not in task:
        raise ValueError("expected a scored task with a 'label' (an entry of score.jsonl 'results')")
    if task["label"] == "correct":
        return None
    task_reason = task.get("error_reason")
    if isinstance(task_reason, str) and task_reason.startswith(_INFERENCE_ERROR):
        return TaskError("call_error", task_reason, None)
    log = task.get("inference_log") if isinstance(task.get("inference_log"), Mapping) else {}
    tool_steps_done = 0
    for key in _step_keys(log):
        step = log[key]
        index = int(key.split("_")[1])
        output = step.get("inference_output") if isinstance(step, Mapping) else None
        if not isinstance(output, Mapping):
            continue
        candidates = _candidate_names(step)
        if output.get("current_action_name_label") != "correct":
            category, reason = name_error_category(output, candidates, tool_steps_done)
            return TaskError(category, reason, index)
        if output.get("current_action_arguments_label") == "error":
            results = output.get("current_action_arguments_check_result") or []
            message = next((str(r) for r in results if r != "correct"), "argument check failed")
            return TaskError(argument_error_category(message), message, index)
        matched = candidates[0] if candidates else []
        if matched and not any(name in PSEUDO_TOOLS for name in matched):
            tool_steps_done += 1
    reason = task_reason if isinstance(task_reason, str) and task_reason else "task failed without a failing step"
    return TaskError("call_error", reason, None)


def error_counts(tasks: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Counts per category over the failed tasks among ``tasks`` (docs/errors.md).

    Args:
        tasks: scored tasks (see :func:`classify_task`); correct ones are ignored.

    Returns:
        ``{category: count}`` for every category of :data:`CATEGORIES`, in that
        order; the counts sum to the number of failed tasks.

    Raises:
        ValueError: as :func:`classify_task`.
    """
    counts = dict.fromkeys(CATEGORIES, 0)
    for task in tasks:
        error = classify_task(task)
        if error is not None:
            counts[error.category] += 1
    return counts
