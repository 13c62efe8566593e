"""A ``RemoteGraph`` as the candidate (issue 37): a one-request graph served by ``langgraph dev``.

The candidate is ``graph:tests/support/agent_shapes.py:remote_graph``, a
``langgraph.pregel.remote.RemoteGraph`` pointing at a ``langgraph dev`` server (one start for the module,
bounded) that serves :data:`tests.support.agent_shapes.one_request_graph`, whose model is a ``ChatOpenAI``
pointed at the loopback server replaying each public fixture candidate in turn. The reply comes back as a
dict message (``invalid_tool_calls`` kept, docs/evaluation.md §8.5), so each candidate scores exactly its
published metric, and the replay server's log shows every gold observation the harness handed over
reaching the model.

The four runs share one event loop: a ``RemoteGraph``'s HTTP client belongs to the loop it first ran in,
and the harness loads a ``graph:`` candidate once per process (a second ``asyncio.run`` would find the
client's loop closed).
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import os
import time
from types import SimpleNamespace

import pytest

from tests.integration.test_agent_docs_shapes import expected_metric, observations_reached_the_model
from tests.support.agent_runs import jsonl, script
from tests.support.langgraph_dev import ROOT, LangGraphDev
from tests.support.openai_stub import ScriptedServer
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset
from wildtoolbench.scoring.run import score_run

pytestmark = pytest.mark.slow

CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
SPEC = "graph:tests/support/agent_shapes.py:remote_graph"
SERVED = f"{ROOT / 'tests' / 'support' / 'agent_shapes.py'}:one_request_graph"
COUNTS = {"oracle": 95, "noisy": 48, "wrong_name": 71, "over_ask": 73}  # tasks right of 96 (the published values)


@pytest.fixture(scope="module")
def remote_runs(reference_dir, tmp_path_factory):
    """``{candidate: (records, metric, requests per session, seconds)}``: ``langgraph dev`` started once, the
    replay server's script swapped per candidate, the four evaluations run in one event loop."""
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    dataset = reference_dir / "sessions.jsonl"
    sessions = load_dataset(dataset)
    folder = tmp_path_factory.mktemp("remote-graph")
    config = folder / "langgraph.json"
    config.write_text(json.dumps({"dependencies": [str(ROOT)], "graphs": {"one_request": SERVED}}), encoding="utf-8")
    runs = {}
    with ScriptedServer(sessions, script(reference_dir, "oracle")) as replies:
        env = {"WTB_TEST_AGENT_BASE_URL": replies.base_url, "OPENAI_API_KEY": "test-key"}
        with LangGraphDev(folder / "logs", jobs=24, env=env, config=config) as dev:
            dev.start()

            async def evaluate_all():
                for candidate in CANDIDATES:
                    replies.use_script(script(reference_dir, candidate))
                    out = folder / candidate
                    started = time.perf_counter()
                    context = EvaluationContext(model=SPEC, model_name=candidate)
                    await arun_eval(sessions, context, out, progress=False, concurrency=24)
                    seconds = time.perf_counter() - started
                    runs[candidate] = (out, copy.deepcopy(replies.requests), seconds)

            saved = os.environ.get("WTB_TEST_REMOTE_URL")
            os.environ["WTB_TEST_REMOTE_URL"] = dev.url
            try:
                asyncio.run(evaluate_all())
            finally:
                if saved is None:
                    os.environ.pop("WTB_TEST_REMOTE_URL", None)
                else:
                    os.environ["WTB_TEST_REMOTE_URL"] = saved
            log = dev.log_tail()
    made = {}
    for candidate, (out, requests, seconds) in runs.items():
        print(f"REMOTE {candidate} {seconds:.1f}s")
        records = {r["id"]: r for r in jsonl(out / "result.jsonl")}
        metric = score_run(dataset, out / "result.jsonl", out / "score", scoring="reference")
        errors = jsonl(out / "errors.jsonl") if (out / "errors.jsonl").exists() else []
        made[candidate] = (records, metric, requests, errors, log)
    return made


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_remote_graph_scores_the_published_metric(remote_runs, reference_dir, candidate):
    records, metric, requests, errors, log = remote_runs[candidate]
    assert errors == [], log
    assert all(isinstance(r["result"], list) for r in records.values()), [r["result"] for r in records.values()]
    assert metric == expected_metric(reference_dir, candidate)
    assert metric["total_info"]["task"]["correct_count"] == COUNTS[candidate]
    assert metric["total_info"]["task"]["total_count"] == 96
    observations_reached_the_model(records, SimpleNamespace(requests=requests))
    for record in records.values():
        assert record["candidate"]["kind"] == "runnable"  # a RemoteGraph is a Runnable, not a compiled graph
