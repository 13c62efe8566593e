"""The real HTTP path: ``wtb eval --model openai:...`` against a local OpenAI-compatible server.

The server (tests/support/openai_stub.py) serves the fixture candidates' scripted
responses on 127.0.0.1; it recognises a session by its system + first user
message. The run must give the same records as ``replay:`` (apart from
latency, history ids and token counts, which here come from the server's
usage), the server must have received exactly the recorded requests, and the
metrics must be those of replay and of expected_metrics.jsonl.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_stub import ScriptedServer
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset, run_eval
from wildtoolbench.scoring.run import score_run

REPO = Path(__file__).resolve().parents[2]


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _steps(task):
    return [task["inference_log"][k] for k in task["inference_log"] if k.startswith("step_")]


def _without_tokens(result):
    if isinstance(result, list):
        result = [dict(task, input_token_count=None, output_token_count=None) for task in result]
    return normalise(result)


def _script(reference_dir, candidate):
    return {
        r["session_id"]: r["responses"]
        for r in _jsonl(reference_dir / "candidates.jsonl")
        if r["candidate"] == candidate
    }


def _env():
    env = dict(os.environ, OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.pop("OPENAI_BASE_URL", None)
    return env


@pytest.mark.parametrize("candidate", ["oracle", "noisy"])
def test_openai_over_http_matches_replay(reference_dir, tmp_path, candidate):
    dataset = reference_dir / "sessions.jsonl"
    sessions = load_dataset(dataset)
    script = _script(reference_dir, candidate)
    replay_dir, http_dir = tmp_path / "replay", tmp_path / "http"
    run_eval(
        sessions,
        EvaluationContext(model=f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}"),
        replay_dir,
        progress=False,
    )

    with ScriptedServer(sessions, script) as server:
        command = [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "eval",
            "--dataset",
            str(dataset),
            "--model",
            f"openai:{candidate}",
            "--out",
            str(http_dir),
            "--base-url",
            server.base_url,
            "--concurrency",
            "4",
            "--no-progress",
        ]
        done = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    replayed = {r["id"]: r for r in _jsonl(replay_dir / "result.jsonl")}
    served = {r["id"]: r for r in _jsonl(http_dir / "result.jsonl")}
    assert list(served) == [s["id"] for s in sessions]
    for session_id, record in served.items():
        assert record["model_name"] == candidate
        assert _without_tokens(record["result"]) == _without_tokens(replayed[session_id]["result"]), session_id
        # every response but the spare was requested, and the requests are exactly the recorded inputs
        assert server.served[session_id] == len(script[session_id]) - 1
        steps = [(task, step) for task in record["result"] for step in _steps(task)]
        assert len(steps) == len(server.requests[session_id])
        for _index, ((_task, step), body) in enumerate(zip(steps, server.requests[session_id])):
            assert body["messages"] == step["inference_input"]["messages"]
            assert body["tools"] == step["inference_input"]["tools"]
            assert (body["model"], body["temperature"]) == (candidate, 0.0)
        counts = [
            (i, o) for task in record["result"] for i, o in zip(task["input_token_count"], task["output_token_count"])
        ]
        assert counts == [(100 + i, 10 + i) for i in range(len(steps))]

    with open(http_dir / "metric.json", encoding="utf-8") as handle:
        http_metric = json.load(handle)
    expected = next(m for m in _jsonl(reference_dir / "expected_metrics.jsonl") if m["candidate"] == candidate)
    assert http_metric == expected["metric"]
    assert http_metric == score_run(
        reference_dir / "sessions.jsonl", replay_dir / "result.jsonl", tmp_path / "replay-score"
    )


def test_reasoning_content_is_recorded_and_sent_back(reference_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a loopback server needs no key
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    sessions = [s for s in load_dataset(reference_dir / "sessions.jsonl") if s["id"] == "wild_tool_bench_0"]
    responses = [
        dict(r, reasoning_content=f"thinking {i}")
        for i, r in enumerate(_script(reference_dir, "oracle")["wild_tool_bench_0"])
    ]
    with ScriptedServer(sessions, {"wild_tool_bench_0": responses}) as server:
        context = EvaluationContext(model="openai:thinker", base_url=server.base_url)
        asyncio.run(arun_eval(sessions, context, tmp_path, progress=False))
    (record,) = _jsonl(tmp_path / "result.jsonl")
    steps = [step for task in record["result"] for step in _steps(task)]
    assert [s["inference_output"]["reasoning_content"] for s in steps] == [f"thinking {i}" for i in range(len(steps))]
    # task 0: a call step then the answer; the second request carries the first reply with its reasoning
    first_reply = steps[1]["inference_input"]["messages"][-2]
    assert first_reply == {
        "role": "assistant",
        "reasoning_content": "thinking 0",
        "content": None,
        "tool_calls": responses[0]["tool_calls"],
    }
    assert server.requests["wild_tool_bench_0"][1]["messages"][-2] == first_reply
    assert all(task["action_name_label"] == "correct" for task in record["result"])
