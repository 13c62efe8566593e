"""Agents that run their own tool loop, given as factories of the task's tools (issue 23, docs/evaluation.md §8).

Each agent shape wraps a ``ChatOpenAI`` pointed at the loopback server replaying a fixture
candidate; its records and metrics must equal the ``openai:`` run of the same replies.
"""

from __future__ import annotations

import json

import pytest

from tests.support.agent_runs import AGENTS, comparable, jsonl, run_over_server
from wildtoolbench.models import agent_loop as agent_module

SHAPES = ["langchain_agent", "prebuilt_agent", "tool_node_loop"]
CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]


@pytest.fixture(scope="module")
def openai_runs(reference_dir, tmp_path_factory):
    """``{(candidate, scoring, language): (records, metric)}`` of the ``openai:`` runs, made on first use."""
    made = {}

    def get(candidate, **settings):
        key = (candidate, tuple(sorted(settings.items())))
        if key not in made:
            out = tmp_path_factory.mktemp(f"openai-{candidate}")
            records, metric, _ = run_over_server(reference_dir, candidate, f"openai:{candidate}", out, **settings)
            made[key] = (records, metric)
        return made[key]

    return get


def _expected_metric(reference_dir, candidate):
    return next(m for m in jsonl(reference_dir / "expected_metrics.jsonl") if m["candidate"] == candidate)["metric"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("candidate", CANDIDATES)
def test_agent_shape_matches_openai(reference_dir, tmp_path, openai_runs, shape, candidate):
    records, metric, server = run_over_server(reference_dir, candidate, f"graph:{AGENTS}:{shape}", tmp_path)
    expected_records, expected_metric = openai_runs(candidate)
    assert metric == _expected_metric(reference_dir, candidate)
    assert metric == expected_metric
    assert list(records) == list(expected_records)
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id
        assert record["candidate"]["kind"] == "agent"
        assert record["candidate"]["model"] == candidate
    assert agent_module.live_runs() == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("candidate", CANDIDATES)
@pytest.mark.parametrize("settings", [{"scoring": "fixed"}, {"language": "zh"}], ids=["fixed", "zh"])
def test_agent_shape_matches_openai_fixed_and_zh(reference_dir, tmp_path, openai_runs, shape, candidate, settings):
    records, metric, _ = run_over_server(reference_dir, candidate, f"graph:{AGENTS}:{shape}", tmp_path, **settings)
    expected_records, expected_metric = openai_runs(candidate, **settings)
    assert metric == expected_metric
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id


@pytest.mark.parametrize("shape", ["sync_tool_node_loop", "agent_with_own_tool"])
def test_sync_agents_and_agents_with_own_tools(reference_dir, tmp_path, openai_runs, shape):
    """Synchronous nodes and tools; an agent with a system prompt and a tool of its own (never called here)."""
    records, metric, server = run_over_server(reference_dir, "noisy", f"graph:{AGENTS}:{shape}", tmp_path)
    expected_records, expected_metric = openai_runs("noisy")
    assert metric == expected_metric
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id
    if shape == "agent_with_own_tool":
        first = server.requests["wild_tool_bench_0"][0]
        assert first["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
        assert [t["function"]["name"] for t in first["tools"]][-1] == "lookup_notes"


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_react_agent_template_example_matches_openai(reference_dir, tmp_path, openai_runs, candidate):
    """examples/react_agent.py: the react-agent template's graph as a factory of the tools."""
    spec = "graph:examples/react_agent.py:make_graph"
    records, metric, server = run_over_server(reference_dir, candidate, spec, tmp_path)
    expected_records, expected_metric = openai_runs(candidate)
    assert metric == expected_metric == _expected_metric(reference_dir, candidate)
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id
    first = server.requests["wild_tool_bench_0"][0]["messages"]
    assert first[0]["content"].startswith("You are a helpful AI assistant.") and first[1]["content"].startswith(
        "Current Date: "
    )


def _two_sessions(reference_dir):
    from wildtoolbench.runner import load_dataset

    return load_dataset(reference_dir / "sessions.jsonl")[:2]


def test_a_graph_that_runs_the_benchmark_tools_itself_is_stopped(reference_dir, tmp_path):
    """The old mistake (create_react_agent exported as the graph): an agent error naming the factory contract,
    recorded with the whole message (docs/evaluation.md §8.4, §8.8), never an infrastructure error."""
    spec = f"graph:{AGENTS}:self_running_graph"
    sessions = _two_sessions(reference_dir)
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions, max_attempts=1)
    assert not (tmp_path / "errors.jsonl").exists() or jsonl(tmp_path / "errors.jsonl") == []
    assert list(records) == [s["id"] for s in sessions]
    result = records[sessions[0]["id"]]["result"]
    assert result.startswith("Error during inference: agent error [ran-tools-itself]: ")
    assert "ran the benchmark's tool call(s) getRealtimeCity itself" in result
    assert "a parameter named 'tools'" in result


def test_an_agent_that_interrupts_gets_a_clear_error(reference_dir, tmp_path):
    spec = f"graph:{AGENTS}:interrupting_agent"
    sessions = _two_sessions(reference_dir)
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions, max_attempts=1)
    assert not (tmp_path / "errors.jsonl").exists() or jsonl(tmp_path / "errors.jsonl") == []
    assert len(records) == 2
    result = records[sessions[0]["id"]]["result"]
    assert result.startswith("Error during inference: agent error [interrupted]: the candidate graph interrupted")
    assert "the harness owns the tools" in result
    assert result.endswith("(at task 0, step 1)")  # held before its tools, after step 0 was matched
    assert result.count("model request failed") == 0
    assert agent_module.live_runs() == 0


def test_a_changed_agent_model_never_resumes_old_results(reference_dir, tmp_path):
    """The agent's model comes from an environment variable: re-running with another one is refused."""
    import asyncio

    from tests.support.agent_runs import agent_env
    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.runner import arun_eval

    spec = f"graph:{AGENTS}:langchain_agent"
    sessions = _two_sessions(reference_dir)
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions[:1])
    assert list(records) == ["wild_tool_bench_0"]
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["candidate"]["models"] == ["oracle"] and len(run["candidate"]["source_sha256"]) == 64
    with agent_env("http://127.0.0.1:9/v1", "noisy"):
        with pytest.raises(ValueError, match="another version of the candidate .*changed: models"):
            asyncio.run(
                arun_eval(sessions, EvaluationContext(model=spec, model_name="oracle"), tmp_path, progress=False)
            )
    assert [r["id"] for r in jsonl(tmp_path / "result.jsonl")] == ["wild_tool_bench_0"]
    # the same model again resumes: the second session is evaluated, the first kept
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions)
    assert list(records) == ["wild_tool_bench_0", "wild_tool_bench_1"]


def test_a_hung_endpoint_inside_an_agent_is_an_infrastructure_error(reference_dir, tmp_path):
    """--timeout 2 bounds each step of the agent as a whole: a hung model request is retried, then
    recorded as an infrastructure error (nothing scored); a resumed run evaluates the session."""
    spec = f"graph:{AGENTS}:langchain_agent"
    sessions = _two_sessions(reference_dir)[:1]
    faults = {("wild_tool_bench_0", 1): [{"hang": 30}, {"hang": 30}]}
    records, _, server = run_over_server(
        reference_dir, "oracle", spec, tmp_path, sessions=sessions, faults=faults, timeout=2, max_attempts=2, backoff=0
    )
    assert records == {}
    (error,) = jsonl(tmp_path / "errors.jsonl")
    assert error["attempts"] == 2 and all(e.startswith("timeout") for e in error["errors"]), error
    assert error["where"] == {"task": 0, "step": 1}
    assert agent_module.live_runs() == 0
    records, metric, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions, timeout=2)
    assert list(records) == ["wild_tool_bench_0"]
    assert all(task["action_name_label"] == "correct" for task in records["wild_tool_bench_0"]["result"])
