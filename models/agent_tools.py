"""The harness's tools inside an agent candidate's run, and the input the run gets (docs/evaluation.md §8.1, §8.2).

Split from :mod:`wildtoolbench.models.agent_loop`, which drives the run: a :class:`BenchmarkTool` answers
with the gold observation of the step's call it runs for (:meth:`AgentRun.observation
<wildtoolbench.models.agent_loop.AgentRun.observation>`), found through the run in
:data:`current_run`.
"""

from __future__ import annotations

import collections.abc
import contextvars
import copy
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool


class AgentStopped(Exception):
    """Raised inside an agent's run when the harness ended the task (the run must not go on)."""


# --------------------------------------------------------------------------- the harness's tools

_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("wtb_agent_tool_call_id", default=None)
current_run: contextvars.ContextVar[Any] = contextvars.ContextVar("wtb_agent_run", default=None)
"""The :class:`wildtoolbench.models.agent_loop.AgentRun` whose agent runs in this context."""


class BenchmarkTool(BaseTool):
    """One task tool as a LangChain tool whose execution the harness owns (docs/evaluation.md §8.2).

    Its schema is the dataset's (``args_schema`` is the JSON schema dict of the tool's ``parameters``),
    so ``bind_tools`` sends the tool exactly as the ``openai:`` candidate gets it. Called by the agent's
    ``ToolNode`` after a matched step, it returns the gold observation the harness gave for that call
    id. Called at any other time it raises :class:`AgentStopped`.
    """

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002 - LangChain's name
        """Note the call id of a ``ToolCall`` input (none for bare arguments), then run as any tool."""
        token = _call_id.set(_tool_call_id(input))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _call_id.reset(token)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        """Note the call id of a ``ToolCall`` input (none for bare arguments), then run as any tool."""
        token = _call_id.set(_tool_call_id(input))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _call_id.reset(token)

    def _observation(self, args: Mapping[str, Any]) -> str:
        run = current_run.get()
        if run is None:
            raise AgentStopped(f"tool {self.name} was called outside an evaluated agent run")
        return run.observation(_call_id.get(), self.name, dict(args))

    def _run(self, *args: Any, **kwargs: Any) -> str:
        return self._observation(kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
        return self._observation(kwargs)


def _tool_call_id(value: Any) -> str | None:
    if isinstance(value, Mapping) and value.get("type") == "tool_call" and isinstance(value.get("id"), str):
        return value["id"]
    return None


def benchmark_tools(tools: Sequence[Mapping[str, Any]]) -> list[BaseTool]:
    """The session's tools (OpenAI function schemas as sent to a chat model) as :class:`BenchmarkTool` s.

    Args:
        tools: ``[{"type": "function", "function": {"name", "description", "parameters"}}]``.

    Returns:
        One tool per schema, in order; name, description and parameters unchanged (deep-copied).
    """
    made: list[BaseTool] = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        parameters = copy.deepcopy(function.get("parameters")) or {"type": "object", "properties": {}}
        made.append(
            BenchmarkTool(
                name=str(function.get("name")),
                description=str(function.get("description") or ""),
                args_schema=parameters,
            )
        )
    return made


# --------------------------------------------------------------------------- one agent run


LIST_TYPES = ("list", "List", "typing.List", "Sequence", "typing.Sequence", "collections.abc.Sequence")
"""Names of the input types (as written in a string annotation) that make a graph take a list of messages."""


def takes_message_list(agent: Any) -> bool:
    """Whether the graph's input is a list of messages rather than a state (docs/evaluation.md §8.1): the
    functional API's ``@entrypoint def agent(messages: list[BaseMessage])``, its annotation a type or a
    string (``from __future__ import annotations``); a Runnable without LangGraph channels by its JSON schema."""
    channels = getattr(agent, "channels", None)
    name = getattr(agent, "input_channels", None)
    if isinstance(channels, Mapping) and isinstance(name, str) and name in channels:
        kind = getattr(channels[name], "ValueType", None)
        if isinstance(kind, str):
            return kind.replace(" ", "").split("[")[0] in LIST_TYPES
        origin = typing.get_origin(kind) or kind
        return (
            isinstance(origin, type)
            and issubclass(origin, (list, tuple, collections.abc.Sequence))
            and not (issubclass(origin, (str, bytes)))
        )
    try:
        schema = agent.get_input_jsonschema()
    except Exception:  # noqa: BLE001 - a Runnable whose schema cannot be built takes the state
        return False
    return isinstance(schema, Mapping) and schema.get("type") == "array"


def agent_input(agent: Any, messages: list[BaseMessage]) -> Any:
    """What the agent's run is invoked with: the list of messages itself when the graph takes one
    (:func:`takes_message_list`), else ``{"messages": [...]}`` (docs/evaluation.md §8.1)."""
    return list(messages) if takes_message_list(agent) else {"messages": messages}
