"""Kinds of candidate and the contract of a graph candidate (docs/guides/agents.md).

The candidate of an evaluation is a LangChain chat model (``openai:``, ``replay:``, ``langchain:``,
``local`` ...), a LangGraph graph or any other LangChain ``Runnable`` (``graph:`` specs,
:mod:`wildtoolbench.models.providers.graph`). A chat model gets the session's tools bound and the messages so far. A graph
or Runnable is called, once per model request, with

    {"messages": [LangChain messages so far], "tools": [the task's tools as OpenAI function schemas]}

and the node's run config (so its nodes and model calls nest under the step in traces and in
``langgraph dev``); the last message of the ``messages`` of its output must be an ``AIMessage`` (text
and/or ``tool_calls``): that message is the candidate's response for the step. An output without one
raises :class:`CandidateOutputError`, recorded like a request the provider refused (HTTP 400): the
session's result is ``"Error during inference: model request failed (not retried): invalid output:
..."`` and it is scored as wrong tasks (docs/evaluation.md §6). An exception raised inside the graph
is handled like a failed model request (``wildtoolbench.models.transport``): retried when transient (HTTP 429,
timeouts ...), else an infrastructure error that the next run retries.

The evaluation context is not passed down: the graph runs with its own ``context_schema`` defaults
(or no context). Token counts of a graph's step are the sum over every chat model call it made for
that step (``usage_metadata``), or the response's own usage when no call reported any.

A :class:`wildtoolbench.models.candidate.Candidate` makes its requests through one of two calls, chosen once per
built model: :class:`ChatModelCall` (tools bound, the direct call of docs/evaluation.md §7.1) or
:class:`RunnableCall` (the contract above). :func:`describe_candidate` gives the ``candidate`` object
that result records and the ``call_candidate`` trace runs carry: ``{"kind", "spec", "graph"?, "model"}``.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.caches import BaseCache
from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    BaseCallbackHandler,
    BaseCallbackManager,
)
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_messages
from langchain_core.runnables import RunnableBinding
from langchain_core.runnables.config import get_async_callback_manager_for_config

from wildtoolbench.models.agent_checks import (
    INPUT_CONTRACT,
    RAN_TOOLS_ITSELF,
    AgentError,
    agent_failure,
)
from wildtoolbench.models.messages import RAW_RESPONSE_KEY, parse_tool_calls, response_from_ai, token_counts
from wildtoolbench.models.raw_capture import RawReplies, capturing_replies, raw_response
from wildtoolbench.models.reply import CandidateReply
from wildtoolbench.models.transport import ModelRequestError

CANDIDATE_RUN_NAME = "candidate"
"""Run name of the candidate's call (a chat model's run, or the root run of a graph candidate)."""


# --------------------------------------------------------------------------- describing the candidate


def is_chat_model(candidate: Any) -> bool:
    """True for a LangChain chat model (called with tools bound), false for a graph or other Runnable."""
    return isinstance(candidate, BaseChatModel)


# --------------------------------------------------------------------------- calling a chat model

try:
    from langchain_core.utils._gateway import (
        GATEWAY_METADATA_RESPONSE_KEY as _GATEWAY_KEY,
    )
except ImportError:  # pragma: no cover - a langchain-core without it has nothing to drop
    _GATEWAY_KEY = "lc_gateway_metadata"
"""Generation info LangChain keeps out of ``response_metadata``."""

_TAKES_RUN_MANAGER: dict[type, bool] = {}


def _takes_run_manager(model: BaseChatModel) -> bool:
    """Whether ``model._agenerate`` accepts ``run_manager`` (LangChain passes it only then); cached per class."""
    kind = type(model)
    if kind not in _TAKES_RUN_MANAGER:
        _TAKES_RUN_MANAGER[kind] = "run_manager" in inspect.signature(model._agenerate).parameters
    return _TAKES_RUN_MANAGER[kind]


def direct_call_kwargs(bound: Any, candidate: BaseChatModel, config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The keyword arguments (bound tools ...) for :func:`ainvoke_direct`, or ``None`` when the request must go
    through LangChain's ``ainvoke`` (docs/evaluation.md §7.1).

    Args:
        bound: ``candidate.bind_tools(tools)`` (a ``RunnableBinding`` of ``candidate``).
        candidate: the chat model itself.
        config: the calling node's run config (its ``callbacks``, ``tags``, ``metadata``).

    Returns:
        The binding's keyword arguments when nothing would observe or change the call: the binding
        carries no config of its own, LangChain would attach no callback handler (no tracing, no
        handler in ``config``, no configure hook such as the graph candidates' usage hook), the model
        has no response cache (neither its own nor LangChain's global one), no rate limiter, does not
        stream and keeps LangChain's default message format; else ``None``.
    """
    if not isinstance(bound, RunnableBinding) or bound.bound is not candidate or bound.config or bound.config_factories:
        return None
    model = candidate
    if model.rate_limiter is not None or getattr(model, "streaming", False) or bound.kwargs.get("stream"):
        return None
    if model.output_version == "v1":  # LangChain rewrites the content into blocks
        return None
    if (
        isinstance(model.cache, BaseCache)
        or model.cache is True
        or (model.cache is None and get_llm_cache() is not None)
    ):
        return None
    callbacks = (config or {}).get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        # inside a graph run: LangGraph configured the run's handlers (tracer, hooks) when it started
        if callbacks.handlers or callbacks.inheritable_handlers:
            return None
    elif callbacks:
        return None
    else:  # called outside a graph run: what LangChain would attach now (tracing, configure hooks)
        manager = get_async_callback_manager_for_config(dict(config or {}))
        if manager.handlers or manager.inheritable_handlers:
            return None
    return bound.kwargs


async def ainvoke_direct(
    model: BaseChatModel, messages: Sequence[BaseMessage], kwargs: Mapping[str, Any], metadata: Mapping[str, Any]
) -> AIMessage:
    """One request to ``model`` without LangChain's callback machinery: what ``model.ainvoke`` returns when
    no callback handler is attached (docs/evaluation.md §7.1).

    Only valid when :func:`direct_call_kwargs` allowed it (``kwargs`` is what it returned). The model's
    ``_agenerate`` gets the messages, the bound keyword arguments and a run manager without handlers
    that carries ``metadata`` (``replay:`` models read the session id and request index there); the
    reply gets what LangChain adds to it (an ``lc_run--<run id>-0`` id when it has none, the generation
    info and the provider's ``llm_output`` merged into ``response_metadata``).

    Returns:
        The model's first generation's message.

    Raises:
        Whatever the model's ``_agenerate`` raises (the provider's errors, as ``ainvoke`` would).
    """
    run_id = uuid.uuid4()
    if _takes_run_manager(model):
        run_manager = AsyncCallbackManagerForLLMRun(
            run_id=run_id, handlers=[], inheritable_handlers=[], metadata=dict(metadata), inheritable_metadata={}
        )
        result = await model._agenerate(list(messages), stop=None, run_manager=run_manager, **kwargs)
    else:
        result = await model._agenerate(list(messages), stop=None, **kwargs)
    for index, generation in enumerate(result.generations):
        message = generation.message
        if message.id is None:
            message.id = f"lc_run--{run_id}-{index}"
        info = generation.generation_info or {}
        message.response_metadata = {
            **{k: v for k, v in info.items() if k != _GATEWAY_KEY},
            **message.response_metadata,
        }
    if len(result.generations) == 1 and result.llm_output is not None:
        message = result.generations[0].message
        message.response_metadata = {**result.llm_output, **message.response_metadata}
    return result.generations[0].message  # type: ignore[return-value]


# --------------------------------------------------------------------------- invalid output


class CandidateOutputError(ModelRequestError):
    """A graph candidate's output has no ``AIMessage`` as its last message.

    Handled like a request the provider refused (:attr:`rejected` is true): re-running cannot change
    it, so the session is recorded as ``"Error during inference: model request failed (not retried):
    invalid output: <reason>"`` and scored as wrong tasks, as HTTP 400 is.
    """

    def __init__(self, reason: str, where: Mapping[str, Any] | None = None):
        super().__init__(1, [f"invalid output: {reason}"], False, where or {})
        self.reason = reason

    @property
    def rejected(self) -> bool:
        """Always true: the candidate's own output is at fault, not the infrastructure."""
        return True


class CandidateContractError(AgentError):
    """A candidate broke the calling contract: its graph interrupted, or ran the benchmark's tool calls itself.

    An agent error (:class:`wildtoolbench.models.agent_checks.AgentError`, docs/evaluation.md §8.4, §8.8):
    not retried, the session recorded with the whole message, which says how to fix the candidate.
    """

    def __init__(self, reason: str, where: Mapping[str, Any] | None = None, rule: str = INPUT_CONTRACT):
        super().__init__(rule, reason, where)


RAN_TOOLS = (
    "the candidate graph ran the benchmark's tool call(s) {names} itself (a ToolMessage for them appeared in its "
    "run), so the harness never saw the step's calls. A graph candidate must return after its model's reply; an "
    "agent that runs its own tool loop (create_agent, create_react_agent, a ToolNode loop) is evaluated through a "
    "factory with a parameter named 'tools': def make_agent(tools): return create_agent(model, tools), given as "
    "--model graph:FILE.py:make_agent (README 'Evaluating your own agent')"
)
"""Reason of the :class:`CandidateContractError` for a graph that executed tool calls itself."""


def _where(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {"task": metadata.get("wtb_task_idx"), "step": metadata.get("wtb_step")}


def tools_run_inside(output: Any, sent: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """Names of benchmark tools whose ``ToolMessage`` the graph produced itself (not among the ``sent`` messages).

    A ``ToolMessage`` counts when its ``name``, or the name of the call it answers in the output, is one
    of ``tools``; those the harness sent (by object, or by ``tool_call_id``) do not. ``[]`` for an
    output without a ``messages`` list.
    """
    messages = output.get("messages") if isinstance(output, Mapping) else None
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        return []
    names = {str((t.get("function") or {}).get("name")) for t in tools if isinstance(t, Mapping)}
    sent_ids = {id(m) for m in sent}
    sent_calls = {m.tool_call_id for m in sent if isinstance(m, ToolMessage)}
    called: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in [*message.tool_calls, *message.invalid_tool_calls]:
                if call.get("id") and call.get("name"):
                    called[str(call["id"])] = str(call["name"])
    found: list[str] = []
    for message in messages:
        if not isinstance(message, ToolMessage) or id(message) in sent_ids or message.tool_call_id in sent_calls:
            continue
        name = message.name or called.get(message.tool_call_id)
        if name in names and name not in found:
            found.append(name)
    return found


AI_MESSAGE_TYPES = ("ai", "AIMessage", "AIMessageChunk")
"""``type`` of a serialised ``AIMessage`` (what ``RemoteGraph`` and the LangGraph SDK return)."""


def ai_message_from_dict(data: Mapping[str, Any]) -> AIMessage | Mapping[str, Any]:
    """The ``AIMessage`` a serialised message dict (``{"type": "ai", "content", "tool_calls",
    "invalid_tool_calls", "usage_metadata", "response_metadata", "additional_kwargs", "id"}``, as a
    ``RemoteGraph`` returns it) describes, every field kept (``convert_to_messages`` drops the
    ``invalid_tool_calls`` and the usage, docs/evaluation.md §8.5); the dict itself when it is not one."""
    fields = {k: v for k, v in data.items() if k != "type" and k in AIMessage.model_fields}
    try:
        return AIMessage(**fields)
    except (ValueError, TypeError):
        return data


def response_message(output: Any, where: Mapping[str, Any] | None = None) -> AIMessage:
    """The response of a graph candidate: the last message of ``output["messages"]``, which must be an ``AIMessage``.

    Message dicts and tuples (``{"role": "assistant", ...}``) are converted as LangChain does.

    Raises:
        CandidateOutputError: the output is not a mapping with a non-empty ``messages`` list, or its
            last message is not an ``AIMessage`` (the reason names what was found).
    """
    if not isinstance(output, Mapping):
        raise CandidateOutputError(
            f"the candidate returned {type(output).__name__}, not a state with 'messages' (an AIMessage last)", where
        )
    messages = output.get("messages")
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        keys = ", ".join(map(str, output)) or "none"
        raise CandidateOutputError(f"the candidate's output has no 'messages' list (its keys: {keys})", where)
    if not messages:
        raise CandidateOutputError("the candidate's output 'messages' is empty; an AIMessage must come last", where)
    last = messages[-1]
    if isinstance(last, Mapping) and last.get("type") in AI_MESSAGE_TYPES:
        last = ai_message_from_dict(last)
    if not isinstance(last, BaseMessage):
        try:
            (last,) = convert_to_messages([last])
        except (ValueError, TypeError, NotImplementedError) as exc:
            raise CandidateOutputError(
                f"the last message of the candidate's output is not a message: {exc}", where
            ) from None
    if not isinstance(last, AIMessage):
        text = (
            last.content if isinstance(last.content, str) else json.dumps(last.content, ensure_ascii=False, default=str)
        )
        preview = text if len(text) <= 80 else text[:80] + "..."
        raise CandidateOutputError(
            f"the last message of the candidate's output is a {type(last).__name__} ({preview!r}), not an AIMessage",
            where,
        )
    return last


def _raw_matches(message: AIMessage, raw: Mapping[str, Any]) -> bool:
    """The raw response a provider stored still describes ``message`` (a graph may have edited the message).

    The same text, the same calls (id and name, in any order: LangChain splits valid and malformed calls),
    and the same arguments for every call that both parsed; a call malformed in the raw message that
    LangChain's merged stream chunks closed into valid JSON (its partial-JSON parser) still matches.
    """
    valid, invalid = parse_tool_calls(raw.get("tool_calls"))
    content = raw.get("content")
    raw_text = (
        content if isinstance(content, str) else "" if content is None else json.dumps(content, ensure_ascii=False)
    )
    text = message.content if isinstance(message.content, str) else None
    if text is not None and text != raw_text:
        return False
    mine = [*message.tool_calls, *message.invalid_tool_calls]
    theirs = [*valid, *invalid]
    if sorted(((c.get("id"), c.get("name")) for c in mine), key=repr) != sorted(
        ((c.get("id"), c.get("name")) for c in theirs), key=repr
    ):
        return False
    parsed = {(c.get("id"), c.get("name")): c.get("args") for c in valid}
    return all(parsed.get((c.get("id"), c.get("name")), c.get("args")) == c.get("args") for c in message.tool_calls)


def recorded_response(message: AIMessage) -> dict[str, Any]:
    """The raw response ``{"content", "tool_calls", "reasoning_content"}`` of a graph candidate's ``AIMessage``.

    As for a chat model (:func:`wildtoolbench.models.messages.response_from_ai`): the provider's raw message when the
    response is still the one the provider returned (raw ``arguments`` strings, provider ids), else
    rebuilt from the message (``arguments`` = ``json.dumps(args, ensure_ascii=False)``).
    """
    raw = message.additional_kwargs.get(RAW_RESPONSE_KEY)
    if raw is not None and not (isinstance(raw, Mapping) and _raw_matches(message, raw)):
        extra = {k: v for k, v in message.additional_kwargs.items() if k != RAW_RESPONSE_KEY}
        message = message.model_copy(update={"additional_kwargs": extra})
    return response_from_ai(message)


def with_raw_reply(message: AIMessage, seen: RawReplies) -> AIMessage:
    """``message`` with the raw assistant message the server sent for it (:mod:`wildtoolbench.models.raw_capture`, by response
    id) under ``additional_kwargs[RAW_RESPONSE_KEY]``, when it carries none yet and one was seen; else itself.

    So a reply of a LangChain chat model the harness did not build (``langchain:openai:...``, the model
    inside a ``graph:`` candidate) is recorded as the server sent it: calls in the order the model
    emitted them, raw ``arguments`` strings, ``content`` ``null`` when it sent none (docs/evaluation.md §8.5).
    """
    if RAW_RESPONSE_KEY in message.additional_kwargs:
        return message
    raw = seen.take(message.response_metadata.get("id"), message)
    if raw is None:
        return message
    extra = {**message.additional_kwargs, RAW_RESPONSE_KEY: raw_response(raw)}
    return message.model_copy(update={"additional_kwargs": extra})


# --------------------------------------------------------------------------- calling a graph


class StepUsage(BaseCallbackHandler):
    """Tokens and model names of every chat model call made while a graph candidate answers one request."""

    run_inline = True  # called in the event loop, in order

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0
        self.reported = False
        self.last_model: str | None = None
        self.models: list[str] = []
        self.by_message: dict[str, str] = {}
        """Model name by the id of the message it produced (the scored reply's model, docs/evaluation.md §5.5)."""
        self._names: dict[UUID, str] = {}
        self._lock = threading.Lock()

    def _start(self, run_id: UUID, metadata: Mapping[str, Any] | None) -> None:
        name = (metadata or {}).get("ls_model_name")
        if isinstance(name, str) and name:
            with self._lock:
                self._names[run_id] = name

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, metadata: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """Note the model name the call reports (``ls_model_name``)."""
        self._start(run_id, metadata)

    def on_llm_start(
        self, serialized: Any, prompts: Any, *, run_id: UUID, metadata: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """Note the model name a completion model reports (``ls_model_name``)."""
        self._start(run_id, metadata)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Add the reply's ``usage_metadata``; keep the model's name (else the one in ``response_metadata``)."""
        with self._lock:
            name = self._names.pop(run_id, None)
            for generations in getattr(response, "generations", None) or []:
                for generation in generations:
                    message = getattr(generation, "message", None)
                    usage = getattr(message, "usage_metadata", None)
                    if usage:
                        self.reported = True
                        self.input_tokens += int(usage.get("input_tokens") or 0)
                        self.output_tokens += int(usage.get("output_tokens") or 0)
                    if name is None and message is not None:
                        reported = message.response_metadata.get("model_name") or message.response_metadata.get("model")
                        name = reported if isinstance(reported, str) and reported else None
                    if name is not None and message is not None and message.id:
                        self.by_message[message.id] = name
            if name is not None:
                self.last_model = name
                if name not in self.models:
                    self.models.append(name)


_step_usage: contextvars.ContextVar[StepUsage | None] = contextvars.ContextVar("wtb_candidate_step_usage", default=None)
_hook_registered = False


def _register_usage_hook() -> None:
    """Make every callback manager configured while :data:`_step_usage` is set report to it (once per process)."""
    global _hook_registered
    if not _hook_registered:
        from langchain_core.tracers.context import register_configure_hook

        register_configure_hook(_step_usage, inheritable=True)
        _hook_registered = True


@dataclass
class GraphReply:
    """What a graph candidate returned for one request, with the usage of the model calls it made."""

    output: Any
    usage: StepUsage = field(default_factory=StepUsage)
    sent: Sequence[BaseMessage] = ()
    tools: Sequence[Mapping[str, Any]] = ()
    raw: RawReplies = field(default_factory=RawReplies)
    """The raw assistant messages of the OpenAI-compatible requests its models made (:mod:`wildtoolbench.models.raw_capture`)."""


def default_context(runnable: Any) -> Any:
    """The graph's own context: its ``context_schema`` built from its defaults, or ``None``."""
    schema = getattr(runnable, "context_schema", None)
    if not isinstance(schema, type):
        return None
    try:
        return schema()
    except Exception:  # noqa: BLE001 - required fields, or a TypedDict: no default context
        return None


def graph_config(config: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The config a graph candidate runs with: the calling node's config (callbacks, checkpoint namespace,
    recursion limit) plus ``metadata`` and the run name ``candidate``, without the evaluation's context."""
    child: dict[str, Any] = {k: v for k, v in (config or {}).items() if k not in ("run_id", "run_name")}
    child["metadata"] = {**(child.get("metadata") or {}), **metadata}
    child["run_name"] = CANDIDATE_RUN_NAME
    configurable = dict(child.get("configurable") or {})
    try:
        from langgraph._internal._constants import CONFIG_KEY_RUNTIME
    except ImportError:  # pragma: no cover - another langgraph layout: the evaluation context stays visible
        CONFIG_KEY_RUNTIME = None
    runtime = configurable.get(CONFIG_KEY_RUNTIME) if CONFIG_KEY_RUNTIME else None
    if runtime is not None and getattr(runtime, "context", None) is not None and hasattr(runtime, "override"):
        configurable[CONFIG_KEY_RUNTIME] = runtime.override(context=None)
    child["configurable"] = configurable
    return child


def graph_input(messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The input of a graph candidate: ``{"messages": [...], "tools": [...]}`` (the tools deep-copied)."""
    return {"messages": list(messages), "tools": copy.deepcopy(list(tools))}


async def ainvoke_graph(
    runnable: Any,
    messages: Sequence[BaseMessage],
    tools: Sequence[Mapping[str, Any]],
    config: Mapping[str, Any] | None,
    metadata: Mapping[str, Any],
) -> GraphReply:
    """Call a graph (or Runnable) candidate once (see the module doc); the output is checked by :func:`response_message`."""
    _register_usage_hook()
    usage = StepUsage()
    token = _step_usage.set(usage)
    seen = RawReplies()
    try:
        kwargs: dict[str, Any] = {}
        context = default_context(runnable)
        if context is not None:
            kwargs["context"] = context
        with capturing_replies(seen):
            output = await runnable.ainvoke(graph_input(messages, tools), graph_config(config, metadata), **kwargs)
    except Exception as exc:  # the graph's own code, an interrupt: an agent error (docs/evaluation.md §8.8)
        failure = agent_failure(exc, _where(metadata))
        if failure is exc:
            raise
        raise failure from exc
    finally:
        _step_usage.reset(token)
    return GraphReply(output=output, usage=usage, sent=messages, tools=tools, raw=seen)


# --------------------------------------------------------------------------- one call interface


class ChatModelCall:
    """How a chat-model candidate answers a request (docs/evaluation.md §2.4, §7.1): the session's tools bound,
    called directly when nothing observes the call (:func:`direct_call_kwargs`), else through ``ainvoke``.

    One per candidate and event loop (:meth:`wildtoolbench.models.candidate.Candidate.respond`). The binding of a
    session's tools is reused while the very same tools list comes back (the state hands every
    request of a session the same list); the last :data:`BOUND_MAX` bindings are kept.
    """

    BOUND_MAX = 256

    def __init__(self, model: BaseChatModel, *, capture: bool = False):
        self.runnable = model
        self.capture = capture
        """Read the raw assistant message from the HTTP response (:func:`with_raw_reply`): for models whose
        provider does not keep it (``langchain:``, a chat model given as a ``graph:`` target)."""
        self._bound: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def bound(self, tools: list[dict[str, Any]]) -> Any:
        """``model.bind_tools(tools)``, reused while the same ``tools`` list object comes back."""
        key = id(tools)
        with self._lock:
            hit = self._bound.get(key)
            if hit is not None and hit[0] is tools:
                self._bound.move_to_end(key)
                return hit[1]
        binding = self.runnable.bind_tools(tools)
        with self._lock:
            self._bound[key] = (tools, binding)
            while len(self._bound) > self.BOUND_MAX:
                self._bound.popitem(last=False)
        return binding

    async def send(
        self,
        messages: Sequence[BaseMessage],
        tools: list[dict[str, Any]],
        config: Mapping[str, Any] | None,
        metadata: Mapping[str, Any],
    ) -> AIMessage:
        """One try of the request: the model's reply (with the raw message the server sent, when :attr:`capture`)."""
        if not self.capture:
            return await self._send(messages, tools, config, metadata)
        with capturing_replies(RawReplies()) as seen:
            reply = await self._send(messages, tools, config, metadata)
        return with_raw_reply(reply, seen)

    async def _send(
        self,
        messages: Sequence[BaseMessage],
        tools: list[dict[str, Any]],
        config: Mapping[str, Any] | None,
        metadata: Mapping[str, Any],
    ) -> AIMessage:
        binding = self.bound(tools)
        direct = direct_call_kwargs(binding, self.runnable, config)
        if direct is not None:  # nothing observes the call: no LangChain callback machinery (docs/evaluation.md §7.1)
            return await ainvoke_direct(self.runnable, messages, direct, metadata)
        return await binding.ainvoke(messages, config={"metadata": dict(metadata), "run_name": CANDIDATE_RUN_NAME})

    def read(self, reply: AIMessage, where: Mapping[str, Any] | None = None) -> CandidateReply:
        """The recorded response and token counts of ``reply`` (:func:`wildtoolbench.models.messages.response_from_ai`)."""
        input_tokens, output_tokens = token_counts(reply)
        return CandidateReply(response_from_ai(reply), input_tokens, output_tokens)


class RunnableCall:
    """How a graph or Runnable candidate answers a request: run as a subgraph (:func:`ainvoke_graph`), its
    output's last ``AIMessage`` checked (:func:`response_message`) and recorded (:func:`recorded_response`).

    Args:
        runnable: the graph or Runnable.
        timeout: seconds one request may take as a whole (a deadline on the graph's run, retried as a
            timeout when it passes); ``None``: no deadline.
    """

    def __init__(self, runnable: Any, timeout: float | None = None):
        self.runnable = runnable
        self.timeout = timeout

    async def send(
        self,
        messages: Sequence[BaseMessage],
        tools: list[dict[str, Any]],
        config: Mapping[str, Any] | None,
        metadata: Mapping[str, Any],
    ) -> GraphReply:
        """One try of the request: the graph's output and the usage of the model calls it made.

        Raises:
            TimeoutError: the graph did not answer within :attr:`timeout` (cancelled; a transient failure).
            CandidateContractError: the graph interrupted.
        """
        call = ainvoke_graph(self.runnable, messages, tools, config, metadata)
        if self.timeout is None or self.timeout <= 0:
            return await call
        return await asyncio.wait_for(call, self.timeout)

    def read(self, reply: GraphReply, where: Mapping[str, Any] | None = None) -> CandidateReply:
        """The response, token counts (the graph's model calls, else the message's own) and models.

        ``model`` is the model that produced the response message (by its id), else the last model
        whose call ended; ``models`` every model seen (docs/evaluation.md §5.5).

        Raises:
            CandidateContractError: the graph ran benchmark tool calls itself (:func:`tools_run_inside`).
            CandidateOutputError: the output has no ``AIMessage`` last.
        """
        ran = tools_run_inside(reply.output, reply.sent, reply.tools)
        if ran:
            raise CandidateContractError(RAN_TOOLS.format(names=", ".join(ran)), where, RAN_TOOLS_ITSELF)
        message = response_message(reply.output, where)
        seen = reply.usage
        input_tokens, output_tokens = (
            (seen.input_tokens, seen.output_tokens) if seen.reported else token_counts(message)
        )
        model = seen.by_message.get(message.id or "") or seen.last_model
        message = with_raw_reply(message, reply.raw)
        return CandidateReply(recorded_response(message), input_tokens, output_tokens, model, tuple(seen.models))


CandidateCall = ChatModelCall | RunnableCall
"""One of the two ways a candidate is called."""


def call_for(runnable: Any, *, timeout: float | None = None, capture: bool = False) -> CandidateCall:
    """The call of ``runnable``: :class:`ChatModelCall` for a chat model (``capture``: read its raw replies from
    the HTTP responses, :attr:`ChatModelCall.capture`), else :class:`RunnableCall` (with ``timeout`` as the
    deadline of a whole request; a chat model's client has its own)."""
    return ChatModelCall(runnable, capture=capture) if is_chat_model(runnable) else RunnableCall(runnable, timeout)
