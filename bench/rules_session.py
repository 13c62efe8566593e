"""The catalog's rules on a finished session in the dataset schema: the quality check of a generated
session and ``wtb audit --rules`` (docs/generation.md §10, §11.3).

:func:`session_rule_problems` walks one session (every user message and answer, every gold call with its
simulated result, every question and reply of the assistant) and returns each rule problem with its
place (``task``, ``step``: the node's index, ``None`` for a task's message) and the quality check it
belongs to; :func:`session_quality` is the generator's quality check over them.

Pure module: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.audit_context import CallContext, as_text, env_date, leaves
from wildtoolbench.bench.generation_quality import QUALITY_CHECKS, results_text
from wildtoolbench.bench.rules import Problem, select
from wildtoolbench.bench.rules.broken import broken_text
from wildtoolbench.bench.rules.derived import DerivedContext
from wildtoolbench.bench.rules.reply import assistant_problems
from wildtoolbench.bench.rules.result import COPIED_RESULT_CHARS, copies_definition
from wildtoolbench.bench.rules.text import echo_problem
from wildtoolbench.bench.rules.value import (
    date_misplaced,
    described,
    is_concrete,
    leaf_schema,
    schema_offers,
    shared_value_errors,
    standard_value_rule,
)
from wildtoolbench.bench.rules.voice import voice_problems
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _function(tools: Any, name: str) -> Mapping[str, Any]:
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
        if isinstance(function, Mapping) and function.get("name") == name:
            return function
    return {}


def _node_texts(node: Mapping[str, Any]) -> list[str]:
    action = node.get("action") if isinstance(node.get("action"), Mapping) else {}
    texts = [as_text(action.get("arguments") or {})]
    if node.get("observation") is not None:
        texts.append(as_text(node["observation"]))
    if isinstance(node.get("user_input"), str):
        texts.append(node["user_input"])
    return texts


def _parameters(tools: Any) -> list[str]:
    out: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
        properties = (function.get("parameters") or {}).get("properties") if isinstance(function, Mapping) else None
        out += list(properties) if isinstance(properties, Mapping) else []
    return out


def _at(problem: Problem, prefix: str, check: str, task: int, step: int | None) -> Problem:
    return Problem(prefix + str(problem), problem.rule, **{**problem.details, "check": check, "task": task, "step": step})


def _value_problems(
    name: str, function: Mapping[str, Any], arguments: Any, seen: list[str], today: Any, profile: str, task: int,
    index: int,
) -> list[Problem]:  # fmt: skip
    parameters = function.get("parameters") if isinstance(function.get("parameters"), Mapping) else {}
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), Mapping) else {}
    offered = schema_offers(parameters)
    if profile == "standard":
        context: CallContext = DerivedContext(seen, today=today, allowed=offered)
        descriptions = described([function])
    else:
        context = CallContext(seen, today=today, allowed=offered)
    out = []
    for path, value in leaves(arguments or {}):
        here = {"check": "values", "task": task, "step": index, "value": value, "path": path}
        text = f"task {task} {name}: {path}"
        if isinstance(value, str) and not value.strip():
            out.append(Problem(f"{text} is an empty string", "value.empty", **here))
        elif profile == "standard" and (rule := standard_value_rule(value, context.knows(value), descriptions, path)):
            what = "is a placeholder" if rule == "value.placeholder" else "is an id, number or date"
            out.append(
                Problem(f"{text} = {as_text(value)[:60]} {what} that nothing before the call says or implies", rule, **here)
            )
        elif profile != "standard" and not context.knows(value):
            out.append(
                Problem(
                    f"{text} = {as_text(value)[:60]} appears nowhere in the conversation before the call",
                    "value.not_in_context",
                    **here,
                )
            )
        elif date_misplaced(*leaf_schema(properties, path), value):
            leaf = leaf_schema(properties, path)[0]
            out.append(Problem(f"{text} = {value} is a date, but {leaf} is no date", "value.date_misplaced", **here))
    return out + [_at(p, f"task {task} {name}: ", "values", task, index) for p in shared_value_errors(arguments or {})]


def session_rule_problems(session: Mapping[str, Any], language: str = "en", profile: str = "small") -> list[Problem]:
    """Every rule problem of one session in the dataset schema (module doc), before the profile's
    selection; each carries ``details`` ``check`` (one of ``QUALITY_CHECKS``), ``task`` and ``step``.

    Args:
        session: a session (``english_tasks``, ``english_answer_list``, ``english_env_info``,
            ``english_tools``; the generator writes the text of either language there).
        language: ``en`` or ``zh``.
        profile: ``small`` (literal value matching, ``value.not_in_context``) or ``standard`` (derived
            values, ``value.invented`` and ``value.placeholder``).
    """
    messages = [m if isinstance(m, str) else "" for m in session.get("english_tasks") or []]
    tools = session.get("english_tools")
    env = session.get("english_env_info") if isinstance(session.get("english_env_info"), str) else ""
    today, names = env_date(env), _parameters(tools)
    found: list[Problem] = []
    history, earlier_replies = [env], []  # each final reply with its task's results
    results: dict[str, str] = {}  # an observation's text -> the call that returned it first
    for task, nodes in enumerate(session.get("english_answer_list") or []):
        nodes = [n for n in nodes if isinstance(n, Mapping)] if isinstance(nodes, list) else []
        message = messages[task] if task < len(messages) else ""
        history.append(message)
        where = f"task {task} user message: "
        for why in voice_problems(message, language, opening=True, env_info=env) + broken_text(message, names):
            found.append(_at(why, where, "voice", task, None))
        copied = echo_problem(message, [reply for reply, _ in earlier_replies])
        if copied:
            found.append(Problem(f'{where}repeats "{copied}" of the assistant\'s reply', "voice.echo",
                                 check="voice", task=task, step=None))  # fmt: skip
        task_values: list[Any] = []
        seen, user_texts, calls_made = list(history), [message], {}
        for index, node in enumerate(nodes):
            action = node.get("action") if isinstance(node.get("action"), Mapping) else {}
            name, observation = action.get("name"), node.get("observation")
            if name == ASK_USER and isinstance(node.get("user_input"), str):
                said = node["user_input"]
                for why in voice_problems(said, language, env_info=env) + broken_text(said, names):
                    found.append(_at(why, f"task {task} user answer {index}: ", "voice", task, index))
            if name in (ASK_USER, PREPARE_TO_ANSWER) and isinstance(observation, str):
                reply = name == PREPARE_TO_ANSWER
                facts = results_text(nodes[:index])
                problems = assistant_problems(
                    observation,
                    user_texts=user_texts if reply else (),
                    replies=earlier_replies if reply else (),
                    results=facts,
                    use_results=reply and (action.get("arguments") or {}).get("answer_type") == "tool",
                    env_info=env,
                    language=language,
                ) + broken_text(observation, names)
                label = f"task {task} {'reply' if reply else 'question'} {index}: "
                found += [_at(why, label, "assistant", task, index) for why in problems]
                if reply:
                    earlier_replies.append((observation, facts))
            if name == ASK_USER and isinstance(node.get("user_input"), str):
                user_texts.append(node["user_input"])
            if isinstance(name, str) and name not in PSEUDO_TOOLS:
                function = _function(tools, name)
                task_values += [value for _path, value in leaves(action.get("arguments") or {})]
                found += _value_problems(name, function, action.get("arguments"), seen, today, profile, task, index)
                found += _call_problems(name, function, action, observation, index, task, calls_made, results)
            seen.extend(_node_texts(node))
        calls = [n for n in nodes if (n.get("action") or {}).get("name") not in PSEUDO_TOOLS]
        asked = any((n.get("action") or {}).get("name") == ASK_USER for n in nodes)
        if calls and task_values and not asked and not is_concrete(message, task_values):
            # A task whose calls take no values (getRandomJoke()) has nothing to name.
            found.append(Problem(f"task {task} user message names no concrete value: {message[:80]!r}",
                                 "value.concrete", check="concrete", task=task, step=None))  # fmt: skip
        history.extend(text for node in nodes for text in _node_texts(node))
    return found


def _call_problems(
    name: str, function: Mapping[str, Any], action: Mapping[str, Any], observation: Any, index: int, task: int,
    calls_made: dict[str, int], results: dict[str, str],
) -> list[Problem]:  # fmt: skip
    here = {"check": "calls", "task": task, "step": index}
    out = []
    key = _canonical([name, action.get("arguments") or {}])
    if key in calls_made:
        out.append(Problem(f"task {task} {name}: node {index} repeats the call of node {calls_made[key]}",
                           "decision.repeated_call", **here))  # fmt: skip
    calls_made.setdefault(key, index)
    if observation is not None and copies_definition(observation, function):
        out.append(Problem(f"task {task} {name}: node {index}'s result copies the tool's description",
                           "result.copies_definition", **here))  # fmt: skip
    elif observation is not None:
        text = _canonical(observation)
        first = results.get(text) if len(text) >= COPIED_RESULT_CHARS else None
        if first is not None and first != key:
            out.append(Problem(f"task {task} {name}: node {index}'s result copies the result of an earlier, "
                               "different call", "result.copies_other", **here))  # fmt: skip
        results.setdefault(text, key)
    return out


def session_quality(session: Mapping[str, Any], language: str = "en", profile: str = "small") -> dict[str, Any]:
    """The quality check of one generated session (docs/generation.md §10): the problems of
    :func:`session_rule_problems` whose rules are active under ``profile``.

    Returns:
        ``{"ok": bool, "voice": [...], "values": [...], "concrete": [...], "calls": [...],
        "assistant": [...], "rules": [...]}``: each check's list holds one reason per problem, naming the
        task (``"task 0 user message: ..."``); ``rules`` the problems' rule ids in the same order as they
        were found; ``ok`` when there is none.
    """
    problems = select(session_rule_problems(session, language, profile), profile)
    report = {name: [str(p) for p in problems if p.details.get("check") == name] for name in QUALITY_CHECKS}
    return {"ok": not problems, **report, "rules": [p.rule for p in problems]}


def quality_summary(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals of :func:`session_quality` results over a run (docs/generation.md §10).

    Returns:
        ``{"sessions": n, "passing": n_ok, "voice": n, ..., "rules": {id: n}}``: each check's number is the
        sessions with at least one problem of that kind; ``rules`` the sessions with a problem of each rule id.
    """
    rules: dict[str, int] = {}
    for result in results:
        for rule in dict.fromkeys(result.get("rules") or []):
            rules[rule] = rules.get(rule, 0) + 1
    return {
        "sessions": len(results),
        "passing": sum(1 for r in results if r.get("ok")),
        **{name: sum(1 for r in results if r.get(name)) for name in QUALITY_CHECKS},
        "rules": rules,
    }
