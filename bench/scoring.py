"""Per-task and per-session scoring of inference results (docs/scoring.md; fixtures README quirks 12-16).

Input is what the evaluation loop recorded (docs/evaluation.md §5): per task a dict with
``action_name_label``, ``is_optimal``, ``inference_log`` (``step_<s>`` entries
holding ``inference_output`` and, except after an empty response,
``inference_answer``), ``latency``, ``input_token_count``,
``output_token_count``. Output is the same dict labelled exactly as the
reference scorer labels it, quirks included:

- steps are walked in order; a step whose ``current_action_name_label`` is not
  ``"correct"`` stops the walk (this also covers the empty-response step,
  which has no ``inference_answer``: the reference crashed there with
  ``KeyError``; we apply the documented shim, quirk 16);
- a step whose matched gold candidate holds ``ask_user_for_required_parameters``
  or ``prepare_to_answer`` is skipped;
- otherwise the predicted calls are sorted by ``(name, raw arguments string)``
  and the gold actions by ``(name, json.dumps(arguments object, ensure_ascii=False))``
  (default ``json.dumps`` separators, non-ASCII text raw; the log holds the
  arguments as JSON text, which is parsed first), written back into
  the log in that order, paired by position and each pair checked; the step
  gets ``current_action_arguments_label`` and, on error,
  ``current_action_arguments_check_result`` (one result per pair);
- after the first step with an argument error, only the next step key is
  deleted from the log and the walk stops; ``action_name_label`` is then
  forced to ``"correct"`` and ``is_optimal`` to false;
- ``action_arguments_label`` is inserted as the 2nd key when the (forced) name
  label is ``"correct"``; ``label`` is inserted as the 1st key.

The gold actions come from the log's ``inference_answer`` (the harness copied
them from the gold DAG); the argument checker gets the session's
``english_tools`` (``tools`` for a run of the Chinese side, ``--lang zh``) with ``"float"``
rewritten to ``"number"``.

Whole-session inference failure: a record whose ``result`` is the string
``"Error during inference: ..."`` (docs/evaluation.md §5) scores as 4 wrong tasks, each
``{"label": "error", "action_name_label": "error", "is_optimal": false,
"inference_log": {"task_idx": i}, "latency": [], "input_token_count": [],
"output_token_count": [], "error_reason": <the string>}``: it counts in task and
session accuracy as wrong, in optimal-path rate as not optimal, and adds 0
completed steps (but its gold node count) to the progress rate. The reference
code has no rule for this case (it cannot score such a record); this is our
documented choice.

Pure module: no I/O, no LangGraph.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.schema import PSEUDO_TOOLS, Session, check_language, fields_for
from wildtoolbench.bench.strategy import SCORING_STRATEGIES, ScoringStrategy, record_strategy, scoring_strategy
from wildtoolbench.bench.terms import CORRECT, ERROR

ArgumentChecker = Callable[[list, str, str, str], str]
"""``check(tools, name, predicted_arguments_json, gold_arguments_json) -> "correct" | error message`` (docs/arguments.md)."""

INFERENCE_ERROR_PREFIX = "Error during inference"
_STEP_KEY = re.compile(r"^step_(\d+)$")


class ScoringError(ValueError):
    """A task cannot be scored. ``.field`` names the field at fault (e.g.
    ``result[1].inference_log.step_0.inference_output``), ``.message`` says what is wrong."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class ResultRecordError(ScoringError):
    """A result record does not have the shape of docs/evaluation.md §5; the message names the field at fault."""


def strategy_checker(strategy: ScoringStrategy) -> ArgumentChecker:
    """The :data:`ArgumentChecker` of a scoring strategy (docs/arguments.md; docs/fixed-mode.md §8): the
    argument checker with the strategy's schema rules; with the equivalences (semantic) the check of
    docs/semantic-mode.md §2 without a conversation (:class:`_Equivalences` gives each step its own)."""
    if strategy.equivalences:
        from wildtoolbench.bench.equivalence import semantic_check

        return lambda tools, name, predicted, gold: semantic_check(tools, name, predicted, gold)[0]
    from wildtoolbench.bench.args import check_arguments

    return lambda tools, name, predicted, gold: check_arguments(tools, name, predicted, gold, scoring=strategy)


def scoring_tools(
    session: Session | Mapping[str, Any], language: str = "en", *, scoring: ScoringStrategy | str | None = None
) -> list[dict[str, Any]]:
    """The tool list the argument checker sees: the tools of the ``language`` side (``english_tools``
    for ``en``, ``tools`` for ``zh``, docs/dataset.md §2.2) with ``"float"`` → ``"number"``
    (docs/evaluation.md §2, docs/arguments.md).

    With fix 7 (``scoring`` fixed or semantic) ``"float"`` inside type lists is rewritten too (docs/fixed-mode.md §8).

    Raises:
        ValueError: ``language`` is not ``"en"`` or ``"zh"``.
    """
    from wildtoolbench.bench.args import float_to_number

    return float_to_number(_session_field(session, fields_for(language).tools), scoring=scoring)


def _session_field(session: Session | Mapping[str, Any], name: str) -> Any:
    return getattr(session, name) if isinstance(session, Session) else session[name]


def record_language(record: Mapping[str, Any], language: str | None = None) -> str:
    """The side a result record was made on: its ``"language"`` key, else ``"en"`` (docs/evaluation.md §5.5).

    Args:
        record: a result record.
        language: the language the caller scores in, or ``None`` to take the record's.

    Returns:
        ``language`` when given, else the record's.

    Raises:
        ResultRecordError: the record's ``language`` is not ``en`` / ``zh``, or differs from ``language``.
    """
    recorded = record.get("language", "en")
    try:
        check_language(recorded)
    except ValueError as exc:
        raise ResultRecordError("language", str(exc)) from None
    if language is not None and recorded != language:
        raise ResultRecordError(
            "language", f"the record was made on the {recorded} side, not {language} (--lang {recorded})"
        )
    return recorded


def step_keys(inference_log: Mapping[str, Any]) -> list[str]:
    """The ``step_<s>`` keys of an inference log, in ascending ``s`` (docs/evaluation.md §5)."""
    found = [(int(m.group(1)), key) for key in inference_log if (m := _STEP_KEY.match(key))]
    return [key for _, key in sorted(found)]


def gold_arguments_text(arguments: Any) -> str:
    """The text the reference sorts a gold call by: ``json.dumps(arguments, ensure_ascii=False)``.

    ``arguments`` is the gold arguments object, or the JSON text the log holds for it (parsed
    first, so the dataset's key order is kept and only the text form is normalised: default
    separators, non-ASCII characters raw, e.g. "São" after "Santiago"). Text that is not JSON is
    returned as it is. (docs/scoring.md; bug report ``nonascii-pairing``)
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _gold_sort_key(action: Mapping[str, Any]) -> tuple[str, str]:
    return action["name"], gold_arguments_text(action["arguments"])


def _predicted_sort_key(call: Mapping[str, Any]) -> tuple[str, str]:
    function = call["function"]
    # Providers send the raw JSON string (the reference sorts on it); anything else (None from an
    # invalid tool call of a non-OpenAI model) sorts by its JSON text instead of failing.
    return function["name"], _as_json_text(function["arguments"])


def _well_formed_calls(calls: Any) -> bool:
    if calls is None:
        return True
    return isinstance(calls, list) and all(
        isinstance(call, Mapping)
        and isinstance(call.get("function"), Mapping)
        and isinstance(call["function"].get("name"), str)
        and "arguments" in call["function"]
        for call in calls
    )


def _as_json_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (what a result record holds): plain dicts and lists are rebuilt,
    scalars shared, anything else goes to ``copy.deepcopy``. Several times faster than ``copy.deepcopy``
    of the whole tree (no memo); the same copy for a parsed JSON line, which shares no sub-object."""
    kind = type(value)
    if kind is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


def _task_copy(
    task_result: Any, where: str, stale: tuple[str, ...], consume: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A deep copy of one recorded task without the ``stale`` keys of an earlier scoring, and its
    ``inference_log``, after checking the fields every scoring walk reads (docs/evaluation.md §5).
    ``consume``: only the task's top level is copied; its log is the recorded one, changed in place.

    Raises:
        ResultRecordError: the task is not an object, or its ``inference_log``, ``action_name_label``
            or ``is_optimal`` is missing or malformed.
    """
    if not isinstance(task_result, Mapping):
        raise ResultRecordError(where, f"expected an object, got {type(task_result).__name__}")
    task = dict(task_result) if consume else _json_copy(dict(task_result))
    for key in stale:
        task.pop(key, None)
    log = task.get("inference_log")
    if not isinstance(log, dict):
        raise ResultRecordError(f"{where}.inference_log", "missing or not an object")
    if "action_name_label" not in task:
        raise ResultRecordError(f"{where}.action_name_label", "missing")
    if task["action_name_label"] not in (CORRECT, ERROR):
        raise ResultRecordError(
            f"{where}.action_name_label", f"expected 'correct' or 'error', got {task['action_name_label']!r}"
        )
    if not isinstance(task.get("is_optimal"), bool):
        raise ResultRecordError(f"{where}.is_optimal", f"expected true or false, got {task.get('is_optimal')!r}")
    return task, log


def _matched_candidate(
    step: Mapping[str, Any], output: Mapping[str, Any], field: str
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The matched gold candidate of a name-correct step and its actions; ``(None, [])`` for an ask or
    answer step (docs/scoring.md §2).

    Raises:
        ResultRecordError: ``inference_answer`` is missing or malformed, or (for a call step) the
            recorded ``tool_calls`` are not a list of OpenAI-style calls.
    """
    try:
        answer = step["inference_answer"]["candidate_0_answer_function_list"]
        gold_actions = answer["action"]
        gold_names = [action["name"] for action in gold_actions]
    except (KeyError, TypeError) as exc:
        raise ResultRecordError(
            f"{field}.inference_answer.candidate_0_answer_function_list", f"missing or malformed ({exc!r})"
        ) from None
    if any(name in PSEUDO_TOOLS for name in gold_names):
        return None, []
    if not _well_formed_calls(output.get("tool_calls")):
        raise ResultRecordError(
            f"{field}.inference_output.tool_calls",
            'expected a list of calls, each {"function": {"name": <string>, "arguments": <JSON text>}}',
        )
    return answer, gold_actions


def inference_error_tasks(
    message: str, task_count: int = 4, *, scoring: ScoringStrategy | str | None = None
) -> list[dict[str, Any]]:
    """Scored tasks for a session whose whole inference failed: every task wrong (see module docstring; docs/evaluation.md §5, docs/scoring.md).

    With fix 6 (``scoring`` fixed or semantic) each task gets ``"first_error": {"kind": "inference", "step": null,
    "reason": message}`` after ``action_name_label`` (docs/fixed-mode.md §7).
    """
    walk_fix = 6 in scoring_strategy(scoring).scoring_fixes
    fixed = {"first_error": {"kind": "inference", "step": None, "reason": message}} if walk_fix else {}
    return [
        {
            "label": ERROR,
            "action_name_label": ERROR,
            **fixed,
            "is_optimal": False,
            "inference_log": {"task_idx": index},
            "latency": [],
            "input_token_count": [],
            "output_token_count": [],
            "error_reason": message,
        }
        for index in range(task_count)
    ]


MODEL_NAME_MISSING = (
    "missing (expected 'model_name' or 'candidate' string; a published runner's error record "
    '{"id", "result": "Error during inference: ..."} has none: give the model with --model-name)'
)
"""The problem of a record without a model name when none is known for its file (docs/scoring.md §5.1)."""


def record_identity(record: Mapping[str, Any]) -> tuple[str, str]:
    """``(session id, model name)`` of a result record in our format (``id``, ``model_name``)
    or the fixture format (``session_id``, ``candidate``; docs/evaluation.md §5).

    Raises:
        ResultRecordError: when neither form is present.
    """
    if not isinstance(record, Mapping):
        raise ResultRecordError("(line)", f"expected an object, got {type(record).__name__}")
    session_id = record.get("id", record.get("session_id"))
    model_name = record.get("model_name", record.get("candidate"))
    if not isinstance(session_id, str) or not session_id:
        raise ResultRecordError("id", "missing (expected 'id' or 'session_id' string)")
    if not isinstance(model_name, str) or not model_name:
        raise ResultRecordError("model_name", MODEL_NAME_MISSING)
    return session_id, model_name


def record_model_name(record: Any) -> str | None:
    """The model name a result record names (``model_name``, else ``candidate``), or ``None`` (docs/scoring.md §5.1)."""
    if not isinstance(record, Mapping):
        return None
    name = record.get("model_name", record.get("candidate"))
    return name if isinstance(name, str) and name else None


def with_model_name(record: Any, model_name: str | None) -> Any:
    """``record`` with ``"model_name": model_name`` put after its id when it names no model, else as it is
    (docs/scoring.md §5.1).

    The published runner writes a session whose inference failed as ``{"id", "result": "Error during
    inference: ..."}``, without the model name its other records carry; the name given here (the
    ``--model-name`` of ``wtb score``, or the one the file's other records name) completes it. A record
    that names a model keeps it (a different one is the "one model per file" problem), a key
    ``model_name`` that is present but not a non-empty string is left for :func:`record_identity` to
    report, and ``model_name=None`` changes nothing.
    """
    if model_name is None or not isinstance(record, Mapping) or "model_name" in record or "candidate" in record:
        return record
    completed: dict[str, Any] = {}
    for key, value in record.items():
        completed[key] = value
        if key in ("id", "session_id"):
            completed["model_name"] = model_name
    completed.setdefault("model_name", model_name)
    return completed


def score_session(
    record: Mapping[str, Any],
    session: Session | Mapping[str, Any],
    *,
    checker: ArgumentChecker | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    scoring: ScoringStrategy | str | None = None,
    language: str | None = None,
    consume: bool = False,
) -> list[dict[str, Any]]:
    """Score every task of one session's result record (docs/scoring.md).

    Args:
        record: ``{"id", "model_name", "result"}`` or ``{"session_id", "candidate", "result"}``;
            ``result`` is the list of per-task dicts, or an ``"Error during inference: ..."`` string.
        session: the gold session, a :class:`Session` or its dict (the tools of the side that ran
            feed the argument checker).
        checker: argument checker (default ``wildtoolbench.bench.args.check_arguments``).
        tools: the tool list for the checker; default :func:`scoring_tools` of ``session``.
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default
            reference; docs/fixed-mode.md §6-§8). A strategy with the inference fixes accepts records
            of any mode (rescoring a reference run applies the scoring fixes only); reference scoring
            refuses a record made by a run with the inference fixes (fixed, semantic).
        language: the side that ran; ``None`` takes the record's (:func:`record_language`).
        consume: the caller gives ``record`` up: its tasks are labelled in place instead of
            copied (see :func:`score_task`); ``record`` is not modified otherwise.

    Returns:
        One scored task dict per task (:func:`score_task`, or :func:`inference_error_tasks`).

    Raises:
        ResultRecordError: malformed record, id mismatch, a task count that differs from the
            session's, a record made on another language side than ``language``, a ``scoring``
            key naming no mode, or a record of a fixed-harness run under reference scoring.
        ValueError: an unknown ``scoring`` mode.
    """
    strategy = scoring_strategy(scoring)
    if "scoring" in record:
        try:
            made_by = record_strategy(record)
        except ValueError:
            made_by = None
        if made_by is None or made_by.is_reference:
            tagged = " or ".join(repr(name) for name, mode in SCORING_STRATEGIES.items() if not mode.is_reference)
            raise ResultRecordError("scoring", f"expected {tagged} or no key (reference), got {record['scoring']!r}")
        if not strategy.inference_fixes:
            raise ResultRecordError(
                "scoring",
                f"this record was made by a --scoring {made_by} run: score it in {made_by} mode (--scoring {made_by})",
            )
    session_id, _ = record_identity(record)
    gold_id = _session_field(session, "id")
    if session_id != gold_id:
        raise ResultRecordError("id", f"record is for {session_id!r}, session is {gold_id!r}")
    language = record_language(record, language)
    if "result" not in record:
        raise ResultRecordError("result", "missing")
    result = record["result"]
    task_count = len(_session_field(session, fields_for(language).tasks))
    if isinstance(result, str):
        return inference_error_tasks(result, task_count, scoring=strategy)
    if not isinstance(result, list):
        raise ResultRecordError("result", f"expected a list of tasks or an error string, got {type(result).__name__}")
    if len(result) != task_count:
        raise ResultRecordError("result", f"{len(result)} tasks, session {gold_id} has {task_count}")
    if tools is None:
        tools = scoring_tools(session, language, scoring=strategy)
    return [
        score_task(task, tools, checker=checker, where=f"result[{i}]", scoring=strategy, consume=consume)
        for i, task in enumerate(result)
    ]


def score_task(
    task_result: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]],
    *,
    scoring: ScoringStrategy | str | None = None,
    fixes: frozenset[int] | set[int] | None = None,
    checker: ArgumentChecker | None = None,
    where: str = "task",
    consume: bool = False,
) -> dict[str, Any]:
    """Label one task result (docs/scoring.md, quirks 12-16; docs/fixed-mode.md §6-§8).

    With no scoring fix (reference) this is the walk of the module docstring, exactly as the reference
    scorer labels a task. The strategy's scoring fixes change it:

    - fix 5: calls are paired with gold calls by :func:`wildtoolbench.bench.pairing.pair_calls`
      (fewest argument errors, then highest similarity) instead of by sorted raw
      text; the model's ``tool_calls`` stay in its order and the gold ``action``
      list is rewritten in paired order (pair ``j`` = call ``j``, action ``j``).
    - fix 6: every matched call step up to the end of the log is checked,
      nothing is deleted, ``action_name_label`` is kept as recorded, and
      ``first_error`` (``{"kind": "name" | "arguments", "step": s | None,
      "reason"}``, or ``None``) names the task's first error of either kind;
      ``action_arguments_label`` is always written (second key after ``label``
      and ``action_name_label``).
    - fix 7: the strategy's checker applies the corrected schema rules (docs/fixed-mode.md §8).

    Args:
        task_result: one per-task dict of a result record (either mode). Not modified, unless ``consume``.
        tools: the tools the checker sees (:func:`scoring_tools` with the same strategy).
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default reference).
        fixes: the scoring fixes to apply, a subset of ``{5, 6, 7}``; default the strategy's own
            (other subsets tell which fix turns a label, ``wildtoolbench.bench.compare``).
        checker: argument checker override (default: the strategy's, :func:`strategy_checker`).
        where: prefix for error messages (e.g. ``"result[2]"``).
        consume: the caller gives ``task_result`` up: its ``inference_log`` is labelled in place and
            becomes the returned task's, instead of a deep copy (for a record read from a file and
            dropped once scored, as :func:`wildtoolbench.scoring.run.score_run` does; same result, less work).

    Returns:
        A new dict: ``label`` first, then the task's keys with ``action_arguments_label`` as 2nd key when
        the name label is correct (always with fix 6, then ``first_error``); checked steps carry
        ``current_action_arguments_label`` (and ``current_action_arguments_check_result`` on error).

    Raises:
        ResultRecordError: a field the walk needs is missing or malformed (``action_name_label`` not
            ``correct``/``error``, ``is_optimal`` not a boolean, a checked step's ``tool_calls`` not a list
            of calls with a string ``function.name`` and a ``function.arguments``), or (fix 5) a checked
            step's predicted call names differ from its gold action names.
        ScoringError: the checker cannot run (a called tool is not in ``tools``).
    """
    strategy = scoring_strategy(scoring)
    fixes = strategy.scoring_fixes if fixes is None else fixes
    check = checker or strategy_checker(strategy)
    equivalences = _Equivalences() if strategy.equivalences and checker is None else None
    stale = ("label", "action_arguments_label", "first_error") if 6 in fixes else ("label", "action_arguments_label")
    if equivalences is not None:
        stale += ("equivalences",)
    task, log = _task_copy(task_result, where, stale, consume)
    return _walk(task, log, tools, fixes, check, where, equivalences)


class _Equivalences:
    """Semantic mode (docs/semantic-mode.md §1): the checker of each step, with the conversation of that
    step's request, remembering the equivalence rule ids behind each verdict."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str, str], list[str]] = {}
        self.task: set[str] = set()

    def for_step(self, step: Mapping[str, Any]) -> ArgumentChecker:
        from wildtoolbench.bench.equivalence import conversation_text, semantic_check

        request = step.get("inference_input")
        conversation = conversation_text(request.get("messages") if isinstance(request, Mapping) else None)
        self.seen = {}

        def check(tools: list, name: str, predicted: str, gold: str) -> str:
            verdict, ids = semantic_check(tools, name, predicted, gold, conversation)
            self.seen[(name, predicted, gold)] = ids
            return verdict

        return check

    def used(self, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], results: Sequence[str]) -> list[str]:
        """The rule ids behind the correct verdicts of the chosen ``(call, gold action)`` pairs, in rule order."""
        from wildtoolbench.bench.equivalence import EQUIVALENCE_RULES

        found: set[str] = set()
        for (call, action), result in zip(pairs, results):
            if result == CORRECT:
                key = (call["function"]["name"], _as_json_text(call["function"]["arguments"]), _as_json_text(action["arguments"]))
                found.update(self.seen.get(key, ()))
        self.task |= found
        return [rule for rule in EQUIVALENCE_RULES if rule in found]


def _step_results(
    output: dict[str, Any],
    answer: dict[str, Any],
    gold_actions: list[dict[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    check: ArgumentChecker,
    pairing_fix: bool,
    field: str,
) -> tuple[list[str], list[tuple[Any, Any]]]:
    """``(check results, (call, gold action) pairs)`` of one matched call step: paired by an optimal
    assignment (fix 5) or by sorted raw text (docs/scoring.md §2.3); ``answer["action"]`` (and without fix 5
    the recorded ``tool_calls``) rewritten in paired order."""
    from wildtoolbench.bench.pairing import pair_calls

    calls = output.get("tool_calls") or []
    if pairing_fix:
        names = [call["function"]["name"] for call in calls]
        gold_names = [action["name"] for action in gold_actions]
        if sorted(names) != sorted(gold_names):
            raise ResultRecordError(
                f"{field}.inference_output.tool_calls",
                f"predicted call names {sorted(names)} differ from the matched gold step's {sorted(gold_names)}",
            )
        pairing = pair_calls(
            [(call["function"]["name"], call["function"]["arguments"]) for call in calls],
            [(action["name"], action["arguments"]) for action in gold_actions],
            lambda name, predicted, gold: check(list(tools), name, _as_json_text(predicted), _as_json_text(gold)),
        )
        assert pairing is not None  # equal name multisets always pair
        answer["action"] = [gold_actions[g] for g in pairing.gold_index]
        return list(pairing.results), list(zip(calls, answer["action"]))
    try:
        predicted = sorted(calls, key=_predicted_sort_key)
        gold = sorted(gold_actions, key=_gold_sort_key)
    except (KeyError, TypeError) as exc:
        raise ResultRecordError(field, f"malformed tool call or gold action ({exc!r})") from None
    output["tool_calls"] = predicted
    answer["action"] = gold
    results = [
        check(
            list(tools),
            call["function"]["name"],
            _as_json_text(call["function"]["arguments"]),
            _as_json_text(action["arguments"]),
        )
        for call, action in zip(predicted, gold)
    ]
    return results, list(zip(predicted, gold))


def _walk(
    task: dict[str, Any],
    log: dict[str, Any],
    tools: Sequence[Mapping[str, Any]],
    fixes: frozenset[int] | set[int],
    check: ArgumentChecker,
    where: str,
    equivalences: _Equivalences | None = None,
) -> dict[str, Any]:
    """The step walk of :func:`score_task` over a copied task and its log (docs/scoring.md §2-§3); in semantic
    mode each checked step notes the equivalence rules its verdicts used (docs/semantic-mode.md §3)."""
    pairing_fix, walk_fix = 5 in fixes, 6 in fixes

    argument_error = False
    first_error: dict[str, Any] | None = None
    for key in step_keys(log):
        step = log[key]
        index = int(_STEP_KEY.match(key).group(1))  # type: ignore[union-attr]
        field = f"{where}.inference_log.{key}"
        output = step.get("inference_output") if isinstance(step, dict) else None
        if not isinstance(output, dict):
            raise ResultRecordError(f"{field}.inference_output", "missing or not an object")
        if output.get("current_action_name_label") != CORRECT:
            if first_error is None:
                first_error = {"kind": "name", "step": index, "reason": output.get("error_reason")}
            break
        answer, gold_actions = _matched_candidate(step, output, field)
        if answer is None:
            continue  # an ask or answer step: no arguments to check
        step_check = check if equivalences is None else equivalences.for_step(step)
        try:
            results, pairs = _step_results(output, answer, gold_actions, tools, step_check, pairing_fix, field)
        except LookupError as exc:  # e.g. wildtoolbench.bench.args.UnknownToolError: gold names a tool the session lacks
            raise ScoringError(field, f"cannot check arguments: {exc}") from None
        if equivalences is not None:
            used = equivalences.used(pairs, results)
            if used:
                output["current_action_arguments_equivalences"] = used
        if all(result == CORRECT for result in results):
            output["current_action_arguments_label"] = CORRECT
            continue
        output["current_action_arguments_label"] = ERROR
        output["current_action_arguments_check_result"] = results
        argument_error = True
        if walk_fix:
            if first_error is None:
                first_error = {"kind": "arguments", "step": index, "reason": next(r for r in results if r != CORRECT)}
            continue
        log.pop(f"step_{index + 1}", None)
        break

    if argument_error:
        task["is_optimal"] = False
        if not walk_fix:
            task["action_name_label"] = CORRECT
    name_label = task["action_name_label"]
    label = CORRECT if name_label == CORRECT and not argument_error else ERROR
    items = list(task.items())
    if walk_fix:
        if first_error is None and name_label == ERROR:  # e.g. the step limit: no error step
            first_error = {"kind": "name", "step": None, "reason": task.get("error_reason")}
        items.insert(1, ("action_arguments_label", ERROR if argument_error else CORRECT))
        items.insert(2, ("first_error", first_error))
        if equivalences is not None:
            from wildtoolbench.bench.equivalence import EQUIVALENCE_RULES

            items.insert(3, ("equivalences", [rule for rule in EQUIVALENCE_RULES if rule in equivalences.task]))
    elif name_label == CORRECT:
        items.insert(1, ("action_arguments_label", ERROR if argument_error else CORRECT))
    return dict([("label", label), *items])
