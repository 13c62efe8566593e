"""What one step of the step loop leads to, shared by both scoring modes (docs/evaluation.md §3, §5.4).

:mod:`wildtoolbench.bench.harness.matching` (the reference rules and those of the inference fixes)
both answer with a :class:`StepOutcome` and record the gold side of a step with :func:`answer_entry`;
they live here so that neither matching module imports the other's internals (docs/architecture.md §2.3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER

ERROR_EMPTY_RESPONSE = "tool_calls and content are None or empty"
ERROR_ACTION_NAME = "action name not in candidate_answer_function_list"

Label = Literal["correct", "error"]

MAX_RECORDED_CANDIDATES = 1000
"""Entries of an error step's candidate table recorded at most; the rest is counted in a ``candidates_truncated``
diagnostic (docs/evaluation.md §5.5)."""


@dataclass
class StepOutcome:
    """What one candidate response at one step leads to (docs/evaluation.md §3).

    Attributes:
        label: ``"correct"`` or ``"error"`` (the step's ``current_action_name_label``).
        error_reason: the reference's error string on an error step, else ``None``.
        messages: OpenAI dict messages to append before the next request: the
            assistant message as the model sent it, then the gold tool
            observations or the gold user reply. Empty when the task ends.
        inference_answer: the step's ``inference_answer`` dict, or ``None``
            when the reference records none (empty response, no candidates).
        prune: node indices to prune the tracker with (a matched call step), else ``None``.
        task_end: the task stops after this step.
        task_correct: the task is action-name correct (a text reply matched ``prepare_to_answer``).
        diagnostics: notes for the step log's ``inference_output.diagnostics`` (never scored).
    """

    label: Label
    error_reason: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    inference_answer: dict[str, Any] | None = None
    prune: list[int] | None = None
    task_end: bool = False
    task_correct: bool = False
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


def answer_entry(
    answer_list: Sequence[Mapping[str, Any]], nodes: Sequence[int], *, with_pseudo_fields: bool
) -> dict[str, Any]:
    """The gold side of one candidate step in ``inference_answer`` (docs/evaluation.md §5.4).

    Args:
        answer_list: the task's gold nodes.
        nodes: indices of the step's nodes, in the order they are listed.
        with_pseudo_fields: add the ``observation`` (and ``user_input``) of a pseudo-tool node, as the
            reference does in the candidate table of an error step.

    Returns:
        ``{"action": [{"arguments": <JSON text>, "name"}, ...]}`` plus those fields.
    """
    entry: dict[str, Any] = {"action": []}
    for index in nodes:
        node = answer_list[index]
        name = node["action"]["name"]
        entry["action"].append({"arguments": json.dumps(node["action"]["arguments"], ensure_ascii=False), "name": name})
        if with_pseudo_fields:
            if name == ASK_USER:
                entry["observation"] = node["observation"]
                entry["user_input"] = node.get("user_input")
            elif name == PREPARE_TO_ANSWER:
                entry["observation"] = node["observation"]
    return entry
