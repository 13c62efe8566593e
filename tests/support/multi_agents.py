"""Multi-agent systems and planner-first agents as agent factories (docs/evaluation.md §8.9, issue 37).

The model that makes the benchmark's calls is always the ``ChatOpenAI`` of :mod:`tests.support.agent_shapes`
(the loopback server replaying a fixture candidate). The other models are stand-ins that behave as such
models do, without a server: :class:`Router` hands off to the worker and, once the worker reported back,
passes its report on to the user; :class:`PlanFirst` writes a todo list (``write_todos``) before it lets
its inner model answer; :class:`AnswerTool` gives a text reply of its inner model as a call of the
agent's structured-output tool.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

from tests.support.agent_shapes import chat_model

WORKER = "tool_expert"
_ids = itertools.count()


def _result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


class _Bindable(BaseChatModel):
    """A chat model whose ``bind_tools`` passes OpenAI tool schemas as the ``tools`` keyword (so a request's
    ``invocation_params`` name the tools it offers, as ``ChatOpenAI``'s do)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        kept = {k: v for k, v in kwargs.items() if k in ("tool_choice", "parallel_tool_calls")}
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kept)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("asynchronous only")


class Router(_Bindable):
    """A supervisor's (or a triage agent's) model: hands off to ``worker`` with its handoff tool; when the last
    message is the worker's report (or the handoff back), it passes the worker's last text on unchanged."""

    worker: str = WORKER
    model_name: str = "router"

    @property
    def _llm_type(self) -> str:
        return "router"

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        last = messages[-1]
        reported = (isinstance(last, AIMessage) and last.name == self.worker) or (
            isinstance(last, ToolMessage) and "transferred back" in str(last.content)
        )
        if reported:
            report = next(
                (
                    m
                    for m in reversed(messages)
                    if isinstance(m, AIMessage) and m.name == self.worker and not m.tool_calls
                ),
                None,
            )
            return _result(AIMessage(content=report.content if report is not None else ""))
        call = {"name": f"transfer_to_{self.worker}", "args": {}, "id": f"handoff-{next(_ids)}", "type": "tool_call"}
        return _result(AIMessage(content="", tool_calls=[call]))


class PlanFirst(_Bindable):
    """A deep agent's model that plans first: at the start of a run (the last message is the user's) it calls
    ``write_todos``; afterwards its inner model answers (its requests made directly, so the reply keeps the
    server's response id)."""

    inner: Any
    model_name: str = "plan-first"

    @property
    def _llm_type(self) -> str:
        return "plan-first"

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            todos = [{"content": "Answer the user's request with the right tools", "status": "in_progress"}]
            call = {"name": "write_todos", "args": {"todos": todos}, "id": f"plan-{next(_ids)}", "type": "tool_call"}
            return _result(AIMessage(content="", tool_calls=[call]))
        return await self.inner._agenerate(messages, stop=stop, **kwargs)


class Answer(BaseModel):
    """The final answer to the user."""

    answer: str = Field(description="what to tell the user")


class AnswerTool(_Bindable):
    """A model whose text replies come as a call of the structured-output tool ``Answer`` (``ToolStrategy``)."""

    inner: Any
    model_name: str = "answer-tool"

    @property
    def _llm_type(self) -> str:
        return "answer-tool"

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        result = await self.inner._agenerate(messages, stop=stop, **kwargs)
        reply = result.generations[0].message
        if reply.tool_calls or reply.invalid_tool_calls or not reply.content:
            return result
        call = {"name": "Answer", "args": {"answer": reply.content}, "id": f"answer-{next(_ids)}", "type": "tool_call"}
        answer = AIMessage(content="", tool_calls=[call], response_metadata=reply.response_metadata)
        return ChatResult(generations=[ChatGeneration(message=answer)], llm_output=result.llm_output)


def supervisor_agent(tools: list[Any]) -> Any:
    """``langgraph_supervisor.create_supervisor`` over one worker (``create_agent`` with the task's tools)."""
    from langgraph_supervisor import create_supervisor

    worker = create_agent(chat_model(), tools, name=WORKER)
    return create_supervisor([worker], model=Router(), prompt="Hand the user's requests to the tool expert.").compile()


def swarm_agent(tools: list[Any]) -> Any:
    """``langgraph_swarm.create_swarm``: a triage agent hands off to the tool expert, which answers the user."""
    from langgraph_swarm import create_handoff_tool, create_swarm

    triage = create_agent(Router(), [create_handoff_tool(agent_name=WORKER)], name="triage")
    expert = create_agent(chat_model(), [*tools, create_handoff_tool(agent_name="triage")], name=WORKER)
    return create_swarm([triage, expert], default_active_agent="triage").compile()


def deep_agent(tools: list[Any]) -> Any:
    """``deepagents.create_deep_agent`` whose model writes its todo list (``write_todos``) before it calls the
    task's tools (the todo list middleware given explicitly: deepagents 0.7 no longer adds it by default)."""
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware

    return create_deep_agent(model=PlanFirst(inner=chat_model()), tools=tools, middleware=[TodoListMiddleware()])


def structured_answer_agent(tools: list[Any]) -> Any:
    """``create_agent(..., response_format=ToolStrategy(Answer))``: the final answer is a call of ``Answer``."""
    return create_agent(AnswerTool(inner=chat_model()), tools, response_format=ToolStrategy(Answer))
