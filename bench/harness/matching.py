"""One step of the step loop: judge a candidate response against the gold DAG (docs/evaluation.md §3, docs/paths.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from wildtoolbench.bench.harness.errors import InferenceError
from wildtoolbench.bench.harness.outcome import (
    ERROR_ACTION_NAME,
    ERROR_EMPTY_RESPONSE,
    MAX_RECORDED_CANDIDATES,
    StepOutcome,
    answer_entry,
)
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER


def tracker_after(
    answer_list: Sequence[Mapping[str, Any]],
    prunes: Sequence[tuple[int, Sequence[int]]],
    *,
    scoring: str = "reference",
) -> Any:
    """A fresh tracker of ``answer_list`` with the ``(step, nodes)`` prunes so far applied in order (docs/evaluation.md §3, docs/paths.md).

    ``scoring="fixed"`` gives a :class:`wildtoolbench.bench.paths_fixed.FixedPathTracker` (docs/fixed-mode.md §3)
    instead of a :class:`wildtoolbench.bench.paths.PathTracker`.
    """
    if scoring == "fixed":
        from wildtoolbench.bench.paths_fixed import FixedPathTracker

        tracker: Any = FixedPathTracker(answer_list)
    else:
        tracker = PathTracker(answer_list)
    for step, nodes in prunes:
        tracker.prune(step, nodes)
    return tracker


def _error_outcome(
    answer_list: Sequence[Mapping[str, Any]], tracker: PathTracker, step: int, reason: str
) -> StepOutcome:
    """A name-error step that ends the task, recording the step's candidate table (docs/evaluation.md §3, §5).

    The reference records every entry of the table: one per alive path, duplicates kept
    (``tracker.step_entries``). On a wide layer that is astronomically many (8 independent
    distinct calls: 545,835 entries; 12: about 28 billion), which the reference could only
    produce by materialising every path. Here the first :data:`MAX_RECORDED_CANDIDATES`
    entries are recorded, exactly the reference's prefix, and a ``candidates_truncated``
    diagnostic gives the full count. Scoring never reads an error step's candidates.
    """
    total = tracker.count_step_entries(step)
    entries = {
        f"candidate_{i}_answer_function_list": answer_entry(answer_list, nodes, with_pseudo_fields=True)
        for i, nodes in enumerate(islice(tracker.step_entries(step), MAX_RECORDED_CANDIDATES))
    }
    diagnostics = []
    if total > len(entries):
        diagnostics.append(
            {
                "kind": "candidates_truncated",
                "recorded": len(entries),
                "total": total,
                "message": f"the step's candidate table has {total} entries (one per alive gold path); "
                f"the first {len(entries)} are recorded",
            }
        )
    return StepOutcome("error", reason, inference_answer=entries or None, task_end=True, diagnostics=diagnostics)


def _single_pseudo(answer_list: Sequence[Mapping[str, Any]], nodes: Sequence[int], name: str) -> Mapping[str, Any]:
    if len(nodes) != 1:
        raise InferenceError(
            "",
            f"the matched gold step {list(nodes)} holds {name} together with other nodes; "
            "the reference harness fails on it (quirk 11)",
        )
    return answer_list[nodes[0]]


def match_step(
    tracker: Any,
    answer_list: Sequence[Mapping[str, Any]],
    step: int,
    response: Mapping[str, Any],
    *,
    scoring: str = "reference",
    tools: Sequence[Mapping[str, Any]] = (),
) -> StepOutcome:
    """Judge the candidate's response at step ``step`` of a task (docs/evaluation.md §3, quirks 3-6).

    Args:
        tracker: the task's path tracker, pruned by the earlier steps (not modified here;
            apply ``outcome.prune`` with ``tracker.prune(step, outcome.prune)``).
            Matching scans the distinct ``candidates(step)`` (same first-match
            result as the reference's undeduplicated table); an error step
            records every ``step_entries(step)`` entry, duplicates included.
        answer_list: the task's gold nodes (observations, user inputs, arguments).
        step: 0-based step index within the task.
        response: ``{"content", "tool_calls", "reasoning_content"}`` in raw OpenAI
            form; ``tool_calls`` items carry ``id`` and ``function.name`` /
            ``function.arguments`` (a JSON string, never parsed here).
        scoring: ``"reference"`` (default, the rules above) or ``"fixed"``:
            :func:`wildtoolbench.bench.harness.matching_fixed.match_step_fixed` with a
            ``FixedPathTracker`` (docs/fixed-mode.md §2-§5).
        tools: the tools as sent; fixed mode checks arguments to pair same-name calls with nodes.

    Returns:
        A :class:`StepOutcome`.

    Raises:
        InferenceError: where the reference harness itself crashes: a text
            reply matched to a gold step that holds a pseudo-tool node with
            other nodes, a text reply at a step index beyond the node count, or
            a matched call step while a shorter gold path is still alive.
    """
    if scoring == "fixed":
        from wildtoolbench.bench.harness.matching_fixed import match_step_fixed

        return match_step_fixed(tracker, answer_list, step, response, tools)
    content = response.get("content")
    tool_calls = response.get("tool_calls")
    reasoning = response.get("reasoning_content")

    if not tool_calls:
        if not content:
            return StepOutcome("error", ERROR_EMPTY_RESPONSE, task_end=True)
        if not tracker.has_step_table(step):
            # The reference looks the step up in a table keyed by node index and raises KeyError.
            raise InferenceError(str(step), f"text reply at step {step}, beyond the task's {len(answer_list)} nodes")
        for nodes in tracker.candidates(step):
            names = [answer_list[i]["action"]["name"] for i in nodes]
            if ASK_USER in names:
                node = _single_pseudo(answer_list, nodes, ASK_USER)
                entry = answer_entry(answer_list, nodes, with_pseudo_fields=False)
                entry["observation"] = node["observation"]
                entry["user_input"] = node.get("user_input")
                return StepOutcome(
                    "correct",
                    messages=[
                        {"role": "assistant", "content": content},
                        {"role": "user", "content": node.get("user_input")},
                    ],
                    inference_answer={"candidate_0_answer_function_list": entry},
                )
            if PREPARE_TO_ANSWER in names:
                node = _single_pseudo(answer_list, nodes, PREPARE_TO_ANSWER)
                entry = answer_entry(answer_list, nodes, with_pseudo_fields=False)
                entry["observation"] = node["observation"]
                return StepOutcome(
                    "correct",
                    messages=[{"role": "assistant", "content": content}],
                    inference_answer={"candidate_0_answer_function_list": entry},
                    task_end=True,
                    task_correct=True,
                )
        return _error_outcome(answer_list, tracker, step, ERROR_ACTION_NAME)

    try:
        call_ids = [call["id"] for call in tool_calls]
        call_names = [call["function"]["name"] for call in tool_calls]
        for call in tool_calls:
            call["function"]["arguments"]
    except Exception as exc:  # noqa: BLE001 - the reference records any parse failure as a step error
        return StepOutcome("error", f"parse tool_calls failed, error: {exc}", task_end=True)

    predicted = sorted(call_names)
    if not tracker.has_step_table(step):
        return StepOutcome("error", f"current step: {step}, idx_list is None", task_end=True)
    for nodes in tracker.candidates(step):
        if [answer_list[i]["action"]["name"] for i in nodes] != predicted:
            continue
        assistant: dict[str, Any] = {"role": "assistant"}
        if reasoning is not None:
            assistant["reasoning_content"] = reasoning
        assistant["content"] = content
        assistant["tool_calls"] = tool_calls
        messages = [assistant]
        for j, index in enumerate(nodes):
            observation = answer_list[index]["observation"]
            if not isinstance(observation, str):
                observation = json.dumps(observation, ensure_ascii=False)
            # Quirk 5: observations in the gold step's sorted order, ids in the model's original order.
            messages.append({"role": "tool", "content": observation, "tool_call_id": call_ids[j]})
        shortest = tracker.shortest_alive_length()
        if shortest is not None and shortest <= step:
            # Pruning indexes position ``step`` of every alive path; a shorter one crashes the reference.
            raise InferenceError(
                "list index out of range",
                f"a still-alive gold path has fewer than {step + 1} steps when step {step} is pruned "
                "(reachable only after extra clarification turns); the reference harness crashes here",
            )
        return StepOutcome(
            "correct",
            messages=messages,
            inference_answer={
                "candidate_0_answer_function_list": answer_entry(answer_list, nodes, with_pseudo_fields=False)
            },
            prune=list(nodes),
        )
    return _error_outcome(answer_list, tracker, step, ERROR_ACTION_NAME)
