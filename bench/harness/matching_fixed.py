"""Fixed mode: one step of the step loop (docs/fixed-mode.md §2-§5).

The same :class:`~wildtoolbench.bench.harness.outcome.StepOutcome` as reference mode, with
these differences (reference rules: docs/evaluation.md §3):

- a text reply is a question only where a question node is ready, and it
  consumes that node (fix 2); the answer is accepted once every node it waits
  for is issued;
- a tool-call reply matches when its names are a sub-multiset of the ready
  call nodes' names; calls of one name are given the nodes whose gold
  arguments they fit best (fix 4) by the assignment of :mod:`wildtoolbench.bench.pairing`;
- each tool message answers the call it follows: one message per call, in the
  model's order, with that call's id and the observation of the node the call
  was given (fix 1); ``inference_answer`` lists the gold actions in the same
  order, so pair ``j`` is (the model's ``j``-th call, gold action ``j``);
- nothing here raises :class:`~wildtoolbench.bench.harness.errors.InferenceError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from wildtoolbench.bench.args import UnknownToolError, check_arguments
from wildtoolbench.bench.harness.outcome import (
    ERROR_ACTION_NAME,
    ERROR_EMPTY_RESPONSE,
    MAX_RECORDED_CANDIDATES,
    StepOutcome,
    answer_entry,
)
from wildtoolbench.bench.pairing import pair_calls
from wildtoolbench.bench.paths_fixed import FixedPathTracker


def observation_text(observation: Any) -> str:
    """A tool message's content: a string as it is, anything else as ``json.dumps(value, ensure_ascii=False)``
    (docs/evaluation.md §3.5; in fixed mode the history uses it too, docs/fixed-mode.md §5)."""
    return observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False)


def _error(answer_list: Sequence[Mapping[str, Any]], tracker: FixedPathTracker, reason: str) -> StepOutcome:
    """A name error that ends the task, recording the first :data:`MAX_RECORDED_CANDIDATES` valid next steps."""
    total = tracker.count_candidates()
    entries = {
        f"candidate_{i}_answer_function_list": answer_entry(answer_list, nodes, with_pseudo_fields=True)
        for i, nodes in enumerate(islice(tracker.candidates(), MAX_RECORDED_CANDIDATES))
    }
    diagnostics = []
    if total > len(entries):
        diagnostics.append(
            {
                "kind": "candidates_truncated",
                "recorded": len(entries),
                "total": total,
                "message": f"{total} valid next steps; the first {len(entries)} are recorded",
            }
        )
    return StepOutcome("error", reason, inference_answer=entries or None, task_end=True, diagnostics=diagnostics)


def _check(tools: Sequence[Mapping[str, Any]]):
    def check(name: str, predicted: Any, gold: Any) -> str:
        try:
            return check_arguments(tools, name, predicted, gold, scoring="fixed")
        except UnknownToolError as exc:  # a gold node naming an undeclared tool: every pairing is as bad
            return f"error: {exc}"

    return check


def match_step_fixed(
    tracker: FixedPathTracker,
    answer_list: Sequence[Mapping[str, Any]],
    step: int,
    response: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]],
) -> StepOutcome:
    """Judge the candidate's response at step ``step`` in fixed mode (docs/fixed-mode.md §2-§5).

    Args:
        tracker: the task's :class:`~wildtoolbench.bench.paths_fixed.FixedPathTracker` with the
            steps so far applied (not modified; apply ``outcome.prune``).
        answer_list: the task's gold nodes.
        step: 0-based step index within the task (recorded only).
        response: ``{"content", "tool_calls", "reasoning_content"}`` in raw OpenAI form.
        tools: the tools as sent (``float_to_number(..., scoring="fixed")``), for
            the argument check that pairs same-name calls with nodes.

    Returns:
        A :class:`~wildtoolbench.bench.harness.outcome.StepOutcome`; ``prune`` holds the
        consumed nodes for every correct step (a question too). Error strings
        are those of reference mode (``tool_calls and content are None or
        empty``, ``parse tool_calls failed, error: ...``, ``action name not in
        candidate_answer_function_list``); an error step records the first
        :data:`~wildtoolbench.bench.harness.outcome.MAX_RECORDED_CANDIDATES` valid next steps.

    Raises:
        Nothing for any response: fixed mode has no ``InferenceError``. A gold
        node naming a tool missing from ``tools`` only makes its pairing an error.
    """
    content = response.get("content")
    tool_calls = response.get("tool_calls")
    reasoning = response.get("reasoning_content")

    if not tool_calls:
        if not content:
            return StepOutcome("error", ERROR_EMPTY_RESPONSE, task_end=True)
        asks = tracker.ready_asks()
        if asks:
            node = answer_list[asks[0]]
            entry = answer_entry(answer_list, [asks[0]], with_pseudo_fields=False)
            entry["observation"] = node["observation"]
            entry["user_input"] = node.get("user_input")
            return StepOutcome(
                "correct",
                messages=[
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": node.get("user_input")},
                ],
                inference_answer={"candidate_0_answer_function_list": entry},
                prune=[asks[0]],
            )
        answers = tracker.allowed_answers()
        if answers:
            entry = answer_entry(answer_list, [answers[0]], with_pseudo_fields=False)
            entry["observation"] = answer_list[answers[0]]["observation"]
            return StepOutcome(
                "correct",
                messages=[{"role": "assistant", "content": content}],
                inference_answer={"candidate_0_answer_function_list": entry},
                prune=[answers[0]],
                task_end=True,
                task_correct=True,
            )
        return _error(answer_list, tracker, ERROR_ACTION_NAME)

    try:
        calls = [(call["id"], call["function"]["name"], call["function"]["arguments"]) for call in tool_calls]
    except Exception as exc:  # noqa: BLE001 - recorded as a step error, as in reference mode
        return StepOutcome("error", f"parse tool_calls failed, error: {exc}", task_end=True)

    ready = tracker.ready_calls()
    gold = [(answer_list[i]["action"]["name"], answer_list[i]["action"]["arguments"]) for i in ready]
    pairing = pair_calls([(name, arguments) for _, name, arguments in calls], gold, _check(tools))
    if pairing is None:
        return _error(answer_list, tracker, ERROR_ACTION_NAME)
    nodes = [ready[g] for g in pairing.gold_index]

    assistant: dict[str, Any] = {"role": "assistant"}
    if reasoning is not None:
        assistant["reasoning_content"] = reasoning
    assistant["content"] = content
    assistant["tool_calls"] = tool_calls
    messages = [assistant]
    for (call_id, _, _), index in zip(calls, nodes):
        messages.append(
            {"role": "tool", "content": observation_text(answer_list[index]["observation"]), "tool_call_id": call_id}
        )
    return StepOutcome(
        "correct",
        messages=messages,
        inference_answer={
            "candidate_0_answer_function_list": answer_entry(answer_list, nodes, with_pseudo_fields=False)
        },
        prune=sorted(nodes),
    )
