"""Transport faults (issue 6): retries, backoff, Retry-After, timeouts, dropped connections, rate limit.

The end-to-end tests run `wtb eval` as a subprocess against the loopback stub
(``tests/support/openai_stub.py``) with injected faults; backoffs are a few
milliseconds; the request timeout is 3 s (wide enough for a loaded machine, short beside the 30 s hang).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest

from tests.support.openai_stub import ScriptedServer
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.models.transport import (
    ModelRequestError,
    RetryPolicy,
    rate_limiter,
    request_with_retries,
    retry_after,
    transient_kind,
    usage_scope,
    wait_seconds,
)
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import load_dataset, run_eval
from wildtoolbench.scoring.run import score_run

REPO = Path(__file__).resolve().parents[2]
CANDIDATE = "demo-model"


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _env():
    env = dict(os.environ, OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.pop("OPENAI_BASE_URL", None)
    return env


def _status_error(status, headers=None):
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, request=request, json={"error": {"message": "x"}})
    classes = {429: openai.RateLimitError, 500: openai.InternalServerError, 400: openai.BadRequestError}
    return classes.get(status, openai.APIStatusError)(f"HTTP {status}", response=response, body=None)


# --------------------------------------------------------------------------- unit


def test_which_failures_are_retried():
    request = httpx.Request("POST", "http://127.0.0.1/v1")
    assert transient_kind(_status_error(429)) == "http 429"
    assert transient_kind(_status_error(500)) == "http 500"
    assert transient_kind(_status_error(503)) == "http 503"
    assert transient_kind(_status_error(408)) == "http 408"
    assert transient_kind(openai.APITimeoutError(request=request)) == "timeout"
    assert transient_kind(openai.APIConnectionError(request=request)) == "connection"
    assert transient_kind(httpx.RemoteProtocolError("Server disconnected", request=request)) == "connection"
    assert transient_kind(ConnectionResetError()) == "connection"
    assert transient_kind(_status_error(400)) is None
    assert transient_kind(_status_error(401)) is None
    assert transient_kind(ValueError("bad script")) is None


def test_retry_after_is_honoured_and_capped():
    policy = RetryPolicy(backoff=0.01, max_wait=30.0)
    assert retry_after(_status_error(429, {"Retry-After": "7"})) == 7.0
    assert retry_after(_status_error(429, {"retry-after-ms": "250", "Retry-After": "7"})) == 0.25
    assert 59 <= retry_after(_status_error(429, {"Retry-After": _http_date(60)})) <= 61
    assert retry_after(_status_error(500)) is None
    # the wait is the longer of the backoff and Retry-After, never more than max_wait
    assert wait_seconds(policy, 1, _status_error(429, {"Retry-After": "7"}), jitter=0.0) == 7.0
    assert wait_seconds(policy, 1, _status_error(429, {"Retry-After": "120"}), jitter=0.0) == 30.0
    assert wait_seconds(policy, 1, _status_error(500), jitter=0.005) == pytest.approx(0.015)
    assert wait_seconds(policy, 4, _status_error(500), jitter=0.0) == pytest.approx(0.08)  # doubles per try
    assert wait_seconds(RetryPolicy(backoff=10, max_wait=30), 5, None, jitter=0.0) == 30.0
    for _ in range(20):  # random jitter stays in [0, backoff]
        assert 0.04 <= wait_seconds(policy, 3, None) <= 0.05


def _http_date(seconds_from_now):
    import email.utils
    import time

    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


def test_request_with_retries_records_tries_and_gives_up():
    waits: list[float] = []

    async def fake_sleep(seconds):
        waits.append(seconds)

    async def scenario():
        outcomes = [_status_error(429, {"retry-after-ms": "300"}), _status_error(500), "reply"]

        async def flaky():
            outcome = outcomes.pop(0)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        policy = RetryPolicy(max_attempts=3, backoff=0.01)
        with usage_scope() as usage:
            assert await request_with_retries(flaky, policy, where={"task": 1, "step": 2}, sleep=fake_sleep) == "reply"

            async def always_down():
                raise openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1/v1"))

            with pytest.raises(ModelRequestError) as failed:
                await request_with_retries(always_down, policy, where={"task": 0, "step": 0}, sleep=fake_sleep)

            async def bad_request():
                raise _status_error(400)

            with pytest.raises(ModelRequestError) as rejected:
                await request_with_retries(bad_request, policy, where={"task": 3, "step": 0}, sleep=fake_sleep)
        return usage, failed.value, rejected.value

    usage, failed, rejected = asyncio.run(scenario())
    assert waits[0] == pytest.approx(0.3)  # retry-after-ms beats the 0.01 s backoff
    assert 0.02 <= waits[1] <= 0.03
    assert (usage.requests, usage.attempts, usage.failed) == (1, 7, 2)
    first, second, third = usage.retried
    assert (first["task"], first["step"], first["attempts"], first["ok"]) == (1, 2, 3, True)
    assert [e.split(":")[0] for e in first["errors"]] == ["http 429", "http 500"]
    assert first["waited"] == pytest.approx(sum(waits[:2]), abs=1e-3)
    assert (second["attempts"], second["ok"], failed.attempts, failed.transient) == (3, False, 3, True)
    assert str(failed) == "model request failed after 3 attempts: connection: APIConnectionError: Connection error."
    assert (third["attempts"], rejected.attempts, rejected.transient) == (1, 1, False)
    assert str(rejected).startswith("model request failed (not retried): http 400: BadRequestError")
    assert (rejected.status, rejected.rejected) == (400, True)
    assert (failed.status, failed.rejected) == (None, False)
    assert not ModelRequestError(1, ["http 401: AuthenticationError"], False, {}, 401).rejected
    assert not ModelRequestError(3, ["http 500: InternalServerError"], True, {}, 500).rejected


def test_rate_limit_is_shared_and_spaces_requests():
    async def scenario():
        loop = asyncio.get_running_loop()
        assert rate_limiter("http://a/v1", 50) is rate_limiter("http://a/v1", 50)
        assert rate_limiter("http://a/v1", 50) is not rate_limiter("http://b/v1", 50)
        assert rate_limiter("http://a/v1", 0) is None
        starts: list[float] = []

        async def send():
            starts.append(loop.time())
            return None

        policy = RetryPolicy(rps=50)

        async def session():
            for _ in range(3):
                await request_with_retries(send, policy, endpoint="http://shared/v1")

        await asyncio.gather(*(session() for _ in range(3)))  # 9 requests from 3 sessions share one limit
        return sorted(starts)

    starts = asyncio.run(scenario())
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(starts) == 9
    assert min(gaps) >= 0.02 * 0.9  # one request per 1/50 s (timer resolution tolerance)


# --------------------------------------------------------------------------- end to end


def _demo_script():
    return {r["session_id"]: r["responses"] for r in _jsonl(CANDIDATES_PATH) if r["candidate"] == CANDIDATE}


def _request_steps(record):
    """(task, step) of each model request of a record, in request order."""
    return [
        (t, int(key.split("_")[1]))
        for t, task in enumerate(record["result"])
        for key in task["inference_log"]
        if key.startswith("step_")
    ]


def _comparable(record):
    return normalise(record["result"]), record["usage"]["requests"], record["usage"]["input_tokens"]


@pytest.fixture(scope="module")
def fault_free(tmp_path_factory):
    """The demo candidate over HTTP without faults: records and metrics to compare with."""
    out = tmp_path_factory.mktemp("fault-free")
    sessions = load_dataset(SESSIONS_PATH)
    with ScriptedServer(sessions, _demo_script()) as server:
        context = EvaluationContext(model=f"openai:{CANDIDATE}", base_url=server.base_url)
        run_eval(sessions, context, out, progress=False)
    metric = score_run(SESSIONS_PATH, out / "result.jsonl", out)
    return {r["id"]: r for r in _jsonl(out / "result.jsonl")}, metric


def _eval_command(out, base_url, *extra):
    return [
        sys.executable,
        "-m",
        "wildtoolbench.cli",
        "eval",
        "--dataset",
        str(SESSIONS_PATH),
        "--model",
        f"openai:{CANDIDATE}",
        "--out",
        str(out),
        "--base-url",
        base_url,
        "--concurrency",
        "3",
        "--no-progress",
        "--backoff",
        "0.01",
        "--timeout",
        "3",
        *extra,
    ]


FAULTS = {
    ("wild_tool_bench_0", 0): [
        {"status": 429, "headers": {"retry-after-ms": "150"}},
        {"status": 429, "headers": {"Retry-After": "0"}},
    ],
    ("wild_tool_bench_1", 2): [{"status": 500}],
    ("wild_tool_bench_2", 1): [{"hang": 30}],
    ("wild_tool_bench_3", 3): [{"drop": True}],
    ("wild_tool_bench_4", 0): [{"drop": True}, {"status": 503}],
}


def test_faults_are_retried_and_the_run_equals_a_fault_free_one(fault_free, tmp_path):
    expected_records, expected_metric = fault_free
    sessions = load_dataset(SESSIONS_PATH)
    with ScriptedServer(sessions, _demo_script(), faults=FAULTS) as server:
        done = subprocess.run(
            _eval_command(
                tmp_path, server.base_url, "--max-attempts", "4", "--price-input", "2.5", "--price-output", "10"
            ),
            cwd=REPO,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        injected = [a for a in server.outcomes() if a[2] != "ok"]
    assert done.returncode == 0, done.stderr
    assert sorted(injected) == sorted(
        [("wild_tool_bench_0", 0, "status 429")] * 2
        + [
            ("wild_tool_bench_1", 2, "status 500"),
            ("wild_tool_bench_2", 1, "hang"),
            ("wild_tool_bench_3", 3, "drop"),
            ("wild_tool_bench_4", 0, "drop"),
            ("wild_tool_bench_4", 0, "status 503"),
        ]
    )

    # same records (modulo latency and accounting), same metrics
    records = {r["id"]: r for r in _jsonl(tmp_path / "result.jsonl")}
    assert list(records) == list(expected_records)
    for session_id, record in records.items():
        assert _comparable(record) == _comparable(expected_records[session_id]), session_id
    assert json.loads((tmp_path / "metric.json").read_text()) == expected_metric
    assert not (tmp_path / "errors.jsonl").exists() or _jsonl(tmp_path / "errors.jsonl") == []

    # the summary lists every retried request with its tries and errors
    summary = json.loads((tmp_path / "summary.json").read_text())
    steps = {sid: _request_steps(r) for sid, r in expected_records.items()}
    listed = {(e["id"], e["task"], e["step"]): e for e in summary["retried_requests"]}
    expected_kinds = {
        "wild_tool_bench_0": (0, ["http 429", "http 429"]),
        "wild_tool_bench_1": (2, ["http 500"]),
        "wild_tool_bench_2": (1, ["timeout"]),
        "wild_tool_bench_3": (3, ["connection"]),
        "wild_tool_bench_4": (0, ["connection", "http 503"]),
    }
    assert sorted(listed) == sorted((sid, *steps[sid][index]) for sid, (index, _) in expected_kinds.items())
    for sid, (index, kinds) in expected_kinds.items():
        entry = listed[(sid, *steps[sid][index])]
        assert [e.split(":")[0] for e in entry["errors"]] == kinds and entry["ok"] is True
        assert entry["attempts"] == len(kinds) + 1
    assert listed[("wild_tool_bench_0", *steps["wild_tool_bench_0"][0])]["waited"] >= 0.15  # Retry-After honoured
    requests = sum(len(s) for s in steps.values())
    assert summary["this_run"]["requests"] == requests and summary["this_run"]["attempts"] == requests + 7
    assert summary["infrastructure_errors"] == [] and summary["evaluated"] == len(sessions)
    tokens_in = sum(r["usage"]["input_tokens"] for r in records.values())
    tokens_out = sum(r["usage"]["output_tokens"] for r in records.values())
    assert (summary["this_run"]["input_tokens"], summary["this_run"]["output_tokens"]) == (tokens_in, tokens_out)
    assert summary["this_run"]["cost_usd"] == pytest.approx((tokens_in * 2.5 + tokens_out * 10) / 1e6)
    assert "retried requests: 5" in done.stderr
    assert f"model requests {requests} ({requests + 7} tries)" in done.stderr


def test_retries_exhausted_is_an_infrastructure_error_then_resume_completes(fault_free, tmp_path):
    expected_records, expected_metric = fault_free
    sessions = load_dataset(SESSIONS_PATH)
    faults = {("wild_tool_bench_3", 2): [{"status": 500}, {"status": 502}]}
    with ScriptedServer(sessions, _demo_script(), faults=faults) as server:
        command = _eval_command(tmp_path, server.base_url, "--max-attempts", "2")
        first = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)
        assert first.returncode == 3, first.stderr
        assert "infrastructure errors in 1 sessions" in first.stderr and "wild_tool_bench_3" in first.stderr
        records = _jsonl(tmp_path / "result.jsonl")
        assert [r["id"] for r in records] == [s["id"] for s in sessions if s["id"] != "wild_tool_bench_3"]
        (error,) = _jsonl(tmp_path / "errors.jsonl")
        assert error["id"] == "wild_tool_bench_3" and error["attempts"] == 2
        assert [e.split(":")[0] for e in error["errors"]] == ["http 500", "http 502"]
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert [e["id"] for e in summary["infrastructure_errors"]] == ["wild_tool_bench_3"]
        # scored without it: it is not counted as a wrong answer
        partial = json.loads((tmp_path / "metric.json").read_text())
        assert partial != expected_metric  # scored over the five sessions with a record

    # the endpoint recovered (a fresh server: the stub's reply queues restart): the same command finishes the run
    with ScriptedServer(sessions, _demo_script()) as server:
        command = _eval_command(tmp_path, server.base_url, "--max-attempts", "2")
        second = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)
        assert list(server.served.values()).count(0) == 5  # only the missing session ran again
    assert second.returncode == 0, second.stderr
    assert "5 already done" in second.stderr
    records = {r["id"]: r for r in _jsonl(tmp_path / "result.jsonl")}
    assert list(records) == list(expected_records)
    assert _comparable(records["wild_tool_bench_3"]) == _comparable(expected_records["wild_tool_bench_3"])
    assert _jsonl(tmp_path / "errors.jsonl") == []
    assert json.loads((tmp_path / "metric.json").read_text()) == expected_metric


def test_a_request_the_provider_refuses_is_scored_and_a_wrong_key_is_infrastructure(fault_free, tmp_path):
    """HTTP 400 (e.g. context length exceeded) is the model's limit: an "Error during inference" record,
    scored as wrong tasks, as the reference does (docs/evaluation.md §5). HTTP 401 is a set-up problem: errors.jsonl, exit 3."""
    expected_records, _ = fault_free
    sessions = load_dataset(SESSIONS_PATH)
    faults = {("wild_tool_bench_3", 2): [{"status": 400}], ("wild_tool_bench_1", 0): [{"status": 401}]}
    with ScriptedServer(sessions, _demo_script(), faults=faults) as server:
        done = subprocess.run(
            _eval_command(tmp_path, server.base_url), cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120
        )
        injected = sorted(a for a in server.outcomes() if a[2] != "ok")
    assert injected == [
        ("wild_tool_bench_1", 0, "status 401"),
        ("wild_tool_bench_3", 2, "status 400"),
    ]  # neither retried
    assert done.returncode == 3, done.stderr
    records = {r["id"]: r for r in _jsonl(tmp_path / "result.jsonl")}
    assert sorted(records) == sorted(s["id"] for s in sessions if s["id"] != "wild_tool_bench_1")
    refused = records["wild_tool_bench_3"]
    assert refused["result"].startswith(
        "Error during inference: model request failed (not retried): http 400: BadRequestError"
    )
    assert refused["error_detail"].startswith("ModelRequestError: model request failed (not retried): http 400")
    assert refused["usage"]["failed_requests"] == 1
    (error,) = _jsonl(tmp_path / "errors.jsonl")
    assert error["id"] == "wild_tool_bench_1" and error["errors"][0].startswith("http 401")
    scores = {line["id"]: line for line in _jsonl(tmp_path / "score.jsonl")}
    assert [task["action_name_label"] for task in scores["wild_tool_bench_3"]["results"]] == ["error"] * 4
    metric = json.loads((tmp_path / "metric.json").read_text())
    assert metric["total_info"]["session"]["total_count"] == len(sessions) - 1
    assert "inference errors in 1 sessions: wild_tool_bench_3" in done.stderr


# --------------------------------------------------------------------------- wtb generate: the same treatment


class _FlakyRoles:
    """A provider wrapping ``scripted:``: the first ``failures[role]`` requests of a role fail with ``error``."""

    def __init__(self, failures, error):
        self.failures, self.error = dict(failures), error

    def __call__(self, name, settings):
        from langchain_core.language_models import BaseChatModel

        from wildtoolbench.models import resolve_model

        inner = resolve_model(f"scripted:{name}", settings)
        wrapper = self

        class Flaky(BaseChatModel):
            @property
            def _llm_type(self) -> str:
                return "flaky-roles"

            def _generate(self, messages, stop=None, run_manager=None, **kwargs):
                role = run_manager.metadata.get("wtb_role")
                if wrapper.failures.get(role, 0) > 0:
                    wrapper.failures[role] -= 1
                    raise wrapper.error()
                return inner._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

        return Flaky()


def _generation_run(shared_dir, tmp_path, failures, error, **context):
    from tests.support.gen_scripts import session_script
    from wildtoolbench.bench.generation import load_tool_lists, plan_sessions
    from wildtoolbench.models import register_provider
    from wildtoolbench.models.providers import scripted
    from wildtoolbench.nodes.generation.context import Context
    from wildtoolbench.runner.generation import run_batch

    scripted.reset()
    plan = plan_sessions(load_tool_lists(shared_dir / "data" / "tools_en.jsonl"), [("ST",)], seed=21)[0]
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {plan.key: session_script(plan.as_state())}}), encoding="utf-8")
    register_provider("flaky-roles", _FlakyRoles(failures, error))
    spec = f"flaky-roles:{script}"
    ctx = Context(
        models=dict.fromkeys(("user", "planner", "tool", "agent", "checker"), spec),
        vague_answer_rate=0.0,
        backoff=0.001,
        **context,
    )
    try:
        return asyncio.run(run_batch([plan], ctx, tmp_path / "out")), tmp_path / "out"
    finally:
        scripted.reset()


def test_generate_retries_role_requests(shared_dir, tmp_path):
    summary, out = _generation_run(
        shared_dir, tmp_path, {"planner": 2, "tool": 1}, lambda: _status_error(429), max_attempts=3
    )
    assert (summary.succeeded, summary.failed) == (1, 0)
    manifest = json.loads((out / "manifest.json").read_text())
    retried = sorted((r["role"], r["attempts"], r["ok"]) for r in manifest["retried_requests"])
    assert retried == [("planner", 3, True), ("tool", 2, True)]
    assert manifest["usage"]["attempts"] == manifest["usage"]["requests"] + 3
    assert summary.retried_requests == manifest["retried_requests"]


def test_generate_request_failing_for_good_fails_the_session_as_infrastructure(shared_dir, tmp_path):
    summary, out = _generation_run(shared_dir, tmp_path, {"user": 5}, lambda: _status_error(503), max_attempts=2)
    assert (summary.succeeded, summary.failed) == (0, 1)
    (failure,) = _jsonl(out / "failures.jsonl")
    assert failure["infrastructure"] is True
    assert failure["reason"].startswith("model request failed after 2 attempts: http 503: APIStatusError")


def test_generate_refused_request_is_a_kept_failure_and_a_wrong_key_is_infrastructure(shared_dir, tmp_path):
    (tmp_path / "refused").mkdir()
    (tmp_path / "key").mkdir()
    summary, out = _generation_run(shared_dir, tmp_path / "refused", {"planner": 1}, lambda: _status_error(400))
    (failure,) = _jsonl(out / "failures.jsonl")
    assert failure["infrastructure"] is False  # kept on resume: the same request would be refused again
    assert failure["reason"].startswith("BadRequestError")
    summary, out = _generation_run(shared_dir, tmp_path / "key", {"user": 1}, lambda: _status_error(401))
    (failure,) = _jsonl(out / "failures.jsonl")
    assert failure["infrastructure"] is True  # generated again once the key is fixed
