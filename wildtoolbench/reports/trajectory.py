"""A session's trajectory reduced to what the report's viewer shows (calls, gold candidates, per-step facts),
and the per-task facts the report counts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.errors import classify_task
from wildtoolbench.bench.scoring import step_keys
from wildtoolbench.reports.run_data import MAX_CANDIDATES_SHOWN, PSEUDO, TaskFacts


def _call_view(call: Any) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        return {"name": None, "args": json.dumps(call, ensure_ascii=False)}
    function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
    arguments = function.get("arguments")
    view = {
        "name": function.get("name"),
        "args": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
    }
    if call.get("id") is not None:
        view["id"] = call.get("id")
    return view


def _candidates(step: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """Distinct gold candidates of a step (actions, plus question/reply of pseudo steps) and how many entries there were."""
    answer = step.get("inference_answer")
    if not isinstance(answer, Mapping):
        return [], 0
    seen: dict[str, dict[str, Any]] = {}
    for entry in answer.values():
        if not isinstance(entry, Mapping):
            continue
        actions = [
            {"name": a.get("name"), "args": a.get("arguments")}
            for a in entry.get("action") or []
            if isinstance(a, Mapping)
        ]
        item: dict[str, Any] = {"actions": actions}
        if any(a["name"] in PSEUDO for a in actions):
            for extra in ("observation", "user_input"):
                if extra in entry:
                    item[extra] = entry[extra]
        seen.setdefault(json.dumps(item, sort_keys=True, ensure_ascii=False), item)
    distinct = list(seen.values())
    return distinct[:MAX_CANDIDATES_SHOWN], len(distinct)


def _diagnostics(output: Mapping[str, Any]) -> list[str]:
    notes = output.get("diagnostics")
    if not isinstance(notes, list):
        return []
    return [str(n.get("message") or n.get("kind")) if isinstance(n, Mapping) else str(n) for n in notes]


def _value(values: Any, index: int) -> Any:
    value = values[index] if isinstance(values, list) and index < len(values) else None
    return round(value, 4) if isinstance(value, float) else value


def compact_trajectory(raw: Any, scored: Sequence[Mapping[str, Any]], facts: Sequence[TaskFacts]) -> dict[str, Any]:
    """The trajectory viewer's data for one session of one run.

    Args:
        raw: the record's ``result`` (docs/evaluation.md §5): the per-task list, or the
            ``"Error during inference: ..."`` string.
        scored: the session's scored tasks (``score.jsonl`` ``results``).
        facts: the tasks' :class:`TaskFacts`.

    Returns:
        ``{"error": str}`` for a failed inference, else ``{"tasks": [...]}``; each
        task holds its labels, error category and steps. A step holds the messages
        sent as ``[n, new]`` (the first ``n`` messages of the previous request in
        the session, then the ``new`` ones), the reply (``content``, ``reasoning``,
        ``calls``), the name label and error reason, the argument label and checks
        ``[[name, predicted, gold, result], ...]`` (in the scorer's sorted order),
        the gold candidates, ``latency`` and token counts, and ``dropped`` for the
        step the scorer removed after an argument error (fixtures quirk 14).
    """
    if isinstance(raw, str):
        return {"error": raw}
    previous: list[Any] = []
    tasks_out = []
    for index, task in enumerate(raw if isinstance(raw, list) else []):
        task = task if isinstance(task, Mapping) else {}
        score = scored[index] if index < len(scored) else {}
        fact = facts[index] if index < len(facts) else None
        log = task.get("inference_log") if isinstance(task.get("inference_log"), Mapping) else {}
        score_log = score.get("inference_log") if isinstance(score.get("inference_log"), Mapping) else {}
        steps = []
        for key in step_keys(log):
            number = int(key.split("_")[1])
            step = log[key] if isinstance(log[key], Mapping) else {}
            output = step.get("inference_output") if isinstance(step.get("inference_output"), Mapping) else {}
            messages = (step.get("inference_input") or {}).get("messages") or []
            shared = 0
            while shared < min(len(previous), len(messages)) and previous[shared] == messages[shared]:
                shared += 1
            previous = messages
            candidates, total = _candidates(step)
            view: dict[str, Any] = {
                "i": number,
                "m": [shared, messages[shared:]],
                "content": output.get("content"),
                "reasoning": output.get("reasoning_content"),
                "calls": [_call_view(c) for c in output.get("tool_calls") or []]
                if isinstance(output.get("tool_calls"), list)
                else [],
                "name": output.get("current_action_name_label"),
                "cand": candidates,
                "ncand": total,
                "lat": _value(task.get("latency"), number),
                "tin": _value(task.get("input_token_count"), number),
                "tout": _value(task.get("output_token_count"), number),
            }
            if output.get("error_reason"):
                view["why"] = output["error_reason"]
            notes = _diagnostics(output)
            if notes:
                view["notes"] = notes
            scored_step = score_log.get(key)
            if scored_step is None and score_log:
                view["dropped"] = True
            elif isinstance(scored_step, Mapping):
                scored_output = scored_step.get("inference_output") or {}
                label = scored_output.get("current_action_arguments_label")
                if label is not None:
                    view["args"] = label
                    results = scored_output.get("current_action_arguments_check_result") or []
                    predicted = scored_output.get("tool_calls") or []
                    gold = (
                        (scored_step.get("inference_answer") or {}).get("candidate_0_answer_function_list") or {}
                    ).get("action") or []
                    view["checks"] = [
                        [
                            _call_view(p)["name"],
                            _call_view(p)["args"],
                            g.get("arguments") if isinstance(g, Mapping) else None,
                            results[j] if j < len(results) else "correct",
                        ]
                        for j, (p, g) in enumerate(zip(predicted, gold))
                    ]
            steps.append(view)
        entry: dict[str, Any] = {
            "label": score.get("label"),
            "nameLabel": score.get("action_name_label"),
            "argsLabel": score.get("action_arguments_label"),
            "optimal": bool(score.get("is_optimal")),
            "steps": steps,
        }
        if task.get("error_reason"):
            entry["why"] = task["error_reason"]
        if fact is not None and fact.category is not None:
            entry["err"] = [fact.category, fact.reason, fact.failing_step]
        tasks_out.append(entry)
    return {"tasks": tasks_out}


# --------------------------------------------------------------------------- runs


def task_facts(session_id: str, index: int, scored: Mapping[str, Any]) -> TaskFacts:
    """The facts the report counts for task ``index`` of a session, from its score line's entry ``scored``."""
    found = classify_task(scored)
    log = scored.get("inference_log") if isinstance(scored.get("inference_log"), Mapping) else {}
    latency = [x for x in scored.get("latency") or [] if isinstance(x, (int, float))]
    tokens_in = [x for x in scored.get("input_token_count") or [] if isinstance(x, (int, float))]
    tokens_out = [x for x in scored.get("output_token_count") or [] if isinstance(x, (int, float))]
    return TaskFacts(
        session_id=session_id,
        task_idx=index,
        correct=scored.get("label") == "correct",
        optimal=bool(scored.get("is_optimal")),
        steps=max(len(scored.get("latency") or []), len(step_keys(log))),
        category=found.category if found else None,
        reason=found.reason if found else None,
        failing_step=found.step if found else None,
        latency=float(sum(latency)),
        input_tokens=int(sum(tokens_in)),
        output_tokens=int(sum(tokens_out)),
    )


def without_inputs(task: Any) -> Any:
    """A scored task (a ``results`` entry) without its steps' ``inference_input``, the request messages the
    diff never reads (docs/diff.md §2); anything that is not a task with a log is returned as it is."""
    if not isinstance(task, dict) or not isinstance(task.get("inference_log"), dict):
        return task
    log = {
        key: ({k: v for k, v in step.items() if k != "inference_input"} if isinstance(step, dict) else step)
        for key, step in task["inference_log"].items()
    }
    return {**task, "inference_log": log}
