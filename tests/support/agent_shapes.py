"""The standard shapes of a LangGraph tool agent, as agent factories (``def make(tools)``) for ``graph:`` specs.

Each wraps a ``ChatOpenAI`` whose model and base URL come from ``WTB_TEST_AGENT_MODEL`` and
``WTB_TEST_AGENT_BASE_URL`` (a loopback server in the tests; read at each factory call).
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from pydantic import Field


def chat_model() -> ChatOpenAI:
    """The agents' model: ``$WTB_TEST_AGENT_MODEL`` at ``$WTB_TEST_AGENT_BASE_URL``, temperature
    ``$WTB_TEST_AGENT_TEMPERATURE`` (default 0), no client retries."""
    return ChatOpenAI(
        model=os.environ.get("WTB_TEST_AGENT_MODEL", "oracle"),
        base_url=os.environ.get("WTB_TEST_AGENT_BASE_URL", "http://127.0.0.1:9/v1"),
        api_key=os.environ.get("OPENAI_API_KEY") or "test-key",
        temperature=float(os.environ.get("WTB_TEST_AGENT_TEMPERATURE") or 0),
        max_retries=0,
    )


def langchain_agent(tools: list[Any]) -> Any:
    """``langchain.agents.create_agent`` around the task's tools."""
    return create_agent(chat_model(), tools)


def prebuilt_agent(tools: list[Any]) -> Any:
    """``langgraph.prebuilt.create_react_agent`` around the task's tools."""
    return create_react_agent(chat_model(), tools)


def tool_node_loop(tools: list[Any]) -> Any:
    """A hand-written model node plus ``ToolNode`` with ``tools_condition``."""
    model = chat_model().bind_tools(tools)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "model")
    return builder.compile()


def sync_tool_node_loop(tools: list[Any]) -> Any:
    """The same loop with synchronous nodes (run in worker threads) and synchronous tool calls."""
    model = chat_model().bind_tools(tools)
    node = ToolNode(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def run_tools(state: MessagesState, config: Any) -> Any:
        return node.invoke(state, config)

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", node)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "model")
    return builder.compile()


@tool
def lookup_notes(topic: str) -> str:
    """Look up the agent's own notes on a topic."""
    return f"no notes on {topic}"


def agent_with_own_tool(tools: list[Any]) -> Any:
    """``create_agent`` with one tool of its own besides the task's, and a system prompt."""
    return create_agent(chat_model(), [*tools, lookup_notes], system_prompt="You are a helpful assistant.")


def interrupting_agent(tools: list[Any]) -> Any:
    """``create_react_agent`` compiled with ``interrupt_before=["tools"]``."""
    return create_react_agent(chat_model(), tools, interrupt_before=["tools"])


def self_running_graph() -> Any:
    """The old mistake: ``create_react_agent`` exported as a plain graph; its ToolNode runs the benchmark's calls."""
    return create_react_agent(chat_model(), [lookup_notes])


class _GraphState(MessagesState):
    tools: list[dict[str, Any]]


def _one_request_builder(*, planner: Any = None) -> Any:
    async def call_model(state: _GraphState) -> dict[str, Any]:
        if planner is not None:  # a first model the graph consults before the one that answers
            await planner.ainvoke("Plan the next step.")
        reply = await chat_model().bind_tools(state["tools"]).ainvoke(state["messages"])
        return {"messages": [reply]}

    builder = StateGraph(_GraphState)
    builder.add_node("model", call_model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile()


one_request_graph = _one_request_builder()
"""A graph of the one-request contract around the same model (the model built at each call)."""


class _Planner(GenericFakeChatModel):
    """A stand-in planner model (``model_name`` ``planner``) that always says the same thing."""

    model_name: str = "planner"


def planner_graph() -> Any:
    """A one-request graph that asks a planner model first, then the model whose reply is scored."""
    return _one_request_builder(planner=_Planner(messages=itertools.repeat(AIMessage(content="look it up"))))


class NoTemperatureChat(GenericFakeChatModel):
    """A chat model class that takes no ``temperature`` (for ``register_integration`` in the settings tests)."""

    model: str = ""
    messages: Any = Field(default_factory=lambda: itertools.repeat(AIMessage(content="ok")))
