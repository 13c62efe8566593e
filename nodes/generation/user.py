"""User role (docs/generation.md): opens the first task, answers the assistant's questions (about one answer in
four vague, which forces another question), and proposes each next task with an implicit-intent
strategy (coreferential reference, partial information, long-range dependency).

A task's message is written around focus tools drawn from the session's seed (:func:`focus_tools`):
the user model sees what they do (not their names) and answers ``{"details": {...}, "message": ...}``
(grammar-constrained on the local model, :func:`user_schema`): the concrete values first, then the
message that states them. Rule checks (docs/generation.md §10) reject a message in the assistant's
voice, a meta-question about the assistant or its tools, and details the message does not state;
the message is written again with the reason, at most ``max_retries`` tries.

What a message is about (focus tools, planned details, grammars) is in ``user_details.py``; the
generator's own drafts and the value choice in ``user_drafts.py``.
"""

from __future__ import annotations

import datetime as _dt
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from string import Template
from typing import Any

from langgraph.runtime import Runtime

from wildtoolbench.bench.audit_context import CallContext, as_text, env_date, leaves
from wildtoolbench.bench.generation import random_env_info, should_answer_vaguely
from wildtoolbench.bench.generation_checks import extract_json, plain_text, tools_by_name
from wildtoolbench.bench.rules import Problem, hints, rule_ids
from wildtoolbench.bench.rules.broken import broken_text
from wildtoolbench.bench.rules.text import echo_problem
from wildtoolbench.bench.rules.value import described, placeholder_problem
from wildtoolbench.bench.rules.voice import voice_problems
from wildtoolbench.bench.terms import ASK_USER
from wildtoolbench.nodes.generation._common import (
    assistant_replies,
    conversation_lines,
    conversation_texts,
    current_task,
    dumps,
    fail,
    labels,
    replace_current,
    rule_profile,
    section,
)
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.retry import TextRequest, profile_check, write_text
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.user_details import (
    USER_MAX_TOKENS,
    answer_schema,
    asked_details,
    focus_tools,
    planned_details,
    task_kind,
    user_schema,
)
from wildtoolbench.nodes.generation.user_drafts import (
    answer_draft,
    chat_draft,
    choose_values,
    draft_message,
    draft_request,
    goal_text,
    value_item,
)
from wildtoolbench.prompts import fragments, render


def read_message(raw: str) -> tuple[str, Any]:
    """The user's message and details from the model's text: ``{"details", "message"}`` JSON, or plain
    text (details ``None``). Returns ``(message, details)``; the message may be ``""``."""
    try:
        value = extract_json(raw)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return value["message"].strip(), value.get("details")
    if raw.lstrip().startswith('{"'):  # JSON cut off at the token cap: no message
        return "", None
    return plain_text(raw), None


def retry_hint(state: State, problems: Sequence[str]) -> str:
    """What the retry of a rejected message is told (docs/generation.md §4.3): one short instruction per kind
    of problem (the voice, unstated values, an empty message, a placeholder, the value to leave out), in
    the session's language. The exact reasons stay in the transcript: a small model copies whatever text it
    is shown, so the retry gets the fix, not the quoted phrase."""
    texts = fragments(state.language)["retry_hints"]
    return "; ".join(texts[k] for k in dict.fromkeys(hints(problems, "user", "voice")))


def message_problems(
    state: State,
    text: str,
    details: Any,
    *,
    kind: str,
    missing: str = "",
    earlier: Sequence[str] = (),
    functions: Sequence[dict[str, Any]] = (),
    assistant: Sequence[str] = (),
    env_info: str = "",
) -> list[str]:
    """Rule problems of one user message (docs/generation.md §10): empty; the assistant's voice or a
    meta-question (:func:`wildtoolbench.bench.rules.voice.voice_problems`); a detail value that is a placeholder
    or copies a description of the focus ``functions`` (:func:`wildtoolbench.bench.rules.value.placeholder_problem`);
    a detail value the message (with the ``earlier`` conversation) does not state; the ``missing``
    parameter given after all; six words in a row copied from the ``assistant``'s replies
    (:func:`wildtoolbench.bench.rules.text.echo_problem`); the date and time of ``env_info`` (else the
    state's environment line)."""
    if not text:
        return [
            Problem(
                "empty user message (or one too long and cut off): write one or two short sentences",
                "structure.empty_text",
            )
        ]
    env_line = env_info or state.env_info
    problems = [
        why.prefixed("the message ") for why in voice_problems(text, state.language, opening=True, env_info=env_line)
    ]
    copied = echo_problem(text, assistant)
    if copied:
        problems.append(Problem(f'the message repeats "{copied}" of the assistant\'s reply', "voice.echo"))
    hint = echo_problem(text, fragments(state.language)["retry_hints"].values(), words=4)
    if hint:  # a retry's fix copied into the message ("Do not repeat the assistant's words: ...")
        problems.append(
            Problem(
                f'the message copies "{hint}" of its instructions: it repeats the instructions instead of asking '
                "for something",
                "voice.copies_hint",
            )
        )
    if details is not None:
        context = CallContext([*earlier, text])
        descriptions = described(functions)
        unstated = []
        for path, value in leaves(details):
            placeholder = placeholder_problem(value, descriptions)
            if isinstance(value, str) and not value.strip():
                problems.append(Problem(f"details {path} is empty: give a concrete value", "value.empty"))
            elif placeholder:
                problems.append(placeholder.prefixed(f"details {path} = {as_text(value)[:60]} "))
            elif not context.knows(value):
                unstated.append(dumps(value.strip() if isinstance(value, str) else value))
        if unstated:
            problems.append(
                Problem(
                    f"the message does not state {', '.join(unstated)}: write it so that it names them",
                    "value.unstated",
                )
            )
        if missing and isinstance(details, dict) and details.get(missing) not in (None, ""):
            problems.append(Problem(f"leave out {missing}: the assistant must ask for it", "value.gives_missing"))
    names = [n for f in functions for n in ((f.get("parameters") or {}).get("properties") or {})]
    return problems + [why.prefixed("the message ") for why in broken_text(text, names)]


@dataclass
class _Turn:
    """What one user turn is written from (:func:`user`): its kind, task, prompt, grammar, the values
    request's transcript entries and calls, and the draft used when every try is rejected."""

    kind: str
    layer: int
    system: str
    human: str
    schema: dict[str, Any] | None
    fallback: Callable[[], tuple[str, Any] | None]
    entries: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    vague: bool = False
    strategy: str = ""
    missing: str = ""
    functions: list[dict[str, Any]] = field(default_factory=list)


async def _answer_turn(
    state: State, runtime: Runtime[Context], context: Context, today: _dt.date, conversation: str
) -> _Turn:
    """The user's answer to the assistant's last question (clear or vague; docs/generation.md §4.2)."""
    names, openers = labels(state), fragments(state.language)["openers"]
    value_entries: list[dict[str, Any]] = []
    value_calls: list[dict[str, Any]] = []
    task = current_task(state)
    asks = [n for n in task["nodes"] if n["name"] == ASK_USER]
    answered = sum(1 for n in asks if n.get("user_input"))
    vague = should_answer_vaguely(state.seed, len(state.tasks) - 1, answered, context.vague_answer_rate)
    style = fragments(state.language)["answer_style"]["vague" if vague else "clear"]
    asked = {} if vague else asked_details(state, task, today)
    if any(v is None for v in asked.values()):
        asked_tool = tools_by_name(state.tools).get((asks[-1].get("arguments") or {}).get("tool_name"), {})
        filled, value_entries, value_calls = await choose_values(
            state, runtime, [asked_tool], [asked], len(state.tasks) - 1
        )
        asked = filled[0]
    schema = answer_schema(asked, vague=vague, openers=openers["answer"], language=state.language)
    system = render("user_answer.md", state.language, answer_style=style)
    human = conversation
    if asked:
        values = ", ".join(value_item(state, n, v) for n, v in asked.items())
        human += "\n" + Template(fragments(state.language)["goals"]["answer"]).substitute(parameters=values)
        human += f"\n{names['draft']}: {answer_draft(state, asks[-1], asked)}"

    def fallback() -> tuple[str, Any] | None:
        if not vague and any(v is not None for v in asked.values()):
            return answer_draft(state, asks[-1], asked), asked  # "The team ID is 99924."
        return None

    return _Turn("answer", len(state.tasks) - 1, system, human, schema, fallback, value_entries, value_calls, vague)


async def _task_turn(
    state: State, runtime: Runtime[Context], env_info: str, today: _dt.date, conversation: str
) -> _Turn:
    """The message that opens the next layer's task around its focus tools (docs/generation.md §4.1, §4.3)."""
    names, openers = labels(state), fragments(state.language)["openers"]
    opening = not state.tasks
    layer = len(state.tasks)
    kind = "open" if opening else "next"
    strategy = ""
    if not opening:
        strategy = state.strategies[layer] if layer < len(state.strategies) and state.strategies[layer] else "partial"
    functions, missing = focus_tools(state, layer)
    planned, implicit = planned_details(state, functions, missing, layer, today)
    planned, value_entries, value_calls = await choose_values(state, runtime, functions, planned, layer)
    openers_kind = "chat" if not functions else ("request" if opening else "next")
    schema = user_schema(functions, missing, planned, openers[openers_kind], implicit, state.language)
    template_values = {"env_info": env_info, "task_kind": task_kind(state, layer)}
    if not opening:
        template_values["strategy"] = fragments(state.language)["strategies"][strategy]
    system = render("user_open.md" if opening else "user_next.md", state.language, **template_values)
    if functions:
        goal = f"{names['draft']}: {draft_request(state, functions, planned, implicit)}"
        if any(v is None for plan in planned for v in plan.values()):  # values the model still chooses
            goal += "\n" + goal_text(state, functions, missing, layer, planned, implicit)
    else:
        goal = f"{names['draft']}: {chat_draft(state, layer)}"
    # What the user wants comes last, then the closing cue: small models follow the last thing they
    # read (the example of the system prompt otherwise).
    cue = names["open_cue" if opening else "next_cue"]
    human = f"{goal}\n\n{cue}" if opening else f"{conversation}\n{goal}\n\n{cue}"

    def fallback() -> tuple[str, Any] | None:
        return draft_message(state, functions, planned, implicit, missing) if functions else None

    return _Turn(kind, layer, system, human, schema, fallback, value_entries, value_calls, False, strategy, missing,
                 functions)  # fmt: skip


async def user(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the user's next message (docs/generation.md).

    Mode by state: no task yet -> open task 1 (layer 0); ``awaiting == "reply"`` -> answer the
    question of the last ask node (fills its ``user_input``); otherwise -> open the next layer's task.
    A message that breaks a rule (:func:`message_problems`) is written again with the reason, up to
    ``max_retries`` tries in total, then the session fails.

    Returns:
        State update: ``tasks`` (new task or filled answer), ``awaiting``, ``transcript``, ``calls``
        (and ``env_info`` when the input had none).
    """
    if state.status != "running":
        return {}
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    update: dict[str, Any] = {}
    env_info = state.env_info
    if not env_info:
        env_info = random_env_info(random.Random(state.seed), 2024)
        update["env_info"] = env_info
    names = labels(state)
    today = env_date(env_info) or _dt.date(2024, 1, 1)
    conversation = section(names["conversation"], conversation_lines(state), names["none"])
    if state.awaiting == "reply":
        turn = await _answer_turn(state, runtime, context, today, conversation)
    else:
        turn = await _task_turn(state, runtime, env_info, today, conversation)
    kind, layer, strategy, vague = turn.kind, turn.layer, turn.strategy, turn.vague
    missing, functions = turn.missing, turn.functions
    earlier = conversation_texts(state) if kind == "next" else []
    check = profile_check(
        partial(
            message_problems,
            state,
            kind=kind,
            missing=missing,
            earlier=earlier,
            functions=functions,
            assistant=assistant_replies(state),
            env_info=env_info,
        ),
        rule_profile(context, state),
        "user",
    )

    request = TextRequest(
        role="user",
        task=layer,
        kind=kind,
        system=turn.system,
        human=turn.human,
        feedback_label=names["user_feedback"],
        read=read_message,
        check=check,
        hint=partial(retry_hint, state),
        env_info=env_info,
        json_schema=turn.schema,
        max_tokens=USER_MAX_TOKENS,
        extra=lambda details: {"details": details, "vague": vague, "strategy": strategy},
        fallback=turn.fallback,
        entries=list(turn.entries),
    )
    written = await write_text(request, state, runtime, context)
    text, details, problems = written.text, written.details, written.problems
    update.update(transcript=written.entries, calls=[*turn.calls, *written.calls])
    if problems:
        return {
            **update,
            **fail(
                f"user message rejected {written.tries} times (task {layer}, {kind}): " + "; ".join(problems),
                rule_ids(problems),
            ),
        }
    given = details if isinstance(details, dict) else {}
    if kind == "answer":
        task = current_task(state)
        task["nodes"][-1]["user_input"] = text
        if given:
            task["given"] = [*task.get("given", []), given]
        return {**update, "tasks": replace_current(state, task), "awaiting": ""}
    variant = state.mt_variants[layer] if layer < len(state.mt_variants) else ""
    new_task = {
        "layer_type": state.layer_types[layer],
        "variant": variant,
        "strategy": strategy,
        "user_message": text,
        "nodes": [],
        "focus": [f.get("name") for f in functions if isinstance(f.get("name"), str)],
        "missing": missing,
        "given": [given] if given else [],
    }
    return {
        **update,
        "tasks": [*state.tasks, new_task],
        "awaiting": "",
        "attempts": 0,
        "feedback": "",
        "rejected": [],
        "banned": [],
        "model_vetoed": False,
    }
