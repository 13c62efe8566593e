"""Multi-agent systems and planner-first agents score exactly what their worker's model scores (issue 37,
docs/evaluation.md §8.9): handoffs, todo lists and a worker's report to its supervisor are the agent's
internal requests, counted beside the steps; the strict reading judges them as steps."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_agent_docs_shapes import expected_metric, observations_reached_the_model
from tests.support.agent_runs import comparable, jsonl, run_over_server
from wildtoolbench.models import agent_loop as agent_module
from wildtoolbench.runner import load_dataset

MULTI = "examples/agent_shapes.py"  # the guide's example, its worker model `openai:<candidate>` (agent_env)
CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
SHAPES = ["supervisor", "swarm", "deep_agent", "structured_answer"]


def internal_of(out):
    """``summary.json``'s internal requests of this run (``{}`` when there were none)."""
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))["this_run"].get("agent_internal", {})


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("candidate", CANDIDATES)
def test_multi_agent_scores_as_its_worker(reference_dir, tmp_path, shape, candidate):
    records, metric, server = run_over_server(reference_dir, candidate, f"graph:{MULTI}:{shape}", tmp_path)
    assert metric == expected_metric(reference_dir, candidate)
    observations_reached_the_model(records, server)
    assert not (tmp_path / "errors.jsonl").exists() or not jsonl(tmp_path / "errors.jsonl")
    internal = internal_of(tmp_path)
    per_session = [r["usage"].get("agent_internal", {}).get("requests", 0) for r in records.values()]
    assert internal.get("requests", 0) == sum(per_session)
    if shape != "structured_answer":  # every run starts with a handoff or a todo list
        assert all(n > 0 for n in per_session)
    print(f"INTERNAL {shape} {candidate} {internal}")
    assert agent_module.live_runs() == 0


def test_structured_answer_is_the_answer_step(reference_dir, tmp_path):
    """The final answer given as a call of the ``ToolStrategy`` tool is the step that reaches the user: a text
    reply holding the call's arguments, never a wrong call of the agent's own tool."""
    sessions = load_dataset(reference_dir / "sessions.jsonl")[:2]
    records, _, _ = run_over_server(
        reference_dir, "oracle", f"graph:{MULTI}:structured_answer", tmp_path, sessions=sessions
    )
    answers = [
        step["inference_output"]
        for record in records.values()
        for task in record["result"]
        for key, step in task["inference_log"].items()
        if key.startswith("step_") and not step["inference_output"].get("tool_calls")
    ]
    assert answers and all(json.loads(a["content"]).keys() == {"answer"} for a in answers)


def test_strict_reading_judges_every_request(reference_dir, tmp_path):
    """Under ``agent_steps='strict'`` the supervisor's handoff is the step, judged as a wrong call."""
    sessions = load_dataset(reference_dir / "sessions.jsonl")[:2]
    records, _, _ = run_over_server(
        reference_dir, "oracle", f"graph:{MULTI}:supervisor", tmp_path, sessions=sessions, agent_steps="strict"
    )
    for record in records.values():
        first = record["result"][0]["inference_log"]["step_0"]["inference_output"]
        assert first["tool_calls"][0]["function"]["name"] == "transfer_to_tool_expert"
        assert first["current_action_name_label"] == "error"
        assert "agent_internal" not in record["usage"]


def test_single_agent_has_no_internal_requests(reference_dir, tmp_path):
    """A single model's agent gets the same steps under both readings: nothing is internal."""
    sessions = load_dataset(reference_dir / "sessions.jsonl")[:3]
    runs = {}
    for steps in ("answers", "strict"):
        out = tmp_path / steps
        records, _, _ = run_over_server(
            reference_dir,
            "noisy",
            "graph:tests/support/agent_shapes.py:langchain_agent",
            out,
            sessions=sessions,
            agent_steps=steps,
        )
        runs[steps] = {k: comparable(r) for k, r in records.items()}
        assert internal_of(out) == {}
    assert runs["answers"] == runs["strict"]


def test_agent_steps_setting_is_checked():
    """A reading that does not exist is a configuration error naming the setting (exit 2 in ``wtb eval``)."""
    from wildtoolbench.models import ConfigurationError
    from wildtoolbench.nodes.evaluation.context import EvaluationContext

    with pytest.raises(ConfigurationError, match=r"agent_steps \(WTB_AGENT_STEPS\) is 'strictest': choose one of"):
        EvaluationContext(model="openai:gpt-4o", agent_steps="strictest")
    assert EvaluationContext(model="openai:gpt-4o").agent_steps == "answers"
