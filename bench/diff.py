"""Run-against-run diff: for the tasks whose label differs between two runs, the first step where the two
trajectories diverge, aligned through the task's gold DAG (docs/diff.md).

Input, per task: the scored task entry of each run (a ``results[t]`` entry of a score line, docs/scoring.md:
``label`` and the ``inference_log`` whose steps carry the model's reply, the matched gold candidate and the
argument verdicts) and the task's gold answer list (``answer_list`` nodes with ``dependency_list``,
docs/dataset.md). Output: JSON-ready dicts (what ``wtb diff --json`` writes and a report can show).

A trajectory is the task's steps reduced to outcomes (:class:`TrajectoryStep`, docs/diff.md §2); two trajectories
are compared on progress milestones, not raw step indices, so a parallel step and the same calls issued one
per step count as the same progress (docs/diff.md §3).

Pure functions over plain data (standard library only): no I/O, no framework.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.terms import ASK_USER, CORRECT, ERROR, PREPARE_TO_ANSWER

CALLS = "calls"
"""A step whose tool calls matched a gold candidate (docs/diff.md §2)."""
ASK = "ask"
"""A text reply taken as the question of an ask node."""
ANSWER = "answer"
"""A text reply taken as the final reply: the task ended action-correct."""
# ERROR (wildtoolbench.bench.terms): a step the harness judged wrong (no matching candidate, empty reply, unparsable calls, ...): the task ended.
END = "end"
"""No further step: the log ends without an answer or error step (step limit, whole-session inference error)."""

REGRESSED = "regressed"
"""Flip kind: correct in run A, wrong in run B (docs/diff.md §4)."""
IMPROVED = "improved"
"""Flip kind: wrong in run A, correct in run B."""
FLIP_KINDS = (REGRESSED, IMPROVED)

_STEP_KEY = re.compile(r"^step_(\d+)$")


class DiffInputError(ValueError):
    """A scored task or gold answer list cannot be read as docs/diff.md §2 needs it. ``field`` names the
    field at fault (e.g. ``results[1].inference_log.step_2.inference_answer``), ``message`` says what is wrong."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class MatchedCall:
    """One tool call of a step, beside the gold node it was matched to (docs/diff.md §2).

    Attributes:
        name: the called function.
        arguments: the model's arguments as recorded (JSON text, or any JSON value a provider sent).
        node: the gold node index it completed, ``None`` on an error step.
        gold_arguments: that node's gold arguments (JSON text), ``None`` on an error step.
        verdict: ``"correct"``, the argument checker's message, or ``None`` when scoring did not check it.
    """

    name: str
    arguments: Any
    node: int | None = None
    gold_arguments: str | None = None
    verdict: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class TrajectoryStep:
    """One step of a trajectory (docs/diff.md §2).

    Attributes:
        step: the step index ``s`` of ``inference_log["step_<s>"]``.
        kind: :data:`CALLS`, :data:`ASK`, :data:`ANSWER`, :data:`ERROR` or :data:`END`.
        nodes: the gold nodes this step completed, ascending (a call step: its calls' nodes; an ask step: the
            ask node, none for a question asked again; others: none).
        calls: the step's tool calls in the scored log's order.
        content: the reply's text (``None`` when it had none).
        error_reason: the harness's reason on an error step, or the task's on an end.
    """

    step: int
    kind: str
    nodes: tuple[int, ...] = ()
    calls: tuple[MatchedCall, ...] = ()
    content: str | None = None
    error_reason: str | None = None

    @property
    def arguments_wrong(self) -> bool:
        """Whether scoring found an argument error in this step's calls."""
        return any(call.verdict not in (None, CORRECT) for call in self.calls)

    @property
    def terminal(self) -> bool:
        """Whether the task's label is decided here: an answer, an error, an end, or an argument error."""
        return self.kind in (ANSWER, ERROR, END) or self.arguments_wrong

    def as_dict(self) -> dict[str, Any]:
        """The step as a JSON-ready dict: ``{"step", "kind", "nodes", "calls": [MatchedCall.as_dict()], "content",
        "error_reason"}``."""
        return {
            "step": self.step,
            "kind": self.kind,
            "nodes": list(self.nodes),
            "calls": [call.as_dict() for call in self.calls],
            "content": self.content,
            "error_reason": self.error_reason,
        }


def _arguments_text(arguments: Any) -> str:
    """Gold arguments as the text the scorer compares them by (``json.dumps``, non-ASCII raw; docs/scoring.md)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _gold_nodes(answer_list: Sequence[Mapping[str, Any]], where: str) -> list[tuple[str, str, tuple[int, ...]]]:
    """``[(name, arguments text, dependencies)]`` per node; :class:`DiffInputError` on a malformed node."""
    nodes = []
    for i, node in enumerate(answer_list):
        try:
            action = node["action"]
            nodes.append((str(action["name"]), _arguments_text(action["arguments"]), tuple(node["dependency_list"])))
        except (KeyError, TypeError) as exc:
            raise DiffInputError(f"{where}[{i}]", f"not a gold node ({exc!r})") from None
    return nodes


def _find_node(
    gold: Sequence[tuple[str, str, tuple[int, ...]]], name: str, arguments: str, done: set[int]
) -> int | None:
    """The node a matched gold action stands for: the lowest-index node of that name and gold arguments not yet
    completed, a ready one (every dependency completed) first (docs/diff.md §2); ``None`` when there is none."""
    fitting = [i for i, (n, a, _) in enumerate(gold) if n == name and a == arguments and i not in done]
    ready = [i for i in fitting if all(d in done for d in gold[i][2])]
    return (ready or fitting or [None])[0]


def _step_keys(log: Mapping[str, Any]) -> list[tuple[int, str]]:
    found = [(int(m.group(1)), key) for key in log if (m := _STEP_KEY.match(str(key)))]
    return sorted(found)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def trajectory(
    task: Mapping[str, Any], answer_list: Sequence[Mapping[str, Any]], *, where: str = "task"
) -> list[TrajectoryStep]:
    """The outcomes of one scored task's steps, up to the step that decides its label (docs/diff.md §2).

    Args:
        task: a scored task entry (``label``, ``inference_log`` with ``step_<s>`` entries holding
            ``inference_output`` and ``inference_answer``; docs/scoring.md, docs/evaluation.md §5).
        answer_list: the task's gold nodes (``{"action": {"name", "arguments"}, "dependency_list"}``).
        where: prefix of the field names in errors (e.g. ``"results[2]"``).

    Returns:
        The steps in order, the last one terminal (:attr:`TrajectoryStep.terminal`); a log that ends without a
        terminal step gets an :data:`END` outcome at the next index, holding the task's ``error_reason``.

    Raises:
        DiffInputError: the log or a step is not an object, a matched step has no readable
            ``inference_answer``, or a matched call names no gold node of ``answer_list``.
    """
    log = task.get("inference_log") if isinstance(task, Mapping) else None
    if not isinstance(log, Mapping):
        raise DiffInputError(f"{where}.inference_log", "missing or not an object")
    gold = _gold_nodes(answer_list, f"{where}.answer_list")
    done: set[int] = set()
    steps: list[TrajectoryStep] = []
    next_index = 0
    for index, key in _step_keys(log):
        field = f"{where}.inference_log.{key}"
        step = log[key]
        output = step.get("inference_output") if isinstance(step, Mapping) else None
        if not isinstance(output, Mapping):
            raise DiffInputError(f"{field}.inference_output", "missing or not an object")
        raw_calls = output.get("tool_calls") if isinstance(output.get("tool_calls"), list) else []
        content = _text(output.get("content"))
        next_index = index + 1
        if output.get("current_action_name_label") != CORRECT:
            calls = tuple(_raw_call(call) for call in raw_calls)
            steps.append(TrajectoryStep(index, ERROR, (), calls, content, _text(output.get("error_reason"))))
            return steps
        try:
            actions = step["inference_answer"]["candidate_0_answer_function_list"]["action"]
            actions = [(str(a["name"]), _arguments_text(a["arguments"])) for a in actions]
        except (KeyError, TypeError) as exc:
            raise DiffInputError(f"{field}.inference_answer", f"missing or malformed ({exc!r})") from None
        names = {name for name, _ in actions}
        if PREPARE_TO_ANSWER in names:
            steps.append(TrajectoryStep(index, ANSWER, content=content))
            return steps
        if ASK_USER in names:
            asked = [_find_node(gold, name, text, done) for name, text in actions if name == ASK_USER]
            nodes = tuple(sorted(n for n in asked if n is not None))
            done.update(nodes)
            steps.append(TrajectoryStep(index, ASK, nodes, content=content))
            continue
        outcome = _call_step(index, field, output, raw_calls, actions, gold, done)
        steps.append(outcome)
        if outcome.terminal:
            return steps
    steps.append(TrajectoryStep(next_index, END, error_reason=_text(task.get("error_reason"))))
    return steps


def _raw_call(call: Any) -> MatchedCall:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return MatchedCall(name="?", arguments=call)
    return MatchedCall(name=str(function.get("name")), arguments=function.get("arguments"))


def _call_step(
    index: int,
    field: str,
    output: Mapping[str, Any],
    raw_calls: list[Any],
    actions: list[tuple[str, str]],
    gold: Sequence[tuple[str, str, tuple[int, ...]]],
    done: set[int],
) -> TrajectoryStep:
    """A matched call step: call ``j`` beside gold action ``j`` (the scored log pairs them by position), each
    action's node found and marked completed, each call's verdict from the step's argument labels."""
    label = output.get("current_action_arguments_label")
    results = output.get("current_action_arguments_check_result")
    calls, nodes = [], []
    for j, (name, text) in enumerate(actions):
        node = _find_node(gold, name, text, done)
        if node is None:
            raise DiffInputError(
                f"{field}.inference_answer.candidate_0_answer_function_list.action[{j}]",
                f"{name} with these arguments is no open gold node of the task (scored against another dataset?)",
            )
        done.add(node)
        nodes.append(node)
        if label == CORRECT:
            verdict: str | None = CORRECT
        elif label is not None and isinstance(results, list) and j < len(results):
            verdict = str(results[j])
        else:
            verdict = None
        raw = _raw_call(raw_calls[j]) if j < len(raw_calls) else MatchedCall(name=name, arguments=None)
        calls.append(MatchedCall(raw.name, raw.arguments, node, text, verdict))
    return TrajectoryStep(index, CALLS, tuple(sorted(nodes)), tuple(calls), _text(output.get("content")))


# --------------------------------------------------------------------------- alignment


def _same_outcome(a: TrajectoryStep, b: TrajectoryStep) -> bool:
    """Two steps at one milestone that are not both call steps agree when they are of one kind (an ask asks
    the same node) (docs/diff.md §3)."""
    return a.kind == b.kind and (a.kind != ASK or a.nodes == b.nodes)


def _verdicts(group: Sequence[TrajectoryStep]) -> dict[int, tuple[bool, int]]:
    """``{node: (arguments correct?, step index)}`` over a group of call steps."""
    return {call.node: (call.verdict in (None, CORRECT), step.step) for step in group for call in step.calls}


def first_divergence(a: Sequence[TrajectoryStep], b: Sequence[TrajectoryStep]) -> tuple[int, int] | None:
    """The first divergent step of two trajectories of one task: ``(step index in A, step index in B)``, or
    ``None`` when they make the same progress to the same end (docs/diff.md §3).

    From a milestone (both have completed the same gold nodes with the same argument verdicts) the next steps
    are compared. Two call steps open a *group* on each side. While the two groups' nodes differ, a side that
    lacks a node of the other's group adds its next step to its group if that is a call step (the side with
    fewer nodes first, A on a tie), until its group holds an argument error. When no step can join, the
    groups are compared: a node both completed with different verdicts diverges; the same nodes make the next
    milestone (or, with the same argument error, both ended alike); other nodes diverge. Any other pair of
    steps agrees only when it is of one kind (:data:`ASK` asking the same node: go on; :data:`ANSWER`,
    :data:`ERROR`, :data:`END`: both ended alike).

    The step reported for a side is, in order: the earliest step of the group holding a node both completed
    with different verdicts; else the earliest step of its group holding a node the other side did not
    complete; else (its group is the smaller one) its next step, the one that did not fit.

    Args:
        a, b: trajectories of the same task (:func:`trajectory`), each ending with a terminal step.

    Raises:
        ValueError: a trajectory is empty.
    """
    if not a or not b:
        raise ValueError("a trajectory holds at least its terminal step")
    i = j = 0
    while i < len(a) and j < len(b):
        step_a, step_b = a[i], b[j]
        if step_a.kind != CALLS or step_b.kind != CALLS:
            if not _same_outcome(step_a, step_b):
                return step_a.step, step_b.step
            if step_a.terminal:
                return None
            i, j = i + 1, j + 1
            continue
        group_a, group_b = [step_a], [step_b]
        done_a, done_b = set(step_a.nodes), set(step_b.nodes)
        i, j = i + 1, j + 1
        while done_a != done_b:
            # the side with fewer nodes first (A on a tie); a side joins a step only while it lacks a node
            grow_a = bool(done_b - done_a) and _can_join(a, i, group_a)
            grow_b = bool(done_a - done_b) and _can_join(b, j, group_b)
            if grow_a and (not grow_b or len(done_a) <= len(done_b)):
                group_a.append(a[i])
                done_a |= set(a[i].nodes)
                i += 1
            elif grow_b:
                group_b.append(b[j])
                done_b |= set(b[j].nodes)
                j += 1
            else:
                break
        verdicts_a, verdicts_b = _verdicts(group_a), _verdicts(group_b)
        differing = [
            (verdicts_a[n][1], verdicts_b[n][1], n) for n in done_a & done_b if verdicts_a[n][0] != verdicts_b[n][0]
        ]
        if differing:
            step_in_a, step_in_b, _ = min(differing)
            return step_in_a, step_in_b
        if done_a != done_b:
            return _diverging(a, i, group_a, done_a - done_b), _diverging(b, j, group_b, done_b - done_a)
        if group_a[-1].terminal or group_b[-1].terminal:
            return None  # the same argument error on the same nodes: both ended alike
    return None  # pragma: no cover - trajectories end with a terminal step, which returns above


def _can_join(steps: Sequence[TrajectoryStep], i: int, group: Sequence[TrajectoryStep]) -> bool:
    """Whether step ``i`` can join the group: the group holds no argument error and it is a call step."""
    return not group[-1].terminal and i < len(steps) and steps[i].kind == CALLS


def _diverging(steps: Sequence[TrajectoryStep], i: int, group: Sequence[TrajectoryStep], own: set[int]) -> int:
    """The step a side diverges at when its group does not close (see :func:`first_divergence`)."""
    for step in group:
        if own & set(step.nodes):
            return step.step
    return steps[i].step if i < len(steps) else group[-1].step + 1


def _step_at(steps: Sequence[TrajectoryStep], index: int) -> dict[str, Any]:
    for step in steps:
        if step.step == index:
            return step.as_dict()
    return TrajectoryStep(index, END).as_dict()  # past a side's last counted step


def diff_task(
    session_id: str,
    task_index: int,
    a_task: Mapping[str, Any],
    b_task: Mapping[str, Any],
    answer_list: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Compare one task of two runs (docs/diff.md §3, §4).

    Args:
        session_id, task_index: the task.
        a_task, b_task: its scored task entry in run A and in run B.
        answer_list: its gold nodes.

    Returns:
        ``{"id", "task", "a_label", "b_label", "first_divergent_step": {"a": s, "b": s} | None,
        "flip": "regressed" | "improved" | None, "a_step": TrajectoryStep.as_dict() | None, "b_step": ...}``;
        ``flip`` is ``None`` when the labels are equal, the steps are those at the first divergent step.

    Raises:
        DiffInputError: as :func:`trajectory` (field names start ``a.`` / ``b.``).
    """
    where = f"{session_id}.results[{task_index}]"
    steps_a = trajectory(a_task, answer_list, where=f"a.{where}")
    steps_b = trajectory(b_task, answer_list, where=f"b.{where}")
    a_label, b_label = a_task.get("label"), b_task.get("label")
    divergence = first_divergence(steps_a, steps_b)
    flip = None
    if a_label != b_label:
        flip = REGRESSED if a_label == CORRECT else IMPROVED if b_label == CORRECT else None
    return {
        "id": session_id,
        "task": task_index,
        "a_label": a_label,
        "b_label": b_label,
        "first_divergent_step": None if divergence is None else {"a": divergence[0], "b": divergence[1]},
        "flip": flip,
        "a_step": None if divergence is None else _step_at(steps_a, divergence[0]),
        "b_step": None if divergence is None else _step_at(steps_b, divergence[1]),
    }


def diff_flipped(
    tasks: Iterable[tuple[str, int, Mapping[str, Any], Mapping[str, Any], Sequence[Mapping[str, Any]]]],
) -> list[dict[str, Any]]:
    """The :func:`diff_task` of every task whose label differs, in the order given (docs/diff.md §4).

    Args:
        tasks: ``(session id, task index, A's scored task, B's scored task, gold answer list)`` per task.

    Raises:
        DiffInputError: as :func:`trajectory`, for a task whose labels differ (others are not read further).
    """
    return [diff_task(*task) for task in tasks if task[2].get("label") != task[3].get("label")]


def flip_counts(diffs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{"regressed": n, "improved": m, "total": n + m}`` over :func:`diff_task` results (docs/diff.md §4);
    a flip between two labels neither of which is ``correct`` counts only in the total."""
    counts = {kind: 0 for kind in FLIP_KINDS}
    total = 0
    for diff in diffs:
        if diff.get("flip") in counts:
            counts[diff["flip"]] += 1
        total += 1
    return {**counts, "total": total}


# --------------------------------------------------------------------------- the gate


def gate_decision(task: Mapping[str, Any], max_drop: float | None = None) -> dict[str, Any]:
    """Pass or fail a candidate against a baseline on the paired difference of task accuracy (docs/diff.md §6).

    The gate fails when the candidate is worse beyond noise: the interval of ``candidate - baseline`` lies
    entirely below 0 (the verdict ``B better`` of :func:`wildtoolbench.bench.sequential.paired_difference` with the candidate
    as A); and, with ``max_drop``, also when the measured drop ``baseline - candidate`` exceeds ``max_drop``
    percentage points, inside the noise or not.

    Args:
        task: the task-accuracy difference, candidate as A and baseline as B
            (``wildtoolbench.bench.sequential.Difference.as_dict()``: ``a``, ``b``, ``value``, ``low``, ``high``, ``verdict``).
        max_drop: the largest drop allowed, in percentage points (>= 0), or ``None``.

    Returns:
        ``{"passed": bool, "reasons": [one sentence per failed rule], "drop": baseline - candidate in
        percentage points, "max_drop": max_drop}``.

    Raises:
        ValueError: ``max_drop`` is negative or not a finite number.
    """
    if max_drop is not None and not (max_drop >= 0 and max_drop != float("inf")):
        raise ValueError(f"max_drop must be a finite number of percentage points >= 0, got {max_drop!r}")
    drop = 0.0 - float(task["value"]) * 100.0  # 0.0, never -0.0, for equal accuracies
    reasons = []
    if float(task["high"]) < 0.0:
        reasons.append(
            f"the candidate is worse beyond noise: candidate - baseline {float(task['value']) * 100:+.2f} points, "
            f"interval [{float(task['low']) * 100:+.2f}, {float(task['high']) * 100:+.2f}] below 0"
        )
    if max_drop is not None and drop > max_drop:
        reasons.append(f"task accuracy dropped {drop:.2f} points, more than the allowed {max_drop:g}")
    return {"passed": not reasons, "reasons": reasons, "drop": drop, "max_drop": max_drop}
