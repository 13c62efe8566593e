"""Agents that run their own tool loop, evaluated step by step (docs/evaluation.md §8).

A ``graph:`` target that is a factory with a parameter named ``tools`` (``def make_agent(tools):
return create_agent(model, tools)``) is an *agent candidate*. For each task the harness calls the
factory with the session's tools as LangChain tools (:func:`benchmark_tools`: name, description and
JSON schema exactly as the dataset gives them) whose execution the harness owns, and runs the agent
on the task's messages (the system message, the gold history, the user message: docs/evaluation.md §2).

Every chat model request the agent makes is one benchmark step. :class:`StepGate`, a callback handler
on the agent's run, hands each model reply to the evaluation graph the moment it arrives
(``on_llm_end``) and holds the agent there until the step is judged: a matched call step lets the
agent go on, and its ``ToolNode`` then receives the gold observations from the harness's tools (with
the agent's own call ids); any other outcome stops the agent's run (it is cancelled while it waits, so
no further model request is made). A text reply that the task goes on after (a question the gold
answers with a user message) ends the agent's own run; the next step starts a new run on the
conversation so far, as it would reach a chat model.

Nothing here matches or records: the evaluation graph does that with the reply it gets from
:meth:`AgentCall.send`, exactly as for a chat model (``nodes/evaluation``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from wildtoolbench.models.agent_checks import (
    CONCURRENT_REQUESTS,
    TOOL_NOT_OFFERED,
    UNMATCHED_TOOL_CALL,
    UNREAD_OBSERVATION,
    AgentError,
    PendingCalls,
    agent_failure,
    offered_tool_names,
)
from wildtoolbench.models.agent_requests import RequestScope, enclosing_requests
from wildtoolbench.models.agent_tools import (
    AgentStopped,
    BenchmarkTool,
    agent_input,
    benchmark_tools,
    current_run,
)
from wildtoolbench.models.graph_contract import (
    CANDIDATE_RUN_NAME,
    CandidateContractError,
    CandidateOutputError,
    default_context,
    graph_config,
    recorded_response,
    response_message,
)
from wildtoolbench.models.messages import RAW_RESPONSE_KEY, token_counts
from wildtoolbench.models.providers.graph import AgentFactory
from wildtoolbench.models.raw_capture import RawReplies, capturing_replies, raw_response
from wildtoolbench.models.reply import CandidateReply
from wildtoolbench.models.settings import AGENT_STEPS

AGENT_RUN_KEY = "wtb_agent_run"
"""Run metadata key naming the evaluation run's agent slot (set by ``call_candidate``)."""

DECISION_WAIT = 3600.0
"""Seconds an agent waits at most for the harness to judge a step before its run is stopped."""


@dataclass
class StepEvent:
    """What an agent run reports: a model reply (``message``), its end (``output``) or its failure (``error``)."""

    message: AIMessage | None = None
    output: Any = None
    error: BaseException | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    usage_reported: bool = False
    model: str | None = None
    models: list[str] = field(default_factory=list)
    raw: dict[str, Any] | None = None
    """The assistant message as the server sent it, when it was seen (:mod:`wildtoolbench.models.raw_capture`)."""
    internal: tuple[int, int, int] = (0, 0, 0)
    """Internal requests of the agent since the previous step: ``(requests, input tokens, output tokens)``."""


ANSWERS, STRICT = AGENT_STEPS
"""The ``agent_steps`` readings (:data:`wildtoolbench.models.settings.AGENT_STEPS`, §8.9)."""
AGENT_STEPS_KEY = "wtb_agent_steps"
"""Run metadata key carrying the ``agent_steps`` setting (set by ``call_candidate``)."""


def call_names(message: AIMessage) -> list[str]:
    """Names of every call of ``message``, valid or malformed, in order (``""`` for a call without one)."""
    return [str(c.get("name") or "") for c in [*message.tool_calls, *message.invalid_tool_calls]]


def answer_of(event: StepEvent) -> StepEvent:
    """The step event of the reply that reached the user when the run ended on it (§8.9): itself for a text
    reply; a reply that calls the agent's own tool (``ToolStrategy`` structured output) becomes the text
    answer those arguments hold (the raw ``arguments`` string as sent, else the arguments as JSON)."""
    message = event.message
    if message is None or not call_names(message):
        return event
    raw_calls = (event.raw or {}).get("tool_calls") if event.raw else None
    first = raw_calls[0] if isinstance(raw_calls, list) and raw_calls and isinstance(raw_calls[0], Mapping) else {}
    text = (first.get("function") or {}).get("arguments") if isinstance(first.get("function"), Mapping) else None
    if not isinstance(text, str):
        call = (message.tool_calls or message.invalid_tool_calls)[0]
        args = call.get("args")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    reasoning = (event.raw or {}).get("reasoning_content")
    answer = AIMessage(content=text, response_metadata=message.response_metadata, usage_metadata=message.usage_metadata)
    raw = {"content": text, "tool_calls": None, "reasoning_content": reasoning}
    return dataclasses.replace(event, message=answer, raw=raw)


_STOP = object()


class StepGate(AsyncCallbackHandler):
    """Callback handler on an agent's run: each model reply becomes a step and the run waits for its verdict.

    ``on_llm_end`` reports the reply to the :class:`AgentRun` and waits (a thread-safe future, so a
    synchronous node run in a worker thread waits too) until the harness resumes the run with the
    step's observations, or stops it; a stopped run raises :class:`AgentStopped` (``raise_error``).
    Token counts and model names of every model call are collected per step.
    """

    raise_error = True
    run_inline = False  # gathered beside the tracers: they see the call end while the step is judged

    def __init__(self, run: AgentRun):
        self.run = run
        self._names: dict[UUID, str] = {}
        self._lock = threading.Lock()
        self._input = self._output = 0
        self._reported = False
        self._models: list[str] = []
        self._flying: set[UUID] = set()
        self._nested: set[UUID] = set()
        self._offered: dict[UUID, set[str]] = {}

    def _start(
        self, run_id: UUID, metadata: Mapping[str, Any] | None, params: Mapping[str, Any] | None, parent: Any
    ) -> None:
        if self.run.stopped or self.run.failure is not None:
            raise AgentStopped("the harness ended the task")
        outer = [r for r in enclosing_requests() if r != run_id]  # requests whose code this one starts in
        with self._lock:
            if (parent is not None and (parent in self._flying or parent in self._nested)) or any(
                r in self._flying or r in self._nested for r in outer
            ):
                self._nested.add(run_id)  # a model called inside a model (a wrapper): part of the outer request
                return
        unread = self.run.unread()
        if unread:
            raise self.run.fail(
                UNREAD_OBSERVATION,
                f"the agent asked its model again before its tools read the gold observation(s) of "
                f"{', '.join(unread)} (was a benchmark tool call answered by something else, such as an "
                f"'is not a valid tool' error of a node that does not hold the task's tools?)",
            )
        with self._lock:
            if self._flying or self.run.pending is not None:
                raise self.run.fail(
                    CONCURRENT_REQUESTS,
                    "the agent made a model request while another of the same step was under way (e.g. "
                    "asyncio.gather over model calls): each reply must answer one request the harness can "
                    "tie it to; make the requests one after another",
                )
            self.run.count_deferred_as_internal()
            self._flying.add(run_id)
            offered = offered_tool_names(params)
            if offered is not None:
                self._offered[run_id] = offered
            name = (metadata or {}).get("ls_model_name")
            if isinstance(name, str) and name:
                self._names[run_id] = name

    async def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, metadata: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """Refuse a request after the task ended or that breaks a rule (models/agent_checks.py); note the model's name."""
        self._start(run_id, metadata, kwargs.get("invocation_params"), kwargs.get("parent_run_id"))

    async def on_llm_start(
        self, serialized: Any, prompts: Any, *, run_id: UUID, metadata: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """As :meth:`on_chat_model_start`, for a completion model."""
        self._start(run_id, metadata, kwargs.get("invocation_params"), kwargs.get("parent_run_id"))

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget a request that failed (its error reaches the agent's code)."""
        with self._lock:
            self._nested.discard(run_id)
            self._flying.discard(run_id)
            self._offered.pop(run_id, None)
            self._names.pop(run_id, None)

    async def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Report the reply as a step and wait for the harness's verdict."""
        message: AIMessage | None = None
        with self._lock:
            if run_id in self._nested:  # the outer model's reply is the request's
                self._nested.discard(run_id)
                return
            self._flying.discard(run_id)
            offered = self._offered.pop(run_id, None)
            name = self._names.pop(run_id, None)
            for generations in getattr(response, "generations", None) or []:
                for generation in generations:
                    candidate = getattr(generation, "message", None)
                    if isinstance(candidate, AIMessage):
                        message = candidate
                        usage = candidate.usage_metadata
                        if usage:
                            self._reported = True
                            self._input += int(usage.get("input_tokens") or 0)
                            self._output += int(usage.get("output_tokens") or 0)
                        if name is None:
                            reported = candidate.response_metadata.get("model_name") or candidate.response_metadata.get(
                                "model"
                            )
                            name = reported if isinstance(reported, str) and reported else None
            if name is not None and name not in self._models:
                self._models.append(name)
            if message is None:
                return
            names = call_names(message)
            missing = [n for n in names if offered is not None and n not in offered and n in self.run.benchmark]
            if missing:
                raise self.run.fail(
                    TOOL_NOT_OFFERED,
                    f"the reply calls {', '.join(map(repr, missing))}, which the request it answers did not offer "
                    f"(offered: {', '.join(sorted(offered or ())) or 'no tool'}); the model that makes the "
                    "benchmark's calls must be bound with the task's tools",
                )
            input_tokens, output_tokens = (self._input, self._output) if self._reported else token_counts(message)
            event = StepEvent(
                message=message,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                usage_reported=self._reported,
                model=name,
                models=list(self._models),
                raw=self.run.raw.take(message.response_metadata.get("id"), message),
            )
            self._input = self._output = 0
            self._reported = False
            if self.run.steps != STRICT and self.run.internal_kind(names, offered):
                self.run.defer(event)  # internal work, or the answer if the run ends on it (§8.9)
                return
        verdict = self.run.report(event)
        # A stopped run is cancelled while it waits here (an asynchronous model call), or, in a synchronous
        # node run in a worker thread, gets _STOP and returns: the cancelled graph schedules no node after it.
        await asyncio.wait_for(asyncio.wrap_future(verdict), DECISION_WAIT)


class AgentRun:
    """One run of an agent on one task's conversation, driven step by step by the harness.

    Args:
        agent: the compiled graph (or Runnable) the factory returned.
        messages: the conversation the run starts from (LangChain messages).
        config: the run config (callbacks of the calling node, metadata).
    """

    def __init__(
        self,
        agent: Any,
        messages: Sequence[BaseMessage],
        config: Mapping[str, Any],
        *,
        benchmark: Sequence[str] = (),
        steps: str = ANSWERS,
    ):
        self.loop = asyncio.get_running_loop()
        self.benchmark = frozenset(benchmark)
        """Names of the session's tools."""
        self.steps = steps
        """The ``agent_steps`` reading (:data:`ANSWERS` or :data:`STRICT`)."""
        self.deferred: StepEvent | None = None
        """A reply that is internal work if the run asks its model again, else the answer (§8.9)."""
        self.internal = [0, 0, 0]
        """Internal requests and their tokens since the last step reported."""
        self.events: asyncio.Queue[StepEvent] = asyncio.Queue()
        self.pending: concurrent.futures.Future[Any] | None = None
        self.pending_message: AIMessage | None = None
        self.stopped = False
        self.finished = False
        self.sent = len(messages)
        self.calls: PendingCalls | None = None
        """The matched step's calls and their gold observations (read by the harness's tools)."""
        self.failure: AgentError | None = None
        """The rule the run broke (it ended the session), once it broke one."""
        self.request_index: Any = None
        """The session's request index of the step the run answers (a replay model inside reads it)."""
        self.where: dict[str, Any] = {}
        """The task and step the run is answering (named by its errors)."""
        self._lock = threading.Lock()
        self.raw = RawReplies()
        self.replies: list[AIMessage] = []
        """Every reply the run reported, in order."""
        gate, scope = StepGate(self), RequestScope()
        callbacks = config.get("callbacks")
        if callbacks is None:
            handlers: Any = [scope, gate]
        elif isinstance(callbacks, list):
            handlers = [scope, *callbacks, gate]
        else:
            handlers = callbacks.copy()
            handlers.add_handler(scope, inherit=True)
            handlers.add_handler(gate, inherit=True)
        run_config = {**config, "callbacks": handlers}
        token = current_run.set(self)
        try:
            with capturing_replies(self.raw):
                self.task = asyncio.ensure_future(self._drive(agent, list(messages), run_config))
        finally:
            current_run.reset(token)

    async def _drive(self, agent: Any, messages: list[BaseMessage], config: dict[str, Any]) -> None:
        kwargs: dict[str, Any] = {}
        context = default_context(agent)
        if context is not None:  # the agent's own context_schema defaults, as for a graph candidate
            kwargs["context"] = context
        try:
            output = await agent.ainvoke(agent_input(agent, messages), config, **kwargs)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) or self.stopped:
                raise
            if self.failure is not None:  # its error event is queued already
                return
            self.finished = True
            self.events.put_nowait(StepEvent(error=exc))
            return
        self.finished = True
        with self._lock:
            deferred, self.deferred = self.deferred, None
        if deferred is not None:  # the run ended on it: the reply that reaches the user
            self.events.put_nowait(dataclasses.replace(answer_of(deferred), internal=self._take_internal()))
        self.events.put_nowait(StepEvent(output=output))

    # ----- called by the agent's side (possibly from a worker thread)

    def report(self, event: StepEvent) -> concurrent.futures.Future[Any]:
        """Hand a model reply to the harness; the returned future carries its verdict."""
        verdict: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self.stopped:
                verdict.set_result(_STOP)
                return verdict
            self.pending = verdict
        event = dataclasses.replace(event, internal=self._take_internal())
        self.loop.call_soon_threadsafe(self._queue, event)
        return verdict

    def internal_kind(self, names: Sequence[str], offered: set[str] | None) -> bool:
        """Whether a reply may be internal work (§8.9): it calls no benchmark tool, and every tool it calls was
        offered in its request (a handoff, ``write_todos``, the agent's own or structured-output tool); a
        text reply too. A call of a tool the request did not offer is a step (judged as a wrong call)."""
        if any(name in self.benchmark for name in names):
            return False
        if not names:
            return True
        return offered is not None and all(name in offered for name in names)

    def defer(self, event: StepEvent) -> None:
        """Hold ``event`` until the run either asks its model again (then it was internal) or ends (the answer)."""
        self.count_deferred_as_internal()
        with self._lock:
            self.deferred = event

    def count_deferred_as_internal(self) -> None:
        """The held reply, if any, was internal work: count its request and tokens."""
        with self._lock:
            deferred, self.deferred = self.deferred, None
            if deferred is not None:
                self.internal[0] += 1
                self.internal[1] += deferred.input_tokens
                self.internal[2] += deferred.output_tokens

    def _take_internal(self) -> tuple[int, int, int]:
        with self._lock:
            counted, self.internal = tuple(self.internal), [0, 0, 0]
        return counted  # type: ignore[return-value]

    def _queue(self, event: StepEvent) -> None:
        self.pending_message = event.message
        if event.message is not None:
            self.replies.append(event.message)
        self.events.put_nowait(event)

    def observation(self, call_id: str | None, name: str, args: Mapping[str, Any]) -> str:
        """The gold observation of the step's call this tool execution answers (:class:`PendingCalls`: by
        ``call_id`` when the tool got the whole ``ToolCall``, else by name and arguments).

        Raises:
            AgentStopped: the run was stopped; or no call of the matched step fits (the run then ends
                with the rule ``unmatched-tool-call``, models/agent_checks.py).
        """
        with self._lock:
            calls, stopped = self.calls, self.stopped or self.failure is not None
        if stopped:
            raise AgentStopped("the harness ended the task")
        found = calls.take(call_id, name, args) if calls is not None else None
        if found is None:
            held = calls.describe() if calls is not None else "none (no matched step is waiting for its results)"
            raise self.fail(
                UNMATCHED_TOOL_CALL,
                f"the agent ran {name} with arguments {json.dumps(args, ensure_ascii=False, default=str)} "
                f"(call id {call_id!r}), which no unread call of the step's reply holds; the step's calls: {held}",
            )
        return found

    def unread(self) -> list[str]:
        """The step's calls whose gold observation no tool execution has read yet."""
        calls = self.calls
        return calls.unread() if calls is not None else []

    def fail(self, rule: str, reason: str) -> AgentStopped:
        """End the session on a broken rule: queue an :class:`AgentError` for the harness and refuse every
        further model request and tool execution of the run. Returns the exception to raise in the agent."""
        error = AgentError(rule, reason, self.where)
        with self._lock:
            first = self.failure is None and not self.stopped
            if first:
                self.failure = error
        if first:
            self.loop.call_soon_threadsafe(self.events.put_nowait, StepEvent(error=error))
        return AgentStopped(str(error))

    # ----- called by the harness (event loop)

    def resumable(self, messages: Sequence[BaseMessage]) -> PendingCalls | None:
        """The observations for the waiting reply's calls when ``messages`` go on from it with exactly one
        tool message per call (a matched call step, docs/evaluation.md §3.5); else ``None``."""
        message = self.pending_message
        if self.stopped or self.finished or self.pending is None or message is None:
            return None
        calls = len(message.tool_calls)
        if calls == 0 or message.invalid_tool_calls or len(messages) != self.sent + 1 + calls:
            return None  # a malformed call cannot reach the agent's ToolNode: the next run starts from the messages
        tail = list(messages[self.sent + 1 :])
        if not all(isinstance(m, ToolMessage) for m in tail):
            return None
        texts = [m.content if isinstance(m.content, str) else str(m.content) for m in tail]
        return PendingCalls(message.tool_calls, texts)

    def resume(self, messages: Sequence[BaseMessage], observations: PendingCalls) -> None:
        """Let the waiting agent go on: its tools will return the gold ``observations`` of the step's calls."""
        with self._lock:
            self.calls = observations
            pending, self.pending = self.pending, None
        self.sent = len(messages)
        self.pending_message = None
        if pending is not None and not pending.done():
            pending.set_result(None)

    def stop(self) -> None:
        """Stop the run: a waiting step is refused, the task cancelled; no further model request is made."""
        with self._lock:
            self.stopped = True
            pending, self.pending = self.pending, None
            self.calls = None
        if not self.task.done():
            self.task.cancel()
        if pending is not None and not pending.done():
            pending.set_result(_STOP)

    async def next_event(self, timeout: float | None) -> StepEvent:
        """The run's next model reply, end or failure, waiting at most ``timeout`` seconds (``None``: no limit)."""
        if timeout is None or timeout <= 0:
            return await self.events.get()
        return await asyncio.wait_for(self.events.get(), timeout)


# --------------------------------------------------------------------------- the call the candidate makes


@dataclass
class _Slot:
    """The agent of one evaluation run's current task and its live run."""

    task: Any
    agent: Any
    run: AgentRun | None = None


_slots: dict[str, _Slot] = {}


def new_slot_key() -> str:
    """A fresh key for one evaluation run's agent slot (kept in the evaluation state)."""
    return uuid.uuid4().hex


def release(key: str | None) -> None:
    """Stop the live agent run of slot ``key`` and forget the slot (the task or the session ended)."""
    slot = _slots.pop(key, None) if key else None
    if slot is not None and slot.run is not None:
        slot.run.stop()


def live_runs() -> int:
    """How many agent runs are live (waiting for a verdict or running) in this process."""
    return sum(1 for s in _slots.values() if s.run is not None and not s.run.task.done())


@dataclass
class AgentReply:
    """One step of an agent: the reply and what it cost."""

    event: StepEvent


class AgentCall:
    """How an agent candidate answers a request: the step's reply from its live run (see the module doc).

    Args:
        factory: the ``graph:`` target's factory (:class:`wildtoolbench.models.providers.graph.AgentFactory`).
        timeout: seconds one step may take as a whole (the deadline on the agent's run; ``None``: none).
    """

    def __init__(self, factory: AgentFactory, timeout: float | None = None):
        self.runnable = factory
        self.timeout = timeout

    def _slot(self, key: str, task: Any, tools: list[dict[str, Any]]) -> _Slot:
        slot = _slots.get(key)
        if slot is not None and slot.task == task:
            return slot
        release(key)
        agent = self.runnable.build(benchmark_tools(tools))
        slot = _slots[key] = _Slot(task=task, agent=agent)
        return slot

    async def send(
        self,
        messages: Sequence[BaseMessage],
        tools: list[dict[str, Any]],
        config: Mapping[str, Any] | None,
        metadata: Mapping[str, Any],
    ) -> AgentReply:
        """One try of the request: resume the waiting run with the step's observations, or start one.

        Raises:
            AgentError: the agent's run broke a rule or raised inside its own code (:func:`agent_failure`).
            TimeoutError: no reply within :attr:`timeout` (retried; the run is stopped first).
            whatever the agent's run raised (its model's errors: retried when transient).
        """
        key = str(metadata.get(AGENT_RUN_KEY) or "")
        if not key:
            raise CandidateContractError("an agent candidate needs the evaluation graph's agent slot (wtb_agent_run)")
        where = {"task": metadata.get("wtb_task_idx"), "step": metadata.get("wtb_step")}
        slot = self._slot(key, (metadata.get("wtb_session_id"), metadata.get("wtb_task_idx")), tools)
        run = slot.run
        observations = run.resumable(messages) if run is not None else None
        index = metadata.get("wtb_request_index")
        if run is not None and observations is not None:
            run.where = where
            run.request_index = index
            run.resume(messages, observations)
            event = await self._next(run, where)
            if event.message is not None:
                return AgentReply(event)

            # The agent ended its run after the observations without asking its model again: the step's
            # reply comes from a new run on the conversation so far, as a chat model would be asked.
        if run is not None:
            run.stop()
        steps = str(metadata.get(AGENT_STEPS_KEY) or ANSWERS)
        names = [str((t.get("function") or t).get("name")) for t in tools if isinstance(t, Mapping)]
        run = slot.run = AgentRun(slot.agent, messages, self._config(config, metadata), benchmark=names, steps=steps)
        run.where = where
        run.request_index = index
        event = await self._next(run, where)
        if event.message is None:
            output = {"messages": event.output} if isinstance(event.output, list) else event.output
            last = response_message(output, where)
            if any(last is m for m in messages) or any(last is m for m in run.replies):
                raise CandidateOutputError(
                    "the agent ended its run without a model reply for this step (its last message is not new)", where
                )
            event = StepEvent(message=last)
        return AgentReply(event)

    @staticmethod
    def _config(config: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> dict[str, Any]:
        child = graph_config(config, metadata)
        child.pop("configurable", None)  # the agent's run lives across steps: nothing of one node's checkpoint
        child["run_name"] = CANDIDATE_RUN_NAME
        return child

    async def _next(self, run: AgentRun, where: Mapping[str, Any]) -> StepEvent:
        """The run's next event; a failed run is stopped and its error raised (an interrupt as a contract error)."""
        try:
            event = await run.next_event(self.timeout)
        except BaseException:
            run.stop()
            raise
        if event.error is not None:
            run.stop()
            failure = agent_failure(event.error, where)
            if failure is event.error:
                raise failure
            raise failure from event.error
        if event.message is None:
            run.stop()
        return event

    def read(self, reply: AgentReply, where: Mapping[str, Any] | None = None) -> CandidateReply:
        """The step's recorded response (docs/evaluation.md §5.3), token counts and models."""
        event = reply.event
        message = event.message
        assert message is not None
        input_tokens, output_tokens = (
            (event.input_tokens, event.output_tokens) if event.usage_reported else token_counts(message)
        )
        if event.raw is not None:
            extra = {**message.additional_kwargs, RAW_RESPONSE_KEY: raw_response(event.raw)}
            message = message.model_copy(update={"additional_kwargs": extra})
        return CandidateReply(
            recorded_response(message),
            input_tokens,
            output_tokens,
            event.model,
            tuple(event.models),
            internal=event.internal,
        )


__all__ = [
    "AGENT_RUN_KEY",
    "AgentCall",
    "AgentRun",
    "AgentStopped",
    "BenchmarkTool",
    "StepGate",
    "benchmark_tools",
    "live_runs",
    "new_slot_key",
    "release",
]
