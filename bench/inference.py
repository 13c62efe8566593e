"""The harness side of the evaluation loop, as pure functions over plain data (SPEC 3.1, 3.2, 3.4).

Everything here works on OpenAI-format dict messages and the raw response
shape the reference records::

    {"content": str | None, "tool_calls": [{"id", "type", "function": {"name", "arguments"}}] | None,
     "reasoning_content": str | None}

The evaluation graph (``graphs/evaluation.py``) wires these functions into
LangGraph nodes; nothing in this module imports LangGraph or does I/O.

Main entry points:

- :func:`build_prompt` - the messages of task ``t`` (system, gold history, user) (SPEC 3.1).
- :func:`match_step` - judge one candidate response at step ``s`` against the
  gold DAG and say what happens next (SPEC 3.2).
- :func:`step_log`, :func:`new_task_result`, :func:`close_task_result`,
  :func:`session_record`, :func:`error_record` - the SPEC 3.4 result record.

A gold DAG that the reference cannot replay (quirk 11) raises
:class:`InferenceError`; the whole session's result then becomes
``"Error during inference: <message>"`` (:func:`error_record`).
"""

from __future__ import annotations

import json
import random
import re
import string
from itertools import islice
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

from bench.paths import ASK_USER, PREPARE_TO_ANSWER, PathTracker

from bench.args import float_to_number

__all__ = [
    "HISTORY_ID_PREFIX",
    "ERROR_EMPTY_RESPONSE",
    "ERROR_ACTION_NAME",
    "InferenceError",
    "StepOutcome",
    "float_to_number",
    "system_message",
    "history_tool_call_id",
    "gold_history",
    "build_prompt",
    "tracker_after",
    "match_step",
    "step_log",
    "new_task_result",
    "close_task_result",
    "is_optimal",
    "session_record",
    "error_record",
    "ERROR_PREFIX",
    "text_tool_calls",
    "response_diagnostics",
    "step_limit_reason",
]

HISTORY_ID_PREFIX = "toolu_bdrk_"
"""Prefix of the generated tool-call ids in the gold history (24 random alphanumerics follow)."""

ERROR_EMPTY_RESPONSE = "tool_calls and content are None or empty"
ERROR_ACTION_NAME = "action name not in candidate_answer_function_list"
ERROR_PREFIX = "Error during inference: "

_ID_ALPHABET = string.ascii_letters + string.digits

Label = Literal["correct", "error"]


class InferenceError(Exception):
    """The reference harness cannot run this session at all (quirk 11 and friends).

    ``str(error)`` is what follows ``"Error during inference: "`` in the
    session's result; it is empty where the reference failed on a bare
    ``assert`` (so the recorded string matches the reference), and
    :attr:`detail` explains the cause for people reading logs.
    """

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.detail = detail


# --------------------------------------------------------------------------- prompt (SPEC 3.1)


def system_message(env_info: str) -> dict[str, str]:
    """The system message of every request: ``"Current Date: " + env_info`` (quirk 1; SPEC 3.1)."""
    return {"role": "system", "content": f"Current Date: {env_info}"}


def history_tool_call_id(rng: random.Random) -> str:
    """A fresh history tool-call id: ``toolu_bdrk_`` + 24 alphanumerics drawn from ``rng`` (SPEC 3.1)."""
    return HISTORY_ID_PREFIX + "".join(rng.choice(_ID_ALPHABET) for _ in range(24))


def _is_pseudo(name: str) -> bool:
    return name in (ASK_USER, PREPARE_TO_ANSWER)


def gold_history(
    task: str,
    answer_list: Sequence[Mapping[str, Any]],
    rng: random.Random,
    *,
    tracker: PathTracker | None = None,
) -> list[dict[str, Any]]:
    """Messages that replay one earlier task along its gold path (SPEC 3.1 step 2, quirk 2).

    Args:
        task: the task's user message.
        answer_list: the task's gold nodes.
        rng: source of the generated ``toolu_bdrk_`` ids.
        tracker: a fresh tracker of ``answer_list`` (built when omitted); its
            ``gold_path`` (the first optimal path) is replayed.

    Returns:
        ``[user, ...]``: for a step of real calls one assistant message
        (``content ""``, calls in node-index order, arguments JSON-encoded) and
        one tool message per call whose content is ``json.dumps(observation)``
        (strings gain quotes); for an ask node assistant(question) +
        user(user_input); for the ``prepare_to_answer`` node assistant(reply).

    Raises:
        InferenceError: a gold step that holds a pseudo-tool node together with
            any other node (quirk 11), e.g. an ask node plus a call or two ask nodes.
    """
    tracker = tracker or PathTracker(answer_list)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for step in tracker.gold_path:
        calls: list[dict[str, Any]] = []
        observations: list[Any] = []
        for index in step:
            node = answer_list[index]
            name = node["action"]["name"]
            if _is_pseudo(name):
                if len(step) != 1:
                    raise InferenceError(
                        "",
                        f"gold path step {list(step)} mixes {name} with other nodes; the reference "
                        "history replay fails on it (quirk 11)",
                    )
                messages.append({"role": "assistant", "content": node["observation"]})
                if name == ASK_USER:
                    messages.append({"role": "user", "content": node["user_input"]})
                continue
            calls.append(
                {
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(node["action"]["arguments"], ensure_ascii=False)},
                    "id": history_tool_call_id(rng),
                }
            )
            observations.append(node["observation"])
        if calls:
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            for call, observation in zip(calls, observations):
                messages.append(
                    {"role": "tool", "content": json.dumps(observation, ensure_ascii=False), "tool_call_id": call["id"]}
                )
    return messages


def build_prompt(session: Mapping[str, Any], task_idx: int, rng: random.Random | None = None) -> list[dict[str, Any]]:
    """The messages of the first request of task ``task_idx`` (SPEC 3.1).

    Args:
        session: a dataset line (``english_env_info``, ``english_tasks``, ``english_answer_list``).
        task_idx: 0-based task index.
        rng: source of history ids; default a generator seeded with
            ``(session id, task_idx)`` so a re-run gives the same ids.

    Returns:
        ``[system, *history of tasks 0..task_idx-1, user(task)]`` as OpenAI dict messages.

    Raises:
        InferenceError: an earlier task's gold path cannot be replayed (quirk 11).
    """
    if rng is None:
        rng = random.Random(f"{session.get('id')}:{task_idx}")
    tasks = session["english_tasks"]
    answer_lists = session["english_answer_list"]
    messages = [system_message(session["english_env_info"])]
    for k in range(task_idx):
        messages.extend(gold_history(tasks[k], answer_lists[k], rng))
    messages.append({"role": "user", "content": tasks[task_idx]})
    return messages


# --------------------------------------------------------------------------- step loop (SPEC 3.2)


@dataclass
class StepOutcome:
    """What one candidate response at one step leads to (SPEC 3.2).

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


def tracker_after(answer_list: Sequence[Mapping[str, Any]], prunes: Sequence[tuple[int, Sequence[int]]]) -> PathTracker:
    """A fresh tracker of ``answer_list`` with the ``(step, nodes)`` prunes so far applied in order (SPEC 3.2, 3.3)."""
    tracker = PathTracker(answer_list)
    for step, nodes in prunes:
        tracker.prune(step, nodes)
    return tracker


def _answer_entry(answer_list: Sequence[Mapping[str, Any]], nodes: Sequence[int], *, with_pseudo_fields: bool) -> dict[str, Any]:
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


MAX_RECORDED_CANDIDATES = 1000
"""Entries of an error step's candidate table recorded at most (see :func:`_error_outcome`)."""


def _error_outcome(
    answer_list: Sequence[Mapping[str, Any]], tracker: PathTracker, step: int, reason: str
) -> StepOutcome:
    """A name-error step that ends the task, recording the step's candidate table (SPEC 3.2, 3.4).

    The reference records every entry of the table: one per alive path, duplicates kept
    (``tracker.step_entries``). On a wide layer that is astronomically many (8 independent
    distinct calls: 545,835 entries; 12: about 28 billion), which the reference could only
    produce by materialising every path. Here the first :data:`MAX_RECORDED_CANDIDATES`
    entries are recorded, exactly the reference's prefix, and a ``candidates_truncated``
    diagnostic gives the full count. Scoring never reads an error step's candidates.
    """
    total = tracker.count_step_entries(step)
    entries = {
        f"candidate_{i}_answer_function_list": _answer_entry(answer_list, nodes, with_pseudo_fields=True)
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
    tracker: PathTracker,
    answer_list: Sequence[Mapping[str, Any]],
    step: int,
    response: Mapping[str, Any],
) -> StepOutcome:
    """Judge the candidate's response at step ``step`` of a task (SPEC 3.2, quirks 3-6).

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

    Returns:
        A :class:`StepOutcome`.

    Raises:
        InferenceError: where the reference harness itself crashes: a text
            reply matched to a gold step that holds a pseudo-tool node with
            other nodes, a text reply at a step index beyond the node count, or
            a matched call step while a shorter gold path is still alive.
    """
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
                entry = _answer_entry(answer_list, nodes, with_pseudo_fields=False)
                entry["observation"] = node["observation"]
                entry["user_input"] = node.get("user_input")
                return StepOutcome(
                    "correct",
                    messages=[{"role": "assistant", "content": content}, {"role": "user", "content": node.get("user_input")}],
                    inference_answer={"candidate_0_answer_function_list": entry},
                )
            if PREPARE_TO_ANSWER in names:
                node = _single_pseudo(answer_list, nodes, PREPARE_TO_ANSWER)
                entry = _answer_entry(answer_list, nodes, with_pseudo_fields=False)
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
            inference_answer={"candidate_0_answer_function_list": _answer_entry(answer_list, nodes, with_pseudo_fields=False)},
            prune=list(nodes),
        )
    return _error_outcome(answer_list, tracker, step, ERROR_ACTION_NAME)


# --------------------------------------------------------------------------- result record (SPEC 3.4)


def step_log(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    response: Mapping[str, Any],
    outcome: StepOutcome,
) -> dict[str, Any]:
    """The ``step_<s>`` entry of a task's ``inference_log`` (SPEC 3.4).

    Args:
        messages: the request's messages (OpenAI dicts; the list and the dicts are
            copied shallowly, nested values are shared: treat them as immutable).
        tools: the request's tools (after float -> number).
        response: the raw response (``content``, ``tool_calls``, ``reasoning_content``).
        outcome: :func:`match_step`'s verdict on it.

    Returns:
        ``{"inference_input": {"messages", "tools"}, "inference_output": {"reasoning_content",
        "content", "tool_calls", "current_action_name_label", "error_reason"?},
        "inference_answer"?}``. ``inference_output`` also gets ``"diagnostics"`` when
        the outcome or :func:`response_diagnostics` has notes (scoring ignores them).
    """
    output: dict[str, Any] = {
        "reasoning_content": response.get("reasoning_content"),
        "content": response.get("content"),
        "tool_calls": response.get("tool_calls"),
        "current_action_name_label": outcome.label,
    }
    if outcome.error_reason is not None:
        output["error_reason"] = outcome.error_reason
    diagnostics = outcome.diagnostics + response_diagnostics(response)
    if diagnostics:
        output["diagnostics"] = diagnostics
    entry: dict[str, Any] = {
        "inference_input": {"messages": [dict(m) for m in messages], "tools": tools},
        "inference_output": output,
    }
    if outcome.inference_answer is not None:
        entry["inference_answer"] = outcome.inference_answer
    return entry


_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _call_names(value: Any) -> list[str] | None:
    """Tool names if ``value`` looks like one tool call ``{"name", "arguments"|"parameters"}`` or a list of them."""
    items = value if isinstance(value, list) and value else [value]
    names = []
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("function"), Mapping):
            item = item["function"]
        if not (isinstance(item, Mapping) and isinstance(item.get("name"), str) and ("arguments" in item or "parameters" in item)):
            return None
        names.append(item["name"])
    return names


def text_tool_calls(content: Any) -> dict[str, Any] | None:
    """A tool call written into the text content instead of ``tool_calls``, or ``None`` (SPEC 3.2 still scores it as text).

    Recognises ``<tool_call>{...}</tool_call>`` blocks (Qwen/Hermes style, the
    closing tag optional) and a content that is, as a whole, a JSON object
    ``{"name", "arguments"|"parameters"}`` or a list of them (optionally in a
    Markdown code fence).

    Returns:
        ``{"format": "tool_call_tag" | "json", "names": [tool names, "?" where unreadable]}``.
    """
    if not isinstance(content, str) or not content.strip():
        return None
    text = content.strip()
    blocks = _TOOL_CALL_TAG.findall(text)
    if blocks:
        names = []
        for block in blocks:
            try:
                found = _call_names(json.loads(block))
            except ValueError:
                found = None
            names.extend(found or ["?"])
        return {"format": "tool_call_tag", "names": names}
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if text[:1] not in "{[":
        return None
    try:
        names = _call_names(json.loads(text))
    except ValueError:
        return None
    return {"format": "json", "names": names} if names else None


def response_diagnostics(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Notes about a response that the reference scoring does not see (an extra key of the SPEC 3.4 step log, never scored).

    Currently one kind: ``{"kind": "text_tool_call", "format", "names", "message"}``
    when ``tool_calls`` is empty but the text content holds a tool call
    (:func:`text_tool_calls`); reference mode scores such a reply as text, and
    the note makes a server whose tool-call parser is off visible.
    """
    if response.get("tool_calls"):
        return []
    found = text_tool_calls(response.get("content"))
    if found is None:
        return []
    message = (
        f"the reply has no tool_calls but its text holds a tool call ({found['format']}: "
        f"{', '.join(found['names'])}); scored as a text reply. Check the server's tool-call parser "
        "(e.g. vLLM --enable-auto-tool-choice --tool-call-parser) or the chat template."
    )
    return [{"kind": "text_tool_call", **found, "message": message}]


def step_limit_reason(max_steps: int) -> str:
    """The task-level ``error_reason`` of a task stopped by the step limit (``--max-steps``; a guard on the SPEC 3.2 step loop)."""
    return f"step limit reached: {max_steps} model requests in this task without an end (--max-steps {max_steps})"


def new_task_result(task_idx: int, begin_message: Mapping[str, Any]) -> dict[str, Any]:
    """An empty per-task result (SPEC 3.4) with label ``error`` until the task ends correct.

    ``begin_message`` is the task's user message (the last prompt message).
    """
    return {
        "action_name_label": "error",
        "is_optimal": False,
        "inference_log": {"task_idx": task_idx, "begin_of_current_task": dict(begin_message)},
        "latency": [],
        "input_token_count": [],
        "output_token_count": [],
    }


def is_optimal(task_correct: bool, last_step: int, min_length: int) -> bool:
    """SPEC 3.2 / quirk 7: correct and the final step index equals ``min_length - 1``."""
    return task_correct and last_step == min_length - 1


def close_task_result(result: dict[str, Any], task_correct: bool, last_step: int, min_length: int) -> dict[str, Any]:
    """Set ``action_name_label`` and ``is_optimal`` of a finished task result (returns it; SPEC 3.2, 3.4)."""
    result["action_name_label"] = "correct" if task_correct else "error"
    result["is_optimal"] = is_optimal(task_correct, last_step, min_length)
    return result


def session_record(session_id: str, model_name: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The SPEC 3.4 line of a session that ran: ``{"id", "model_name", "result": [per task]}``."""
    return {"id": session_id, "model_name": model_name, "result": results}


def error_record(session_id: str, model_name: str, message: str) -> dict[str, Any]:
    """The SPEC 3.4 line of a session whose inference crashed: ``result = "Error during inference: <message>"``."""
    return {"id": session_id, "model_name": model_name, "result": ERROR_PREFIX + message}
