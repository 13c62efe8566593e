"""The agent shapes of the LangGraph and LangChain docs as agent factories (docs/guides/agents.md, the table).

Each function takes the task's ``tools`` and returns the agent; evaluate one with

    wtb eval --model graph:examples/agent_shapes.py:quickstart_graph            # offline, bundled demo
    WTB_AGENT_MODEL=openai:gpt-4o-mini wtb eval --dataset data.jsonl \\
      --model graph:examples/agent_shapes.py:supervisor --out runs/supervisor

The model that calls the task's tools is ``$WTB_AGENT_MODEL`` (any ``wtb`` model spec), by default
the bundled demo replay, so every shape runs offline and scores what the replay alone scores. The
supervisor's and the triage agent's model is ``$WTB_AGENT_ROUTER_MODEL`` when set, else a small
stand-in that hands off to the worker and passes its report on (what a supervisor model does); the
deep agent's model writes its todo list first. Their handoffs, todo lists and the worker's report are
the agent's internal requests (docs/evaluation.md §8.9).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain.agents.structured_output import ToolStrategy
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph, add_messages
from pydantic import BaseModel, Field

from wildtoolbench.models import ModelSettings, resolve_model

DEMO = Path(__file__).resolve().parents[1] / "bench" / "data" / "demo_candidates.jsonl"
DEFAULT_MODEL = f"replay:{DEMO}#demo-model"
WORKER = "tool_expert"
_ids = itertools.count()


def worker_model() -> Any:
    """The model that calls the task's tools: ``$WTB_AGENT_MODEL`` (read at each call), else the bundled demo
    replay; at ``$WTB_AGENT_BASE_URL`` when set (an OpenAI-compatible server), temperature 0, no client
    retries (the benchmark retries a whole step)."""
    settings = ModelSettings(temperature=0.0, base_url=os.environ.get("WTB_AGENT_BASE_URL") or None, max_retries=0)
    return resolve_model(os.environ.get("WTB_AGENT_MODEL") or DEFAULT_MODEL, settings)


def __getattr__(name: str) -> Any:
    """``CANDIDATE_MODEL`` (the model the harness records for these agents): ``$WTB_AGENT_MODEL`` read at each
    access, as :func:`worker_model` reads it, else the bundled demo replay."""
    if name == "CANDIDATE_MODEL":
        return os.environ.get("WTB_AGENT_MODEL") or DEFAULT_MODEL
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- one agent


def _quickstart(tools: list[Any], *, catch: bool) -> Any:
    model = worker_model().bind_tools(tools)
    by_name = {t.name: t for t in tools}

    def llm_call(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def run(call: Any) -> Any:
        if not catch:
            return by_name[call["name"]].invoke(call["args"])
        try:
            return by_name[call["name"]].invoke(call["args"])
        except Exception as exc:  # noqa: BLE001 - the usual pattern: the error goes back to the model
            return f"Error: {exc}"

    def tool_node(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {"messages": [ToolMessage(run(c), tool_call_id=c["id"]) for c in calls]}

    def should_continue(state: MessagesState) -> str:
        return "tool_node" if state["messages"][-1].tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("llm_call", llm_call)
    builder.add_node("tool_node", tool_node)
    builder.add_edge(START, "llm_call")
    builder.add_conditional_edges("llm_call", should_continue, ["tool_node", END])
    builder.add_edge("tool_node", "llm_call")
    return builder.compile()


def quickstart_graph(tools: list[Any]) -> Any:
    """The LangGraph quickstart's Graph API agent: a model node and a hand-written tool node that calls
    ``tool.invoke(tool_call["args"])``."""
    return _quickstart(tools, catch=False)


def quickstart_graph_try(tools: list[Any]) -> Any:
    """The same, its tool node turning a tool's exception into an ``Error: ...`` observation (``try/except``)."""
    return _quickstart(tools, catch=True)


def functional(tools: list[Any]) -> Any:
    """The LangGraph quickstart's functional API agent (its input is the list of messages)."""
    model = worker_model().bind_tools(tools)
    by_name = {t.name: t for t in tools}

    @task
    def call_llm(messages: list[BaseMessage]) -> Any:
        return model.invoke(messages)

    @task
    def call_tool(tool_call: Any) -> Any:
        return by_name[tool_call["name"]].invoke(tool_call)

    @entrypoint()
    def agent(messages: list[BaseMessage]) -> list[BaseMessage]:
        response = call_llm(messages).result()
        while response.tool_calls:
            results = [future.result() for future in [call_tool(c) for c in response.tool_calls]]
            messages = add_messages(messages, [response, *results])
            response = call_llm(messages).result()
        return add_messages(messages, response)

    return agent


class Answer(BaseModel):
    """The final answer to the user."""

    answer: str = Field(description="what to tell the user")


def structured_answer(tools: list[Any]) -> Any:
    """``create_agent`` with ``response_format=ToolStrategy(Answer)``: its model (:class:`AnswerTool` around the
    worker model, a stand-in for a model that finishes by calling ``Answer``) gives each text answer as a call of
    ``Answer``, which the harness reads as the answer step (docs/evaluation.md §8.9)."""
    return create_agent(AnswerTool(inner=worker_model()), tools, response_format=ToolStrategy(Answer))


# --------------------------------------------------------------------------- several agents


class _StandIn(BaseChatModel):
    """Base of the stand-in models: ``bind_tools`` passes OpenAI tool schemas as the request's ``tools``."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        kept = {k: v for k, v in kwargs.items() if k in ("tool_choice", "parallel_tool_calls")}
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kept)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("asynchronous only")


class HandOff(_StandIn):
    """A stand-in supervisor model: hands off to the worker, then passes the worker's report on unchanged."""

    model_name: str = "hand-off"

    @property
    def _llm_type(self) -> str:
        return "hand-off"

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        last = messages[-1]
        if (isinstance(last, AIMessage) and last.name == WORKER) or (
            isinstance(last, ToolMessage) and "transferred back" in str(last.content)
        ):
            report = next(
                (m for m in reversed(messages) if isinstance(m, AIMessage) and m.name == WORKER and not m.tool_calls),
                None,
            )
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=report.content if report else ""))])
        call = {"name": f"transfer_to_{WORKER}", "args": {}, "id": f"handoff-{next(_ids)}", "type": "tool_call"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=[call]))])


def router_model() -> Any:
    """The supervisor's (triage agent's) model: ``$WTB_AGENT_ROUTER_MODEL``, else the :class:`HandOff` stand-in."""
    spec = os.environ.get("WTB_AGENT_ROUTER_MODEL")
    return resolve_model(spec) if spec else HandOff()


def supervisor(tools: list[Any]) -> Any:
    """``langgraph_supervisor.create_supervisor`` over one worker that holds the task's tools."""
    from langgraph_supervisor import create_supervisor

    worker = create_agent(worker_model(), tools, name=WORKER)
    return create_supervisor([worker], model=router_model(), prompt="Hand requests to the tool expert.").compile()


def swarm(tools: list[Any]) -> Any:
    """``langgraph_swarm.create_swarm``: a triage agent hands off to the tool expert, which answers the user."""
    from langgraph_swarm import create_handoff_tool, create_swarm

    triage = create_agent(router_model(), [create_handoff_tool(agent_name=WORKER)], name="triage")
    expert = create_agent(worker_model(), [*tools, create_handoff_tool(agent_name="triage")], name=WORKER)
    return create_swarm([triage, expert], default_active_agent="triage").compile()


class PlanFirst(_StandIn):
    """A model that writes its todo list (``write_todos``) at the start of each run, then lets ``inner`` answer
    (as part of this request)."""

    inner: Any
    model_name: str = "plan-first"

    @property
    def _llm_type(self) -> str:
        return "plan-first"

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            todos = [{"content": "Answer the request with the right tools", "status": "in_progress"}]
            call = {"name": "write_todos", "args": {"todos": todos}, "id": f"plan-{next(_ids)}", "type": "tool_call"}
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=[call]))])
        # the inner model answers as part of this request (its run manager: a replay model reads the session there)
        return await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)


class AnswerTool(_StandIn):
    """A model whose text replies come as a call of the structured-output tool ``Answer``: ``inner`` answers,
    and a text reply becomes ``Answer(answer=<the text>)`` (calls and empty replies pass as they are)."""

    inner: Any
    model_name: str = "answer-tool"

    @property
    def _llm_type(self) -> str:
        return "answer-tool"

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        result = await self.inner._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        reply = result.generations[0].message
        if reply.tool_calls or reply.invalid_tool_calls or not reply.content:
            return result
        call = {"name": "Answer", "args": {"answer": reply.content}, "id": f"answer-{next(_ids)}", "type": "tool_call"}
        answer = AIMessage(content="", tool_calls=[call], response_metadata=reply.response_metadata)
        return ChatResult(generations=[ChatGeneration(message=answer)], llm_output=result.llm_output)


def deep_agent(tools: list[Any]) -> Any:
    """``deepagents.create_deep_agent`` that plans with ``write_todos`` before it calls the task's tools."""
    from deepagents import create_deep_agent

    return create_deep_agent(model=PlanFirst(inner=worker_model()), tools=tools, middleware=[TodoListMiddleware()])
