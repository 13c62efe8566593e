"""A small LangGraph tool-use agent, evaluated as a WildToolBench candidate.

    START -> agent --(tool calls)--------------------------------> END
                   --(text reply)--> reflect --(approve)---------> END
                                             --(revise, once)--> agent -> END

``agent`` answers with its own system prompt (put before the harness's date line) and the task's
tools bound. Tool calls go straight out: the benchmark runs the tools and calls the agent again
with the results. A text reply (a final answer or a question to the user) first goes to
``reflect``, which asks the same model to review the draft against the conversation and the
tools; ``REVISE: <note>`` sends the note back to ``agent`` for one more try, anything else keeps the
draft. The last message of the output is the agent's reply for the step.

Evaluate it (from the repository root)::

    wtb eval --model graph:examples/tool_agent.py:graph
    WTB_AGENT_MODEL=openai:gpt-4o-mini wtb eval --dataset data.jsonl \\
        --model graph:examples/tool_agent.py:graph --out runs/tool-agent-gpt-4o-mini

Its model is ``$WTB_AGENT_MODEL`` (any ``wtb`` model spec: ``openai:...``,
``langchain:anthropic:...``, ``local``, ``scripted:FILE`` ...), with ``$WTB_AGENT_BASE_URL`` and
``$WTB_AGENT_TEMPERATURE`` (default 0). Without it the agent replays the bundled demo candidate
(``demo-model``), which works offline on the bundled demo sessions (the default dataset of
``wtb eval``); the reflection then always approves, so the scores equal the replay's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import Annotated, Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

from wildtoolbench.bench.demo_data import CANDIDATES_PATH
from wildtoolbench.models import ModelSettings, resolve_model

CANDIDATE_MODEL = os.environ.get("WTB_AGENT_MODEL") or f"replay:{CANDIDATES_PATH}#demo-model"
"""The agent's model spec (the evaluation records it as ``candidate.model``)."""

MAX_REVISIONS = 1

SYSTEM_PROMPT = """You are a careful assistant that gets things done with the tools you are given.
- When a request needs information or an action that a tool provides, call the tool; never make up results.
- Calls that do not depend on each other go out together in one reply; a call that needs another call's result waits for it.
- Use the exact parameter names of the tool schema, fill every required parameter, and take values from the conversation.
- If a required value is missing and cannot be inferred, ask the user for it in one short question instead of guessing.
- When the tools have given you what you need, answer the user directly and briefly.
- Small talk and questions you can answer from the conversation need no tool."""

REFLECT_PROMPT = """You review an assistant's draft reply before the user sees it. The assistant could have called tools instead of replying in text.
Reply with the single word APPROVE when the draft is the right next move. Reply with REVISE: followed by one sentence saying what to do instead when:
- a listed tool should be called now (the draft answers without data it needs, or promises an action it has not taken);
- the draft asks the user for something already given in the conversation;
- the draft guesses a required value the user never gave (it should ask instead);
- the draft is empty."""


class AgentInput(TypedDict):
    """What the benchmark sends: the conversation so far and the task's tools (OpenAI function schemas)."""

    messages: list[AnyMessage]
    tools: list[dict[str, Any]]


class AgentOutput(TypedDict):
    """What the benchmark reads: the conversation, the agent's reply last."""

    messages: list[AnyMessage]


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    tools: list[dict[str, Any]]
    review: str
    """The reviewer's note on the last draft (``""`` when it approved)."""
    revisions: int


_models: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, BaseChatModel] = weakref.WeakKeyDictionary()


def agent_model() -> BaseChatModel:
    """The agent's chat model, built once per event loop (HTTP clients are bound to their loop)."""
    loop = asyncio.get_running_loop()
    model = _models.get(loop)
    if model is None:
        settings = ModelSettings(
            temperature=float(os.environ.get("WTB_AGENT_TEMPERATURE") or 0.0),
            base_url=os.environ.get("WTB_AGENT_BASE_URL") or None,
            max_retries=0,  # the benchmark retries the whole step on transient failures
        )
        model = _models[loop] = resolve_model(CANDIDATE_MODEL, settings)
    return model


def _with_tools(model: BaseChatModel, tools: list[dict[str, Any]]) -> Any:
    try:
        return model.bind_tools(tools)
    except NotImplementedError:  # a scripted text-only model
        return model


def _prompt(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Our system prompt first, merged with the benchmark's own system message (the date) when there is one."""
    if messages and isinstance(messages[0], SystemMessage):
        return [SystemMessage(f"{SYSTEM_PROMPT}\n\n{messages[0].text}"), *messages[1:]]
    return [SystemMessage(SYSTEM_PROMPT), *messages]


async def agent(state: AgentState) -> dict[str, Any]:
    """Ask the model for the next move; after a review, show it its draft and the reviewer's note."""
    messages = list(state["messages"])
    update: dict[str, Any] = {}
    if state.get("review"):
        draft = messages.pop()
        note = HumanMessage(
            f"(Reviewer, before your reply reaches the user: {state['review']} Give your corrected reply now.)"
        )
        messages += [draft, note]
        update["messages"] = [RemoveMessage(id=draft.id)] if draft.id else []
        update["revisions"] = state.get("revisions", 0) + 1
        update["review"] = ""
    reply = await _with_tools(agent_model(), state.get("tools") or []).ainvoke(_prompt(messages))
    update["messages"] = [*update.get("messages", []), reply]
    return update


def after_agent(state: AgentState) -> Literal["reflect", "__end__"]:
    """Tool calls leave at once; a text reply is reviewed first (unless it already was revised)."""
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return END
    return "reflect" if state.get("revisions", 0) < MAX_REVISIONS else END


def _transcript(messages: list[BaseMessage], limit: int = 6000) -> str:
    lines = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AIMessage):
            calls = "; ".join(f"{c['name']}({json.dumps(c['args'], ensure_ascii=False)})" for c in message.tool_calls)
            lines.append(f"assistant: {message.text}" + (f" [calls: {calls}]" if calls else ""))
        elif isinstance(message, ToolMessage):
            lines.append(f"tool result: {message.text}")
        else:
            lines.append(f"user: {message.text}")
    text = "\n".join(lines)
    return text if len(text) <= limit else "...\n" + text[-limit:]


async def reflect(state: AgentState) -> Command[Literal["agent", "__end__"]]:
    """Review the text draft; send it back once with a note, or let it go."""
    *history, draft = state["messages"]
    tools = "\n".join(
        f"- {t.get('function', {}).get('name')}: {t.get('function', {}).get('description', '')}"
        for t in state.get("tools") or []
    )
    request = (
        f"Tools the assistant can call:\n{tools or '(none)'}\n\n"
        f"Conversation so far:\n{_transcript(history)}\n\n"
        f"Draft reply of the assistant:\n{draft.text if isinstance(draft, AIMessage) else ''}"
    )
    verdict = await agent_model().ainvoke([SystemMessage(REFLECT_PROMPT), HumanMessage(request)])
    text = verdict.text.strip() if isinstance(verdict, AIMessage) else ""
    if text.upper().startswith("REVISE"):
        note = text[len("REVISE") :].lstrip(" :-").strip() or "Reconsider the draft."
        return Command(goto="agent", update={"review": note})
    return Command(goto=END, update={"review": ""})


def build_graph() -> Any:
    """Compile the agent (input :class:`AgentInput`, output :class:`AgentOutput`)."""
    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("agent", agent)
    builder.add_node("reflect", reflect)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent, ["reflect", END])
    return builder.compile(name="tool_agent")


graph = build_graph()
