"""A dead endpoint is one clear error before any session (issue 24 finding 11, docs/settings.md §7.6):
before the fix ``--base-url http://127.0.0.1:PORT/v1`` with nothing listening cost every session 5 tries
(about 17 s) of ``APIConnectionError: Connection error.``, naming no URL."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.demo_data import CANDIDATES_PATH
from wildtoolbench.cli import app
from wildtoolbench.models.transport import probe_endpoint


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    for name in ("OPENAI_BASE_URL", "WTB_BASE_URL", "WTB_TIMEOUT", "WTB_MODEL"):
        monkeypatch.delenv(name, raising=False)


class _NotFound(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server interface
        _NotFound.requests.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


def test_a_dead_url_is_one_error_naming_it_and_nothing_runs(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["eval", "--model", "openai:x", "--base-url", url, "--out", str(out), "--no-trace"]
    )
    assert result.exit_code == 3, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert text.startswith(f"error: the model endpoint {url} cannot be reached: connection refused (")
    assert "no session was run" in text and "--no-preflight" in text
    assert "model request failed" not in text and "retried" not in text  # no session, no retries
    assert not out.exists()


def test_a_server_that_answers_404_is_reachable():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _NotFound.requests.clear()
        assert probe_endpoint(f"http://127.0.0.1:{server.server_address[1]}/v1/") is None
        assert _NotFound.requests == ["/v1/models"]
    finally:
        server.shutdown()
        server.server_close()


def test_the_probe_names_what_failed_without_credentials():
    problem = probe_endpoint(f"http://127.0.0.1:{_free_port()}/v1", timeout=2)
    assert problem is not None and problem.startswith("connection refused (ConnectError")


def test_no_preflight_skips_the_probe(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    out = tmp_path / "run"
    args = ["eval", "--model", "openai:x", "--base-url", url, "--out", str(out), "--no-trace", "--no-progress"]
    result = CliRunner().invoke(app, [*args, "--no-preflight", "--max-attempts", "1", "--limit", "1"])
    assert result.exit_code == 3, result.output
    assert "cannot be reached" not in result.output
    assert "infrastructure errors in 1 sessions" in result.output  # the session ran, and failed
    assert (out / "errors.jsonl").exists()


def test_langsmith_dataset_without_a_key_is_configuration(tmp_path, monkeypatch):
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
    out = tmp_path / "run"
    model = f"replay:{CANDIDATES_PATH}#demo-model"
    result = CliRunner().invoke(app, ["eval", "--model", model, "--out", str(out), "--langsmith-dataset", "d"])
    assert result.exit_code == 2, result.output  # exit 1 before the fix
    assert " ".join(result.output.split()) == (
        "error: --langsmith-dataset needs LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a self-hosted LangSmith)"
    )
    assert not out.exists()


_AGENT = (
    "from langchain_core.messages import AIMessage\n"
    "from langgraph.graph import StateGraph, MessagesState, START, END\n"
    "def node(state):\n"
    "    return {'messages': [AIMessage(content='hi')]}\n"
    "b = StateGraph(MessagesState)\nb.add_node('node', node)\nb.add_edge(START, 'node')\nb.add_edge('node', END)\n"
    "graph = b.compile()\n"
    "CANDIDATE_MODEL = "
)


@pytest.mark.parametrize(
    ("declared", "says"),
    [
        (
            "replay:{tmp}/missing.jsonl#oracle",
            "missing.jsonl",
        ),  # a model configured inside the graph whose file is gone
        (f"replay:{CANDIDATES_PATH}#no-such-candidate", "no-such-candidate"),
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),  # its key is not set
    ],
)
def test_a_model_declared_inside_a_graph_is_checked_before_any_session(tmp_path, monkeypatch, declared, says):
    monkeypatch.delenv("OPENAI_API_KEY")
    module = tmp_path / "declared_agent.py"
    module.write_text(_AGENT + repr(declared.format(tmp=tmp_path)) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--model", f"graph:{module}:graph", "--out", str(out), "--no-trace"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith(f"error: graph:{module}:graph: its CANDIDATE_MODEL ") and says in text
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize("declared", [f"replay:{CANDIDATES_PATH}#oracle", "openai/gpt-4o-mini", "my-own-model"])
def test_a_declared_model_that_works_or_is_no_spec_of_ours_passes_the_check(tmp_path, declared):
    from wildtoolbench.models import check_model

    module = tmp_path / "declared_agent.py"
    module.write_text(_AGENT + repr(declared) + "\n", encoding="utf-8")
    check_model(f"graph:{module}:graph")  # raises nothing
