"""The candidate model as a node: one request per step (docs/evaluation.md §3, §5).

The run's candidate (:attr:`wildtoolbench.nodes.evaluation.context.EvaluationContext.candidate`, a
:class:`models.Candidate` resolved once per context) makes the request: a chat model with the
session's tools bound, or a LangGraph graph / Runnable run as a subgraph of this node (``graph:``
specs, contract in :mod:`wildtoolbench.models.graph_contract`). The node measures the latency and stores the raw
response and token usage in the task result.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from wildtoolbench.models.agent_loop import AGENT_RUN_KEY, AGENT_STEPS_KEY, new_slot_key
from wildtoolbench.models.cache import TRIAL_KEY, cache_scope, current_trial
from wildtoolbench.models.prefix import continuing
from wildtoolbench.models.providers.replay import REQUEST_INDEX_KEY, SESSION_KEY
from wildtoolbench.models.transport import RetryPolicy, current_usage
from wildtoolbench.nodes.evaluation.carried_cache import CarriedCache
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.evaluation.state import EvaluationState
from wildtoolbench.nodes.tracing import annotate_current_run, annotate_evaluation_node

AGENT = "agent"
"""The ``candidate.kind`` of an agent factory (``wildtoolbench.models.agent_loop``): its run lives across the steps of a task."""


def candidate_model(context: EvaluationContext) -> Any:
    """The chat model, graph or Runnable that answers for ``context`` in the running event loop (docs/evaluation.md §3).

    Raises:
        ConfigurationError: bad model spec; whatever the provider raises on bad settings.
    """
    return context.candidate.runnable()


def _input_trial(state: EvaluationState) -> int | None:
    """The trial index the graph input gave (``EvaluationInput.trial``, a server run of ``wtb eval --trials``),
    when it is a whole number >= 1; else ``None`` (docs/trials.md §1)."""
    trial = state.get("trial")
    return trial if isinstance(trial, int) and not isinstance(trial, bool) and trial >= 1 else None


def retry_policy(context: EvaluationContext) -> RetryPolicy:
    """The transport retry policy of ``context`` (attempts, backoff, longest wait, requests per second, the
    deadline of each try) for the docs/evaluation.md §3 model requests (docs/settings.md §7)."""
    return RetryPolicy(
        max_attempts=context.max_attempts,
        backoff=context.backoff,
        max_wait=context.max_retry_wait,
        rps=context.rps,
        deadline=context.timeout,
    )


def candidate_info(info: dict[str, Any], model: str | None, models: tuple[str, ...] = ()) -> dict[str, Any]:
    """The record's ``candidate`` object after a reply (docs/evaluation.md §5.5): ``model`` the model whose reply
    was scored when the candidate declares none, ``models`` every model seen called (graph and agent candidates).

    Returns:
        ``info`` itself when nothing changes, else an updated copy.
    """
    update: dict[str, Any] = {}
    if info.get("model") is None and model is not None:
        update["model"] = model
    seen = list(info.get("models") or [])
    added = [m for m in models if m not in seen]
    if added:
        update["models"] = [*seen, *added]
    return {**info, **update} if update else info


async def call_candidate(
    state: EvaluationState, runtime: Runtime[EvaluationContext], config: RunnableConfig
) -> dict[str, Any]:
    """Send the current messages to the candidate; record latency (s), token counts and the raw response (docs/evaluation.md §3, §5).

    The run metadata carries the session id, the session-wide request index, the task and the
    step (replay models use the first two; traces show all), and the ``candidate`` object
    (:meth:`models.Candidate.describe`, docs/evaluation.md §5.5), which gets the model a graph
    candidate was first seen calling. The request is :meth:`models.Candidate.respond`: the direct
    chat-model call when nothing observes it (docs/evaluation.md §7.1), transient failures retried
    with backoff, the optional rate limit; the latency includes retries and waits. Tokens are also
    added to the enclosing ``usage_scope`` (per-session accounting), except for a reply the request cache
    served (counted as a cache hit instead, docs/trials.md §8). Inside a trial of ``wtb eval --trials`` the
    metadata carries the trial index (``wtb_trial``, docs/trials.md §1). The request continues the
    conversation ``session:<session id>`` (:func:`wildtoolbench.models.prefix.continuing`; a local llama.cpp server
    computes a session's requests in one slot, docs/evaluation.md §7.1).

    Raises:
        ModelRequestError: the request failed for good (an infrastructure
            error: the batch runner keeps the session out of the scored results).
        CandidateOutputError: a graph candidate's output has no AIMessage last
            (recorded like a refused request: ``Error during inference``).
    """
    context = runtime.context
    candidate = context.candidate
    info = state.get("candidate") or candidate.describe(load=True)
    slot = state.get("agent_run") or (new_slot_key() if info.get("kind") == AGENT else None)
    trial = current_trial() or _input_trial(state)
    metadata = {
        **({TRIAL_KEY: trial} if trial is not None else {}),
        SESSION_KEY: state["session_id"],
        REQUEST_INDEX_KEY: state["requests"],
        "wtb_task_idx": state["task_idx"],
        "wtb_step": state["step"],
        **annotate_evaluation_node(state),  # task/step metadata on this node's and the model's trace runs
        "candidate": info,
        **({AGENT_RUN_KEY: slot, AGENT_STEPS_KEY: context.agent_steps} if slot else {}),
    }
    annotate_current_run({"candidate": info})
    where = {"task": state["task_idx"], "step": state["step"]}
    started = time.perf_counter()
    carried = CarriedCache(state.get("replies")) if "replies" in state else None  # a client's cache, §8.1
    with continuing(f"session:{state['session_id']}"), cache_scope(carried) if carried is not None else nullcontext():
        reply = await candidate.respond(
            state["messages"],
            state["tools"],
            config=config,
            metadata=metadata,
            retry=retry_policy(context),
            where=where,
        )
    latency = time.perf_counter() - started
    info = candidate_info(info, reply.model, reply.models)
    if info is not state.get("candidate"):
        annotate_current_run({"candidate": info})
    usage = current_usage()
    if usage is not None:
        if reply.cached:  # served by the request cache: nothing paid (docs/trials.md §8)
            usage.cache_hits += 1
        else:
            usage.add_tokens(reply.input_tokens, reply.output_tokens)
            usage.add_internal(state["task_idx"], *reply.internal)  # an agent's internal requests (§8.9)
    task_result = dict(state["task_result"])
    task_result["latency"] = [*task_result["latency"], latency]
    task_result["input_token_count"] = [*task_result["input_token_count"], reply.input_tokens]
    task_result["output_token_count"] = [*task_result["output_token_count"], reply.output_tokens]
    update: dict[str, Any] = {} if state.get("candidate") == info else {"candidate": info}
    if slot and slot != state.get("agent_run"):
        update["agent_run"] = slot
    if carried is not None and carried.paid:
        update["paid"] = carried.paid
    if carried is not None and carried.served:
        update["served"] = carried.served
    return {
        **update,
        "response": reply.response,
        "requests": state["requests"] + 1,
        "task_result": task_result,
    }
