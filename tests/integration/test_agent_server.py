"""Agent factories evaluated over ``wtb eval --server`` (``langgraph dev`` on loopback; issue 23 acceptance).

The server runs the agents (``create_agent``, ``create_react_agent``, a ``ToolNode`` loop, the
react-agent template of ``examples/react_agent.py``) around a ``ChatOpenAI`` pointed at one loopback
OpenAI-compatible server, which replays each public fixture candidate in turn. Each run's
``metric.json`` must equal the local ``openai:`` run of the same replies (and ``expected_metrics.jsonl``),
and its records the ``openai:`` run's (latencies and history ids aside).

The server path does not depend on the agent's shape (the same factory contract runs in the same
worker), so by default each shape is run with a different candidate (a Latin square: every shape and
every candidate once, four runs); ``WTB_AGENT_SERVER_MATRIX=full`` runs all sixteen pairs. The full
shape x candidate matrix runs locally in ``tests/integration/test_agent_factories.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest
from typer.testing import CliRunner

from tests.support.agent_runs import comparable, jsonl, run_over_server, script
from tests.support.langgraph_dev import ROOT, LangGraphDev
from tests.support.openai_stub import ScriptedServer
from wildtoolbench.cli import app
from wildtoolbench.models import agent_loop as agent_module
from wildtoolbench.runner import load_dataset

pytestmark = pytest.mark.slow

AGENT_FILE = ROOT / "tests" / "support" / "agent_shapes.py"
REACT_FILE = ROOT / "examples" / "react_agent.py"
SPECS = {
    "create_agent": f"graph:{AGENT_FILE}:langchain_agent",
    "create_react_agent": f"graph:{AGENT_FILE}:prebuilt_agent",
    "ToolNode loop": f"graph:{AGENT_FILE}:tool_node_loop",
    "react-agent template": f"graph:{REACT_FILE}:make_graph",
}
CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
AGENT_MODEL = "served-model"  # the agents' model name; the replies come from the candidate being served


@pytest.fixture(scope="module")
def replies(reference_dir):
    """The loopback OpenAI-compatible server the agents on ``langgraph dev`` call (its script swapped per test)."""
    sessions = load_dataset(reference_dir / "sessions.jsonl")
    with ScriptedServer(sessions, script(reference_dir, "oracle")) as server:
        yield server


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory, reference_dir, replies):
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    folders = [reference_dir.resolve(), AGENT_FILE.parent, REACT_FILE.parent]
    env = {
        "WTB_SERVER_MODELS": ",".join(SPECS.values()),  # graph: specs run code: listed exactly (docs/settings.md §8)
        "WTB_SERVER_FILES": ",".join(str(f) for f in folders),
        "WTB_TEST_AGENT_BASE_URL": replies.base_url,
        "WTB_TEST_AGENT_MODEL": AGENT_MODEL,
        "REACT_AGENT_BASE_URL": replies.base_url,
        "REACT_AGENT_MODEL": f"openai/{AGENT_MODEL}",
        "OPENAI_API_KEY": "test-key",
    }
    with LangGraphDev(tmp_path_factory.mktemp("langgraph-dev"), jobs=8, env=env) as dev:
        dev.start()
        yield dev


@pytest.fixture(scope="module")
def openai_runs(reference_dir, tmp_path_factory):
    """``{candidate: (records, metric)}`` of the local ``openai:`` runs, made on first use."""
    made = {}

    def get(candidate):
        if candidate not in made:
            out = tmp_path_factory.mktemp(f"openai-{candidate}")
            records, metric, _ = run_over_server(reference_dir, candidate, f"openai:{candidate}", out)
            made[candidate] = (records, metric)
        return made[candidate]

    return get


def _expected_metric(reference_dir, candidate):
    return next(m for m in jsonl(reference_dir / "expected_metrics.jsonl") if m["candidate"] == candidate)["metric"]


def _pairs() -> list[tuple[str, str]]:
    if os.environ.get("WTB_AGENT_SERVER_MATRIX") == "full":
        return [(shape, candidate) for candidate in CANDIDATES for shape in SPECS]
    return list(zip(SPECS, CANDIDATES, strict=True))


@pytest.mark.parametrize(("shape", "candidate"), _pairs())
def test_agents_over_server_match_openai(
    agent_server, replies, reference_dir, tmp_path, openai_runs, monkeypatch, shape, candidate
):
    expected_records, expected_metric = openai_runs(candidate)
    replies.use_script(script(reference_dir, candidate))
    monkeypatch.setenv("WTB_MODEL_NAME", candidate)  # the records' model name, as the openai: run's
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # the client loads the factory once (its resume identity)
    out = tmp_path / "server"
    args = ["eval", "--dataset", str(reference_dir / "sessions.jsonl"), "--model", SPECS[shape], "--out", str(out)]
    result = CliRunner().invoke(
        app, [*args, "--server", agent_server.url, "--concurrency", "8", "--no-progress"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output + agent_server.log_tail()
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert metric == expected_metric == _expected_metric(reference_dir, candidate)
    records = {r["id"]: r for r in jsonl(out / "result.jsonl")}
    assert list(records) == list(expected_records)
    for session_id, record in records.items():
        assert comparable(record) == comparable(expected_records[session_id]), session_id
        assert record["candidate"]["kind"] == "agent"
        assert record["candidate"]["model"] == AGENT_MODEL
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["settings"]["server"] == agent_server.url and "temperature" not in run["settings"]
    assert agent_module.live_runs() == 0
