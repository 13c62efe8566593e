"""The rules an agent's run is held to (models/agent_checks.py, docs/evaluation.md §8.8), each triggered by an
agent that breaks it: the session ends at once as an agent error with the whole message, recorded (never
retried, never an infrastructure error, never a wait for --timeout), and nothing of it is scored silently."""

from __future__ import annotations

import pytest

from tests.support.agent_runs import AGENTS, jsonl, run_over_server
from wildtoolbench.models import agent_loop as agent_module
from wildtoolbench.runner import load_dataset

BROKEN = {
    "edited_args_agent": "unmatched-tool-call",
    "invalid_tool_agent": "unread-observation",
    "unbound_agent": "tool-not-offered",
    "best_of_two_agent": "concurrent-requests",
    "failing_node_agent": "agent-code",
    "interrupting_agent": "interrupted",
}


@pytest.mark.parametrize(("shape", "rule"), BROKEN.items(), ids=list(BROKEN))
def test_an_agent_that_breaks_a_rule_ends_its_session_at_once(reference_dir, tmp_path, shape, rule):
    sessions = load_dataset(reference_dir / "sessions.jsonl")[:3]
    records, _, server = run_over_server(
        reference_dir, "oracle", f"graph:{AGENTS}:{shape}", tmp_path, sessions=sessions, timeout=60, max_attempts=3
    )
    # The rule's own error on every session, never "timeout" (a wait for --timeout) nor a retried infrastructure error.
    assert not (tmp_path / "errors.jsonl").exists() or jsonl(tmp_path / "errors.jsonl") == []
    assert len(records) == 3
    for record in records.values():
        assert record["result"].startswith(f"Error during inference: agent error [{rule}]: "), record["result"]
        assert record["error_detail"].startswith("AgentError: agent error")
        assert "model request failed" not in record["result"]
        assert "(at task 0, step " in record["result"]
    if rule == "agent-code":  # the whole message, not cut at 200 characters
        assert "KeyError: \"the agent's own bug: " + "x" * 300 in records["wild_tool_bench_0"]["result"]
    assert all(outcome == "ok" for _, _, outcome in server.outcomes())
    assert agent_module.live_runs() == 0


def test_an_agent_that_reads_every_observation_breaks_no_rule(reference_dir, tmp_path):
    """The narrow pass: the quickstart's tool node reads each observation by arguments alone, one after another."""
    sessions = load_dataset(reference_dir / "sessions.jsonl")[:3]
    records, _, _ = run_over_server(
        reference_dir, "oracle", "graph:examples/agent_shapes.py:quickstart_graph", tmp_path, sessions=sessions
    )
    assert all(isinstance(r["result"], list) for r in records.values())
