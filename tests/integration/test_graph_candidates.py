"""``graph:`` candidates (issue 12): loading, the call contract, records equal to the replay's, model errors, traces."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.candidate_graphs import INNER_MODEL_ENV
from wildtoolbench.graphs.evaluation import graph as evaluation_graph
from wildtoolbench.models import ConfigurationError, check_model, model_name_for
from wildtoolbench.models.candidate import describe_candidate
from wildtoolbench.models.graph_contract import CandidateOutputError, recorded_response, response_message
from wildtoolbench.models.messages import RAW_RESPONSE_KEY
from wildtoolbench.models.providers import graph as graph_provider
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import run_session
from wildtoolbench.scoring.run import score_run

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.support.candidate_graphs"
FILE = "tests/support/candidate_graphs.py"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def comparable(record: dict) -> dict:
    """A record without what differs between two candidates giving the same answers: the model
    name, the candidate object, the accounting and the latency values (their count stays)."""
    record = copy.deepcopy(record)
    for key in ("model_name", "candidate", "usage"):
        record.pop(key, None)
    if isinstance(record["result"], list):
        for task in record["result"]:
            task["latency"] = len(task["latency"])
    return record


# --------------------------------------------------------------------------- loading and checks


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (f"{MODULE}:graph", "graph"),
        (f"{FILE}:graph", "graph"),
        (f"{MODULE}:uncompiled", "graph"),
        (f"{MODULE}:make_graph", "graph"),
        (f"{MODULE}:make_graph_no_args", "graph"),
        (f"{MODULE}:runnable", "runnable"),
    ],
)
def test_graph_specs_load_and_check(name, kind, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    check_model(f"graph:{name}")
    loaded = graph_provider.load(name)
    assert loaded.kind == kind
    assert graph_provider.load(name) is loaded  # cached per spec
    info = describe_candidate(f"graph:{name}")
    assert info == {"kind": kind, "spec": f"graph:{name}", "graph": name, "model": None}


def test_graph_model_name():
    assert model_name_for("graph:examples/tool_agent.py:graph") == "tool_agent:graph"
    assert model_name_for(f"graph:{MODULE}:graph") == f"{MODULE}:graph"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no/such/file.py:graph", "graph file not found: no/such/file.py"),
        ("no_such_package.agent:graph", "graph module no_such_package.agent not found"),
        (f"{FILE}:missing", "has no attribute 'missing'"),
        (f"{MODULE}:not_a_graph", "the attribute is int, not a compiled graph"),
        ("examples/tool_agent.py", "must look like 'graph:PATH.py:ATTR'"),
        (f"{FILE}:1bad", "must look like 'graph:PATH.py:ATTR'"),
    ],
)
def test_graph_check_rejects_what_cannot_load(name, message, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    with pytest.raises(ConfigurationError, match=None) as caught:
        check_model(f"graph:{name}")
    assert message in str(caught.value)


def test_graph_check_reports_a_module_that_fails(tmp_path, monkeypatch):
    broken = tmp_path / "broken_agent.py"
    broken.write_text("import json\nraise RuntimeError('no key configured')\n", encoding="utf-8")
    factory = tmp_path / "bad_factory.py"
    factory.write_text("def graph(a, b):\n    pass\n\nasync def agraph():\n    pass\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="failed to load: RuntimeError: no key configured"):
        check_model(f"graph:{broken}:graph")
    with pytest.raises(ConfigurationError, match="takes no argument or one RunnableConfig"):
        check_model(f"graph:{factory}:graph")
    with pytest.raises(ConfigurationError, match="asynchronous graph factories are not supported"):
        check_model(f"graph:{factory}:agraph")


def test_missing_ai_message_reasons():
    from langchain_core.messages import AIMessage, ToolMessage

    with pytest.raises(CandidateOutputError, match="no 'messages' list \\(its keys: answer\\)"):
        response_message({"answer": "x"})
    with pytest.raises(CandidateOutputError, match="'messages' is empty"):
        response_message({"messages": []})
    with pytest.raises(CandidateOutputError, match="is a ToolMessage \\('done'\\), not an AIMessage"):
        response_message({"messages": [AIMessage("a"), ToolMessage("done", tool_call_id="1")]})
    with pytest.raises(CandidateOutputError, match="returned str"):
        response_message("plain text")
    error = CandidateOutputError("x", {"task": 1, "step": 0})
    assert error.rejected and str(error) == "model request failed (not retried): invalid output: x"
    assert response_message({"messages": [{"role": "assistant", "content": "hi"}]}).content == "hi"


def test_recorded_response_drops_a_stale_raw_message():
    from langchain_core.messages import AIMessage

    raw = {
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
    }
    message = AIMessage(
        "", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}], additional_kwargs={RAW_RESPONSE_KEY: raw}
    )
    assert recorded_response(message)["tool_calls"][0]["function"]["arguments"] == '{"a":1}'  # the provider's text
    edited = message.model_copy(
        update={"tool_calls": [{"name": "f", "args": {"a": "二"}, "id": "c1", "type": "tool_call"}]}
    )
    assert recorded_response(edited)["tool_calls"][0]["function"]["arguments"] == '{"a": "二"}'  # rebuilt, not stale
    rewritten = message.model_copy(update={"content": "revised text", "tool_calls": []})
    assert recorded_response(rewritten) == {"content": "revised text", "tool_calls": None, "reasoning_content": None}


# --------------------------------------------------------------------------- same records as the replay


async def _run_all(sessions: list[dict], spec: str) -> list[dict]:
    context = EvaluationContext(model=spec)
    outputs = await asyncio.gather(*(evaluation_graph.ainvoke({"session": s}, context=context) for s in sessions))
    return [o["record"] for o in outputs]


_PLAIN: dict[str, list[dict]] = {}
"""The plain replay's records per candidate: the same for both wrappers, so run once per module."""


@pytest.mark.parametrize("candidate", ["oracle", "noisy"])
@pytest.mark.parametrize("attr", ["graph", "runnable"])
def test_graph_wrapping_replay_reproduces_replay(candidate, attr, reference_dir, tmp_path, monkeypatch):
    replay = f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}"
    monkeypatch.setenv(INNER_MODEL_ENV, replay)
    dataset = reference_dir / "sessions.jsonl"
    sessions = _jsonl(dataset)
    spec = f"graph:{MODULE}:{attr}"
    if candidate not in _PLAIN:
        _PLAIN[candidate] = asyncio.run(_run_all(sessions, replay))
    plain = copy.deepcopy(_PLAIN[candidate])
    wrapped = asyncio.run(_run_all(sessions, spec))
    assert [comparable(r) for r in wrapped] == [comparable(r) for r in plain]
    for record in wrapped:
        assert record["model_name"] == f"{MODULE}:{attr}"
        assert record["candidate"] == {
            "kind": "graph" if attr == "graph" else "runnable",
            "spec": spec,
            "graph": f"{MODULE}:{attr}",
            "model": None,
        }
    for record in plain:
        assert record["candidate"] == {"kind": "chat_model", "spec": replay, "model": candidate}

    metrics = {}
    for name, records in (("plain", plain), ("wrapped", wrapped)):
        results = _write_jsonl(tmp_path / f"{name}.jsonl", records)
        metrics[name] = score_run(dataset, results, tmp_path / name)
    expected = {r["candidate"]: r for r in _jsonl(reference_dir / "expected_metrics.jsonl")}[candidate]["metric"]
    assert metrics["wrapped"].pop("model_name") == f"{MODULE}:{attr}"
    assert metrics["plain"].pop("model_name") == expected.pop("model_name") == candidate
    assert metrics["wrapped"] == metrics["plain"] == expected


# --------------------------------------------------------------------------- model errors


@pytest.mark.parametrize(
    ("attr", "reason"),
    [
        (
            "no_ai_message",
            "invalid output: the last message of the candidate's output is a ToolMessage ('I only call tools'), not an AIMessage",
        ),
        ("human_last", "invalid output: the last message of the candidate's output is a HumanMessage"),
        ("no_messages", "invalid output: the candidate's output has no 'messages' list (its keys: answer)"),
    ],
)
def test_output_without_ai_message_is_a_recorded_model_error(attr, reason, reference_dir):
    session = _jsonl(reference_dir / "sessions.jsonl")[0]
    spec = f"graph:{MODULE}:{attr}"
    context = EvaluationContext(model=spec)
    outcome = asyncio.run(run_session(evaluation_graph, session, context))
    assert outcome.error is None  # not an infrastructure error: nothing to retry
    record = outcome.record
    assert record["result"].startswith("Error during inference: model request failed (not retried): " + reason)
    assert record["error_detail"].startswith("CandidateOutputError: ")
    assert record["candidate"]["kind"] in ("graph", "runnable") and record["candidate"]["spec"] == spec
    assert record["usage"]["requests"] == 1


def test_output_without_ai_message_scores_as_wrong_tasks(reference_dir, tmp_path):
    dataset = reference_dir / "sessions.jsonl"
    session = _jsonl(dataset)[0]
    outcome = asyncio.run(
        run_session(evaluation_graph, session, EvaluationContext(model=f"graph:{MODULE}:no_ai_message"))
    )
    results = _write_jsonl(tmp_path / "result.jsonl", [outcome.record])
    score_run(dataset, results, tmp_path)
    (scored,) = _jsonl(tmp_path / "score.jsonl")
    assert [task["label"] for task in scored["results"]] == ["error"] * 4


def test_a_crashing_graph_is_an_agent_error(reference_dir):
    """An exception in the graph's own code is the candidate's error (docs/evaluation.md §8.8): recorded at once
    with the whole message, never an infrastructure error to run again."""
    session = _jsonl(reference_dir / "sessions.jsonl")[0]
    outcome = asyncio.run(run_session(evaluation_graph, session, EvaluationContext(model=f"graph:{MODULE}:crashing")))
    assert outcome.error is None
    assert outcome.record["result"].startswith(
        "Error during inference: agent error [agent-code]: RuntimeError: bug in the candidate graph"
    )
    assert outcome.record["usage"]["attempts"] == 1


# --------------------------------------------------------------------------- the call itself


def test_graph_gets_messages_tools_and_node_config(reference_dir, monkeypatch):
    """The candidate sees LangChain messages, OpenAI tool schemas, the replay metadata, and not the evaluation context."""
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.runnables import RunnableLambda

    from wildtoolbench.models import register_provider
    from wildtoolbench.models.registry import _registry

    seen: list[dict] = []

    async def candidate(state, config):
        seen.append({"state": state, "metadata": dict(config.get("metadata") or {})})
        return {"messages": [*state["messages"], AIMessage(content="Hello!")]}

    runnable = RunnableLambda(candidate)
    register_provider("testgraph", lambda name, settings: runnable)
    try:
        session = _jsonl(reference_dir / "sessions.jsonl")[0]
        output = asyncio.run(
            evaluation_graph.ainvoke({"session": session}, context=EvaluationContext(model="testgraph:x"))
        )
    finally:
        _registry.pop("testgraph", None)
    record = output["record"]
    assert record["candidate"] == {"kind": "runnable", "spec": "testgraph:x", "model": None}
    first = seen[0]
    assert all(isinstance(m, BaseMessage) for m in first["state"]["messages"])
    assert first["state"]["tools"][0]["type"] == "function" and "function" in first["state"]["tools"][0]
    assert first["metadata"]["wtb_session_id"] == session["id"] and first["metadata"]["wtb_request_index"] == 0
    assert first["metadata"]["candidate"]["kind"] == "runnable"
    step = record["result"][0]["inference_log"]["step_0"]["inference_output"]
    assert step["content"] == "Hello!" and step["tool_calls"] is None


def test_subgraph_does_not_see_the_evaluation_context(reference_dir, tmp_path, monkeypatch):
    module = tmp_path / "context_agent.py"
    module.write_text(
        "from dataclasses import dataclass\n"
        "from langchain_core.messages import AIMessage\n"
        "from langgraph.graph import StateGraph, MessagesState, START, END\n"
        "from langgraph.runtime import Runtime\n"
        "@dataclass\nclass Context:\n    model: str = 'my-own-default'\n"
        "class State(MessagesState):\n    tools: list\n"
        "def node(state: State, runtime: Runtime[Context]):\n"
        "    return {'messages': [AIMessage(content=f'context={type(runtime.context).__name__}:{runtime.context.model}')]}\n"
        "b = StateGraph(State, context_schema=Context)\nb.add_node('node', node)\nb.add_edge(START, 'node')\nb.add_edge('node', END)\n"
        "graph = b.compile()\n"
        "CANDIDATE_MODEL = 'my-own-default'\n",
        encoding="utf-8",
    )
    session = _jsonl(reference_dir / "sessions.jsonl")[0]
    output = asyncio.run(
        evaluation_graph.ainvoke({"session": session}, context=EvaluationContext(model=f"graph:{module}:graph"))
    )
    step = output["record"]["result"][0]["inference_log"]["step_0"]["inference_output"]
    assert step["content"] == "context=Context:my-own-default"
    assert output["record"]["candidate"]["model"] == "my-own-default"


def test_token_counts_sum_the_graphs_model_calls(reference_dir, monkeypatch):
    """A graph making two model calls per step reports both calls' tokens, and the model it called."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda

    from wildtoolbench.models import register_provider
    from wildtoolbench.models.registry import _registry

    class Counted(GenericFakeChatModel):
        model_name: str = "fake-counted-1"

        def _get_ls_params(self, stop=None, **kwargs):
            return {**super()._get_ls_params(stop=stop, **kwargs), "ls_model_name": self.model_name}

    def reply(text, n):
        return AIMessage(content=text, usage_metadata={"input_tokens": n, "output_tokens": 1, "total_tokens": n + 1})

    model = Counted(messages=iter([reply("draft", 10), reply("final", 20)] * 50))

    async def two_calls(state):
        await model.ainvoke(state["messages"])
        final = await model.ainvoke(state["messages"])
        return {"messages": [*state["messages"], final]}

    register_provider("twocalls", lambda name, settings: RunnableLambda(two_calls))
    try:
        session = _jsonl(reference_dir / "sessions.jsonl")[0]
        output = asyncio.run(
            evaluation_graph.ainvoke({"session": session}, context=EvaluationContext(model="twocalls:x"))
        )
    finally:
        _registry.pop("twocalls", None)
    task = output["record"]["result"][0]
    assert task["input_token_count"][0] == 30 and task["output_token_count"][0] == 2
    assert task["inference_log"]["step_0"]["inference_output"]["content"] == "final"
    assert output["record"]["candidate"]["model"] == "fake-counted-1"


# --------------------------------------------------------------------------- traces


def test_traces_show_the_graphs_nodes_under_the_step(reference_dir, tmp_path):
    from tests.support.langsmith_stub import LangSmithStub

    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    replay = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    spec = f"graph:{FILE}:graph"
    out = tmp_path / "run"
    with LangSmithStub(lifetime=240) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
        env.update(
            LANGSMITH_TRACING="true",
            LANGSMITH_ENDPOINT=stub.url,
            LANGSMITH_API_KEY="lsv2_fake_key",
            LANGSMITH_PROJECT="wtb-graph",
            HOME=str(tmp_path),
            PYTHONPATH=str(REPO_ROOT),
            **{INNER_MODEL_ENV: replay},
        )
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "wildtoolbench.cli",
                "eval",
                "--dataset",
                str(dataset),
                "--model",
                spec,
                "--out",
                str(out),
                "--no-progress",
            ],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        records = {r["id"]: r for r in _jsonl(out / "result.jsonl")}
        runs = stub.runs
        roots = stub.roots()
        assert len(roots) == 2
        for root in roots:
            record = records[root["extra"]["metadata"]["session_id"]]
            below = stub.descendants(root["id"])
            calls = [r for r in below if r["name"] == "call_candidate"]
            steps = sum(1 for task in record["result"] for key in task["inference_log"] if key.startswith("step_"))
            assert len(calls) == steps
            for call in calls:
                meta = call["extra"]["metadata"]
                assert meta["candidate"] == {"kind": "graph", "spec": spec, "graph": f"{FILE}:graph", "model": None}
                (candidate_run,) = [r for r in below if str(r.get("parent_run_id")) == str(call["id"])]
                assert candidate_run["name"] == "candidate"
                inner = [r for r in below if str(r.get("parent_run_id")) == str(candidate_run["id"])]
                assert "call_model" in {r["name"] for r in inner}
                node = next(r for r in inner if r["name"] == "call_model")
                llm = [
                    r for r in below if str(r.get("parent_run_id")) == str(node["id"]) and r.get("run_type") == "llm"
                ]
                assert len(llm) == 1
                m = llm[0]["extra"]["metadata"]
                assert (m["task_idx"], m["step_idx"]) == (meta["task_idx"], meta["step_idx"])
        assert runs


def test_candidate_graph_streams_as_a_subgraph_of_call_candidate(reference_dir, monkeypatch):
    """What ``langgraph dev`` shows: the candidate's node updates stream under the ``call_candidate`` namespace."""
    monkeypatch.setenv(INNER_MODEL_ENV, f"replay:{reference_dir / 'candidates.jsonl'}#oracle")
    session = _jsonl(reference_dir / "sessions.jsonl")[0]
    context = EvaluationContext(model=f"graph:{MODULE}:graph")

    async def stream():
        return [
            (namespace, chunk)
            async for namespace, chunk in evaluation_graph.astream(
                {"session": session}, context=context, stream_mode="updates", subgraphs=True
            )
        ]

    events = asyncio.run(stream())
    nested = [(ns, chunk) for ns, chunk in events if ns]
    assert nested, "no subgraph events"
    assert all(len(ns) == 1 and ns[0].startswith("call_candidate:") for ns, _ in nested)
    assert all(set(chunk) == {"call_model"} for _, chunk in nested)
    top_calls = [chunk for ns, chunk in events if not ns and "call_candidate" in chunk]
    assert len(nested) == len(top_calls)


def test_a_chat_model_named_by_a_graph_spec_runs_as_a_chat_model(reference_dir, tmp_path):
    module = tmp_path / "my_models.py"
    module.write_text(
        "from langchain_core.language_models.fake_chat_models import FakeListChatModel\n"
        "class Model(FakeListChatModel):\n"
        "    model_name: str = 'my-fake-1'\n"
        "    def bind_tools(self, tools, **kwargs):\n"
        "        return self.bind(**kwargs)\n"
        "model = Model(responses=['Hi there.'])\n",
        encoding="utf-8",
    )
    spec = f"graph:{module}:model"
    session = _jsonl(reference_dir / "sessions.jsonl")[0]
    record = asyncio.run(evaluation_graph.ainvoke({"session": session}, context=EvaluationContext(model=spec)))[
        "record"
    ]
    assert record["candidate"] == {"kind": "chat_model", "spec": spec, "graph": f"{module}:model", "model": "my-fake-1"}
    assert record["result"][0]["inference_log"]["step_0"]["inference_output"]["content"] == "Hi there."


def test_wtb_eval_exits_2_before_any_session_for_a_graph_that_cannot_load(reference_dir, tmp_path):
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
    env.update(PYTHONPATH=str(REPO_ROOT), HOME=str(tmp_path))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "eval",
            "--dataset",
            str(reference_dir / "sessions.jsonl"),
            "--model",
            f"graph:{FILE}:missing",
            "--out",
            str(out),
            "--no-progress",
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "has no attribute 'missing'" in proc.stderr and "graph" in proc.stderr
    assert not out.exists() or not any(out.iterdir())
