"""The direct chat-model call of ``call_candidate`` (docs/evaluation.md §7.1): taken only when nothing
observes or changes the call, and then the same reply as LangChain's ``ainvoke``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.callbacks import (
    AsyncCallbackHandler,
    AsyncCallbackManager,
    AsyncCallbackManagerForLLMRun,
)
from langchain_core.globals import set_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.rate_limiters import InMemoryRateLimiter
from pydantic import Field

from wildtoolbench.bench.demo_data import SESSIONS_PATH
from wildtoolbench.graphs.evaluation import build_evaluation_graph
from wildtoolbench.models import graph_contract as candidates
from wildtoolbench.models.graph_contract import ainvoke_direct, direct_call_kwargs
from wildtoolbench.nodes.evaluation.context import EvaluationContext

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


class _Model(BaseChatModel):
    """Answers with one tool call; records what each request got."""

    seen: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "direct-test"

    def bind_tools(self, tools, **kwargs):
        return self.bind(tools=tools, **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # pragma: no cover - async only
        raise NotImplementedError

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(
            {"kwargs": kwargs, "metadata": dict(run_manager.metadata) if run_manager else None, "n": len(messages)}
        )
        message = AIMessage(
            content="",
            tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
            usage_metadata={"input_tokens": 11, "output_tokens": 2, "total_tokens": 13},
            response_metadata={"model_name": "m"},
        )
        generation = ChatGeneration(message=message, generation_info={"finish_reason": "tool_calls"})
        return ChatResult(generations=[generation], llm_output={"system_fingerprint": "fp", "model_name": "m"})


class _Recorder(AsyncCallbackHandler):
    def __init__(self):
        self.starts = 0

    async def on_chat_model_start(self, serialized, messages, **kwargs):
        self.starts += 1


def _fresh() -> _Model:
    return _Model()


def test_direct_reply_equals_ainvoke_and_keeps_the_metadata():
    model = _fresh()
    bound = model.bind_tools(TOOLS)
    kwargs = direct_call_kwargs(bound, model, {})
    assert kwargs == {"tools": TOOLS}
    messages = [HumanMessage("hi")]
    direct = asyncio.run(ainvoke_direct(model, messages, kwargs, {"wtb_session_id": "s1", "wtb_request_index": 3}))
    full = asyncio.run(bound.ainvoke(messages, config={"metadata": {"wtb_session_id": "s1", "wtb_request_index": 3}}))
    assert direct.tool_calls == full.tool_calls and direct.content == full.content
    assert direct.usage_metadata == full.usage_metadata
    assert (
        direct.response_metadata
        == full.response_metadata
        == {
            "system_fingerprint": "fp",
            "model_name": "m",
            "finish_reason": "tool_calls",
        }
    )
    assert direct.id.startswith("lc_run--") and full.id.startswith("lc_run--")
    # both requests got the tools and the run metadata (replay models read the session and request index there)
    assert [s["kwargs"] for s in model.seen] == [{"tools": TOOLS}, {"tools": TOOLS}]
    assert all(s["metadata"]["wtb_session_id"] == "s1" and s["metadata"]["wtb_request_index"] == 3 for s in model.seen)


def test_anything_that_observes_or_changes_the_call_takes_langchains_path():
    model = _fresh()
    bound = model.bind_tools(TOOLS)
    assert direct_call_kwargs(bound, model, {"callbacks": [_Recorder()]}) is None  # a handler (a tracer, Studio)
    # inside a graph run the node's config holds the run's callback manager
    assert direct_call_kwargs(bound, model, {"callbacks": AsyncCallbackManager(handlers=[])}) == {"tools": TOOLS}
    assert (
        direct_call_kwargs(
            bound, model, {"callbacks": AsyncCallbackManager(handlers=[], inheritable_handlers=[_Recorder()])}
        )
        is None
    )
    assert (
        direct_call_kwargs(model.bind(tools=TOOLS).with_config(tags=["x"]), model, {}) is None
    )  # the binding's own config
    assert direct_call_kwargs(bound, _fresh(), {}) is None  # a binding of another model

    limited = _Model(rate_limiter=InMemoryRateLimiter(requests_per_second=100))
    assert direct_call_kwargs(limited.bind_tools(TOOLS), limited, {}) is None
    streaming = _Model(disable_streaming=False)
    assert direct_call_kwargs(streaming.bind_tools(TOOLS, stream=True), streaming, {}) is None
    v1 = _Model(output_version="v1")
    assert direct_call_kwargs(v1.bind_tools(TOOLS), v1, {}) is None
    cached = _Model(cache=True)
    set_llm_cache(InMemoryCache())
    try:
        assert direct_call_kwargs(cached.bind_tools(TOOLS), cached, {}) is None
        assert direct_call_kwargs(bound, model, {}) is None  # the global cache applies to cache=None too
    finally:
        set_llm_cache(None)
    assert (
        direct_call_kwargs(cached.bind_tools(TOOLS), cached, {}) is None
    )  # cache=True with no cache: LangChain raises
    # the graph candidates' usage hook (a configure hook) is active while a graph candidate runs
    candidates._register_usage_hook()
    token = candidates._step_usage.set(candidates.StepUsage())
    try:
        assert direct_call_kwargs(bound, model, {}) is None
    finally:
        candidates._step_usage.reset(token)
    assert direct_call_kwargs(bound, model, {}) == {"tools": TOOLS}


@pytest.mark.parametrize("observed", [False, True])
def test_the_graph_calls_directly_only_when_unobserved(monkeypatch, observed):
    """A session through the evaluation graph: the same record either way; an attached handler sees the model run."""
    from wildtoolbench.models.registry import _registry

    model = _fresh()
    monkeypatch.setitem(_registry, "openai", lambda name, settings: model)
    direct_calls = []

    async def counting(*args):
        direct_calls.append(args)
        return await ainvoke_direct(*args)

    monkeypatch.setattr(candidates, "ainvoke_direct", counting)
    with open(SESSIONS_PATH, encoding="utf-8") as handle:
        session = json.loads(
            handle.readline()
        )  # the first demo session; the model's call of `f` is wrong in every task
    recorder = _Recorder()
    config = {"callbacks": [recorder]} if observed else {}
    graph = build_evaluation_graph()
    out = asyncio.run(graph.ainvoke({"session": session}, config=config, context=EvaluationContext(model="openai:m")))
    tasks = len(session["english_tasks"])
    assert len(model.seen) == tasks  # one request per task: a wrong call ends the task
    names = [t["function"]["name"] for t in session["english_tools"]]
    assert [[t["function"]["name"] for t in s["kwargs"]["tools"]] for s in model.seen] == [names] * tasks
    assert [s["metadata"]["wtb_request_index"] for s in model.seen] == list(range(tasks))
    assert {s["metadata"]["wtb_session_id"] for s in model.seen} == {session["id"]}
    assert recorder.starts == (tasks if observed else 0)
    assert len(direct_calls) == (0 if observed else tasks)
    record = out["record"]
    assert record["id"] == session["id"] and len(record["result"]) == tasks
    assert [t["input_token_count"] for t in record["result"]] == [[11]] * tasks
    assert [t["output_token_count"] for t in record["result"]] == [[2]] * tasks
