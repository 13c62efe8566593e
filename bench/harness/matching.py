"""One step of the step loop: judge a candidate response against the gold DAG (docs/evaluation.md §3, docs/paths.md;
docs/fixed-mode.md §2-§5).

:func:`match_step` applies the step rules of the run's :class:`~wildtoolbench.bench.strategy.ScoringStrategy`:
the reference rules (a :class:`~wildtoolbench.bench.paths.PathTracker` table per step, quirks 3-6) or,
with the inference fixes (fixed, semantic), the fixed-mode rules over a
:class:`~wildtoolbench.bench.paths_fixed.FixedPathTracker`:

- a text reply is a question only where a question node is ready, and it
  consumes that node (fix 2); the answer is accepted once every node it waits
  for is issued;
- a tool-call reply matches when its names are a sub-multiset of the ready
  call nodes' names; calls of one name are given the nodes whose gold
  arguments they fit best (fix 4) by the assignment of :mod:`wildtoolbench.bench.pairing`,
  judged by the fixed checker in every strategy with the inference fixes, so the history fed back
  never depends on the equivalence rules (docs/fixed-mode.md §1);
- each tool message answers the call it follows (fix 1); ``inference_answer`` lists the gold actions
  in the same order, so pair ``j`` is (the model's ``j``-th call, gold action ``j``);
- nothing raises :class:`~wildtoolbench.bench.harness.errors.InferenceError`.

Both rule sets share the outcome builders below (assistant message, question, answer, error step).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import Any

from wildtoolbench.bench.args import UnknownToolError, check_arguments
from wildtoolbench.bench.harness.errors import InferenceError
from wildtoolbench.bench.harness.outcome import (
    ERROR_ACTION_NAME,
    ERROR_EMPTY_RESPONSE,
    MAX_RECORDED_CANDIDATES,
    StepOutcome,
    answer_entry,
)
from wildtoolbench.bench.pairing import pair_calls
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.paths_fixed import tracker_for
from wildtoolbench.bench.strategy import FIXED, ScoringStrategy, scoring_strategy
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER


def observation_text(observation: Any) -> str:
    """A tool message's content: a string as it is, anything else as ``json.dumps(value, ensure_ascii=False)``
    (docs/evaluation.md §3.5; with the inference fixes the history uses it too, docs/fixed-mode.md §5)."""
    return observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False)


def tracker_after(
    answer_list: Sequence[Mapping[str, Any]],
    prunes: Sequence[tuple[int, Sequence[int]]],
    *,
    scoring: ScoringStrategy | str | None = None,
) -> Any:
    """A fresh tracker of ``answer_list`` (the strategy's, :func:`~wildtoolbench.bench.paths_fixed.tracker_for`) with the
    ``(step, nodes)`` prunes so far applied in order (docs/evaluation.md §3, docs/paths.md, docs/fixed-mode.md §3)."""
    tracker = tracker_for(answer_list, scoring)
    for step, nodes in prunes:
        tracker.prune(step, nodes)
    return tracker


def _recorded_error(
    answer_list: Sequence[Mapping[str, Any]], entries: Iterable[Sequence[int]], total: int, what: str, reason: str
) -> StepOutcome:
    """A name-error step that ends the task, recording the first :data:`MAX_RECORDED_CANDIDATES` of the
    ``total`` candidate ``entries`` and a ``candidates_truncated`` diagnostic beyond them (docs/evaluation.md §3, §5)."""
    recorded = {
        f"candidate_{i}_answer_function_list": answer_entry(answer_list, nodes, with_pseudo_fields=True)
        for i, nodes in enumerate(islice(entries, MAX_RECORDED_CANDIDATES))
    }
    diagnostics = []
    if total > len(recorded):
        diagnostics.append(
            {
                "kind": "candidates_truncated",
                "recorded": len(recorded),
                "total": total,
                "message": f"{what.format(total=total)}; the first {len(recorded)} are recorded",
            }
        )
    return StepOutcome("error", reason, inference_answer=recorded or None, task_end=True, diagnostics=diagnostics)


def _error_outcome(
    answer_list: Sequence[Mapping[str, Any]], tracker: PathTracker, step: int, reason: str
) -> StepOutcome:
    """A reference name-error step (docs/evaluation.md §3, §5).

    The reference records every entry of the table: one per alive path, duplicates kept
    (``tracker.step_entries``). On a wide layer that is astronomically many (8 independent
    distinct calls: 545,835 entries; 12: about 28 billion), which the reference could only
    produce by materialising every path. Here the first :data:`MAX_RECORDED_CANDIDATES`
    entries are recorded, exactly the reference's prefix, and a ``candidates_truncated``
    diagnostic gives the full count. Scoring never reads an error step's candidates.
    """
    what = "the step's candidate table has {total} entries (one per alive gold path)"
    return _recorded_error(answer_list, tracker.step_entries(step), tracker.count_step_entries(step), what, reason)


def _assistant(response: Mapping[str, Any]) -> dict[str, Any]:
    """The assistant message as the model sent it (``reasoning_content`` first when present)."""
    assistant: dict[str, Any] = {"role": "assistant"}
    if response.get("reasoning_content") is not None:
        assistant["reasoning_content"] = response.get("reasoning_content")
    assistant["content"] = response.get("content")
    assistant["tool_calls"] = response.get("tool_calls")
    return assistant


def _question(answer_list: Sequence[Mapping[str, Any]], nodes: Sequence[int], content: Any, **extra: Any) -> StepOutcome:
    """A text reply matched to the question node ``nodes[0]``: the gold user reply follows (docs/evaluation.md §3.3)."""
    node = answer_list[nodes[0]]
    entry = answer_entry(answer_list, nodes, with_pseudo_fields=False)
    entry["observation"] = node["observation"]
    entry["user_input"] = node.get("user_input")
    return StepOutcome(
        "correct",
        messages=[{"role": "assistant", "content": content}, {"role": "user", "content": node.get("user_input")}],
        inference_answer={"candidate_0_answer_function_list": entry},
        **extra,
    )


def _answer(answer_list: Sequence[Mapping[str, Any]], nodes: Sequence[int], content: Any, **extra: Any) -> StepOutcome:
    """A text reply matched to the answer node ``nodes[0]``: the task ends correct (docs/evaluation.md §3.3)."""
    entry = answer_entry(answer_list, nodes, with_pseudo_fields=False)
    entry["observation"] = answer_list[nodes[0]]["observation"]
    return StepOutcome(
        "correct",
        messages=[{"role": "assistant", "content": content}],
        inference_answer={"candidate_0_answer_function_list": entry},
        task_end=True,
        task_correct=True,
        **extra,
    )


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
    scoring: ScoringStrategy | str | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
) -> StepOutcome:
    """Judge the candidate's response at step ``step`` of a task (docs/evaluation.md §3, quirks 3-6; docs/fixed-mode.md §2-§5).

    Args:
        tracker: the task's path tracker (:func:`tracker_after` with the same strategy), pruned by the
            earlier steps (not modified here; apply ``outcome.prune`` with ``tracker.prune(step, outcome.prune)``).
            In reference mode matching scans the distinct ``candidates(step)`` (same first-match
            result as the reference's undeduplicated table); an error step records every
            ``step_entries(step)`` entry, duplicates included.
        answer_list: the task's gold nodes (observations, user inputs, arguments).
        step: 0-based step index within the task.
        response: ``{"content", "tool_calls", "reasoning_content"}`` in raw OpenAI
            form; ``tool_calls`` items carry ``id`` and ``function.name`` /
            ``function.arguments`` (a JSON string, never parsed here).
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default reference);
            with the inference fixes the rules of the module docstring apply.
        tools: the tools as sent; with the inference fixes arguments are checked to pair same-name calls with nodes.

    Returns:
        A :class:`StepOutcome`. With the inference fixes ``prune`` holds the consumed nodes of every
        correct step (a question too) and an error step records the first
        :data:`~wildtoolbench.bench.harness.outcome.MAX_RECORDED_CANDIDATES` valid next steps.

    Raises:
        InferenceError: reference mode only, where the reference harness itself crashes: a text
            reply matched to a gold step that holds a pseudo-tool node with
            other nodes, a text reply at a step index beyond the node count, or
            a matched call step while a shorter gold path is still alive.
    """
    content = response.get("content")
    tool_calls = response.get("tool_calls")
    if not tool_calls and not content:
        return StepOutcome("error", ERROR_EMPTY_RESPONSE, task_end=True)
    if scoring_strategy(scoring).inference_fixes:
        if not tool_calls:
            return _fixed_text_step(tracker, answer_list, content)
        return _fixed_call_step(tracker, answer_list, response, tools)
    if not tool_calls:
        return _reference_text_step(tracker, answer_list, step, content)
    return _reference_call_step(tracker, answer_list, step, response)


def _reference_text_step(tracker: PathTracker, answer_list: Sequence[Mapping[str, Any]], step: int, content: Any) -> StepOutcome:
    """A text reply under the reference rules: the first candidate with a question or the answer (docs/evaluation.md §3.3)."""
    if not tracker.has_step_table(step):
        # The reference looks the step up in a table keyed by node index and raises KeyError.
        raise InferenceError(str(step), f"text reply at step {step}, beyond the task's {len(answer_list)} nodes")
    for nodes in tracker.candidates(step):
        names = [answer_list[i]["action"]["name"] for i in nodes]
        if ASK_USER in names:
            _single_pseudo(answer_list, nodes, ASK_USER)
            return _question(answer_list, nodes, content)
        if PREPARE_TO_ANSWER in names:
            _single_pseudo(answer_list, nodes, PREPARE_TO_ANSWER)
            return _answer(answer_list, nodes, content)
    return _error_outcome(answer_list, tracker, step, ERROR_ACTION_NAME)


def _reference_call_step(
    tracker: PathTracker, answer_list: Sequence[Mapping[str, Any]], step: int, response: Mapping[str, Any]
) -> StepOutcome:
    """A tool-call reply under the reference rules: the first candidate with the same sorted names (docs/evaluation.md §3.4-§3.5)."""
    tool_calls = response["tool_calls"]
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
        messages = [_assistant(response)]
        for j, index in enumerate(nodes):
            # Quirk 5: observations in the gold step's sorted order, ids in the model's original order.
            messages.append(
                {"role": "tool", "content": observation_text(answer_list[index]["observation"]), "tool_call_id": call_ids[j]}
            )
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


def _fixed_error(answer_list: Sequence[Mapping[str, Any]], tracker: Any) -> StepOutcome:
    """A name error under the inference fixes, recording the valid next steps (docs/fixed-mode.md §3-§5)."""
    return _recorded_error(
        answer_list, tracker.candidates(), tracker.count_candidates(), "{total} valid next steps", ERROR_ACTION_NAME
    )


def _fixed_text_step(tracker: Any, answer_list: Sequence[Mapping[str, Any]], content: Any) -> StepOutcome:
    """A text reply under the inference fixes: it consumes the lowest ready question node, else the
    allowed answer node (fix 2, docs/fixed-mode.md §3)."""
    asks = tracker.ready_asks()
    if asks:
        return _question(answer_list, [asks[0]], content, prune=[asks[0]])
    answers = tracker.allowed_answers()
    if answers:
        return _answer(answer_list, [answers[0]], content, prune=[answers[0]])
    return _fixed_error(answer_list, tracker)


def _pairing_check(tools: Sequence[Mapping[str, Any]]):
    """The checker that pairs same-name calls with ready nodes: always the fixed one (docs/fixed-mode.md §1)."""

    def check(name: str, predicted: Any, gold: Any) -> str:
        try:
            return check_arguments(tools, name, predicted, gold, scoring=FIXED)
        except UnknownToolError as exc:  # a gold node naming an undeclared tool: every pairing is as bad
            return f"error: {exc}"

    return check


def _fixed_call_step(
    tracker: Any, answer_list: Sequence[Mapping[str, Any]], response: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]
) -> StepOutcome:
    """A tool-call reply under the inference fixes: calls paired with ready nodes by best fit, one tool message
    per call in the model's order (fixes 1 and 4, docs/fixed-mode.md §2, §5)."""
    try:
        calls = [(call["id"], call["function"]["name"], call["function"]["arguments"]) for call in response["tool_calls"]]
    except Exception as exc:  # noqa: BLE001 - recorded as a step error, as in reference mode
        return StepOutcome("error", f"parse tool_calls failed, error: {exc}", task_end=True)

    ready = tracker.ready_calls()
    gold = [(answer_list[i]["action"]["name"], answer_list[i]["action"]["arguments"]) for i in ready]
    pairing = pair_calls([(name, arguments) for _, name, arguments in calls], gold, _pairing_check(tools))
    if pairing is None:
        return _fixed_error(answer_list, tracker)
    nodes = [ready[g] for g in pairing.gold_index]
    messages = [_assistant(response)]
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
