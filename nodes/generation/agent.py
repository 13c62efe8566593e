"""Agent role (docs/generation.md): writes what the assistant says: the question for an accepted
``ask_user_for_required_parameters`` node, or the final reply for ``prepare_to_answer`` (a summary of
the tool results, or a direct chat reply). The text becomes the node's gold observation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime

from wildtoolbench.bench.audit_context import as_text
from wildtoolbench.bench.generation_checks import extract_json, plain_text, tools_by_name
from wildtoolbench.bench.generation_quality import results_text
from wildtoolbench.bench.rules import Problem, hints, rule_ids
from wildtoolbench.bench.rules.broken import broken_text
from wildtoolbench.bench.rules.reply import assistant_problems
from wildtoolbench.bench.rules.text import echo_problem
from wildtoolbench.bench.terms import PSEUDO_TOOLS
from wildtoolbench.nodes.generation._common import (
    actions_lines,
    conversation_lines,
    current_task,
    fail,
    labels,
    replace_current,
    replies_with_results,
    rule_profile,
    section,
)
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.retry import TextRequest, profile_check, write_text
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.text_patterns import sentences_pattern
from wildtoolbench.prompts import fragments, render

AGENT_MAX_TOKENS = 200
"""Token cap of the assistant's question or reply on the local model (a few sentences; a small model
otherwise rambles for minutes)."""


def _asked(state: State, arguments: dict[str, Any]) -> list[str]:
    """The asked parameters as the question's prompt names them: ``datasetId (The unique identifier of the
    dataset.)``, so the question can ask in plain words."""
    function = tools_by_name(state.tools).get(arguments.get("tool_name"), {})
    properties = (function.get("parameters") or {}).get("properties") or {}
    out = []
    for name in arguments.get("missing_required_parameters") or []:
        described = str((properties.get(name) or {}).get("description") or "").strip() if isinstance(name, str) else ""
        out.append(f"{name} ({described})" if described else str(name))
    return out


def result_points(nodes: Sequence[dict[str, Any]], *, limit: int = 8) -> str:
    """The facts of a task's tool results as one short line for the reply (docs/generation.md §2):
    ``"synonyms: banana, mango; antonyms: orange, grape"``, each result's scalar values by their key
    (lists joined), at most ``limit`` of them; ``""`` when no call returned anything."""
    points: list[str] = []
    for node in nodes:
        if node["name"] in PSEUDO_TOOLS or node.get("observation") is None:
            continue
        observation = node["observation"]
        if not isinstance(observation, dict):
            points.append(as_text(observation)[:80])
            continue
        for key, value in observation.items():
            if isinstance(value, list):
                value = ", ".join(as_text(v)[:40] for v in value[:5] if not isinstance(v, (dict, list)))
            elif isinstance(value, dict):
                value = ", ".join(
                    f"{k} {as_text(v)[:40]}" for k, v in list(value.items())[:4] if not isinstance(v, (dict, list))
                )
            else:
                value = as_text(value)[:60]
            if value:
                points.append(f"{key}: {value}")
    return "; ".join(points[:limit])


def fallback_reply(state: State) -> str:
    """The reply the generator writes itself when every try of a reply built on tool results was
    rejected (docs/generation.md §4.3): the ``reply_fallback`` fragment around the facts of the task's
    results (:func:`result_points`), e.g. ``"Here is what I found: synonyms: banana, mango."``; ``""``
    when the task's answer is no tool answer or its results hold no fact (the session then fails)."""
    nodes = state.tasks[-1].get("nodes", []) if state.tasks else []
    if not nodes or nodes[-1].get("arguments", {}).get("answer_type") != "tool":
        return ""
    points = result_points(nodes)
    return fragments(state.language)["reply_fallback"].replace("{points}", points) if points else ""


def agent_request(state: State) -> tuple[str, str]:
    """System and human messages of the agent for the last node of the current task (docs/generation.md)."""
    names = labels(state)
    task = state.tasks[-1]
    node = task["nodes"][-1]
    if state.awaiting == "question":
        missing = "; ".join(_asked(state, node["arguments"]))
        system = render(
            "agent_question.md",
            state.language,
            env_info=state.env_info,
            tool_name=node["arguments"].get("tool_name", ""),
            missing=missing,
        )
    else:
        style = fragments(state.language)["reply_style"][node["arguments"].get("answer_type", "tool")]
        system = render("agent_reply.md", state.language, env_info=state.env_info, reply_style=style)
    parts = [
        section(
            names["conversation"],
            conversation_lines(state, include_current=False, replies=state.awaiting == "question"),
            names["none"],
        ),
        section(names["current_request"], task["user_message"], names["none"]),
        section(names["actions"], actions_lines(task["nodes"]), names["none"]),
    ]
    points = result_points(task["nodes"]) if state.awaiting != "question" else ""
    if points:  # last: a small model follows what it read last, not the request it would otherwise restate
        parts.append(f"{names['result_points']}: {points}\n")
    return system, "\n".join(parts)


def agent_schema(state: State, kind: str) -> dict[str, Any]:
    """JSON schema of the assistant's text on a model with grammar support (docs/generation.md §2):
    ``{"question": ...}``, one or two sentences opening with one of the language's question openers and
    ending with a question mark, or ``{"reply": ...}``, at most four sentences on one line; neither holds
    a quote, backslash, backtick or line break (so a small model cannot paste its prompt or ramble)."""
    if kind == "question":
        openers = fragments(state.language)["openers"]["question"]
        text = sentences_pattern(openers, sentences=2, end="?？", language=state.language)
    else:
        text = sentences_pattern((), sentences=4, language=state.language)
    return {
        "type": "object",
        "properties": {kind: {"type": "string", "pattern": text}},
        "required": [kind],
        "additionalProperties": False,
    }


def read_agent_text(raw: str, kind: str) -> str:
    """The assistant's text from the model's output: the ``kind`` field of its JSON (grammar models), else the
    plain text (docs/generation.md §2); ``""`` when there is none."""
    try:
        value = extract_json(raw)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get(kind), str):
        return value[kind].strip()
    if raw.lstrip().startswith('{"'):
        return ""
    return plain_text(raw)


def agent_text_problems(text: str, task: dict[str, Any], kind: str = "reply", state: State | None = None) -> list[str]:
    """Rule problems of the assistant's question or reply (docs/generation.md §10): empty; a question or
    reply that pastes the environment line's date and time or switches to Chinese in an English
    session; a reply that copies eight words in a row of the user's request or answers of this task,
    or of one of its earlier replies with a fact this task's results do not hold
    (:func:`wildtoolbench.bench.rules.reply.assistant_problems`; a question may repeat the request's words);
    five words in a row of one of its own retry fixes (``retry_hints``)."""
    if not text:
        return [Problem("empty assistant message", "structure.empty_text")]
    said = [task.get("user_message") or ""] + [n["user_input"] for n in task.get("nodes", []) if n.get("user_input")]
    reply = kind == "reply"
    texts = fragments(state.language if state is not None else "en")["retry_hints"]
    copied = echo_problem(text, [texts[k] for k in dict.fromkeys([*AGENT_HINT_KEYS, "chat_echo"])], words=5)
    leaked = [Problem(f'copies "{copied}" of its instructions instead of answering', "reply.copies_hint")] if copied else []
    names = [n for t in (state.tools if state is not None else []) for n in _parameter_names(t)]
    return leaked + assistant_problems(
        text,
        user_texts=said if reply else (),
        replies=replies_with_results(state) if reply and state is not None else (),
        results=results_text(task.get("nodes", [])),
        use_results=reply
        and bool(task.get("nodes"))
        and task["nodes"][-1].get("arguments", {}).get("answer_type") == "tool",
        env_info=state.env_info if state is not None else "",
        language=state.language if state is not None else "en",
    ) + broken_text(text, names)


def _parameter_names(tool: dict[str, Any]) -> list[str]:
    function = tool.get("function", tool) if isinstance(tool, dict) else {}
    properties = (function.get("parameters") or {}).get("properties") if isinstance(function, dict) else None
    return list(properties) if isinstance(properties, dict) else []


AGENT_HINT_KEYS = ("reply_echo", "reply_again", "reply_once", "reply_values", "env_line", "language")
"""The fixes (keys of the ``retry_hints`` fragment) the agent's rules name (``wildtoolbench.bench.rules``, each
rule's ``hints["agent"]``); a text that copies one of them copies its instructions."""


def agent_retry_hint(state: State, problems: Sequence[str]) -> str:
    """The short fix a rejected question or reply is written again with (docs/generation.md §4.3): one per
    kind of problem, in the session's language (``""`` for none or an empty text, which is simply retried);
    a chat reply that repeats the user is told to answer the person (``chat_echo``), not to state results."""
    texts = fragments(state.language)["retry_hints"]
    kinds = hints(problems, "agent")
    if _answers_chat(state):  # a chat reply has no results to state: its fix speaks to the person
        kinds = ["chat_echo" if k == "reply_echo" else k for k in kinds]
    return "; ".join(texts[k] for k in dict.fromkeys(kinds))


def _answers_chat(state: State) -> bool:
    """Whether the text being written is the final reply of a chat answer (``answer_type`` ``chat``)."""
    nodes = state.tasks[-1].get("nodes", []) if state.tasks else []
    return bool(nodes) and (nodes[-1].get("arguments") or {}).get("answer_type") == "chat"


async def agent(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the question or the final reply into the last node's observation (docs/generation.md).

    An empty output, or one that breaks a rule (:func:`agent_text_problems`), is retried up to
    ``max_retries`` times (a rule problem with a short fix, each retry at a higher temperature:
    :func:`wildtoolbench.nodes.generation._common.retry_temperature`); a reply on tool results whose tries were all
    rejected is then written from the results' facts (:func:`fallback_reply`, marked ``"fallback"`` in
    the transcript); otherwise the session fails. After a final reply of the last layer the session
    is done.

    Returns:
        State update: ``tasks``, ``awaiting`` (``"reply"`` after a question, else ``""``), maybe
        ``status = "done"``, transcript entries and captured calls.
    """
    if state.status != "running":
        return {}
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    kind = "question" if state.awaiting == "question" else "reply"
    system, human = agent_request(state)
    task_index = len(state.tasks) - 1
    check = profile_check(
        lambda text, _details: agent_text_problems(text, state.tasks[-1], kind, state), rule_profile(context, state), "agent"
    )

    def fallback() -> tuple[str, Any] | None:
        return (fallback_reply(state), None) if kind == "reply" else None

    request = TextRequest(
        role="agent",
        task=task_index,
        kind=kind,
        system=system,
        human=human,
        feedback_label=labels(state)["feedback"],
        read=lambda raw: (read_agent_text(raw, kind), None),
        check=check,
        hint=lambda problems: agent_retry_hint(state, problems),
        env_info=state.env_info,
        json_schema=agent_schema(state, kind),
        max_tokens=AGENT_MAX_TOKENS,
        fallback=fallback,
    )
    written = await write_text(request, state, runtime, context)
    text, problems, entries, calls = written.text, written.problems, written.entries, written.calls
    update: dict[str, Any] = {"transcript": entries, "calls": calls}
    if not text:
        return {**update, **fail(f"agent gave no {kind} {context.max_retries} times (task {task_index})")}
    if problems:
        return {
            **update,
            **fail(f"agent {kind} rejected {len(calls)} times (task {task_index}): " + "; ".join(problems), rule_ids(problems)),
        }
    task = current_task(state)
    task["nodes"][-1]["observation"] = text
    update.update(tasks=replace_current(state, task), awaiting="reply" if kind == "question" else "")
    if kind == "reply" and len(state.tasks) >= len(state.layer_types):
        update["status"] = "done"
    return update


def route_after_agent(state: State) -> Literal["user's turn", "done"]:
    """After the agent: the user's turn (answer the question, or open the next layer's task), or the
    end when the last layer's reply is written (or the session failed; docs/generation.md)."""
    return "user's turn" if state.status == "running" else "done"
