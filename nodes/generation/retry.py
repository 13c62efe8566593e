"""The one ask -> check -> retry -> fallback loop of every role (docs/generation.md §4.3, §7, §11).

Two shapes of the same loop, with one policy (:func:`tries`, :func:`exhausted`, :func:`rejected_try`,
:func:`accepted_try`) and one verdict entry (:func:`verdict_entry`):

- the roles that write text (the user's messages and answers, the agent's questions and replies) run
  :func:`write_text` inside their node: ask the role's model, read its output, check it against the rule
  catalog's rules active in the run's profile (``wildtoolbench.bench.rules``), and on a rejection ask
  again with the fix the rejected rules' hints name (at a higher temperature each try); when every try
  was rejected, the role's fallback text is used if the rules accept it;
- the planner's decisions and the tool's results are judged by the checker node (rules, then the
  Checker model), so their loop runs through the graph: the checker (or an added role sending the output
  back, ``registry.send_back``) records the rejection with :func:`rejected_try`, which counts the try,
  sets the feedback and fails the session when :func:`exhausted`; the graph routes back to the role.

Every output and every verdict is a transcript entry; a verdict lists the ids of the rules that rejected
(``rules``) beside their reasons, so nothing re-reads the reasons' words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from wildtoolbench.bench.generation import RULE_CHECK
from wildtoolbench.bench.rules import Problem, hints, rule_ids, select
from wildtoolbench.nodes.generation._common import ask_model, entry_id, retry_temperature, text_entry, without_line_of
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.state import State


def verdict_entry(
    state: State,
    *,
    role: str,
    task: int,
    target: Any,
    problems: Sequence[Problem],
    source: str = "rules",
    checked: str | None = None,
    offset: int = 0,
    suffix: str = "",
) -> dict[str, Any]:
    """The transcript entry of a verdict on the output ``target`` (docs/generation.md §8.4): ``verdict``
    (``reject`` when there are ``problems``, else ``accept``), ``reason`` (the reasons joined, plus
    ``suffix``), ``reasons`` (plain text) and ``rules`` (their rule ids, the same order), ``source``
    (``rules`` or ``model``); ``checked`` (``decision`` / ``results``) for the checker's verdicts. The
    entry's id is the next one after ``offset`` entries written in this node."""
    entry: dict[str, Any] = {"id": entry_id(state, offset), "role": role, "task": task, "target": target}
    if checked is not None:
        entry["checked"] = checked
    entry.update(
        verdict="reject" if problems else "accept",
        reason="; ".join(problems) + suffix,
        reasons=[str(p) for p in problems],
        rules=rule_ids(problems),
        source=source,
    )
    return entry


def rule_verdict(
    state: State, entries: Sequence[Any], task: int, target: str, problems: Sequence[Problem], suffix: str = ""
) -> dict[str, Any]:
    """The transcript entry of a rule rejection of a role's text ``target`` (:func:`verdict_entry` with role
    ``rule_check``, after the node's ``entries``; docs/generation.md §8.4)."""
    return verdict_entry(
        state, role=RULE_CHECK, task=task, target=target, problems=problems, offset=len(entries), suffix=suffix
    )


def tries(context: Context) -> range:
    """The tries of one output: ``0 .. max_retries - 1`` (at least one; docs/generation.md §4.3)."""
    return range(max(1, context.max_retries))


def exhausted(attempts: int, context: Context) -> bool:
    """Whether ``attempts`` rejected tries used up the output's tries (docs/generation.md §4.3, §7)."""
    return attempts >= max(1, context.max_retries)


def rejected_try(
    state: State, context: Context, *, feedback: str, failure: str, rules: Sequence[str] = ()
) -> dict[str, Any]:
    """The state update of a rejected try of an output the graph retries (a planner decision, tool results;
    docs/generation.md §7): ``verdict = "reject"``, ``attempts + 1`` and ``feedback`` (what the role's next
    prompt shows); when the tries are :func:`exhausted`, also ``status = "failed"`` and ``failure_reason``
    (``failure`` with the count filled in for ``{attempts}``) and ``failure_rules`` (``rules``, the ids of the
    rules that rejected the last try)."""
    attempts = state.attempts + 1
    update: dict[str, Any] = {"verdict": "reject", "attempts": attempts, "feedback": feedback}
    if exhausted(attempts, context):
        update.update(status="failed", failure_reason=failure.format(attempts=attempts), failure_rules=list(rules))
    return update


def accepted_try() -> dict[str, Any]:
    """The state update of an accepted output: ``verdict = "accept"`` and the retry state reset (the tries,
    the feedback, the rejected decisions and bans of the step, the Checker model's veto)."""
    return {"verdict": "accept", "attempts": 0, "feedback": "", "rejected": [], "banned": [], "model_vetoed": False}


@dataclass
class TextRequest:
    """What one role's text is written from and judged by (:func:`write_text`).

    Attributes:
        role: the writing role (``user``, ``agent``); picks the model and the rules' hints.
        task, kind: the task index and the text's kind (``open``, ``next``, ``answer``, ``question``, ``reply``).
        system, human: the prompt messages.
        feedback_label: the label of the fix line added to ``human`` on a retry.
        read: the model's raw output -> ``(text, details)``.
        check: ``(text, details)`` -> every rule problem (the profile is applied here).
        hint: the problems kept -> the fix text (``""`` = retry without one).
        env_info: the environment line, taken out of ``system`` after a rule said it was pasted.
        json_schema, max_tokens: the output grammar and token cap (local model).
        extra: ``details`` -> fields of the text's transcript entry.
        fallback: -> ``(text, details)`` the generator writes itself after every try was rejected, or ``None``.
    """

    role: str
    task: int
    kind: str
    system: str
    human: str
    feedback_label: str
    read: Callable[[str], tuple[str, Any]]
    check: Callable[[str, Any], list[Problem]]
    hint: Callable[[Sequence[Problem]], str]
    env_info: str = ""
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = None
    extra: Callable[[Any], dict[str, Any]] = lambda _details: {}
    fallback: Callable[[], tuple[str, Any] | None] = lambda: None
    entries: list[dict[str, Any]] = field(default_factory=list)
    """Transcript entries written before the loop (they come first; ids follow them)."""


@dataclass
class Written:
    """The outcome of :func:`write_text`: the last text and details, the problems left (empty = accepted),
    the transcript entries and model-call records, and the number of model tries."""

    text: str
    details: Any
    problems: list[Problem]
    entries: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    tries: int


def profile_check(check: Callable[..., list[Problem]], profile: str, role: str) -> Callable[..., list[Problem]]:
    """``check`` with its problems narrowed to the rules active for ``role`` under ``profile``
    (``wildtoolbench.bench.rules.select``; docs/generation.md §11.2)."""

    def checked(*args: Any, **kwargs: Any) -> list[Problem]:
        return select(check(*args, **kwargs), profile, role)

    return checked


async def write_text(request: TextRequest, state: State, runtime: Runtime[Context], context: Context) -> Written:
    """Ask, check, retry, fall back (module doc; docs/generation.md §4.3).

    Up to ``context.max_retries`` tries (at least one); each rejected try adds a rule verdict entry.
    Returns a :class:`Written`; never raises for a rejected text (the caller fails the session)."""
    entries = list(request.entries)
    calls: list[dict[str, Any]] = []
    system, text, details, problems = request.system, "", None, []
    for attempt in tries(context):
        prompt = request.human
        hint = request.hint(problems) if problems else ""
        if hint:
            prompt = f"{request.human}\n\n{request.feedback_label}: {hint}"
        if "env_line" in hints(problems, request.role):
            system = without_line_of(system, request.env_info)
        raw, record = await ask_model(
            request.role,
            state,
            runtime,
            system,
            prompt,
            json_schema=request.json_schema,
            max_tokens=request.max_tokens,
            temperature=retry_temperature(context, attempt),
            attempt=attempt,
        )
        calls.append(record)
        text, details = request.read(raw)
        entries.append(
            text_entry(
                state, entries, request.role, request.task, request.kind, attempt + 1, text, **request.extra(details)
            )
        )
        problems = request.check(text, details)
        if not problems:
            break
        entries.append(rule_verdict(state, entries, request.task, entries[-1]["id"], problems))
    if problems:
        fallback = request.fallback()
        if fallback is not None:
            draft, draft_details = fallback
            if draft and not request.check(draft, draft_details):
                text, details, problems = draft, draft_details, []
                entries.append(
                    text_entry(
                        state,
                        entries,
                        request.role,
                        request.task,
                        request.kind,
                        len(calls) + 1,
                        text,
                        **request.extra(details),
                        fallback=True,
                    )
                )
    return Written(text, details, problems, entries, calls, len(calls))
