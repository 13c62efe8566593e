"""LangSmith tracing (issue 5, part 1): redaction, run metadata, and what reaches a LangSmith server.

The end-to-end tests point ``LANGSMITH_ENDPOINT`` at :class:`tests.support.langsmith_stub.LangSmithStub`
(loopback) and decode what the SDK uploads (multipart, zstd-compressed as against the real service).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.langsmith_stub import LangSmithStub
from wildtoolbench.nodes.tracing import step_metadata, task_metadata
from wildtoolbench.tracing import (
    REDACTED,
    redact,
    redact_record,
    redact_text,
    secret_values,
    session_run_config,
    tracing_scope,
)

FAKE_LANGSMITH_KEY = "lsv2_fake_SECRET123"
FAKE_OPENAI_KEY = "sk-fake-OPENAI-456789"
BASE_URL_PASSWORD = "hunter2pass"


# --------------------------------------------------------------------------- redaction (pure)


def test_redact_text_removes_every_credential_shape():
    text = (
        f"POST https://alice:{BASE_URL_PASSWORD}@llm.example.com/v1/chat?api_key=abc123&model=x "
        "headers={'Authorization': 'Bearer tok_live_9f8e7d6c5b4a', 'x-api-key': 'k-123456789'} "
        "key sk-proj-AAAAbbbbCCCCdddd and lsv2_pt_0123456789abcdef"
    )
    out = redact_text(text, secrets=[])
    for leaked in (
        BASE_URL_PASSWORD,
        "alice",
        "abc123",
        "tok_live_9f8e7d6c5b4a",
        "k-123456789",
        "sk-proj-AAAA",
        "lsv2_pt_",
    ):
        assert leaked not in out, leaked
    # the non-secret parts survive
    assert "llm.example.com/v1/chat" in out and "model=x" in out
    assert out.count(REDACTED) == 6


def test_redact_walks_structures_and_secret_keys():
    value = {
        "api_key": "plain-value",
        "headers": {"Authorization": "Basic dXNlcjpwYXNz", "Accept": "application/json"},
        "messages": [{"content": f"my key is {FAKE_OPENAI_KEY}"}],
        "count": 3,
        "token_count": 7,
    }
    out = redact(value, secrets=[FAKE_OPENAI_KEY])
    assert out["api_key"] == REDACTED
    assert out["headers"] == {"Authorization": REDACTED, "Accept": "application/json"}
    assert out["messages"][0]["content"] == f"my key is {REDACTED}"
    assert out["count"] == 3 and out["token_count"] == 7
    assert value["api_key"] == "plain-value"  # input untouched


def test_secret_values_reads_secret_env_names_only():
    env = {
        "OPENAI_API_KEY": FAKE_OPENAI_KEY,
        "LANGSMITH_API_KEY": FAKE_LANGSMITH_KEY,
        "HOME": "/root/home",
        "X_TOKEN": "abc",
    }
    assert secret_values(env) == sorted([FAKE_OPENAI_KEY, FAKE_LANGSMITH_KEY], key=len, reverse=True)


def test_redact_record_keeps_benchmark_content():
    record = {
        "id": "s1",
        "result": [
            {
                "inference_log": {
                    "step_0": {
                        "inference_output": {
                            "content": "visit https://bob:pw@example.com?token=keep-me",  # model output: kept
                            "error_reason": "HTTP 401 from https://bob:pw@example.com/v1",
                        }
                    }
                }
            }
        ],
    }
    out = redact_record(record, secrets=[FAKE_OPENAI_KEY])
    step = out["result"][0]["inference_log"]["step_0"]["inference_output"]
    assert step["content"] == "visit https://bob:pw@example.com?token=keep-me"
    assert step["error_reason"] == f"HTTP 401 from https://{REDACTED}@example.com/v1"
    crashed = redact_record(
        {"id": "s2", "result": f"Error during inference: bad key {FAKE_OPENAI_KEY}"}, secrets=[FAKE_OPENAI_KEY]
    )
    assert crashed["result"] == f"Error during inference: bad key {REDACTED}"


def test_redact_record_copies_only_what_changes():
    clean = {"id": "s1", "result": [{"error_reason": "name mismatch", "steps": [{"content": "sk-not-a-key-really"}]}]}
    assert redact_record(clean, secrets=[]) is clean  # nothing to redact: the record itself
    nested = {
        "id": "s2",
        "observation": {
            "error": ["see https://bob:pw@example.com", {"error_reason": "Bearer abcdefgh12345678"}],
            "ok": "keep",
        },
        "tools": [{"name": "t"}],
        "usage": {"requests": 2},
    }
    out = redact_record(nested, secrets=[])
    assert out["observation"]["error"] == [
        f"see https://{REDACTED}@example.com",
        {"error_reason": f"Bearer {REDACTED}"},
    ]
    assert out["observation"]["ok"] == "keep" and out["tools"] is nested["tools"] and out["usage"] is nested["usage"]
    assert nested["observation"]["error"][0] == "see https://bob:pw@example.com"  # input untouched
    assert list(out) == list(nested)  # key order kept
    keyed = redact_record(
        {"id": "s3", "result": [{"content": f"key {FAKE_OPENAI_KEY}", "n": 1}]}, secrets=[FAKE_OPENAI_KEY]
    )
    assert keyed["result"][0] == {"content": f"key {REDACTED}", "n": 1}


def test_session_and_step_metadata():
    config = session_run_config(
        kind="eval",
        session_id="wild_tool_bench_3",
        dataset="data/demo.jsonl",
        model="openai:gpt-4o",
        language="en",
        settings={"temperature": 0.0, "base_url": f"https://u:{BASE_URL_PASSWORD}@host/v1"},
    )
    assert config["run_name"] == "wtb eval wild_tool_bench_3"
    meta = config["metadata"]
    assert meta["session_id"] == "wild_tool_bench_3" and meta["dataset"] == "data/demo.jsonl"
    assert meta["model"] == "openai:gpt-4o" and meta["language"] == "en"
    assert meta["project_version"] == "0.1.0" or meta["project_version"]
    assert BASE_URL_PASSWORD not in json.dumps(meta)
    assert task_metadata(0, "Chat", None) == {"task_idx": 0, "task_type": "Chat", "turn_subtype": "First Turn"}
    assert step_metadata(2, 1, "correct", task_type="Clarify", turn_subtype="Partial Information") == {
        "task_idx": 2,
        "task_type": "Clarify",
        "turn_subtype": "Partial Information",
        "step_idx": 1,
        "step_label": "correct",
    }


# --------------------------------------------------------------------------- a traced model call


@contextmanager
def fake_openai_server() -> Iterator[dict[str, Any]]:
    """Loopback OpenAI-compatible server answering every chat completion with one tool call."""
    seen: dict[str, Any] = {"headers": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            json.loads(self.rfile.read(length))
            seen["headers"].append(dict(self.headers))
            body = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "fake-model",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "tool_calls",
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [
                                    {
                                        "id": "call_1",
                                        "type": "function",
                                        "function": {"name": "getWeather", "arguments": '{"city": "Oslo"}'},
                                    }
                                ],
                            },
                        }
                    ],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    seen["port"] = server.server_address[1]
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def langsmith_env(monkeypatch):
    """A LangSmith stub plus the standard tracing variables pointing at it (fake secrets)."""
    import langsmith.utils

    with LangSmithStub(lifetime=120) as stub:
        monkeypatch.setenv("LANGSMITH_TRACING", "true")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", FAKE_LANGSMITH_KEY)
        monkeypatch.setenv("LANGSMITH_PROJECT", "wtb-test")
        monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
        langsmith.utils.get_env_var.cache_clear()
        yield stub
    langsmith.utils.get_env_var.cache_clear()


async def _traced_call(port: int, no_trace: bool) -> None:
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model="fake-model",
        base_url=f"http://alice:{BASE_URL_PASSWORD}@127.0.0.1:{port}/v1",
        api_key=FAKE_OPENAI_KEY,
        max_retries=0,
        timeout=10,
    ).bind_tools(
        [
            {
                "type": "function",
                "function": {
                    "name": "getWeather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ]
    )
    config = session_run_config(
        kind="eval",
        session_id="wild_tool_bench_0",
        dataset="sessions.jsonl",
        model="openai:fake-model",
        settings={"base_url": f"http://alice:{BASE_URL_PASSWORD}@127.0.0.1:{port}/v1", "api_key": FAKE_OPENAI_KEY},
    )
    with tracing_scope(no_trace=no_trace):
        await model.ainvoke(
            [SystemMessage("Current Date: 2024-05-03 10:12:00 Friday"), HumanMessage("Weather in Oslo?")], config=config
        )


async def test_traced_model_call_carries_messages_and_no_secrets(langsmith_env):
    stub = langsmith_env
    with fake_openai_server() as openai_server:
        await _traced_call(openai_server["port"], no_trace=False)
    assert openai_server["headers"], "the model server was not called"

    (llm_run,) = [r for r in stub.runs.values() if r.get("run_type") == "llm"]
    assert llm_run["name"] == "wtb eval wild_tool_bench_0"
    assert llm_run["extra"]["metadata"]["session_id"] == "wild_tool_bench_0"
    messages = json.dumps(llm_run["inputs"])
    assert "Weather in Oslo?" in messages and "Current Date: 2024-05-03" in messages
    outputs = json.dumps(llm_run["outputs"])
    assert "getWeather" in outputs and "Oslo" in outputs and "call_1" in outputs

    payloads = stub.all_payload_text()
    assert payloads, "nothing was uploaded"
    for secret in (FAKE_LANGSMITH_KEY, FAKE_OPENAI_KEY, BASE_URL_PASSWORD):
        assert secret not in payloads, secret
    # the LangSmith key travels only as the LangSmith auth header; the OpenAI key never reaches LangSmith
    headers = stub.all_header_text(exclude=("x-api-key",))
    assert FAKE_LANGSMITH_KEY not in headers and FAKE_OPENAI_KEY not in headers


async def test_no_trace_sends_nothing(langsmith_env):
    stub = langsmith_env
    with fake_openai_server() as openai_server:
        await _traced_call(openai_server["port"], no_trace=True)
    assert openai_server["headers"]
    assert stub.run_ingest_requests() == []
    assert stub.runs == {}


# --------------------------------------------------------------------------- `wtb eval` end to end


REPO_ROOT = Path(__file__).resolve().parents[2]
EVAL_NODES = {"load_session", "build_prompt", "call_candidate", "match_response", "finish_session"}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run_cli(args: list[str], stub_url: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_", "OPENAI_"))}
    env.update(
        LANGSMITH_TRACING="true",
        LANGSMITH_ENDPOINT=stub_url,
        LANGSMITH_API_KEY=FAKE_LANGSMITH_KEY,
        LANGSMITH_PROJECT="wtb-e2e",
        OPENAI_API_KEY=FAKE_OPENAI_KEY,
        HOME=str(tmp_path),  # no LangSmith CLI profile from the real home
    )
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture()
def two_sessions(reference_dir: Path, tmp_path: Path) -> Path:
    path = tmp_path / "two_sessions.jsonl"
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_wtb_eval_traces_one_root_per_session(reference_dir, two_sessions, tmp_path):
    sessions = {s["id"]: s for s in _jsonl(two_sessions)}
    model = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    out = tmp_path / "run"
    with LangSmithStub(lifetime=240) as stub:
        proc = _run_cli(
            [
                "eval",
                "--dataset",
                str(two_sessions),
                "--model",
                model,
                "--out",
                str(out),
                "--no-progress",
                "--base-url",
                f"http://alice:{BASE_URL_PASSWORD}@127.0.0.1:9/v1",
            ],
            stub.url,
            tmp_path,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        records = {r["id"]: r for r in _jsonl(out / "result.jsonl")}
        assert set(records) == set(sessions)

        roots = stub.roots()
        assert sorted(r["name"] for r in roots) == [f"wtb eval {sid}" for sid in sorted(sessions)]
        for root in roots:
            meta = root["extra"]["metadata"]
            session_id = meta["session_id"]
            session, record = sessions[session_id], records[session_id]
            assert root["name"] == f"wtb eval {session_id}"
            assert meta["dataset"] == str(two_sessions)
            assert meta["model"] == model
            assert meta["language"] == "en"
            assert meta["project_version"]
            assert root["outputs"]["record"]["id"] == session_id

            below = stub.descendants(root["id"])
            nodes = [r for r in below if r["name"] in EVAL_NODES]
            assert {r["name"] for r in nodes} == EVAL_NODES
            for run in nodes:
                assert str(run["parent_run_id"]) == str(root["id"]), run["name"]  # nodes sit right under the session
            steps_in_record = {
                (t, int(key.split("_")[1]))
                for t, task in enumerate(record["result"])
                for key in task["inference_log"]
                if key.startswith("step_")
            }
            # one candidate node run (and one model run) per model request, with task and step metadata
            calls = [r for r in nodes if r["name"] == "call_candidate"]
            seen_steps = {(r["extra"]["metadata"]["task_idx"], r["extra"]["metadata"]["step_idx"]) for r in calls}
            assert seen_steps == steps_in_record and len(calls) == len(steps_in_record)
            for run in calls:
                m = run["extra"]["metadata"]
                assert m["task_type"] == session["english_task_types"][m["task_idx"]]
                expected_subtype = (
                    "First Turn" if m["task_idx"] == 0 else session["english_turn_subtypes"][m["task_idx"] - 1]
                )
                assert m["turn_subtype"] == expected_subtype
            # the matcher's run carries the step label the record holds, and at a task's last step the task label
            last_steps = {(t, max(s for (u, s) in steps_in_record if u == t)) for (t, _) in steps_in_record}
            for run in (r for r in nodes if r["name"] == "match_response"):
                m = run["extra"]["metadata"]
                step = record["result"][m["task_idx"]]["inference_log"][f"step_{m['step_idx']}"]
                assert m["step_label"] == step["inference_output"]["current_action_name_label"]
                if (m["task_idx"], m["step_idx"]) in last_steps:
                    assert m["task_label"] == record["result"][m["task_idx"]]["action_name_label"]
                else:
                    assert "task_label" not in m

            # the candidate's model runs hold the request messages and the tool calls it returned
            llm_runs = [r for r in below if r.get("run_type") == "llm"]
            assert len(llm_runs) == len(steps_in_record)
            for run in llm_runs:
                assert run["name"] == "candidate"
                m = run["extra"]["metadata"]
                assert str(run["parent_run_id"]) in {str(c["id"]) for c in calls}
                step = record["result"][m["task_idx"]]["inference_log"][f"step_{m['step_idx']}"]
                inputs = json.dumps(run["inputs"], ensure_ascii=False)
                assert json.dumps(session["english_tasks"][m["task_idx"]], ensure_ascii=False)[1:-1] in inputs
                outputs = json.dumps(run["outputs"], ensure_ascii=False)
                for call in step["inference_output"]["tool_calls"] or []:
                    assert call["function"]["name"] in outputs and call["id"] in outputs

        # secrets: not in any upload, not in the result files
        payloads = stub.all_payload_text()
        headers = stub.all_header_text(exclude=("x-api-key",))
        for secret in (FAKE_LANGSMITH_KEY, FAKE_OPENAI_KEY, BASE_URL_PASSWORD):
            assert secret not in payloads, secret
            assert secret not in headers, secret
            for name in ("result.jsonl", "score.jsonl", "metric.json"):
                if (out / name).exists():
                    assert secret not in (out / name).read_text(encoding="utf-8"), (name, secret)
        assert "[REDACTED]@127.0.0.1:9/v1" in payloads  # the base URL was traced, without its password


def test_wtb_eval_no_trace_sends_nothing(reference_dir, two_sessions, tmp_path):
    model = f"replay:{reference_dir / 'candidates.jsonl'}#oracle"
    with LangSmithStub(lifetime=240) as stub:
        proc = _run_cli(
            [
                "eval",
                "--dataset",
                str(two_sessions),
                "--model",
                model,
                "--out",
                str(tmp_path / "quiet"),
                "--no-progress",
                "--no-trace",
            ],
            stub.url,
            tmp_path,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert len(_jsonl(tmp_path / "quiet" / "result.jsonl")) == 2
        assert stub.requests == []


# --------------------------------------------------------------------------- `wtb generate`

GEN_ROLE_NODES = {"user", "planner", "checker", "tool", "tool_checker", "agent"}


def test_wtb_generate_traces_role_nodes(reference_dir, tmp_path):
    from tests.support.gen_scripts import session_script
    from wildtoolbench.bench.generation import load_tool_lists, plan_sessions

    tools = tmp_path / "tools.jsonl"
    first_session = json.loads((reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    tools.write_text(json.dumps(first_session["english_tools"]) + "\n", encoding="utf-8")
    path = ("ST", "MT", "CQ", "CC")
    (plan,) = plan_sessions(load_tool_lists(tools), [path], seed=5, language="en")
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {plan.key: session_script(plan.as_state())}}), encoding="utf-8")
    spec = f"scripted:{script}"
    out = tmp_path / "gen"
    args = [
        "generate",
        "--tools",
        str(tools),
        "--layers",
        "4",
        "--paths",
        ",".join(path),
        "--seed",
        "5",
        "--out",
        str(out),
        "--vague-rate",
        "0",
        "--user-model",
        spec,
        "--planner-model",
        spec,
        "--tool-model",
        spec,
        "--agent-model",
        spec,
        "--checker-model",
        spec,
        "--base-url",
        f"http://alice:{BASE_URL_PASSWORD}@127.0.0.1:9/v1",
    ]
    with LangSmithStub(lifetime=240) as stub:
        proc = _run_cli(args, stub.url, tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-1000:]
        (session,) = _jsonl(out / "sessions.jsonl")

        (root,) = stub.roots()
        assert root["name"] == f"wtb generate {plan.key}"
        meta = root["extra"]["metadata"]
        assert meta["session_id"] == plan.key and meta["language"] == "en" and meta["project_version"]
        assert meta["model"] == {role: spec for role in ("user", "planner", "checker", "tool", "agent")}
        assert meta["settings"]["type_path"] == list(path)

        nodes = stub.children(root["id"])
        assert {r["name"] for r in nodes} == GEN_ROLE_NODES
        model_runs = [r for r in stub.descendants(root["id"]) if r.get("run_type") == "llm"]
        assert model_runs, "no role model call was traced"
        node_ids = {str(r["id"]): r for r in nodes}
        for run in model_runs:
            role = run["extra"]["metadata"]["wtb_role"]
            assert run["name"] == f"{role} model"
            parent = node_ids[str(run["parent_run_id"])]
            assert parent["name"] in ({role, "tool_checker"} if role == "checker" else {role})
            m = run["extra"]["metadata"]
            assert m["step_label"] == role
            assert m["task_type"] == path[m["task_idx"]]
            assert parent["extra"]["metadata"]["step_label"] == role  # the node run carries it too
        # each of the four tasks shows up in the planner's traced calls
        assert {
            r["extra"]["metadata"]["task_idx"] for r in model_runs if r["extra"]["metadata"]["wtb_role"] == "planner"
        } == {0, 1, 2, 3}
        assert session["english_task_types"][0] == "Single-Tool"

        payloads = stub.all_payload_text()
        for secret in (FAKE_LANGSMITH_KEY, FAKE_OPENAI_KEY, BASE_URL_PASSWORD):
            assert secret not in payloads, secret
            for file in out.rglob("*.json*"):
                assert secret not in file.read_text(encoding="utf-8"), (file, secret)


def test_stub_merges_a_patch_that_arrives_before_its_post():
    """The SDK sends batches from several threads, so the stub must not depend on arrival order."""
    stub = LangSmithStub()
    post = {"id": "r1", "name": "wtb eval s1", "inputs": {"a": 1}, "outputs": {}, "extra": {"metadata": {"x": 1}}}
    patch = {
        "id": "r1",
        "outputs": {"record": {"id": "s1"}},
        "end_time": "t",
        "error": None,
        "extra": {"metadata": {"y": 2}},
    }
    stub._merge_run("patch", patch)
    stub._merge_run("post", post)
    late = stub.runs["r1"]
    stub2 = LangSmithStub()
    stub2._merge_run("post", post)
    stub2._merge_run("patch", patch)
    in_order = stub2.runs["r1"]
    assert late["outputs"] == {"record": {"id": "s1"}}
    assert late["extra"]["metadata"] == {"x": 1, "y": 2}
    assert {k: v for k, v in late.items() if k != "_ops"} == {k: v for k, v in in_order.items() if k != "_ops"}
