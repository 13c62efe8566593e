"""A ReAct agent in the shape of LangChain's ``react-agent`` template, turned into an agent factory.

The template builds its graph at import time around a module-level tool list. Evaluated by
WildToolBench, the tools are the task's, so the same graph is built by a function of the tools:

    TOOLS = [search]                      ->   def make_graph(tools):
    model.bind_tools(TOOLS)               ->       model.bind_tools(tools)
    builder.add_node("tools", ToolNode(TOOLS)) ->  builder.add_node("tools", ToolNode(tools))
    graph = builder.compile()             ->       return builder.compile()

Everything else is the template's design: a state with LangGraph's ``IsLastStep`` managed value, a
context (``context_schema``) naming the model and the system prompt, a model node that puts the
system prompt (with the current time) before the conversation, and a ``ToolNode`` loop. The harness
runs the agent with the context's defaults, so the model comes from ``$REACT_AGENT_MODEL``
(``provider/model``, default ``openai/gpt-4o-mini``), optionally at ``$REACT_AGENT_BASE_URL``.

Evaluate it (from the repository root)::

    REACT_AGENT_MODEL=openai/gpt-4o-mini wtb eval --model graph:examples/react_agent.py:make_graph
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import StateGraph, add_messages
from langgraph.managed import IsLastStep
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime

SYSTEM_PROMPT = "You are a helpful AI assistant.\n\nSystem time: {system_time}"


@dataclass(kw_only=True)
class Context:
    """What the agent is configured with (defaults from the environment)."""

    model: str = field(default_factory=lambda: os.environ.get("REACT_AGENT_MODEL", "openai/gpt-4o-mini"))
    """``provider/model``, as ``init_chat_model`` takes it."""
    system_prompt: str = SYSTEM_PROMPT


@dataclass
class InputState:
    """What the agent is given: the conversation."""

    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)


@dataclass
class State(InputState):
    """The agent's working state: the conversation and whether the step budget is about to run out."""

    is_last_step: IsLastStep = field(default=False)


def chat_model(spec: str) -> BaseChatModel:
    """The chat model of ``provider/model`` (``$REACT_AGENT_BASE_URL`` as its base URL when set)."""
    provider, _, model = spec.partition("/")
    extra: dict[str, Any] = {}
    if os.environ.get("REACT_AGENT_BASE_URL"):
        extra["base_url"] = os.environ["REACT_AGENT_BASE_URL"]
    return init_chat_model(model, model_provider=provider, temperature=0, **extra)


def make_graph(tools: list[Any]) -> Any:
    """The ReAct agent around ``tools`` (the factory ``wtb eval --model graph:...:make_graph`` calls per task)."""

    async def call_model(state: State, runtime: Runtime[Context]) -> dict[str, list[AIMessage]]:
        context = runtime.context or Context()
        model = chat_model(context.model).bind_tools(tools)
        system = context.system_prompt.format(system_time=datetime.now(tz=UTC).isoformat())
        reply = await model.ainvoke([{"role": "system", "content": system}, *state.messages])
        if state.is_last_step and reply.tool_calls:
            return {"messages": [AIMessage(id=reply.id, content="Sorry, I ran out of steps for this question.")]}
        return {"messages": [reply]}

    def route(state: State) -> Literal["__end__", "tools"]:
        last = state.messages[-1]
        if not isinstance(last, AIMessage):
            raise ValueError(f"expected an AIMessage after the model, got {type(last).__name__}")
        return "tools" if last.tool_calls else "__end__"

    builder = StateGraph(State, input_schema=InputState, context_schema=Context)
    builder.add_node(call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge("__start__", "call_model")
    builder.add_conditional_edges("call_model", route)
    builder.add_edge("tools", "call_model")
    return builder.compile(name="ReAct Agent")
