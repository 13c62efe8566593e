"""Candidate graphs and Runnables for the tests of ``graph:`` specs (tests/integration/test_graph_candidates.py).

The chat model they call is ``$WTB_TEST_INNER_MODEL`` (a model spec, read at each call), so one module
serves every replay candidate; specs name them as ``graph:tests.support.candidate_graphs:<attr>``
(module form) or ``graph:tests/support/candidate_graphs.py:<attr>`` (file form).
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph

from wildtoolbench.models import resolve_model

INNER_MODEL_ENV = "WTB_TEST_INNER_MODEL"


class CandidateState(MessagesState):
    tools: list[dict[str, Any]]


def inner_model() -> Any:
    return resolve_model(os.environ[INNER_MODEL_ENV])


async def call_model(state: CandidateState) -> dict[str, Any]:
    """The one node: the inner chat model with the task's tools bound."""
    reply = await inner_model().bind_tools(state["tools"]).ainvoke(state["messages"])
    return {"messages": [reply]}


def _builder() -> StateGraph:
    builder = StateGraph(CandidateState)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "call_model")
    builder.add_edge("call_model", END)
    return builder


graph = _builder().compile(name="wrapped_model")
"""A compiled graph wrapping the inner model."""

uncompiled = _builder()
"""The same graph as a StateGraph (compiled by the loader)."""


def make_graph(config: RunnableConfig) -> Any:
    """A factory taking a RunnableConfig, as langgraph.json accepts."""
    assert "configurable" in config
    return _builder().compile(name="from_factory")


def make_graph_no_args() -> Any:
    """A factory taking nothing."""
    return _builder().compile(name="from_factory")


async def _runnable(state: dict[str, Any]) -> dict[str, Any]:
    reply = await inner_model().bind_tools(state["tools"]).ainvoke(state["messages"])
    return {"messages": [*state["messages"], reply]}


runnable = RunnableLambda(_runnable, name="plain_runnable")
"""A plain Runnable with the graph contract."""


def _no_ai_message(state: CandidateState) -> dict[str, Any]:
    return {"messages": [ToolMessage(content="I only call tools", tool_call_id="x")]}


def _user_last(state: CandidateState) -> dict[str, Any]:
    return {"messages": [AIMessage(content="draft"), HumanMessage(content="a human message last")]}


def _single_node(name: str, function: Any) -> Any:
    builder = StateGraph(CandidateState)
    builder.add_node(name, function)
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile(name=name)


no_ai_message = _single_node("no_ai_message", _no_ai_message)
"""Ends with a ToolMessage: a model error."""

human_last = _single_node("human_last", _user_last)
"""Ends with a HumanMessage: a model error."""

no_messages = RunnableLambda(lambda state: {"answer": "text"}, name="no_messages")
"""Returns no 'messages' at all: a model error."""


def _crash(state: CandidateState) -> dict[str, Any]:
    raise RuntimeError("bug in the candidate graph")


crashing = _single_node("crashing", _crash)
"""Raises: an infrastructure error (the run is retried on resume)."""

not_a_graph = 42
