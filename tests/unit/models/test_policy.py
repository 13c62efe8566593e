"""Server mode's policy (models/server_policy.py, docs/settings.md §8) as pure functions: what a deployment accepts."""

from __future__ import annotations

import asyncio

import pytest

from wildtoolbench.models import ModelSettings, resolve_candidate
from wildtoolbench.models.server_policy import NO_KEY, PolicyError, ServerPolicy, carry_errors, server_mode, trusted
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.generation.context import Context


def _policy(tmp_path, **env) -> ServerPolicy:
    return ServerPolicy.from_env({k: str(v) for k, v in env.items()})


def test_model_entries(tmp_path):
    policy = _policy(tmp_path, WTB_SERVER_MODELS="openai:gpt-4o*, langchain:, graph:/srv/a.py:graph", WTB_MODEL="x:y")
    for spec in ("openai:gpt-4o", "openai:gpt-4o-mini", "langchain:anthropic:claude", "graph:/srv/a.py:graph", "x:y"):
        policy.check_model(spec)
    policy.check_model("local")  # the server's own defaults
    policy.check_model("none")
    for spec in ("openai:o3", "graph:/srv/b.py:graph", "graph:/srv/a.py:graph2", "replay:/x#y", "gguf:/m.gguf"):
        with pytest.raises(PolicyError, match="WTB_SERVER_MODELS"):
            policy.check_model(spec)


def test_a_star_allows_any_provider_but_graph(tmp_path):
    policy = _policy(tmp_path, WTB_SERVER_MODELS="*")
    policy.check_model("openai:anything")
    with pytest.raises(PolicyError, match="imports and runs code"):
        policy.check_model("graph:examples/tool_agent.py:graph")
    with pytest.raises(PolicyError, match="WTB_SERVER_FILES"):
        policy.check_model("replay:/etc/passwd#x")  # a file spec still needs its folder


def test_files_are_resolved_before_the_comparison(tmp_path):
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (other / "f.jsonl").write_text("{}\n")
    (allowed / "link.jsonl").symlink_to(other / "f.jsonl")
    policy = _policy(tmp_path, WTB_SERVER_MODELS="replay:*", WTB_SERVER_FILES=allowed)
    policy.check_model(f"replay:{allowed}/c.jsonl#oracle")
    policy.check_file(str(allowed / "sub" / "d.jsonl"))
    for path in (f"{allowed}/../other/f.jsonl", str(allowed / "link.jsonl"), str(other / "f.jsonl"), "/etc/passwd"):
        with pytest.raises(PolicyError, match="WTB_SERVER_FILES"):
            policy.check_file(path)
    listed = _policy(tmp_path, WTB_SERVER_MODELS=f"replay:{other}/f.jsonl#c")
    listed.check_model(f"replay:{other}/f.jsonl#c")  # listed exactly: no folder needed


def test_base_urls_and_their_keys(tmp_path):
    env = {
        "OPENAI_BASE_URL": "http://own:8000/v1",
        "WTB_SERVER_BASE_URLS": "http://vllm:8000/v1/, https://api.deepseek.com/v1|DEEPSEEK_API_KEY",
        "DEEPSEEK_API_KEY": "dk-123456",
    }
    policy = ServerPolicy.from_env(env)
    for url in ("", None, "http://own:8000/v1/", "http://vllm:8000/v1", "https://api.deepseek.com/v1"):
        policy.check_base_url(url)
    for url in ("http://evil:1/v1", "http://vllm:8000/v2", "http://user:pw@vllm:8000/v1"):
        with pytest.raises(PolicyError, match="WTB_SERVER_BASE_URLS") as raised:
            policy.check_base_url(url)
        assert "pw@" not in str(raised.value)
    assert policy.api_key_for("") is None and policy.api_key_for("http://own:8000/v1") is None
    assert policy.api_key_for("http://vllm:8000/v1") == NO_KEY
    assert policy.api_key_for("https://api.deepseek.com/v1", env) == "dk-123456"


def test_contexts_are_checked_in_server_mode_only(monkeypatch):
    EvaluationContext(model="openai:m", base_url="http://evil:1/v1", dataset="/etc/passwd")  # not a server
    monkeypatch.setenv("WTB_SERVER_MODE", "1")
    assert server_mode()
    with pytest.raises(PolicyError, match="base_url"):
        EvaluationContext(model="local", base_url="http://evil:1/v1")
    with pytest.raises(PolicyError, match="dataset"):
        EvaluationContext(dataset="/etc/passwd")
    with pytest.raises(PolicyError, match="models.planner"):
        Context(models={"planner": "graph:x.py:graph"})
    with pytest.raises(PolicyError, match="base_urls.tool"):
        Context(base_urls={"tool": "http://evil:1/v1"})
    EvaluationContext()  # the server's own defaults
    Context(models={"checker": "none", "user": "local,local"})
    with trusted():
        assert not server_mode()
        EvaluationContext(model="openai:m", base_url="http://evil:1/v1")


def test_a_listed_endpoint_gets_no_server_key(monkeypatch):
    monkeypatch.setenv("WTB_SERVER_MODE", "1")
    monkeypatch.setenv("WTB_SERVER_BASE_URLS", "http://vllm:8000/v1")
    candidate = resolve_candidate("openai:m", ModelSettings(base_url="http://vllm:8000/v1"))
    assert candidate.settings.api_key == NO_KEY
    assert resolve_candidate("openai:m").settings.api_key is None  # the provider's own key and endpoint
    with pytest.raises(PolicyError):
        resolve_candidate("openai:m", ModelSettings(base_url="http://evil:1/v1"))


class OpaqueError(Exception):
    """An exception class LangGraph Server would hide the message of."""


def test_carried_errors_keep_their_class_name_and_a_redacted_message(monkeypatch):
    async def node(state):
        raise OpaqueError("Authorization: Bearer sk-abcdefghijkl failed")

    def sync_node(state):
        raise OpaqueError("plain")

    with pytest.raises(OpaqueError):  # not a server: unchanged
        asyncio.run(carry_errors(node)({}))
    monkeypatch.setenv("WTB_SERVER_MODE", "1")
    with pytest.raises(RuntimeError) as raised:
        asyncio.run(carry_errors(node)({}))
    assert type(raised.value).__name__ == "OpaqueError"
    assert str(raised.value) == "Authorization: Bearer [REDACTED] failed"
    with pytest.raises(RuntimeError, match="plain"):
        carry_errors(sync_node)({})
