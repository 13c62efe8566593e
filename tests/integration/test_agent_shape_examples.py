"""The agents guide's examples (examples/agent_shapes.py) run offline on the bundled demo and score what the
demo replay alone scores (issue 37 item 7, docs/guides/agents.md)."""

from __future__ import annotations

import asyncio

import pytest

from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset
from wildtoolbench.scoring.run import score_run

DATASET = "bench/data/demo_sessions.jsonl"
DEMO = "replay:bench/data/demo_candidates.jsonl#demo-model"
EXAMPLES = ["quickstart_graph", "functional", "structured_answer", "supervisor", "swarm", "deep_agent"]
MULTI = {"supervisor", "swarm", "deep_agent"}


def _evaluate(spec, out):
    asyncio.run(arun_eval(load_dataset(DATASET), EvaluationContext(model=spec), out, progress=False))
    metric = score_run(DATASET, out / "result.jsonl", out / "score", scoring="reference")
    metric.pop("model_name")
    return metric


@pytest.fixture(scope="module")
def replay_alone(tmp_path_factory):
    """The demo replay's metric as a chat model candidate."""
    return _evaluate(DEMO, tmp_path_factory.mktemp("alone"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_scores_as_the_replay(tmp_path, monkeypatch, replay_alone, example):
    monkeypatch.delenv("WTB_AGENT_MODEL", raising=False)
    monkeypatch.delenv("WTB_AGENT_ROUTER_MODEL", raising=False)
    metric = _evaluate(f"graph:examples/agent_shapes.py:{example}", tmp_path)
    assert metric == replay_alone
    assert metric["total_info"]["task"]["correct_count"] == 16
    import json

    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    internal = summary["this_run"].get("agent_internal", {})
    assert (internal.get("requests", 0) > 0) == (example in MULTI)
