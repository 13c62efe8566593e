"""The example agent ``examples/tool_agent.py`` as a ``graph:`` candidate (issue 12), offline."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from wildtoolbench.graphs.evaluation import graph as evaluation_graph
from wildtoolbench.models.providers import graph as graph_provider
from wildtoolbench.nodes.evaluation.context import EvaluationContext

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_NAME = "examples/tool_agent.py:graph"
SPEC = f"graph:{SPEC_NAME}"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _comparable(record: dict) -> dict:
    record = copy.deepcopy(record)
    for key in ("model_name", "candidate", "usage"):
        record.pop(key, None)
    for task in record["result"] if isinstance(record["result"], list) else []:
        task["latency"] = len(task["latency"])
    return record


@pytest.fixture()
def agent_module(monkeypatch):
    """The example's module, loaded as ``wtb eval`` loads it; its model spec is set per test."""
    monkeypatch.chdir(REPO_ROOT)
    module = graph_provider.load(SPEC_NAME).module

    def use(spec: str) -> None:
        monkeypatch.setattr(module, "CANDIDATE_MODEL", spec)
        module._models.clear()

    yield use
    module._models.clear()


def _cli(args: list[str], tmp_path: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
    env.update(PYTHONPATH=str(REPO_ROOT), HOME=str(tmp_path), **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_default_model_runs_offline_on_the_bundled_demo(tmp_path):
    """``wtb eval --model graph:examples/tool_agent.py:graph`` with nothing else set: the demo replay, same scores."""
    out_agent, out_replay = tmp_path / "agent", tmp_path / "replay"
    proc = _cli(["eval", "--model", SPEC, "--out", str(out_agent), "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = _cli(
        [
            "eval",
            "--model",
            "replay:bench/data/demo_candidates.jsonl#demo-model",
            "--out",
            str(out_replay),
            "--no-progress",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    agent, replay = _jsonl(out_agent / "result.jsonl"), _jsonl(out_replay / "result.jsonl")
    assert [_comparable(r) for r in agent] == [_comparable(r) for r in replay]
    assert agent[0]["model_name"] == "tool_agent:graph"
    assert agent[0]["candidate"]["kind"] == "graph" and agent[0]["candidate"]["graph"] == SPEC_NAME
    assert agent[0]["candidate"]["model"].endswith("demo_candidates.jsonl#demo-model")
    metric_agent = json.loads((out_agent / "metric.json").read_text())
    metric_replay = json.loads((out_replay / "metric.json").read_text())
    metric_agent.pop("model_name"), metric_replay.pop("model_name")
    assert metric_agent == metric_replay


def test_agent_on_the_oracle_replay_reproduces_the_oracle(agent_module, reference_dir):
    replay = f"replay:{reference_dir / 'candidates.jsonl'}#oracle"
    agent_module(replay)
    sessions = _jsonl(reference_dir / "sessions.jsonl")

    async def run(spec: str) -> list[dict]:
        context = EvaluationContext(model=spec)
        outputs = await asyncio.gather(*(evaluation_graph.ainvoke({"session": s}, context=context) for s in sessions))
        return [o["record"] for o in outputs]

    async def both():
        return await run(replay), await run(SPEC)

    plain, agent = asyncio.run(both())
    assert [_comparable(r) for r in agent] == [_comparable(r) for r in plain]
    assert agent[0]["candidate"] == {"kind": "graph", "spec": SPEC, "graph": SPEC_NAME, "model": replay}


def _simulate(agent_queue: list[str], reflect_queue: list[str], steps: int) -> list[str]:
    """The replies the agent gives for ``steps`` text steps with these scripted queues (one revision at most)."""
    agent, reflect, finals = iter(agent_queue), iter(reflect_queue), []
    for _ in range(steps):
        draft = next(agent)
        finals.append(next(agent) if next(reflect).startswith("REVISE") else draft)
    return finals


def test_agent_end_to_end_on_a_scripted_model(reference_dir, tmp_path):
    """Text-only scripted model (roles = the agent's nodes): reflection revises or approves each draft."""
    agent_queue = [f"Reply {i}." for i in range(200)]
    reflect_queue = ["REVISE: answer more briefly." if i % 2 == 0 else "APPROVE" for i in range(100)]
    script = tmp_path / "agent_script.json"
    script.write_text(json.dumps({"agent": agent_queue, "reflect": reflect_queue}), encoding="utf-8")
    dataset = tmp_path / "three.jsonl"
    dataset.write_text(
        "\n".join((reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:3]) + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    proc = _cli(
        ["eval", "--dataset", str(dataset), "--model", SPEC, "--out", str(out), "--no-progress", "--concurrency", "1"],
        tmp_path,
        WTB_AGENT_MODEL=f"scripted:{script}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = _jsonl(out / "result.jsonl")
    assert len(records) == 3 and all(isinstance(r["result"], list) for r in records)
    assert all(r["candidate"]["model"] == f"scripted:{script}" for r in records)
    contents = [
        task["inference_log"][key]["inference_output"]["content"]
        for record in records  # sessions ran one at a time, in id order
        for task in record["result"]
        for key in task["inference_log"]
        if key.startswith("step_")
    ]
    assert contents == _simulate(agent_queue, reflect_queue, len(contents))
    assert any(task["action_name_label"] == "correct" for r in records for task in r["result"])  # the chat tasks
    assert (out / "metric.json").is_file()


class RecordingModel(BaseChatModel):
    """Answers per node of the agent (``langgraph_node``) and keeps every prompt it got."""

    prompts: list = []

    @property
    def _llm_type(self) -> str:
        return "recording"

    def bind_tools(self, tools, **kwargs):
        return self.bind(tools=list(tools), **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        node = (run_manager.metadata if run_manager else {}).get("langgraph_node")
        self.prompts.append((node, messages, kwargs.get("tools")))
        if node == "reflect":
            text = "REVISE: call the weather tool first."
        else:
            text = "draft" if sum(1 for n, *_ in self.prompts if n == "agent") % 2 else "revised"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def test_agent_prompts_reflection_and_revision(agent_module, reference_dir):
    from wildtoolbench.models import register_provider
    from wildtoolbench.models.registry import _registry

    model = RecordingModel()
    model.prompts.clear()
    register_provider("recording", lambda name, settings: model)
    agent_module("recording:x")
    try:
        session = _jsonl(reference_dir / "sessions.jsonl")[0]
        record = asyncio.run(evaluation_graph.ainvoke({"session": session}, context=EvaluationContext(model=SPEC)))[
            "record"
        ]
    finally:
        _registry.pop("recording", None)
    step = record["result"][0]["inference_log"]["step_0"]["inference_output"]
    assert step["content"] == "revised"
    (first_agent, first_reflect, second_agent) = model.prompts[:3]
    assert [first_agent[0], first_reflect[0], second_agent[0]] == ["agent", "reflect", "agent"]
    system = first_agent[1][0]
    assert isinstance(system, SystemMessage) and system.content.startswith("You are a careful assistant")
    assert "Current Date: " + session["english_env_info"] in system.content
    assert [t["function"]["name"] for t in first_agent[2]] == [t["function"]["name"] for t in session["english_tools"]]
    reflect_request = first_reflect[1][-1].content
    assert "Draft reply of the assistant:\ndraft" in reflect_request and session["english_tasks"][0] in reflect_request
    assert session["english_tools"][0]["function"]["name"] in reflect_request
    note = second_agent[1][-1]
    assert isinstance(note, HumanMessage) and "call the weather tool first." in note.content
    assert isinstance(second_agent[1][-2], AIMessage) and second_agent[1][-2].content == "draft"
