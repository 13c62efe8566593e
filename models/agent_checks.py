"""The rules an agent candidate's run is held to, and the error that ends a session on one (docs/evaluation.md §8.8).

An agent factory's agent runs its own code between the harness's steps; whatever goes wrong there is
the agent's, not the infrastructure's: re-running cannot change it. Each rule has an id
(:data:`AGENT_RULES`); a run that breaks one ends its session at once with an :class:`AgentError` naming
the rule and the whole cause. The session is recorded as ``"Error during inference: agent error
[<rule>]: <message>"`` (scored as wrong tasks, its ``error_detail`` naming the exception, §6), never
retried, never waited for until ``--timeout``, never filed as an infrastructure error.

:class:`PendingCalls` is how the harness's tools know which call each tool execution answers: the
matched step's calls (id, name, arguments, in order) and the gold observation of each; an execution
is paired with a call by its id when the tool got the whole ``ToolCall``, else by name and arguments,
the first unread one in order (a hand-written loop that calls ``tool.invoke(tool_call["args"])``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.models.transport import ModelRequestError

AGENT_CODE = "agent-code"
UNMATCHED_TOOL_CALL = "unmatched-tool-call"
UNREAD_OBSERVATION = "unread-observation"
TOOL_NOT_OFFERED = "tool-not-offered"
CONCURRENT_REQUESTS = "concurrent-requests"
AGENT_INTERRUPTED = "interrupted"
RAN_TOOLS_ITSELF = "ran-tools-itself"
INPUT_CONTRACT = "input-contract"

AGENT_RULES: dict[str, str] = {
    AGENT_CODE: "an exception raised inside the agent's own code (its nodes, tools or middleware)",
    UNMATCHED_TOOL_CALL: "the agent ran a benchmark tool with a name and arguments that no call of the matched "
    "step holds, or after the harness handed over no observation",
    UNREAD_OBSERVATION: "the agent made its next model request without reading every gold observation the "
    "harness handed over for the step's calls",
    TOOL_NOT_OFFERED: "a reply calls a benchmark tool that was not offered in the request it answers",
    CONCURRENT_REQUESTS: "a model request was made while another one of the same step was still under way",
    AGENT_INTERRUPTED: "the agent's graph interrupted (interrupt(), interrupt_before / interrupt_after, a "
    "human-in-the-loop middleware)",
    RAN_TOOLS_ITSELF: "a one-request graph ran the benchmark's tool calls itself",
    INPUT_CONTRACT: "the agent's graph does not accept the input the harness gives it",
}
"""Every rule of an agent's run by id, with what breaks it (the table of docs/evaluation.md §8.8)."""


class AgentError(ModelRequestError):
    """A session ended by its agent (see the module doc): recorded with the whole message, not retried.

    Attributes:
        rule: the id of the broken rule (a key of :data:`AGENT_RULES`).
        reason: the whole message, untruncated.
    """

    passes_through = True
    """:func:`wildtoolbench.models.transport.request_with_retries` raises it as it is (never wrapped or retried)."""

    def __init__(self, rule: str, reason: str, where: Mapping[str, Any] | None = None):
        self.attempts = 1
        self.errors = [reason]
        self.transient = False
        self.where = dict(where or {})
        self.status = None
        self.rule = rule
        self.reason = reason
        RuntimeError.__init__(self, f"agent error [{rule}]: {reason}{_at(self.where)}")

    @property
    def rejected(self) -> bool:
        """Always true: the agent is at fault, so the session is recorded (docs/evaluation.md §6), not retried."""
        return True


def _at(where: Mapping[str, Any]) -> str:
    parts = [f"{key} {where[key]}" for key in ("task", "step") if where.get(key) is not None]
    return f" (at {', '.join(parts)})" if parts else ""


GRAPH_INTERRUPTED = (
    "the candidate graph interrupted (GraphInterrupt: interrupt_before / interrupt_after, or interrupt() inside "
    "it); a candidate runs to its end without human-in-the-loop pauses: compile it without them (an agent "
    "built with interrupt_before=['tools'] does not need it here: the harness owns the tools, see the agent "
    "factory in README 'Evaluating your own agent')"
)
"""Reason of the ``interrupted`` agent error."""


def agent_failure(error: BaseException, where: Mapping[str, Any]) -> BaseException:
    """The exception that ends the session for an error raised in an agent's or a graph candidate's run (§8.8).

    A transient failure or an HTTP error of its model, and a failed request of a model this project built
    (:class:`ModelRequestError`), are returned as they are (retried when transient, else an infrastructure
    error, as any model request's); so is an :class:`AgentError`. An interrupt becomes the rule
    ``interrupted``, anything else raised inside the candidate's own code ``agent-code``, each with the
    whole message.
    """
    from langgraph.errors import GraphInterrupt

    from wildtoolbench.models.transport import _status_of, transient_kind

    if isinstance(error, ModelRequestError):
        return error
    if isinstance(error, GraphInterrupt):
        return AgentError(AGENT_INTERRUPTED, f"{GRAPH_INTERRUPTED}; the interrupt: {error!r}", where)
    if transient_kind(error) is not None or _status_of(error) is not None:
        return error
    return AgentError(AGENT_CODE, describe_exception(error), where)


def describe_exception(exc: BaseException) -> str:
    """``"<ExceptionType>: <the whole message>"`` (the message's every line; ``repr`` when it has none)."""
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"


@dataclass
class _Pending:
    call_id: str | None
    name: str
    args: Any
    observation: str
    read: bool = False


class PendingCalls:
    """The calls of a matched step and their gold observations, each read once by the harness's tools.

    Args:
        calls: the reply's valid tool calls (``{"id", "name", "args"}``), in order.
        observations: the gold observation of each call, in the same order.
    """

    def __init__(self, calls: Sequence[Mapping[str, Any]], observations: Sequence[str]):
        self._items = [
            _Pending(call.get("id"), str(call.get("name")), call.get("args"), text)
            for call, text in zip(calls, observations, strict=True)
        ]
        self._lock = threading.Lock()

    def take(self, call_id: str | None, name: str, args: Any) -> str | None:
        """The observation of the call this execution answers, marked read; ``None`` when no unread call fits.

        A ``call_id`` that names an unread call of ``name`` picks it; otherwise the first unread call of
        ``name`` whose arguments equal ``args`` (compared as JSON values) does.
        """
        with self._lock:
            if call_id is not None:
                for item in self._items:
                    if not item.read and item.call_id == call_id and item.name == name:
                        item.read = True
                        return item.observation
            wanted = _canonical(args)
            for item in self._items:
                if not item.read and item.name == name and _canonical(item.args) == wanted:
                    item.read = True
                    return item.observation
        return None

    def unread(self) -> list[str]:
        """``name(id)`` of every call whose observation was not read yet, in order."""
        with self._lock:
            return [f"{item.name} (call {item.call_id})" for item in self._items if not item.read]

    def describe(self) -> str:
        """The step's calls as ``name args`` (for an error naming what the agent could have run)."""
        with self._lock:
            return "; ".join(f"{item.name} {_canonical(item.args)}" for item in self._items) or "none"


def _canonical(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def offered_tool_names(invocation_params: Mapping[str, Any] | None) -> set[str] | None:
    """Names of the tools a chat model request offered (``invocation_params["tools"]``: OpenAI function schemas,
    or ``{"name": ...}`` dicts, or tools); ``None`` when the request says nothing about its tools."""
    tools = (invocation_params or {}).get("tools")
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        return None
    names: set[str] = set()
    for tool in tools:
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
        else:
            name = getattr(tool, "name", None)
        if isinstance(name, str):
            names.add(name)
    return names


__all__ = [
    "AGENT_CODE",
    "CONCURRENT_REQUESTS",
    "INPUT_CONTRACT",
    "AGENT_INTERRUPTED",
    "RAN_TOOLS_ITSELF",
    "AGENT_RULES",
    "TOOL_NOT_OFFERED",
    "UNMATCHED_TOOL_CALL",
    "UNREAD_OBSERVATION",
    "GRAPH_INTERRUPTED",
    "AgentError",
    "agent_failure",
    "PendingCalls",
    "describe_exception",
    "offered_tool_names",
]
