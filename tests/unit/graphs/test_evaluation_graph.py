"""Shape of the evaluation graph, its context, the message adapter and the replay provider."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage

from wildtoolbench.graphs.evaluation import build_evaluation_graph, graph
from wildtoolbench.models import ModelSettings, resolve_model
from wildtoolbench.models.messages import RAW_RESPONSE_KEY, response_from_ai, to_langchain, to_openai
from wildtoolbench.nodes.evaluation.context import EvaluationContext


def test_graph_nodes_and_edges():
    drawn = graph.get_graph()
    assert set(drawn.nodes) == {
        "__start__",
        "load_session",
        "build_prompt",
        "call_candidate",
        "match_response",
        "finish_session",
        "__end__",
    }
    edges = {(e.source, e.target, e.conditional) for e in drawn.edges}
    assert edges == {
        ("__start__", "load_session", False),
        ("load_session", "build_prompt", False),
        ("build_prompt", "call_candidate", True),
        ("build_prompt", "finish_session", True),
        ("call_candidate", "match_response", False),
        ("match_response", "call_candidate", True),
        ("match_response", "build_prompt", True),
        ("match_response", "finish_session", True),
        ("finish_session", "__end__", False),
    }
    assert build_evaluation_graph().get_graph().nodes.keys() == drawn.nodes.keys()


def test_messages_reducer_appends_and_resets_like_add_messages():
    from langchain_core.messages import HumanMessage, RemoveMessage, SystemMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    from wildtoolbench.nodes.evaluation.state import append_messages

    first = [SystemMessage("s"), HumanMessage("u")]
    assert append_messages([], first) == first and append_messages(None, first) is not first
    more = [AIMessage("a"), HumanMessage("u2")]
    both = append_messages(first, more)
    assert both == first + more and len(first) == 2 and all(m.id is None for m in both)  # no ids assigned
    assert append_messages(both, [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("new")]) == [HumanMessage("new")]
    # anything else is add_messages: here a message replaced by its id
    with_ids = append_messages([], [HumanMessage("x", id="1"), HumanMessage("y", id="2")])
    assert [m.content for m in append_messages(with_ids, [HumanMessage("x2", id="1")])] == ["x2", "y"]


def test_schemas_for_studio():
    # trial and replies: a server run of trials and a client's carried cache (docs/trials.md §8.1)
    assert set(graph.get_input_jsonschema()["properties"]) == {"session", "session_id", "trial", "replies"}
    assert graph.get_output_jsonschema()["required"] == ["record"]
    context = graph.get_context_jsonschema()["properties"]
    assert {"model", "model_name", "base_url", "temperature", "timeout", "max_retries", "dataset"} <= set(context)
    assert all(field.get("description") for field in context.values())


def test_session_by_id_from_the_context_dataset(reference_dir):
    context = EvaluationContext(
        model=f"replay:{reference_dir / 'candidates.jsonl'}#oracle", dataset=str(reference_dir / "sessions.jsonl")
    )
    record = asyncio.run(graph.ainvoke({"session_id": "wild_tool_bench_4"}, context=context))["record"]
    assert record["id"] == "wild_tool_bench_4" and record["model_name"] == "oracle"
    assert [task["action_name_label"] for task in record["result"]] == ["correct"] * 4
    with pytest.raises(ValueError, match="no session with id 'wild_tool_bench_77'"):
        asyncio.run(graph.ainvoke({"session_id": "wild_tool_bench_77"}, context=context))


def test_langgraph_json_registers_the_graph():
    with open("langgraph.json", encoding="utf-8") as handle:
        config = json.load(handle)
    assert config["graphs"]["evaluation"] == "./graphs/evaluation.py:graph"


def test_context_env_fallback(monkeypatch):
    monkeypatch.setenv("WTB_MODEL", "replay:x.jsonl#oracle")
    monkeypatch.setenv("WTB_TEMPERATURE", "0.5")
    monkeypatch.setenv("WTB_TIMEOUT", "7")
    context = EvaluationContext()
    assert (context.model, context.temperature, context.timeout) == ("replay:x.jsonl#oracle", 0.5, 7.0)
    assert EvaluationContext(model="openai:m").model == "openai:m"  # an explicit value wins
    monkeypatch.setenv("WTB_MAX_RETRIES", "many")
    with pytest.raises(ValueError, match="WTB_MAX_RETRIES"):
        EvaluationContext()


def test_messages_round_trip_exactly():
    raw = {
        "role": "assistant",
        "reasoning_content": "think",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"b": 1,  "a": 2}'}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{not json"}},
        ],
    }
    message = to_langchain(raw)
    assert isinstance(message, AIMessage)
    assert message.tool_calls[0]["args"] == {"b": 1, "a": 2}
    assert message.invalid_tool_calls[0]["args"] == "{not json"
    assert to_openai(message) == raw
    for plain in (
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "tool", "content": '"x"', "tool_call_id": "t"},
    ):
        assert to_openai(to_langchain(plain)) == plain


def test_response_adapter_for_any_chat_model():
    message = AIMessage(
        content="",
        tool_calls=[{"name": "f", "args": {"city": "Zürich"}, "id": "i1"}],
        additional_kwargs={"reasoning_content": "r"},
    )
    assert response_from_ai(message) == {
        "content": None,
        "tool_calls": [{"id": "i1", "type": "function", "function": {"name": "f", "arguments": '{"city": "Zürich"}'}}],
        "reasoning_content": "r",
    }
    assert response_from_ai(AIMessage(content="hello")) == {
        "content": "hello",
        "tool_calls": None,
        "reasoning_content": None,
    }
    raw = {"content": None, "tool_calls": [], "reasoning_content": None}
    assert response_from_ai(AIMessage(content="", additional_kwargs={RAW_RESPONSE_KEY: raw})) == raw


def test_replay_queue_is_per_session(tmp_path):
    script = tmp_path / "c.jsonl"
    lines = [
        {
            "session_id": "s1",
            "candidate": "x",
            "responses": [{"content": "a1", "tool_calls": None}, {"content": "a2", "tool_calls": None}],
        },
        {"session_id": "s2", "candidate": "x", "responses": [{"content": "b1", "tool_calls": None}]},
        {"session_id": "s1", "candidate": "y", "responses": [{"content": "y1", "tool_calls": None}]},
    ]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    model = resolve_model(f"replay:{script}#x", ModelSettings())

    async def ask(session, index=None):
        metadata = {"wtb_session_id": session}
        if index is not None:
            metadata["wtb_request_index"] = index
        return (await model.ainvoke("hi", config={"metadata": metadata})).content

    async def scenario():
        return [await ask("s1"), await ask("s2"), await ask("s1"), await ask("s1", 0)]

    assert asyncio.run(scenario()) == ["a1", "b1", "a2", "a1"]
    assert model.consumed("s1") == 2 and model.consumed("s2") == 1
    with pytest.raises(Exception, match="request 1 has none"):
        asyncio.run(ask("s2"))
    with pytest.raises(Exception, match="no responses for session 'nope'"):
        asyncio.run(ask("nope"))
    with pytest.raises(ValueError, match="candidates in the file: x, y"):
        resolve_model(f"replay:{script}#z", ModelSettings())
    with pytest.raises(ValueError, match="replay:PATH#CANDIDATE"):
        resolve_model(f"replay:{script}", ModelSettings())
    script.write_text('{"session_id": "s1", "candidate": "x", "responses": {}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: field 'responses'"):
        resolve_model(f"replay:{script}#x", ModelSettings())
