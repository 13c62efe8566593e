"""One candidate object (``wildtoolbench.models.candidate``): a spec resolved once per run, its values, its errors,
and the ``call_candidate`` node over its one call interface (docs/evaluation.md §3, §5.5, §7.1)."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

import wildtoolbench.models.candidate as candidate_module
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.graphs.evaluation import graph as evaluation_graph
from wildtoolbench.models import Candidate, ConfigurationError, ModelSettings, Provider, resolve_candidate
from wildtoolbench.models.graph_contract import CandidateOutputError
from wildtoolbench.models.registry import _registry
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import run_session

REPLAY = f"replay:{CANDIDATES_PATH}#oracle"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


def _first_session() -> dict[str, Any]:
    with open(SESSIONS_PATH, encoding="utf-8") as handle:
        return json.loads(handle.readline())


@pytest.fixture
def lookups(monkeypatch) -> list[str]:
    """The provider prefixes looked up by ``resolve_candidate`` (the one place a spec meets the registry)."""
    seen: list[str] = []
    real = candidate_module.get_provider

    def spy(prefix: str):
        seen.append(prefix)
        return real(prefix)

    monkeypatch.setattr(candidate_module, "get_provider", spy)
    return seen


@pytest.fixture
def plugin(monkeypatch):
    """Register a provider under ``prefix`` for the test (removed afterwards)."""

    def register(prefix: str, provider: Any) -> None:
        monkeypatch.setitem(_registry, prefix, provider)

    return register


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("spec", "provider", "target", "model", "concurrency"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", "gpt-4o-mini", None),
        (REPLAY, "replay", f"{CANDIDATES_PATH}#oracle", "oracle", None),
        ("graph:examples/tool_agent.py:graph", "graph", "examples/tool_agent.py:graph", "tool_agent:graph", None),
        (
            "langchain:anthropic:claude-sonnet-4-5",
            "langchain",
            "anthropic:claude-sonnet-4-5",
            "claude-sonnet-4-5",
            None,
        ),
        ("scripted:/tmp/roles.json#planner", "scripted", "/tmp/roles.json#planner", "/tmp/roles.json#planner", None),
        ("gguf:/models/m.gguf", "gguf", "/models/m.gguf", "/models/m.gguf", 1),
        ("local", "local", "default", "local", 1),
    ],
)
def test_resolving_gives_the_name_concurrency_and_parts(spec, provider, target, model, concurrency, lookups):
    candidate = resolve_candidate(spec)
    assert (candidate.spec, candidate.provider, candidate.target) == (spec, provider, target)
    assert (candidate.model, candidate.name, candidate.max_concurrency) == (model, model, concurrency)
    assert lookups == [provider]  # one registry lookup, nothing built (no file is read for replay:)
    assert candidate._seen == []  # nothing built


def test_an_explicit_name_is_recorded_instead_and_settings_are_kept():
    settings = ModelSettings(base_url="http://127.0.0.1:9/v1", timeout=3.0)
    candidate = resolve_candidate("openai:m", settings, name="my-run")
    assert (candidate.model, candidate.name) == ("m", "my-run")
    assert candidate.settings is settings
    assert candidate.endpoint == "http://127.0.0.1:9/v1"
    assert resolve_candidate("openai:m").endpoint == "openai:m"  # no base URL: the spec is the rate-limit key


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("gpt-4o", "'gpt-4o'"),
        ("openai:", "'openai:'"),
        (":gpt-4o", "':gpt-4o'"),
        ("nosuch:model", "'nosuch'"),
        ("opnai:gpt-4o", "did you mean 'openai'?"),
        ("nosuch:model", "unknown model provider 'nosuch' (known: baseline, "),  # other tests register more
        ("lcoal", "or be one of 'local', got 'lcoal'; did you mean 'local'?"),
    ],
)
def test_a_bad_spec_is_a_configuration_error_naming_it(spec, named):
    with pytest.raises(ConfigurationError) as caught:
        resolve_candidate(spec)
    assert named in str(caught.value)


def test_the_check_is_the_providers_and_names_the_spec(tmp_path):
    missing = tmp_path / "absent.jsonl"
    candidate = resolve_candidate(f"replay:{missing}#oracle")  # resolving reads no file
    with pytest.raises(ConfigurationError, match=f"replay file not found: {missing}"):
        candidate.check()
    with pytest.raises(ConfigurationError, match="no candidate 'oracl'; did you mean 'oracle'"):
        resolve_candidate(f"replay:{CANDIDATES_PATH}#oracl").check()
    resolve_candidate(REPLAY).check()  # a good spec passes


# --------------------------------------------------------------------------- kinds and the description


def test_kinds_and_descriptions_of_each_provider_kind(plugin, monkeypatch):
    monkeypatch.setenv("WTB_TEST_INNER_MODEL", REPLAY)
    replay = resolve_candidate(REPLAY)
    assert replay.kind == "chat_model"
    assert replay.describe() == {"kind": "chat_model", "spec": REPLAY, "model": "oracle"}

    spec = "graph:tests/support/candidate_graphs.py:graph"
    graph = resolve_candidate(spec)
    assert graph.kind == "graph"
    assert graph.describe() == {
        "kind": "graph",
        "spec": spec,
        "graph": "tests/support/candidate_graphs.py:graph",
        "model": None,
    }

    runnable = RunnableLambda(lambda state: {"messages": [AIMessage(content="hi")]})
    plugin("mine", lambda name, settings: runnable)
    mine = resolve_candidate("mine:x")
    assert mine.kind == "chat_model"  # a plug-in's kind is known once it built something
    assert mine.describe(load=True) == {"kind": "runnable", "spec": "mine:x", "model": None}
    assert mine.kind == "runnable"

    broken = resolve_candidate("graph:no/such/file.py:graph")
    assert broken.describe() == {"kind": None, "spec": "graph:no/such/file.py:graph", "model": None}


# --------------------------------------------------------------------------- the call interface


class _Counted(GenericFakeChatModel):
    """A scripted chat model that reports token usage."""

    def bind_tools(self, tools, **kwargs):
        return self.bind(tools=tools, **kwargs)


def _reply(text: str, tokens: int = 5) -> AIMessage:
    return AIMessage(
        content=text, usage_metadata={"input_tokens": tokens, "output_tokens": 1, "total_tokens": tokens + 1}
    )


def test_respond_with_a_scripted_chat_model_builds_once_per_loop_and_reuses_the_binding(plugin):
    built: list[Any] = []

    def create(name, settings):
        model = _Counted(messages=iter([_reply("a", 7), _reply("b", 9), _reply("c", 3)]))
        built.append(model)
        return model

    plugin("fake", Provider(create=create, max_concurrency=2))
    candidate = resolve_candidate("fake:m")
    assert candidate.max_concurrency == 2

    async def two_requests():
        messages = [HumanMessage(content="hello")]
        first = await candidate.respond(messages, TOOLS, metadata={"wtb_session_id": "s"})
        binding = candidate._call().bound(TOOLS)
        second = await candidate.respond(messages, TOOLS)
        assert candidate._call().bound(TOOLS) is binding  # the same tools list: the same binding
        return first, second

    first, second = asyncio.run(two_requests())
    assert (first.response["content"], first.input_tokens, first.output_tokens, first.model) == ("a", 7, 1, None)
    assert first.response["tool_calls"] is None
    assert (second.response["content"], second.input_tokens) == ("b", 9)
    assert len(built) == 1  # one model in that event loop
    third = asyncio.run(candidate.respond([HumanMessage(content="again")], TOOLS))
    assert len(built) == 2 and third.response["content"] == "a"  # a new loop builds its own (clients stay per loop)


def test_respond_with_a_graph_candidate_reads_its_last_message_and_the_model_it_called(plugin):
    class Named(_Counted):
        model_name: str = "inner-1"

        def _get_ls_params(self, stop=None, **kwargs):
            return {**super()._get_ls_params(stop=stop, **kwargs), "ls_model_name": self.model_name}

    inner = Named(messages=iter([_reply("draft", 10), _reply("final", 20)]))

    async def agent(state):
        assert state["tools"] == TOOLS and state["tools"] is not TOOLS  # the tools are the graph's own copy
        await inner.ainvoke(state["messages"])
        return {"messages": [*state["messages"], await inner.ainvoke(state["messages"])]}

    plugin("agent", lambda name, settings: RunnableLambda(agent))
    reply = asyncio.run(resolve_candidate("agent:x").respond([HumanMessage(content="q")], TOOLS))
    assert (reply.response["content"], reply.input_tokens, reply.output_tokens) == ("final", 30, 2)
    assert reply.model == "inner-1"


def test_a_graph_output_without_an_ai_message_is_a_refused_request(plugin):
    plugin("bad", lambda name, settings: RunnableLambda(lambda state: {"messages": []}))
    with pytest.raises(CandidateOutputError, match="'messages' is empty") as caught:
        asyncio.run(resolve_candidate("bad:x").respond([HumanMessage(content="q")], TOOLS, where={"task": 0}))
    assert caught.value.rejected and caught.value.where == {"task": 0}


# --------------------------------------------------------------------------- one resolution per run


def test_the_context_resolves_its_spec_once_and_again_only_when_it_changes(lookups):
    context = EvaluationContext(model=REPLAY)
    first = context.candidate
    assert isinstance(first, Candidate) and context.candidate is first
    assert lookups == ["replay"]
    context.model_name = "renamed"
    assert context.candidate is not first and context.candidate.name == "renamed"
    assert lookups == ["replay", "replay"]
    assert "_candidate" not in copy.copy(context).__getstate__()
    clone = pickle.loads(pickle.dumps(context))
    assert clone == context and "_candidate" not in clone.__dict__


@pytest.mark.parametrize(
    "spec",
    [REPLAY, "graph:tests/support/candidate_graphs.py:graph", "plugin:x"],
    ids=["chat_model", "graph", "plug-in"],
)
def test_a_session_resolves_the_spec_once(spec, lookups, plugin, monkeypatch):
    """load_session, call_candidate (every step), finish_session and run_session share one resolution."""
    monkeypatch.setenv("WTB_TEST_INNER_MODEL", REPLAY)
    replay = resolve_candidate(REPLAY)
    plugin("plugin", lambda name, settings: replay.build())
    lookups.clear()
    session = _first_session()
    context = EvaluationContext(model=spec)
    outcome = asyncio.run(run_session(evaluation_graph, session, context))
    assert outcome.error is None and outcome.record["model_name"] == context.candidate.name
    prefix = spec.partition(":")[0]
    assert lookups.count(prefix) == 1
    requests = sum(len(task["latency"]) for task in outcome.record["result"])
    assert requests >= len(session["english_tasks"])
    if prefix == "graph":  # the graph's own model is resolved by the graph, per call: not the candidate
        assert lookups.count("replay") == requests


def test_the_node_records_what_the_candidate_replied(plugin):
    """call_candidate over the interface: the scripted chat model's replies become the step records."""
    session = _first_session()
    replay = resolve_candidate(REPLAY)
    plugin("plugin", lambda name, settings: replay.build())
    record = asyncio.run(run_session(evaluation_graph, session, EvaluationContext(model="plugin:oracle"))).record
    expected = asyncio.run(run_session(evaluation_graph, session, EvaluationContext(model=REPLAY))).record
    assert record["candidate"] == {"kind": "chat_model", "spec": "plugin:oracle", "model": "oracle"}
    assert [t["action_name_label"] for t in record["result"]] == [t["action_name_label"] for t in expected["result"]]
    assert [t["action_name_label"] for t in record["result"]] == ["correct"] * len(session["english_tasks"])
