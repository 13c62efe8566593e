"""The candidate model as a node: one request per step (docs/evaluation.md §3, §5).

A candidate is a LangChain chat model with the session's tools bound, or a
LangGraph graph / Runnable run as a subgraph of this node (``graph:`` specs,
contract in :mod:`models.candidates`). The node sends the current messages,
measures the latency, and stores the raw response (via
:func:`models.messages.response_from_ai`) and token usage in the task result.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.evaluation_context import EvaluationContext
from graphs.evaluation_state import EvaluationState
from models import ModelSettings, resolve_model
from models.candidates import (
    ainvoke_direct,
    ainvoke_graph,
    describe_candidate,
    direct_call_kwargs,
    is_chat_model,
    recorded_response,
    response_message,
)
from models.messages import response_from_ai, token_counts
from models.replay import REQUEST_INDEX_KEY, SESSION_KEY
from models.transport import RetryPolicy, current_usage, request_with_retries
from nodes.tracing import annotate_current_run, annotate_evaluation_node

# One model per (event loop, settings): clients are never shared across loops.
_models: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, BaseChatModel]] = weakref.WeakKeyDictionary()


def model_settings(context: EvaluationContext) -> ModelSettings:
    """The provider settings of ``context``."""
    return ModelSettings(
        temperature=context.temperature,
        base_url=context.base_url or None,
        timeout=context.timeout,
        max_retries=context.max_retries,
    )


def candidate_model(context: EvaluationContext) -> BaseChatModel:
    """The candidate of ``context`` (resolved once per event loop and settings, then reused; docs/evaluation.md §3):
    a chat model, or for ``graph:`` specs the loaded graph / Runnable (see :mod:`models.candidates`).

    Raises:
        ValueError: bad model spec; whatever the provider raises on bad settings.
    """
    settings = model_settings(context)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return resolve_model(context.model, settings)
    key = (context.model, settings.temperature, settings.base_url, settings.timeout, settings.max_retries)
    per_loop = _models.setdefault(loop, {})
    if key not in per_loop:
        per_loop[key] = resolve_model(context.model, settings)
    return per_loop[key]


# The candidate with a session's tools bound, per (candidate, tools list): the state hands every request of a
# session the same tools list, and binding again per request built a new binding (and, for some providers,
# converted every tool) each time. Least recently used entries go first.
_BOUND_MAX = 256
_bound: OrderedDict[tuple[int, int], tuple[Any, Any, Any]] = OrderedDict()
_bound_lock = threading.Lock()


def bound_model(candidate: BaseChatModel, tools: list[dict[str, Any]]) -> Any:
    """``candidate.bind_tools(tools)`` (docs/evaluation.md §2.4: the session's tools go with every request),
    reused while ``candidate`` and the very same ``tools`` list come back."""
    key = (id(candidate), id(tools))
    with _bound_lock:
        hit = _bound.get(key)
        if hit is not None and hit[0] is candidate and hit[1] is tools:
            _bound.move_to_end(key)
            return hit[2]
    model = candidate.bind_tools(tools)
    with _bound_lock:
        _bound[key] = (candidate, tools, model)
        while len(_bound) > _BOUND_MAX:
            _bound.popitem(last=False)
    return model


def retry_policy(context: EvaluationContext) -> RetryPolicy:
    """The transport retry policy of ``context`` (attempts, backoff, requests per second) for the docs/evaluation.md §3 model requests."""
    return RetryPolicy(max_attempts=context.max_attempts, backoff=context.backoff, rps=context.rps)


async def call_candidate(
    state: EvaluationState, runtime: Runtime[EvaluationContext], config: RunnableConfig
) -> dict[str, Any]:
    """Send the current messages to the candidate; record latency (s), token counts and the raw response (docs/evaluation.md §3, §5).

    The run metadata carries the session id, the session-wide request index,
    the task and the step (replay models use the first two; traces show all),
    and the ``candidate`` object (:func:`models.candidates.describe_candidate`).
    A chat model gets the tools bound (called directly when no callback
    handler would see the call, :func:`models.candidates.direct_call_kwargs`,
    docs/evaluation.md §7.1); a graph or Runnable candidate runs as a
    subgraph with this node's config (:func:`models.candidates.ainvoke_graph`).
    The request goes through :func:`models.transport.request_with_retries`
    (transient failures retried with backoff, optional rate limit); the
    latency includes retries and waits. Tokens are also added to the
    enclosing ``usage_scope`` (per-session accounting).

    Raises:
        ModelRequestError: the request failed for good (an infrastructure
            error: the batch runner keeps the session out of the scored results).
        CandidateOutputError: a graph candidate's output has no AIMessage last
            (recorded like a refused request: ``Error during inference``).
    """
    candidate = candidate_model(runtime.context)
    info = state.get("candidate") or describe_candidate(runtime.context.model, candidate)
    metadata = {
        SESSION_KEY: state["session_id"],
        REQUEST_INDEX_KEY: state["requests"],
        "wtb_task_idx": state["task_idx"],
        "wtb_step": state["step"],
        **annotate_evaluation_node(state),  # task/step metadata on this node's and the model's trace runs
        "candidate": info,
    }
    annotate_current_run({"candidate": info})
    context = runtime.context
    where = {"task": state["task_idx"], "step": state["step"]}
    chat = is_chat_model(candidate)
    if chat:
        model = bound_model(candidate, state["tools"])
        direct = direct_call_kwargs(model, candidate, config)

        async def send() -> Any:
            if (
                direct is not None
            ):  # nothing observes the call: no LangChain callback machinery (docs/evaluation.md §7.1)
                return await ainvoke_direct(candidate, state["messages"], direct, metadata)
            return await model.ainvoke(state["messages"], config={"metadata": metadata, "run_name": "candidate"})
    else:
        send = lambda: ainvoke_graph(candidate, state["messages"], state["tools"], config, metadata)  # noqa: E731
    started = time.perf_counter()
    reply = await request_with_retries(
        send, retry_policy(context), endpoint=context.base_url or context.model, where=where
    )
    latency = time.perf_counter() - started
    update: dict[str, Any] = {}
    if chat:
        response = response_from_ai(reply)
        input_tokens, output_tokens = token_counts(reply)
    else:
        message = response_message(reply.output, where)
        response = recorded_response(message)
        usage_seen = reply.usage
        input_tokens, output_tokens = (
            (usage_seen.input_tokens, usage_seen.output_tokens) if usage_seen.reported else token_counts(message)
        )
        if info.get("model") is None and usage_seen.models:
            info = {**info, "model": usage_seen.models[0]}
            annotate_current_run({"candidate": info})
    if state.get("candidate") != info:
        update["candidate"] = info
    usage = current_usage()
    if usage is not None:
        usage.add_tokens(input_tokens, output_tokens)
    task_result = dict(state["task_result"])
    task_result["latency"] = [*task_result["latency"], latency]
    task_result["input_token_count"] = [*task_result["input_token_count"], input_tokens]
    task_result["output_token_count"] = [*task_result["output_token_count"], output_tokens]
    return {
        **update,
        "response": response,
        "requests": state["requests"] + 1,
        "task_result": task_result,
    }
