"""The agent shapes the LangGraph and LangChain docs teach, evaluated as their model is (issue 37, docs/evaluation.md §8).

Each shape wraps a ``ChatOpenAI`` pointed at the loopback server replaying a fixture candidate; its
metric must be the published one and its records those of the ``openai:`` run of the same replies,
and every gold observation the harness handed over must reach the model in the agent's next request.
"""

from __future__ import annotations

import time

import pytest

from tests.support.agent_runs import AGENTS, comparable, jsonl, run_over_server
from wildtoolbench.models import agent_loop as agent_module

CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
EXAMPLES = "examples/agent_shapes.py"  # the guide's example, its worker model `openai:<candidate>` (agent_env)
SHAPES = [
    f"{EXAMPLES}:quickstart_graph",
    f"{EXAMPLES}:quickstart_graph_try",
    f"{EXAMPLES}:functional",
    f"{AGENTS}:parallel_tools_agent",
    f"{AGENTS}:streaming_agent",
]


@pytest.fixture(scope="module")
def openai_runs(reference_dir, tmp_path_factory):
    """``{candidate: (records, metric, seconds)}`` of the ``openai:`` runs, made on first use."""
    made = {}

    def get(candidate):
        if candidate not in made:
            out = tmp_path_factory.mktemp(f"openai-{candidate}")
            started = time.perf_counter()
            records, metric, _ = run_over_server(reference_dir, candidate, f"openai:{candidate}", out)
            made[candidate] = (records, metric, time.perf_counter() - started)
        return made[candidate]

    return get


def expected_metric(reference_dir, candidate):
    """The published metric of a fixture candidate."""
    return next(m for m in jsonl(reference_dir / "expected_metrics.jsonl") if m["candidate"] == candidate)["metric"]


def observations_reached_the_model(records, server):
    """Every gold observation a step's input ends with reached the model in one of the session's requests, and
    the model got at least as many tool messages as the harness handed over."""
    for session_id, record in records.items():
        sent = [m for body in server.requests[session_id] for m in body["messages"] if m.get("role") == "tool"]
        texts = [m["content"] for m in sent]
        handed = 0
        for task in record["result"] if isinstance(record["result"], list) else ():
            steps = [v for k, v in task["inference_log"].items() if k.startswith("step_")]
            for step in steps[1:]:  # a later step's input ends with the observations of the one before
                tail = []
                for message in reversed(step["inference_input"]["messages"]):
                    if message.get("role") != "tool":
                        break
                    tail.insert(0, message["content"])
                handed += len(tail)
                for text in tail:
                    assert text in texts, (session_id, text)
        assert handed == 0 or len(texts) >= handed, session_id
        assert not any(str(t).startswith("Error:") for t in texts), session_id


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_streaming_one_request_graph_scores_as_openai(reference_dir, tmp_path, openai_runs, candidate):
    """A ``graph:`` candidate of the one-request contract whose model streams is recorded as the server sent it."""
    records, metric, _ = run_over_server(
        reference_dir, candidate, f"graph:{AGENTS}:streaming_one_request_graph", tmp_path
    )
    expected_records, expected, _ = openai_runs(candidate)
    assert metric == expected_metric(reference_dir, candidate) == expected
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("candidate", CANDIDATES)
def test_docs_shape_scores_as_openai(reference_dir, tmp_path, openai_runs, shape, candidate):
    records, metric, server = run_over_server(reference_dir, candidate, f"graph:{shape}", tmp_path)
    expected_records, expected, _ = openai_runs(candidate)
    assert metric == expected_metric(reference_dir, candidate)
    assert metric == expected
    assert list(records) == list(expected_records)
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id
        assert record["candidate"]["kind"] == "agent"
    observations_reached_the_model(records, server)
    assert not (tmp_path / "errors.jsonl").exists() or not jsonl(tmp_path / "errors.jsonl")
    assert agent_module.live_runs() == 0


def test_replay_model_inside_an_agent_answers_as_the_candidate(tmp_path, monkeypatch):
    """The bundled demo replay given to ``create_agent`` scores what the replay alone scores (issue 37 item 6)."""
    import asyncio

    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.runner import arun_eval, load_dataset
    from wildtoolbench.scoring.run import score_run

    spec = "replay:bench/data/demo_candidates.jsonl#demo-model"
    monkeypatch.setenv("WTB_TEST_AGENT_SPEC", spec)
    dataset = "bench/data/demo_sessions.jsonl"
    metrics = {}
    for name, model in (("alone", spec), ("agent", f"graph:{AGENTS}:replay_agent")):
        out = tmp_path / name
        asyncio.run(arun_eval(load_dataset(dataset), EvaluationContext(model=model), out, progress=False))
        metrics[name] = score_run(dataset, out / "result.jsonl", out / "score", scoring="reference")
        metrics[name].pop("model_name", None)
    assert metrics["agent"] == metrics["alone"]
    assert metrics["agent"]["total_info"]["task"]["correct_count"] == 16  # of 24, as the replay alone
