"""``langchain:PROVIDER:MODEL`` candidates (issue 12): init_chat_model, install hints, settings, recorded arguments.

The integration is faked by a package written into a temporary directory under the name of a real
one (``langchain_upstage`` with ``ChatUpstage``), so ``init_chat_model`` imports it as it would
the real package. Nothing reaches the network.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wildtoolbench.graphs.evaluation import graph as evaluation_graph
from wildtoolbench.models import ConfigurationError, ModelSettings, check_model, model_name_for, resolve_model
from wildtoolbench.models.providers import langchain as langchain_chat
from wildtoolbench.nodes.evaluation.context import EvaluationContext

REPO_ROOT = Path(__file__).resolve().parents[3]
FAKE_MODULE = "langchain_upstage"
ARGS = {"city": "北京", "when": {"day": "today", "hours": [9, 12]}, "format": "JSON"}

FAKE_PACKAGE = textwrap.dedent(
    '''
    """A stand-in for langchain-upstage: a chat model answering every request with one tool call."""
    from typing import Any

    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import Field

    CREATED = []

    class ChatUpstage(BaseChatModel):
        model: str
        temperature: float = 0.7
        base_url: str | None = Field(default=None, alias="upstage_api_base")
        max_tokens: int | None = None
        timeout: float | None = None
        max_retries: int = 2

        model_config = {"populate_by_name": True}

        def model_post_init(self, __context: Any) -> None:
            CREATED.append(self)

        @property
        def _llm_type(self) -> str:
            return "fake-upstage"

        def bind_tools(self, tools, **kwargs):
            return self.bind(tools=list(tools), **kwargs)

        def _generate(self, messages, stop=None, run_manager=None, tools=None, **kwargs):
            name = tools[0]["function"]["name"]
            message = AIMessage(
                content="",
                tool_calls=[{"name": name, "args": ARGS_REPR, "id": "call_fake_1"}],
                usage_metadata={"input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
                response_metadata={"model_name": self.model},
            )
            return ChatResult(generations=[ChatGeneration(message=message)])
    '''.replace("ARGS_REPR", repr(ARGS))
)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture()
def fake_integration(tmp_path, monkeypatch):
    """``langchain_upstage`` importable from a temporary directory (skipped if the real one is installed)."""
    if importlib.util.find_spec(FAKE_MODULE) is not None:
        pytest.skip(f"the real {FAKE_MODULE} is installed")
    from langchain.chat_models.base import _get_chat_model_creator

    package = tmp_path / "fake_site" / FAKE_MODULE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(FAKE_PACKAGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(package.parent))
    _get_chat_model_creator.cache_clear()
    yield package.parent
    sys.modules.pop(FAKE_MODULE, None)
    _get_chat_model_creator.cache_clear()


def test_fake_integration_runs_and_records_dict_arguments_as_json_text(fake_integration, reference_dir):
    session = _jsonl(reference_dir / "sessions.jsonl")[0]
    spec = "langchain:upstage:solar-fake"
    check_model(spec)
    context = EvaluationContext(model=spec, temperature=0.25, base_url="http://127.0.0.1:9/v1")
    record = asyncio.run(evaluation_graph.ainvoke({"session": session}, context=context))["record"]

    assert record["model_name"] == "solar-fake"
    assert record["candidate"] == {"kind": "chat_model", "spec": spec, "model": "solar-fake"}
    task = record["result"][0]
    output = task["inference_log"]["step_0"]["inference_output"]
    (call,) = output["tool_calls"]
    assert call["id"] == "call_fake_1"
    assert call["function"]["arguments"] == json.dumps(ARGS, ensure_ascii=False)
    assert "北京" in call["function"]["arguments"]  # not \\u escaped
    assert output["content"] is None
    assert task["input_token_count"][0] == 12 and task["output_token_count"][0] == 3

    created = sys.modules[FAKE_MODULE].CREATED[-1]
    assert (created.model, created.temperature, created.base_url) == ("solar-fake", 0.25, "http://127.0.0.1:9/v1")
    assert (created.timeout, created.max_retries) == (120.0, 0)  # the harness retries


def test_settings_extra_pass_through(fake_integration):
    model = resolve_model("langchain:upstage:solar-fake", ModelSettings(temperature=0.5, extra={"max_tokens": 256}))
    assert (model.temperature, model.max_tokens, model.base_url) == (0.5, 256, None)


def test_registered_integration(fake_integration):
    langchain_chat.register_integration("my-provider", FAKE_MODULE, "ChatUpstage")
    try:
        check_model("langchain:my_provider:m1")
        model = resolve_model("langchain:my-provider:m1", ModelSettings(temperature=0.1))
        assert type(model).__name__ == "ChatUpstage" and model.model == "m1"
    finally:
        langchain_chat.INTEGRATIONS.pop("my_provider", None)


@pytest.mark.parametrize(
    ("spec", "package"),
    [
        ("langchain:xai:grok-4", "langchain-xai"),
        ("langchain:google_genai:gemini-2.5-pro", "langchain-google-genai"),
        ("langchain:anthropic:claude-sonnet-4-5", "langchain-anthropic"),
    ],
)
def test_missing_integration_package_gives_the_install_line(spec, package):
    if importlib.util.find_spec(package.replace("-", "_")) is not None:
        pytest.skip(f"{package} is installed")
    with pytest.raises(ConfigurationError) as caught:
        check_model(spec)
    assert str(caught.value).endswith(f"pip install {package}")
    assert spec in str(caught.value)


def test_bad_langchain_specs():
    with pytest.raises(ConfigurationError, match="did you mean 'anthropic'"):
        check_model("langchain:antropic:claude-sonnet-4-5")
    with pytest.raises(ConfigurationError, match="must look like 'langchain:PROVIDER:MODEL'"):
        check_model("langchain:gpt-4o")
    assert model_name_for("langchain:ollama:qwen2.5:7b") == "qwen2.5:7b"


def test_base_url_refused_by_a_class_without_one(fake_integration, tmp_path, monkeypatch):
    module = fake_integration / "nobase_chat.py"
    module.write_text(  # buildable without arguments: check_model builds the chat model once
        "from langchain_core.language_models.fake_chat_models import FakeListChatModel\n\n\n"
        "class NoBase(FakeListChatModel):\n    responses: list = ['ok']\n",
        encoding="utf-8",
    )
    langchain_chat.register_integration("nobase", "nobase_chat", "NoBase")
    try:
        check_model("langchain:nobase:x")
        with pytest.raises(ConfigurationError, match="takes no base URL"):
            check_model("langchain:nobase:x", ModelSettings(base_url="http://127.0.0.1:1/v1"))
    finally:
        langchain_chat.INTEGRATIONS.pop("nobase", None)
        sys.modules.pop("nobase_chat", None)


def _cli(args: list[str], tmp_path: Path, extra_path: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
    env.update(PYTHONPATH=os.pathsep.join(p for p in (str(REPO_ROOT), extra_path) if p), HOME=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_wtb_eval_with_a_fake_integration(fake_integration, reference_dir, tmp_path):
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    proc = _cli(
        [
            "eval",
            "--dataset",
            str(dataset),
            "--model",
            "langchain:upstage:solar-fake",
            "--out",
            str(out),
            "--no-progress",
        ],
        tmp_path,
        str(fake_integration),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = _jsonl(out / "result.jsonl")
    assert len(records) == 2 and all(r["model_name"] == "solar-fake" for r in records)
    first_call = records[0]["result"][0]["inference_log"]["step_0"]["inference_output"]["tool_calls"][0]
    assert first_call["function"]["arguments"] == json.dumps(ARGS, ensure_ascii=False)
    assert (out / "metric.json").is_file()


def test_wtb_eval_exits_2_before_any_session_when_the_package_is_missing(reference_dir, tmp_path):
    if importlib.util.find_spec("langchain_xai") is not None:
        pytest.skip("langchain-xai is installed")
    out = tmp_path / "run"
    proc = _cli(
        [
            "eval",
            "--dataset",
            str(reference_dir / "sessions.jsonl"),
            "--model",
            "langchain:xai:grok-4",
            "--out",
            str(out),
            "--no-progress",
        ],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "pip install langchain-xai" in proc.stderr
    assert not out.exists() or not any(out.iterdir())


def test_other_sdks_errors_are_classified_like_openais():
    """Errors of provider SDKs behind `langchain:` specs are retried on the same terms (wildtoolbench.models.transport)."""
    from wildtoolbench.models.transport import ModelRequestError, describe_error, transient_kind

    class APIStatusError(Exception):
        def __init__(self, status_code: int):
            super().__init__(f"status {status_code}")
            self.status_code = status_code

    class APIConnectionError(Exception):
        pass

    class APITimeoutError(APIConnectionError):
        pass

    assert transient_kind(APIStatusError(429)) == "http 429"
    assert transient_kind(APIStatusError(529)) == "http 529"
    assert transient_kind(APIStatusError(400)) is None
    assert transient_kind(APITimeoutError()) == "timeout"
    assert transient_kind(APIConnectionError()) == "connection"
    assert transient_kind(ValueError("bad")) is None
    assert describe_error(APIStatusError(400)).startswith("http 400: APIStatusError")
    assert ModelRequestError(1, ["http 400: x"], False, {}, 400).rejected
