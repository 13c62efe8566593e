"""Reference vs fixed scores of a run: which task labels flip, and which fix is responsible (docs/fixed-mode.md §10).

Two uses:

- **rescoring** a reference run (``wtb score --scoring fixed``): the same
  records scored both ways; a flip comes from the scoring fixes 5-8 (in
  practice 5 and 7: fix 6 changes which error a task is labelled with, never
  whether it is correct, and fix 8 changes no label);
- a reference run next to a **fixed run** of the same model and sessions
  (``wtb eval --scoring fixed``): a flip can also come from the inference
  fixes 1-4.

Attribution works task by task. Scoring fixes: the reference record is scored
with each subset of fixes 5-7, smallest first, and the first subset that gives
the fixed label is responsible (exact). Inference fixes: the two records'
steps are compared in order and the first difference is explained by the rule
that makes it (exact for what the records show: an error only one mode raises,
a question only one mode accepts, another node matched, a session the
reference harness cannot run); where the model itself replied differently, the
differences of its prompt are named (gold history, tool messages), which is as
far as the records go. Scripted replay candidates answer by request number, so
an earlier task that used another number of requests shifts every later reply;
such flips are attributed to that earlier task's cause.

Pure functions over plain data: no LangGraph, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from wildtoolbench.bench.harness.errors import ERROR_PREFIX
from wildtoolbench.bench.pairing import canonical_arguments
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.paths_fixed import FixedPathTracker
from wildtoolbench.bench.schema import Session, fields_for, session_model
from wildtoolbench.bench.scoring import (
    ResultRecordError,
    record_identity,
    record_language,
    score_session,
    score_task,
    scoring_tools,
    step_keys,
)
from wildtoolbench.bench.strategy import FIXED, REFERENCE, record_strategy
from wildtoolbench.bench.terms import ASK_USER, FIXES, PSEUDO_TOOLS

_SCORING_SUBSETS = [frozenset(c) for size in (1, 2, 3) for c in combinations((5, 7, 6), size)]


def _field(session: Session | Mapping[str, Any], name: str) -> Any:
    return getattr(session, name) if isinstance(session, Session) else session[name]


def _as_session(session: Session | Mapping[str, Any]) -> Session:
    if isinstance(session, Session):
        return session
    return session_model(len(session["english_tasks"])).model_validate(dict(session))


def compare_session(
    session: Session | Mapping[str, Any],
    reference_record: Mapping[str, Any],
    fixed_record: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The tasks of one session whose label differs between reference and fixed scoring (docs/fixed-mode.md §10).

    Args:
        session: the gold session (a ``wildtoolbench.bench.schema.Session`` or its dict).
        reference_record: the session's record from a reference run (docs/evaluation.md §5).
        fixed_record: the session's record from a fixed run (``"scoring"`` names fixed) of the
            same model; ``None`` compares ``reference_record`` scored both ways (rescoring).

    Returns:
        One dict per flipped task, in task order::

            {"id": <session id>, "task_idx": <int>, "task_type": <english task type>,
             "reference_label": "correct" | "error", "fixed_label": "correct" | "error",
             "fixes": [<fix number>, ...],   # ascending, 1-8 (docs/fixed-mode.md); [] if unexplained
             "reason": <one sentence per cause, joined by "; ">}

    Raises:
        ResultRecordError: a malformed record, a record of the wrong mode, or records of another session.
        pydantic.ValidationError: ``session`` is a dict that is not a valid session.
        ScoringError: a record cannot be scored (see ``wildtoolbench.bench.scoring.score_session``).
    """
    return _compare(session, reference_record, fixed_record)[0]


def _compare(
    session: Session | Mapping[str, Any],
    reference_record: Mapping[str, Any],
    fixed_record: Mapping[str, Any] | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(flips, reference scored tasks, fixed scored tasks)`` of one session (see :func:`compare_session`)."""
    session = _as_session(session)
    session_id = _field(session, "id")
    if not record_strategy(reference_record).is_reference:
        raise ResultRecordError("scoring", "the reference record was made by a fixed-mode run")
    if fixed_record is not None and record_identity(fixed_record)[0] != session_id:
        raise ResultRecordError(
            "id", f"fixed record is for {record_identity(fixed_record)[0]!r}, session is {session_id!r}"
        )
    reference = score_session(reference_record, session)  # type: ignore[arg-type]
    rescored = score_session(reference_record, session, scoring=FIXED)  # type: ignore[arg-type]
    fixed = rescored if fixed_record is None else score_session(fixed_record, session, scoring=FIXED)  # type: ignore[arg-type]
    task_types = _field(session, "english_task_types")
    flips = []
    for t, (before, after) in enumerate(zip(reference, fixed)):
        if before["label"] == after["label"]:
            continue
        fixes: set[int] = set()
        reasons: list[str] = []
        if before["label"] != rescored[t]["label"]:
            found, why = _scoring_cause(session, reference_record, t, before, rescored[t]["label"])
            fixes |= found
            reasons.append(why)
        if fixed_record is not None and rescored[t]["label"] != after["label"]:
            found, why = _inference_cause(session, reference_record, fixed_record, t)
            fixes |= found
            reasons.append(why)
        flips.append(
            {
                "id": session_id,
                "task_idx": t,
                "task_type": task_types[t],
                "reference_label": before["label"],
                "fixed_label": after["label"],
                "fixes": sorted(fixes),
                "reason": "; ".join(reasons),
            }
        )
    return flips, reference, fixed


def compare_run(
    sessions: Mapping[str, Session | Mapping[str, Any]],
    reference_records: Sequence[Mapping[str, Any]],
    fixed_records: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Label flips over a whole run (docs/fixed-mode.md §10).

    Args:
        sessions: gold sessions by id.
        reference_records: the reference run's records (one per session).
        fixed_records: a fixed run's records of the same model; ``None`` compares
            the reference records rescored in fixed mode. Only sessions present in
            both runs are compared.

    Returns:
        ``{"sessions": <compared>, "tasks": <compared>, "reference_correct": <tasks>,
        "fixed_correct": <tasks>, "flips": [<compare_session entries>, ...] (by session, then task),
        "by_fix": {<fix number>: <flips naming it>, ...} (ascending fix number),
        "missing": [<session ids in only one run>]}``.

    Raises:
        ResultRecordError, ScoringError: as :func:`compare_session`; KeyError: a record's session is not in ``sessions``.
    """
    fixed_by_id = None if fixed_records is None else {record_identity(r)[0]: r for r in fixed_records}
    compared = tasks = reference_correct = fixed_correct = 0
    flips: list[dict[str, Any]] = []
    missing: list[str] = []
    seen: set[str] = set()
    for record in reference_records:
        session_id = record_identity(record)[0]
        seen.add(session_id)
        fixed_record = None
        if fixed_by_id is not None:
            fixed_record = fixed_by_id.get(session_id)
            if fixed_record is None:
                missing.append(session_id)
                continue
        found, reference, fixed = _compare(sessions[session_id], record, fixed_record)
        compared += 1
        tasks += len(reference)
        reference_correct += sum(task["label"] == "correct" for task in reference)
        fixed_correct += sum(task["label"] == "correct" for task in fixed)
        flips.extend(found)
    if fixed_by_id is not None:
        missing.extend(i for i in fixed_by_id if i not in seen)
    by_fix: dict[int, int] = {}
    for flip in flips:
        for fix in flip["fixes"]:
            by_fix[fix] = by_fix.get(fix, 0) + 1
    return {
        "sessions": compared,
        "tasks": tasks,
        "reference_correct": reference_correct,
        "fixed_correct": fixed_correct,
        "flips": flips,
        "by_fix": dict(sorted(by_fix.items())),
        "missing": missing,
    }


# --------------------------------------------------------------------------- scoring fixes


def _first_argument_error(scored_task: Mapping[str, Any]) -> str | None:
    log = scored_task.get("inference_log") or {}
    for key in step_keys(log):
        output = log[key].get("inference_output") or {}
        results = output.get("current_action_arguments_check_result")
        if results:
            message = next(r for r in results if r != "correct")
            return f"{key}: {message}"
    return None


def _scoring_cause(
    session: Session | Mapping[str, Any],
    record: Mapping[str, Any],
    t: int,
    reference_task: Mapping[str, Any],
    wanted: str,
) -> tuple[set[int], str]:
    result = record.get("result")
    if not isinstance(result, list):  # pragma: no cover - an inference error scores the same in both modes
        return set(), "scoring"
    language = record_language(record)
    tools = {
        False: scoring_tools(session, language),  # type: ignore[arg-type]
        True: scoring_tools(session, language, scoring=FIXED),  # type: ignore[arg-type]
    }
    for subset in _SCORING_SUBSETS:
        strategy = FIXED if 7 in subset else REFERENCE
        task = score_task(result[t], tools[7 in subset], scoring=strategy, fixes=subset)
        if task["label"] == wanted:
            break
    else:  # pragma: no cover - the full set reproduces the fixed label by construction
        subset = frozenset({5, 6, 7})
    error = _first_argument_error(reference_task)
    before = f"reference scoring found {error}" if error else "reference scoring"
    titles = ", ".join(f"fix {f} ({FIXES[f]})" for f in sorted(subset))
    return set(subset), f"{before}; {titles}"


# --------------------------------------------------------------------------- inference fixes


def _steps(task: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    log = task.get("inference_log") or {}
    return [log[key] for key in step_keys(log)]


def _reply(step: Mapping[str, Any]) -> tuple[Any, Any]:
    output = step.get("inference_output") or {}
    calls = output.get("tool_calls") or []
    shape = sorted(
        (call.get("function", {}).get("name"), canonical_arguments(call.get("function", {}).get("arguments")))
        for call in calls
        if isinstance(call, Mapping)
    )
    return output.get("content") or None, tuple(shape)


def _matched(step: Mapping[str, Any]) -> list[tuple[str, str]]:
    try:
        actions = step["inference_answer"]["candidate_0_answer_function_list"]["action"]
    except (KeyError, TypeError):
        return []
    return sorted((a.get("name"), canonical_arguments(a.get("arguments"))) for a in actions)


def _label(step: Mapping[str, Any]) -> Any:
    return (step.get("inference_output") or {}).get("current_action_name_label")


def _history_causes(
    session: Session | Mapping[str, Any], t: int, reference_task: Mapping[str, Any], s: int, language: str = "en"
) -> list[int]:
    """Fixes under which the prompt of task ``t`` step ``s`` differs between the modes (``language``: the side that ran)."""
    answer_lists = _field(session, fields_for(language).answer_list)
    fixes: set[int] = set()
    for k in range(t):
        answer_list = [n.model_dump() if hasattr(n, "model_dump") else n for n in answer_lists[k]]
        reference_path = PathTracker(answer_list).gold_path
        if reference_path != FixedPathTracker(answer_list).gold_path:
            fixes.add(3)
        if any(
            isinstance(answer_list[i]["observation"], str)
            for step in reference_path
            for i in step
            if answer_list[i]["action"]["name"] not in PSEUDO_TOOLS
        ):
            fixes.add(4)
    for step in _steps(reference_task)[:s]:
        calls = (step.get("inference_output") or {}).get("tool_calls") or []
        names = [call.get("function", {}).get("name") for call in calls if isinstance(call, Mapping)]
        if len(names) > 1 and (names != sorted(names) or len(set(names)) < len(names)):
            fixes.add(1)
    return sorted(fixes)


def _inference_cause(
    session: Session | Mapping[str, Any],
    reference_record: Mapping[str, Any],
    fixed_record: Mapping[str, Any],
    t: int,
) -> tuple[set[int], str]:
    reference, fixed = reference_record.get("result"), fixed_record.get("result")
    if isinstance(reference, str):
        message = reference[len(ERROR_PREFIX) :] if reference.startswith(ERROR_PREFIX) else reference
        if message == "":
            return (
                {3},
                "the published harness cannot run this session: a gold step mixes a question with another node (quirk 11); fix 3",
            )
        if message.isdigit() or message == "list index out of range":
            return {
                2
            }, f"the published harness crashes after questions that prune nothing ({message!r}, quirks 4, 6); fix 2"
        return set(), f"the reference run failed: {message}"
    if isinstance(fixed, str):
        return set(), f"the fixed run failed: {fixed}"
    for k in range(t):  # replayed replies shift when an earlier task used another number of requests
        if len(_steps(reference[k])) != len(_steps(fixed[k])):
            fixes, why = _inference_cause(session, reference_record, fixed_record, k)
            return (
                fixes,
                f"task {k} used {len(_steps(reference[k]))} requests in reference mode and {len(_steps(fixed[k]))} in fixed mode, so later scripted replies shifted ({why})",
            )
    ref_steps, fix_steps = _steps(reference[t]), _steps(fixed[t])
    for s, (a, b) in enumerate(zip(ref_steps, fix_steps)):
        if _reply(a) != _reply(b):
            causes = _history_causes(session, t, reference[t], s, record_language(reference_record))
            listed = ", ".join(f"fix {f}" for f in causes) or "none of the fixes"
            return set(causes), f"step_{s}: the model replied differently; its prompt differs by {listed}"
        content, calls = _reply(a)
        if _label(a) == "correct" and _label(b) != "correct" and not calls:
            if any(name == ASK_USER for name, _ in _matched(a)):
                return {
                    2
                }, f"step_{s}: a question where no question is due is accepted by the reference (quirks 4, 6); fix 2"
            return (
                {2},
                f"step_{s}: a final reply the reference accepts on paths that questions never pruned, with gold calls still missing; fix 2",
            )
        if _label(a) != "correct" and _label(b) == "correct":
            if calls:
                return (
                    {4},
                    f"step_{s}: a call set that no reference path lists (same-name group split or name de-duplication, quirks 9, 10); fix 4",
                )
            return {3}, f"step_{s}: a text reply that only the fixed paths (questions alone in a step) match; fix 3"
        if _label(a) == _label(b) == "correct" and _matched(a) != _matched(b):
            return {
                4
            }, f"step_{s}: the call was given another gold node (best fit instead of the lowest index, quirk 9); fix 4"
        if _label(a) != _label(b):
            return set(), f"step_{s}: the step is {_label(a)} in reference mode and {_label(b)} in fixed mode"
    return set(), "the two runs differ in a way the records do not explain"
