"""The standard shapes of a LangGraph tool agent, as agent factories (``def make(tools)``) for ``graph:`` specs.

Each wraps a ``ChatOpenAI`` whose model and base URL come from ``WTB_TEST_AGENT_MODEL`` and
``WTB_TEST_AGENT_BASE_URL`` (a loopback server in the tests; read at each factory call).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
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


def _one_request_builder(*, planner: Any = None, streaming: bool = False) -> Any:
    async def call_model(state: _GraphState) -> dict[str, Any]:
        if planner is not None:  # a first model the graph consults before the one that answers
            await planner.ainvoke("Plan the next step.")
        model = chat_model()
        if streaming:
            model = model.model_copy(update={"streaming": True, "stream_usage": True})
        reply = await model.bind_tools(state["tools"]).ainvoke(state["messages"])
        return {"messages": [reply]}

    builder = StateGraph(_GraphState)
    builder.add_node("model", call_model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile()


one_request_graph = _one_request_builder()
"""A graph of the one-request contract around the same model (the model built at each call)."""

streaming_one_request_graph = _one_request_builder(streaming=True)
"""The same graph, its model streaming."""


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


# --------------------------------------------------------------------------- the docs' shapes (the quickstart's
# Graph API and functional API agents, the multi-agent systems: examples/agent_shapes.py, tested from there)


def streaming_agent(tools: list[Any]) -> Any:
    """``create_agent`` around a ``ChatOpenAI(streaming=True, stream_usage=True)`` (token counts come in the stream)."""
    return create_agent(chat_model().model_copy(update={"streaming": True, "stream_usage": True}), tools)


def parallel_tools_agent(tools: list[Any]) -> Any:
    """A hand-written loop that runs a reply's calls at once with ``asyncio.gather(tool.ainvoke(args) ...)``."""
    model = chat_model().bind_tools(tools)
    by_name = {t.name: t for t in tools}

    async def llm_call(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def tool_node(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        texts = await asyncio.gather(*(by_name[c["name"]].ainvoke(c["args"]) for c in calls))
        return {"messages": [ToolMessage(content=t, tool_call_id=c["id"]) for t, c in zip(texts, calls, strict=True)]}

    builder = StateGraph(MessagesState)
    builder.add_node("llm_call", llm_call)
    builder.add_node("tool_node", tool_node)
    builder.add_edge(START, "llm_call")
    builder.add_conditional_edges("llm_call", tools_condition, {"tools": "tool_node", END: END})
    builder.add_edge("tool_node", "llm_call")
    return builder.compile()


# --------------------------------------------------------------------------- agents that break a rule (models/agent_checks.py)


def _loop(
    tools: list[Any], tool_node: Any, *, bound: list[Any] | None = None, model: Any = None, sync: bool = False
) -> Any:
    """A model node (``model``, else the agents' model bound with ``bound`` or the task's tools; ``invoke`` in a
    worker thread when ``sync``) plus ``tool_node``, wired with ``tools_condition``."""
    model = model if model is not None else chat_model().bind_tools(tools if bound is None else bound)

    async def llm_call(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def sync_llm_call(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("llm_call", sync_llm_call if sync else llm_call)
    builder.add_node("tool_node", tool_node)
    builder.add_edge(START, "llm_call")
    builder.add_conditional_edges("llm_call", tools_condition, {"tools": "tool_node", END: END})
    builder.add_edge("tool_node", "llm_call")
    return builder.compile()


def edited_args_agent(tools: list[Any]) -> Any:
    """Runs each call with an argument of its own added: no call of the step holds those arguments."""
    by_name = {t.name: t for t in tools}

    def tool_node(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {
            "messages": [
                ToolMessage(content=by_name[c["name"]].invoke({**c["args"], "page": 2}), tool_call_id=c["id"])
                for c in calls
            ]
        }

    return _loop(tools, tool_node)


def invalid_tool_agent(tools: list[Any]) -> Any:
    """Answers every call with ``Error: <name> is not a valid tool`` (a node that holds none of the task's tools)."""

    def tool_node(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {
            "messages": [
                ToolMessage(content=f"Error: {c['name']} is not a valid tool", tool_call_id=c["id"]) for c in calls
            ]
        }

    return _loop(tools, tool_node)


def unbound_agent(tools: list[Any]) -> Any:
    """Its model is bound with its own tool only, not the task's."""
    return _loop(tools, ToolNode([lookup_notes]), bound=[lookup_notes])


def best_of_two_agent(tools: list[Any]) -> Any:
    """Asks its model twice at once in one step (``asyncio.gather``) and keeps the first reply."""
    model = chat_model().bind_tools(tools)

    async def llm_call(state: MessagesState) -> dict[str, Any]:
        first, _ = await asyncio.gather(model.ainvoke(state["messages"]), model.ainvoke(state["messages"]))
        return {"messages": [first]}

    builder = StateGraph(MessagesState)
    builder.add_node("llm_call", llm_call)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "llm_call")
    builder.add_conditional_edges("llm_call", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "llm_call")
    return builder.compile()


def failing_node_agent(tools: list[Any]) -> Any:
    """A node of its own that raises after the first model reply (a bug in the agent's code)."""

    def broken(state: MessagesState) -> dict[str, Any]:
        raise KeyError("the agent's own bug: " + "x" * 300)

    return _loop(tools, broken)


def replay_agent(tools: list[Any]) -> Any:
    """``create_agent`` around the model of ``$WTB_TEST_AGENT_SPEC`` built by the public constructor
    (``resolve_model``): a ``replay:`` model answers each step as it does as the candidate."""
    from wildtoolbench.models import resolve_model

    return create_agent(resolve_model(os.environ["WTB_TEST_AGENT_SPEC"]), tools)


# --------------------------------------------------------------------------- wrapper models (one logical request each)


class Delegating(BaseChatModel):
    """A custom chat model whose request asks one of its ``inner`` models (a wrapper, or a router that picks a
    model by the conversation's length) with ``inner.ainvoke(messages)``: no config passed on, so LangChain
    does not nest the inner call under this one."""

    inner: list[Any]
    model_name: str = "delegating"

    @property
    def _llm_type(self) -> str:
        return "delegating"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools])

    def _pick(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> Any:
        model = self.inner[len(messages) % len(self.inner)]
        return model.bind_tools(kwargs["tools"]) if kwargs.get("tools") else model

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        return ChatResult(generations=[ChatGeneration(message=self._pick(messages, kwargs).invoke(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        reply = await self._pick(messages, kwargs).ainvoke(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def wrapper_agent(tools: list[Any]) -> Any:
    """``create_agent`` around a :class:`Delegating` wrapper of the agents' model (asynchronous calls)."""
    return create_agent(Delegating(inner=[chat_model()]), tools)


def router_agent(tools: list[Any]) -> Any:
    """The quickstart's synchronous loop around a :class:`Delegating` router over two models (``invoke`` in a
    worker thread)."""
    return _loop(
        tools, ToolNode(tools), model=Delegating(inner=[chat_model(), chat_model()]).bind_tools(tools), sync=True
    )


def fallbacks_agent(tools: list[Any]) -> Any:
    """A ``ToolNode`` loop whose model is ``primary.with_fallbacks([model])``; the primary's server refuses
    every connection, so each request falls back."""
    dead = ChatOpenAI(model="down", base_url="http://127.0.0.1:9/v1", api_key="test-key", max_retries=0)
    return _loop(tools, ToolNode(tools), model=dead.bind_tools(tools).with_fallbacks([chat_model().bind_tools(tools)]))


def retry_agent(tools: list[Any]) -> Any:
    """A ``ToolNode`` loop whose model is ``model.with_retry(stop_after_attempt=3)``."""
    model = chat_model().bind_tools(tools).with_retry(stop_after_attempt=3, wait_exponential_jitter=False)
    return _loop(tools, ToolNode(tools), model=model)


def remote_graph() -> Any:
    """A ``RemoteGraph`` as a one-request graph: the graph ``$WTB_TEST_REMOTE_GRAPH`` (default ``one_request``)
    of the LangGraph server at ``$WTB_TEST_REMOTE_URL`` (the tests serve :data:`one_request_graph` there)."""
    from langgraph.pregel.remote import RemoteGraph

    return RemoteGraph(os.environ.get("WTB_TEST_REMOTE_GRAPH", "one_request"), url=os.environ["WTB_TEST_REMOTE_URL"])
