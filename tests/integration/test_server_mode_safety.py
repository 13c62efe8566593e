"""Server mode through ``langgraph dev`` on loopback (issue 24 finding 1, docs/settings.md §8).

One dev server for the module, as a deployer would run it: the server's own key
(``OPENAI_API_KEY=sk-test-SERVERKEY777``) configured for its own endpoint (``OPENAI_BASE_URL``, a
loopback echo server), one more endpoint listed without a key (``WTB_SERVER_BASE_URLS``), the models
``openai:gpt-4o-mini``, ``replay:*`` and ``scripted:*`` (``WTB_SERVER_MODELS``) and one folder of files
(``WTB_SERVER_FILES``). Callers post runs to ``/runs/wait`` as anyone who can reach the API can.

- a caller-chosen base URL (a loopback capture server) is refused before any request: the capture
  server sees no request, so never the key, in every spelling of the URL and in both graphs;
- ``graph:`` modules (not listed) are never imported, and files outside the folder (``replay:``,
  ``scripted:``, ``gguf:``, the ``dataset``; through ``..`` or a symbolic link too) are never read;
- what the deployment allows works: a replay file of the folder scores the session; the listed
  endpoint is called without the server's key; errors reach the caller with their message, redacted.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import httpx
import pytest

from tests.support.echo_server import EchoServer
from tests.support.langgraph_dev import LangGraphDev

pytestmark = pytest.mark.slow

KEY = "sk-test-SERVERKEY777"
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data"
SESSION = json.loads((DEMO / "demo_sessions.jsonl").read_text(encoding="utf-8").splitlines()[0])


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """``(server, allowed folder, own endpoint, listed endpoint, capture server, marker file of graph modules)``."""
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    root = tmp_path_factory.mktemp("server-mode")
    allowed = root / "allowed"
    allowed.mkdir()
    (allowed / "candidates.jsonl").write_text((DEMO / "demo_candidates.jsonl").read_text(encoding="utf-8"))
    (allowed / "sessions.jsonl").write_text((DEMO / "demo_sessions.jsonl").read_text(encoding="utf-8"))
    secret = root / "secret"
    secret.mkdir()
    (secret / "candidates.jsonl").write_text((DEMO / "demo_candidates.jsonl").read_text(encoding="utf-8"))
    (allowed / "link.jsonl").symlink_to(secret / "candidates.jsonl")
    marker = root / "imported.txt"
    (root / "agent.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\ngraph = None\n")
    with EchoServer([401]) as own, EchoServer([401]) as listed, EchoServer([401]) as capture:
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": own.base_url,
            "WTB_SERVER_MODELS": "openai:gpt-4o-mini,replay:*,scripted:*",
            "WTB_SERVER_FILES": str(allowed),
            "WTB_SERVER_BASE_URLS": listed.base_url,
            "WTB_MAX_ATTEMPTS": "1",
        }
        with LangGraphDev(root / "logs", jobs=4, env=env) as dev:
            dev.start()
            yield dev, allowed, own, listed, capture, marker


def _run(url: str, graph: str, graph_input: dict, context: dict) -> dict:
    """POST /runs/wait as any caller of the API; returns the body (output or ``__error__``)."""
    body = {"assistant_id": graph, "input": graph_input, "context": context, "on_completion": "delete"}
    reply = httpx.post(f"{url}/runs/wait", json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    return reply.json()


def _refused(answer: dict, *words: str) -> str:
    error = answer.get("__error__")
    assert isinstance(error, dict), answer
    assert error["error"] == "PolicyError", error
    for word in words:
        assert word in error["message"], error
    return error["message"]


@pytest.mark.parametrize(
    "spelling",
    ["{url}", "{url}/", "http://user:pw@127.0.0.1:{port}/v1", "http://localhost:{port}/v1", "{url}?api_key=x"],
)
def test_a_caller_chosen_base_url_is_refused_before_any_request(deployment, spelling):
    dev, _, own, _, capture, _ = deployment
    base_url = spelling.format(url=capture.base_url, port=capture.port)
    answer = _run(dev.url, "evaluation", {"session": SESSION}, {"model": "openai:gpt-4o-mini", "base_url": base_url})
    message = _refused(answer, "base_url", "WTB_SERVER_BASE_URLS")
    assert "pw@" not in message and KEY not in json.dumps(answer)
    assert capture.requests == []  # no request, so never the key


def test_generation_base_urls_and_role_models_are_refused(deployment):
    dev, _, _, _, capture, marker = deployment
    cases = [
        ({"base_url": capture.base_url}, "base_url"),
        ({"base_urls": {"planner": capture.base_url}}, "base_urls.planner"),
        ({"models": {"planner": f"graph:{marker.parent / 'agent.py'}:graph"}}, "models.planner"),
        ({"models": {"user": "local,replay:/etc/passwd#x"}}, "models.user"),
        ({"models": {"tool": "scripted:/etc/passwd"}}, "/etc/passwd"),
    ]
    for context, word in cases:
        _refused(_run(dev.url, "generation", {}, context), word)
    assert capture.requests == [] and not marker.exists()


@pytest.mark.parametrize(
    "spec",
    [
        "graph:{root}/agent.py:graph",  # code: refused unless listed exactly
        "graph:tests.support.candidate_graphs:graph",
        "replay:/etc/passwd#x",
        "scripted:/etc/passwd",
        "gguf:/etc/passwd",
        "replay:{allowed}/../secret/candidates.jsonl#oracle",  # out of the folder through ..
        "replay:{allowed}/link.jsonl#oracle",  # ... or through a symbolic link
        "langchain:openai:gpt-4o",  # a provider the deployment does not list
    ],
)
def test_code_and_files_the_deployment_does_not_list_are_refused(deployment, spec):
    dev, allowed, _, _, capture, marker = deployment
    model = spec.format(root=marker.parent, allowed=allowed)
    answer = _run(dev.url, "evaluation", {"session": SESSION}, {"model": model})
    message = _refused(answer, "WTB_SERVER_")
    assert "root:" not in message  # nothing of /etc/passwd
    assert not marker.exists() and capture.requests == []


def test_a_dataset_outside_the_folder_is_not_opened(deployment):
    dev, allowed, *_ = deployment
    for dataset in ("/etc/passwd", f"{allowed}/../secret/candidates.jsonl"):
        answer = _run(dev.url, "evaluation", {"session_id": "root"}, {"dataset": dataset})
        assert "root:" not in _refused(answer, "dataset", "WTB_SERVER_FILES")


def test_what_the_deployment_allows_runs(deployment):
    dev, allowed, own, listed, capture, _ = deployment
    # a replay file of the folder, and a session looked up in a dataset of the folder
    replay = {"model": f"replay:{allowed / 'candidates.jsonl'}#oracle"}
    out = _run(dev.url, "evaluation", {"session": SESSION}, replay)
    assert out["record"]["id"] == SESSION["id"] and out["record"]["model_name"] == "oracle"
    out = _run(
        dev.url, "evaluation", {"session_id": SESSION["id"]}, {**replay, "dataset": str(allowed / "sessions.jsonl")}
    )
    assert out["record"]["id"] == SESSION["id"]

    # the listed endpoint is called, without the server's key; its echo comes back redacted
    answer = _run(
        dev.url, "evaluation", {"session": SESSION}, {"model": "openai:gpt-4o-mini", "base_url": listed.base_url}
    )
    assert len(listed.requests) == 1
    assert listed.requests[0]["headers"]["authorization"] == "Bearer no-key-configured-for-this-endpoint"
    assert answer["__error__"]["error"] == "ModelRequestError" and "http 401" in answer["__error__"]["message"]

    # the server's own endpoint gets the server's key (configured for it); the caller never sees it
    answer = _run(dev.url, "evaluation", {"session": SESSION}, {"model": "openai:gpt-4o-mini"})
    assert own.requests and own.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"
    assert "Bearer [REDACTED]" in answer["__error__"]["message"] and KEY not in json.dumps(answer)
    assert capture.requests == []


def test_errors_reach_the_caller_with_their_message(deployment):
    dev, allowed, *_ = deployment
    missing = allowed / "missing.jsonl"
    answer = _run(dev.url, "evaluation", {"session": SESSION}, {"model": f"replay:{missing}#oracle"})
    error = answer["__error__"]
    # a candidate that cannot be built is an infrastructure error of the request, naming the cause
    assert error["error"] == "ModelRequestError", error
    assert "cannot be built: FileNotFoundError" in error["message"]
    assert str(missing) in error["message"] and "internal error" not in error["message"]


def test_a_missing_key_on_the_server_reaches_the_wtb_client(tmp_path, monkeypatch):
    """``wtb eval --server`` against a deployment without OPENAI_API_KEY: the session's error names the
    missing key (the server's message), not "An internal error occurred"."""
    from typer.testing import CliRunner

    from wildtoolbench.cli import app

    if importlib.util.find_spec("langgraph_api") is None:
        pytest.skip("langgraph-cli[inmem] is not installed")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the server's environment has no key
    # a remote endpoint (not loopback) needs a key; nothing is sent: the model cannot be built
    env = {"OPENAI_BASE_URL": "https://models.invalid/v1", "WTB_SERVER_MODELS": "openai:gpt-4o-mini"}
    with LangGraphDev(tmp_path / "logs", jobs=1, env=env) as dev:
        dev.start()
        out = tmp_path / "run"
        args = ["eval", "--model", "openai:gpt-4o-mini", "--ids", "0", "--server", dev.url, "--out", str(out)]
        result = CliRunner().invoke(app, [*args, "--no-progress"], env={"OPENAI_API_KEY": "sk-client-only-1234567"})
    assert result.exit_code == 3, result.output
    (entry,) = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert "OpenAIError" in entry["error"] and "api_key" in entry["error"], entry
    assert "An internal error occurred" not in entry["error"]


def test_wtb_generate_server_checks_the_context_before_any_session(deployment, tmp_path, monkeypatch):
    """``wtb generate --server`` with a context the deployment refuses (a caller-chosen base URL) stops
    with exit 2 before any session, the server's reason named; before, every session failed on it."""
    import asyncio

    from typer.testing import CliRunner

    from wildtoolbench.cli import app
    from wildtoolbench.nodes.generation.context import Context
    from wildtoolbench.nodes.generation.registry import model_roles
    from wildtoolbench.remote.check import acheck_server
    from wildtoolbench.remote.generation import generation_context_payload

    dev, _, _, _, capture, _ = deployment
    monkeypatch.setenv("OPENAI_API_KEY", "sk-client-only-1234567")
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "a"}}]) + "\n", encoding="utf-8")
    out = tmp_path / "gen"
    models = [f"--model={role}=openai:gpt-4o-mini" for role in model_roles()]
    args = ["generate", "--tools", str(tools), "--samples", "1", "--layers", "1", "--out", str(out)]
    args += [*models, f"--base-url=planner={capture.base_url}", "--server", dev.url, "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error: ") and "base_urls.planner" in text and "WTB_SERVER_BASE_URLS" in text
    assert "Traceback" not in result.output and not out.exists() and capture.requests == []
    # a context the deployment accepts passes the same probe, and no role calls a model for it
    allowed = Context(models=dict.fromkeys(model_roles(), "openai:gpt-4o-mini"))
    asyncio.run(acheck_server(dev.url, "generation", [], context=generation_context_payload(allowed)))
