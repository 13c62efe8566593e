"""A wrapper model calling another model is one request (issue 37, docs/evaluation.md §8.11, §8.8 ``concurrent-requests``).

A custom ``BaseChatModel`` that awaits an inner model, a router over two models (synchronous, in a worker
thread), ``with_fallbacks`` over a primary whose server refuses connections and ``with_retry`` over a model
whose server fails once with HTTP 500: each scores exactly what the plain model scores (the published
metric and the ``openai:`` run's records) with one step per logical request; two requests sent at once by
one step stay refused. Each wrapper runs with a different candidate (every wrapper and every candidate
once: the wrapping does not depend on the replies); before the fix the first two were refused as
``concurrent-requests``.
"""

from __future__ import annotations

import pytest

from tests.integration.test_agent_docs_shapes import (  # noqa: F401 - openai_runs: the fixture
    expected_metric,
    observations_reached_the_model,
    openai_runs,
)
from tests.support.agent_runs import AGENTS, comparable, jsonl, run_over_server
from wildtoolbench.models import agent_loop as agent_module
from wildtoolbench.runner import load_dataset

CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
WRAPPERS = ["wrapper_agent", "router_agent", "fallbacks_agent", "retry_agent"]


@pytest.mark.parametrize(("shape", "candidate"), list(zip(WRAPPERS, CANDIDATES, strict=True)))
def test_wrapper_scores_as_the_plain_model(reference_dir, tmp_path, openai_runs, shape, candidate):  # noqa: F811
    faults = {("wild_tool_bench_0", 1): [{"status": 500}]} if shape == "retry_agent" else None
    records, metric, server = run_over_server(
        reference_dir, candidate, f"graph:{AGENTS}:{shape}", tmp_path, faults=faults
    )
    expected_records, expected, _ = openai_runs(candidate)
    assert metric == expected_metric(reference_dir, candidate) == expected
    assert list(records) == list(expected_records)
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id
        assert "agent_internal" not in record["usage"]
    observations_reached_the_model(records, server)
    assert not (tmp_path / "errors.jsonl").exists() or not jsonl(tmp_path / "errors.jsonl")
    if faults:  # the failed attempt was retried inside the agent: one step, the reply of the second attempt
        assert ("wild_tool_bench_0", 1, "status 500") in server.attempts
        assert ("wild_tool_bench_0", 1, "ok") in server.attempts
    assert agent_module.live_runs() == 0


def test_two_requests_at_once_are_still_refused(reference_dir, tmp_path):
    """The narrow other side: two requests of one step sent side by side are not one request."""
    sessions = load_dataset(reference_dir / "sessions.jsonl")[:1]
    records, _, _ = run_over_server(
        reference_dir, "oracle", f"graph:{AGENTS}:best_of_two_agent", tmp_path, sessions=sessions, max_attempts=1
    )
    result = records["wild_tool_bench_0"]["result"]
    assert result.startswith("Error during inference: agent error [concurrent-requests]: ")
    assert result.endswith("(at task 0, step 0)")
