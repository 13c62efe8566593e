"""Every model the harness builds answers inside an agent as it does as the candidate (issue 37 item 5,
docs/guides/agents.md "Models inside an agent").

``scripted:`` (exactly: the same records and metric as the scripted candidate on the fixtures, its queue
taken by the candidate's role, not the agent's node name) and the bundled ``local`` model (one task,
``local_model``: the real model calls the gold tool inside ``create_agent`` and gets the gold observation).
``gguf:`` builds the same chat model class as ``local`` (``models/llama/gguf.py:chat_model_for_server``).
``replay:`` is tested in ``tests/integration/test_agent_docs_shapes.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.integration.test_local_model import local_extra  # noqa: F401 - the fixture (skip or fail without the extra)
from tests.support.agent_runs import AGENTS, comparable, jsonl
from wildtoolbench.models import agent_loop as agent_module
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset
from wildtoolbench.scoring.run import score_run

REPO = Path(__file__).resolve().parents[2]


def _run(sessions, spec, out, dataset):
    scripted.reset()
    asyncio.run(arun_eval(sessions, EvaluationContext(model=spec), out, progress=False, concurrency=1))
    metric = score_run(dataset, out / "result.jsonl", out / "score", scoring="reference")
    metric.pop("model_name", None)
    return {r["id"]: r for r in jsonl(out / "result.jsonl")}, metric


def test_scripted_model_inside_an_agent_answers_as_the_candidate(reference_dir, tmp_path, monkeypatch):
    """Each request takes the next reply of the shared queue (``*``); a queue named after the agent's node
    (``model``, create_agent's) is not the candidate's and is never used."""
    texts = [f"Could you tell me more? ({n})" for n in range(200)]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"*": texts, "model": ["the agent's node name is not a role"] * 200}), "utf-8")
    spec = f"scripted:{script}"
    monkeypatch.setenv("WTB_TEST_AGENT_SPEC", spec)
    dataset = reference_dir / "sessions.jsonl"
    sessions = load_dataset(dataset)
    alone, alone_metric = _run(sessions, spec, tmp_path / "alone", dataset)
    agent, agent_metric = _run(sessions, f"graph:{AGENTS}:replay_agent", tmp_path / "agent", dataset)
    assert agent_metric == alone_metric
    assert alone_metric["total_info"]["task"]["correct_count"] == 16  # the text replies the gold answers with text
    assert alone_metric["total_info"]["task"]["total_count"] == 96
    assert list(agent) == list(alone) == [s["id"] for s in sessions]
    for session_id, record in agent.items():
        assert comparable(record) == comparable(alone[session_id]), session_id
        assert record["candidate"]["kind"] == "agent"
    outputs = [
        step["inference_output"]["content"]
        for record in agent.values()
        for task in record["result"]
        for key, step in task["inference_log"].items()
        if key.startswith("step_")
    ]
    # one text reply per request, in order: the queue advanced once per step, as for the candidate
    assert outputs == texts[: len(outputs)]
    assert len(outputs) == sum(r["usage"]["requests"] for r in alone.values()) > 96
    assert agent_module.live_runs() == 0


def test_scripted_model_binds_tools_and_offers_them():
    """``bind_tools`` puts the tools in the request (the rule ``tool-not-offered`` reads them there)."""
    from langchain_core.tools import tool

    from wildtoolbench.models import resolve_model

    @tool
    def get_weather(city: str) -> str:
        """Weather of a city."""
        return city

    bound = resolve_model(f"scripted:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}").bind_tools([get_weather])
    assert [t["function"]["name"] for t in bound.kwargs["tools"]] == ["get_weather"]


@pytest.mark.local_model
def test_local_model_inside_an_agent(local_extra, tmp_path, monkeypatch):  # noqa: F811 - the imported fixture
    """The bundled local model inside ``create_agent`` (through ``resolve_model("local")``), on one task of the
    demo (a flight search, then the answer): it calls the gold tool, the harness's tool hands the gold
    observation over, and the model is asked again with it (one short task: about 45 s on 2 idle cores)."""
    session = json.loads((REPO / "bench" / "data" / "demo_sessions.jsonl").read_text("utf-8").splitlines()[0])
    for side in ("english_", ""):
        for key in ("tasks", "answer_list", "task_types"):
            session[side + key] = session[side + key][:1]
        session[side + "turn_subtypes"] = []
    dataset = tmp_path / "one_task.jsonl"
    dataset.write_text(json.dumps(session, ensure_ascii=False) + "\n", "utf-8")
    monkeypatch.setenv("WTB_TEST_AGENT_SPEC", "local")
    out = tmp_path / "agent"
    sessions = load_dataset(dataset, tasks=1)
    asyncio.run(arun_eval(sessions, EvaluationContext(model=f"graph:{AGENTS}:replay_agent"), out, progress=False))
    assert not (out / "errors.jsonl").exists() or not jsonl(out / "errors.jsonl")
    (record,) = jsonl(out / "result.jsonl")
    assert record["candidate"]["kind"] == "agent", record["result"]
    (task,) = record["result"]
    steps = [v for k, v in task["inference_log"].items() if k.startswith("step_")]
    first = steps[0]["inference_output"]
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["searchFlights"]
    observation = session["english_answer_list"][0][0]["observation"]
    gold = observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False)
    handed = steps[1]["inference_input"]["messages"][-1]
    assert handed["role"] == "tool" and handed["content"] == gold
    assert agent_module.live_runs() == 0
