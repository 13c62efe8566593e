"""A ``RemoteGraph`` as the candidate (issue 37): a one-request graph served by ``langgraph dev``.

The candidate is ``graph:tests/support/agent_shapes.py:remote_graph``, a
``langgraph.pregel.remote.RemoteGraph`` pointing at a ``langgraph dev`` server (one start for the module,
bounded) that serves :data:`tests.support.agent_shapes.one_request_graph`, whose model is a ``ChatOpenAI``
pointed at the loopback server replaying each public fixture candidate in turn. The reply comes back as a
dict message (``invalid_tool_calls`` kept, docs/evaluation.md §8.5), so each candidate scores exactly its
published metric, and the replay server's log shows every gold observation the harness handed over
reaching the model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time

import pytest

from tests.integration.test_agent_docs_shapes import expected_metric, observations_reached_the_model
from tests.support.agent_runs import jsonl, run_over_server, script
from tests.support.langgraph_dev import ROOT, LangGraphDev
from tests.support.openai_stub import ScriptedServer
from wildtoolbench.runner import load_dataset

pytestmark = pytest.mark.slow

CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
SPEC = "graph:tests/support/agent_shapes.py:remote_graph"
SERVED = f"{ROOT / 'tests' / 'support' / 'agent_shapes.py'}:one_request_graph"
COUNTS = {"oracle": 95, "noisy": 48, "wrong_name": 71, "over_ask": 73}  # tasks right of 96 (the published values)


@pytest.fixture(scope="module")
def replies(reference_dir):
    """The loopback OpenAI-compatible server the served graph's model calls (its script swapped per candidate)."""
    with ScriptedServer(load_dataset(reference_dir / "sessions.jsonl"), script(reference_dir, "oracle")) as server:
        yield server


@pytest.fixture(scope="module")
def served(tmp_path_factory, replies):
    """``langgraph dev`` serving the one-request graph as ``one_request`` (started once for the module)."""
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("remote-graph")
    config = folder / "langgraph.json"
    config.write_text(json.dumps({"dependencies": [str(ROOT)], "graphs": {"one_request": SERVED}}), encoding="utf-8")
    env = {"WTB_TEST_AGENT_BASE_URL": replies.base_url, "OPENAI_API_KEY": "test-key"}
    with LangGraphDev(folder / "logs", jobs=8, env=env, config=config) as dev:
        dev.start()
        yield dev


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_remote_graph_scores_the_published_metric(served, replies, reference_dir, tmp_path, monkeypatch, candidate):
    replies.use_script(script(reference_dir, candidate))
    monkeypatch.setenv("WTB_TEST_REMOTE_URL", served.url)
    started = time.perf_counter()
    # the replay server of run_over_server is not used by this candidate (it calls `served`, whose model calls
    # `replies`): its requests stay empty, and the observations are checked on `replies`
    records, metric, unused = run_over_server(reference_dir, candidate, SPEC, tmp_path, concurrency=8)
    seconds = time.perf_counter() - started
    print(f"REMOTE {candidate} {seconds:.1f}s")
    assert all(not requests for requests in unused.requests.values())
    assert metric == expected_metric(reference_dir, candidate)
    assert metric["total_info"]["task"]["correct_count"] == COUNTS[candidate]
    assert metric["total_info"]["task"]["total_count"] == 96
    assert not (tmp_path / "errors.jsonl").exists() or not jsonl(tmp_path / "errors.jsonl"), served.log_tail()
    observations_reached_the_model(records, replies)
    for record in records.values():
        assert record["candidate"]["kind"] == "runnable"  # a RemoteGraph is a Runnable, not a compiled graph
