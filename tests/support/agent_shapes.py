"""The standard shapes of a LangGraph tool agent, as agent factories (``def make(tools)``) for ``graph:`` specs.

Each wraps a ``ChatOpenAI`` whose model and base URL come from ``WTB_TEST_AGENT_MODEL`` and
``WTB_TEST_AGENT_BASE_URL`` (a loopback server in the tests; read at each factory call).
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition


def chat_model() -> ChatOpenAI:
    """The agents' model: ``$WTB_TEST_AGENT_MODEL`` at ``$WTB_TEST_AGENT_BASE_URL``, temperature 0, no client retries."""
    return ChatOpenAI(
        model=os.environ.get("WTB_TEST_AGENT_MODEL", "oracle"),
        base_url=os.environ.get("WTB_TEST_AGENT_BASE_URL", "http://127.0.0.1:9/v1"),
        api_key=os.environ.get("OPENAI_API_KEY") or "test-key",
        temperature=0,
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
