"""``--server`` without a server: the client-side checks, the API key, the accounting of a server record, and how
each kind of server reply becomes a record or an infrastructure error (issue 16). The runs against a real
``langgraph dev`` are in tests/integration/test_server_eval.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wildtoolbench.models import ConfigurationError
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.remote import api_key_from_env, check_specs_for_server, display_url, record_usage, spec_file
from wildtoolbench.remote import evaluation as remote_evaluation
from wildtoolbench.remote import invoker as remote_invoker
from wildtoolbench.remote.client import RunReply, ServerFailure, check_url
from wildtoolbench.runner import ERRORS_FILE, RESULT_FILE, RUN_FILE, SUMMARY_FILE

DEMO = Path(__file__).resolve().parents[2] / "bench" / "data"


def test_spec_files_must_be_absolute_and_locally_valid(tmp_path):
    candidates = str(DEMO / "demo_candidates.jsonl")
    assert spec_file(f"replay:{candidates}#oracle") == candidates
    assert spec_file("scripted:/srv/roles.json#planner") == "/srv/roles.json"
    assert spec_file("scripted:/srv/roles.json") == "/srv/roles.json"
    assert spec_file("openai:gpt-4o-mini") is None and spec_file("local") is None
    assert spec_file("graph:/srv/agents/tool_agent.py:graph") == "/srv/agents/tool_agent.py"
    assert spec_file("graph:examples/tool_agent.py:graph") == "examples/tool_agent.py"
    assert spec_file("graph:my_package.agent:graph") is None  # imported from the server's packages

    for relative in ("replay:bench/data/demo_candidates.jsonl#oracle", "graph:examples/tool_agent.py:graph"):
        with pytest.raises(ConfigurationError, match="must be an absolute path"):
            check_specs_for_server([relative])
    with pytest.raises(ConfigurationError, match="no candidate 'nosuch'"):  # the local copy is checked as locally
        check_specs_for_server([f"replay:{candidates}#nosuch"])
    with pytest.raises(ConfigurationError, match="unknown model provider"):
        check_specs_for_server(["nosuchprovider:x"])
    # a file only the server has is left to the server's probe; duplicates are probed once
    only_on_server = "/nonexistent/wtb/candidates.jsonl"
    files = check_specs_for_server(
        [
            f"replay:{only_on_server}#oracle",
            "openai:gpt-4o-mini",
            "",
            f"scripted:{only_on_server}",
            f"replay:{candidates}#oracle",
        ]
    )
    assert files == [only_on_server, candidates]


def test_api_key_url_checks_and_redaction():
    assert api_key_from_env({"LANGSMITH_API_KEY": "lsv2_pt_second", "LANGGRAPH_API_KEY": " 'first' "}) == "first"
    assert api_key_from_env({"LANGSMITH_API_KEY": "lsv2_pt_second"}) == "lsv2_pt_second"
    assert api_key_from_env({"LANGCHAIN_API_KEY": "old"}) == "old"
    assert api_key_from_env({"LANGGRAPH_API_KEY": "  "}) is None
    assert display_url("https://user:secret@deploy.example.com/") == "https://[REDACTED]@deploy.example.com"
    assert (
        display_url("https://deploy.example.com/?api_key=abcdef123") == "https://deploy.example.com/?api_key=[REDACTED]"
    )
    assert check_url(" http://127.0.0.1:2024/ ") == "http://127.0.0.1:2024"
    for bad in ("ftp://host", "127.0.0.1:2024", "http://"):
        with pytest.raises(ConfigurationError, match="must be an http:// or https:// URL"):
            check_url(bad)


def test_record_usage_counts_the_replies_and_tokens_of_the_record():
    record = {
        "id": "wild_tool_bench_0",
        "result": [
            {"latency": [0.1, 0.2], "input_token_count": [100, 120], "output_token_count": [7, 9]},
            {"latency": [0.3], "input_token_count": [50], "output_token_count": [None]},
        ],
    }
    assert record_usage(record) == {
        "requests": 3,
        "attempts": 3,
        "failed_requests": 0,
        "input_tokens": 270,
        "output_tokens": 16,
        "retried_requests": [],
    }
    assert record_usage({"id": "x", "result": "Error during inference: boom"})["requests"] == 0


def _sessions(n):
    return [json.loads(line) for line in (DEMO / "demo_sessions.jsonl").read_text(encoding="utf-8").splitlines()[:n]]


REPLIES = {
    # session index -> what the fake server says
    1: RunReply(
        None,
        {
            "error": "ModelRequestError",
            "message": "model request failed (not retried): http 400: BadRequestError: context too long",
        },
        "t1",
        "r1",
    ),
    2: RunReply(
        None,
        {
            "error": "ModelRequestError",
            "message": "model request failed after 5 attempts: http 503: InternalServerError: busy",
        },
        "t2",
        "r2",
    ),
    3: RunReply(None, {"error": "FileNotFoundError", "message": "An internal error occurred"}, "t3", "r3"),
    4: ServerFailure("cannot connect to the server (All connection attempts failed)", "t4", None),
    5: RunReply({"unexpected": 1}, None, "t5", "r5"),
}


async def test_server_replies_become_records_or_infrastructure_errors(tmp_path, monkeypatch):
    sessions = _sessions(6)
    replies = dict(REPLIES)
    calls = []

    async def fake_wait_for_run(client, graph_id, **kwargs):
        calls.append({"graph_id": graph_id, **kwargs})
        index = next(i for i, s in enumerate(sessions) if s["id"] == kwargs["input"]["session"]["id"])
        reply = replies.get(index)
        if isinstance(reply, ServerFailure):
            raise reply
        if reply is not None:
            return reply
        record = {
            "id": sessions[index]["id"],
            "model_name": "oracle",
            "result": [
                {"latency": [0.5], "input_token_count": [11], "output_token_count": [3], "note": "sk-abcdefghijkl0123"}
            ],
        }
        return RunReply({"record": record}, None, kwargs["thread_id"], "r0")

    monkeypatch.setattr(remote_invoker, "wait_for_run", fake_wait_for_run)  # the one run-and-wait of both graphs
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abcdefghijkl0123")
    context = EvaluationContext(
        model=f"replay:{DEMO / 'demo_candidates.jsonl'}#oracle", dataset=str(DEMO / "demo_sessions.jsonl")
    )
    out = tmp_path / "run"
    summary = await remote_evaluation.arun_eval_remote(
        sessions,
        context,
        out,
        server="http://user:pw@127.0.0.1:9",
        concurrency=3,
        progress=False,
        settings={"tasks": 4},
    )

    records = {json.loads(line)["id"]: json.loads(line) for line in (out / RESULT_FILE).read_text().splitlines()}
    ids = [s["id"] for s in sessions]
    assert sorted(records) == sorted([ids[0], ids[1]])
    assert records[ids[0]]["result"][0]["note"] == "[REDACTED]"  # the client's secrets never reach the outputs
    assert {k: v for k, v in records[ids[0]]["usage"].items() if k != "wall_time"} == {
        "requests": 1,
        "attempts": 1,
        "failed_requests": 0,
        "input_tokens": 11,
        "output_tokens": 3,
        "retried_requests": [],
    }
    rejected = records[ids[1]]
    assert (
        rejected["result"]
        == "Error during inference: model request failed (not retried): http 400: BadRequestError: context too long"
    )
    assert rejected["error_detail"].startswith("ModelRequestError: model request failed (not retried): http 400")

    errors = {json.loads(line)["id"]: json.loads(line) for line in (out / ERRORS_FILE).read_text().splitlines()}
    assert sorted(errors) == sorted(ids[2:6])
    assert errors[ids[2]]["error"] == "model request failed after 5 attempts: http 503: InternalServerError: busy"
    assert errors[ids[2]]["attempts"] == 5
    assert errors[ids[2]]["where"] == {"server": "http://[REDACTED]@127.0.0.1:9", "thread_id": "t2", "run_id": "r2"}
    assert (
        errors[ids[3]]["error"] == "LangGraph server: the run failed with FileNotFoundError: An internal error occurred"
    )
    assert errors[ids[4]]["error"] == "LangGraph server: cannot connect to the server (All connection attempts failed)"
    assert errors[ids[4]]["where"]["thread_id"] == "t4"
    assert errors[ids[5]]["error"].startswith(f"LangGraph server: the run's output has no record of {ids[5]}")
    assert summary.evaluated == 2 and len(summary.infrastructure_errors) == 4

    run = json.loads((out / RUN_FILE).read_text())
    assert run["settings"]["server"] == "http://[REDACTED]@127.0.0.1:9" and run["settings"]["concurrency"] == 3
    assert "pw" not in (out / SUMMARY_FILE).read_text() and "pw" not in (out / ERRORS_FILE).read_text()

    # what each run asked the server for
    first = next(c for c in calls if c["input"]["session"]["id"] == ids[0])
    assert first["graph_id"] == "evaluation"
    assert first["config"] == {"run_name": f"wtb eval {ids[0]}", "tags": ["wildtoolbench", "wtb-eval"]}
    meta = first["metadata"]
    assert meta["session_id"] == ids[0] and meta["dataset"] == str(DEMO / "demo_sessions.jsonl")
    assert meta["model"] == context.model and meta["language"] == "en" and meta["project_version"]
    assert meta["settings"]["max_steps"] == 32 and "model" not in meta["settings"]
    assert len({c["metadata"]["wtb_batch_id"] for c in calls}) == 1
    assert len({c["thread_id"] for c in calls}) == 6
    assert first["context"] == {
        "model": context.model,
        "model_name": "",
        "base_url": "",
        "temperature": 0.0,
        "timeout": 120.0,
        "max_retries": 0,
        "max_attempts": 5,
        "backoff": 1.0,
        "max_retry_wait": 60.0,
        "rps": 0.0,
        "max_steps": 32,
        "scoring": "reference",
        "language": "en",
        "agent_steps": "answers",
    }  # no dataset: the run carries its session, the server opens no file (docs/settings.md §8)

    # resume: only the infrastructure errors run again; the scored records are kept
    calls.clear()
    replies.clear()
    again = await remote_evaluation.arun_eval_remote(
        sessions, context, out, server="http://127.0.0.1:9", concurrency=2, progress=False
    )
    assert sorted(c["input"]["session"]["id"] for c in calls) == sorted(ids[2:6])
    assert again.skipped == 2 and again.evaluated == 4 and not again.infrastructure_errors
    assert (out / ERRORS_FILE).read_text() == ""
    assert len((out / RESULT_FILE).read_text().splitlines()) == 6


async def test_generation_replies_become_outcomes(monkeypatch):
    from wildtoolbench.bench.generation import plan_sessions, select_type_paths
    from wildtoolbench.nodes.generation.context import Context
    from wildtoolbench.remote import generation as remote_generation

    tools = [json.loads(line)["english_tools"] for line in (DEMO / "demo_sessions.jsonl").read_text().splitlines()[:1]]
    (plan,) = plan_sessions(tools, select_type_paths(2, ["ST,CC"]), seed=0)
    replies = [
        RunReply(
            {
                **plan.as_state(),
                "status": "failed",
                "failure_reason": "checker rejected 3 times",
                "calls": [{}, {}, {}],
            },
            None,
            "t1",
            "r1",
        ),
        RunReply({}, None, "t2", "r2"),
        RunReply(
            None,
            {
                "error": "ModelRequestError",
                "message": "model request failed (not retried): http 413: APIStatusError: too large",
            },
            "t3",
            "r3",
        ),
        RunReply(None, {"error": "GraphRecursionError", "message": "Recursion limit of 1000 reached"}, "t4", "r4"),
        ServerFailure("HTTP 503 from the server: busy", "t5", None),
    ]
    seen = []

    async def fake_wait_for_run(client, graph_id, **kwargs):
        seen.append({"graph_id": graph_id, **kwargs})
        reply = replies[len(seen) - 1]
        if isinstance(reply, ServerFailure):
            raise reply
        return reply

    monkeypatch.setattr(remote_invoker, "wait_for_run", fake_wait_for_run)
    for role in ("USER", "AGENT"):
        monkeypatch.delenv(f"WTB_{role}_MODEL", raising=False)
    monkeypatch.setenv("WTB_TOOL_MODEL", "openai:from-env")
    context = Context(models={"planner": "openai:gpt-4o", "checker": "none"}, base_url="http://127.0.0.1:8000/v1")
    invoke = remote_generation.RemoteGeneration(None, "http://127.0.0.1:2024")
    outcomes = [await invoke(plan, context) for _ in replies]

    assert [(o.status, o.infrastructure) for o in outcomes] == [
        ("failed", False),
        ("failed", True),
        ("failed", False),
        ("failed", True),
        ("failed", True),
    ]
    assert outcomes[0].reason == "checker rejected 3 times" and outcomes[0].usage["requests"] == 3
    assert outcomes[1].reason.startswith(
        "LangGraph server: the run ended without a final state (status None; thread t2)"
    )
    assert outcomes[2].reason == "model request failed (not retried): http 413: APIStatusError: too large"
    assert (
        outcomes[3].reason
        == "LangGraph server: the run failed with GraphRecursionError: Recursion limit of 1000 reached (thread t4)"
    )
    assert outcomes[4].reason == "LangGraph server http://127.0.0.1:2024: HTTP 503 from the server: busy (thread t5)"
    first = seen[0]
    assert first["graph_id"] == "generation" and first["input"] == plan.as_state()
    # every role's model and base URL resolved on the client: the server's WTB_* variables change nothing
    assert first["context"]["models"] == {
        "user": "local",
        "planner": "openai:gpt-4o",
        "checker": "none",
        "tool": "openai:from-env",
        "agent": "local",
    }
    assert first["context"]["base_urls"] == dict.fromkeys(
        ("user", "planner", "checker", "tool", "agent"), "http://127.0.0.1:8000/v1"
    )
    assert first["config"]["run_name"] == f"wtb generate {plan.key}" and first["metadata"]["session_id"] == plan.key
    assert first["metadata"]["model"]["planner"] == "openai:gpt-4o"


@pytest.mark.parametrize("kind", ["http 400", "invalid output"])
async def test_a_refused_request_gives_the_record_a_local_run_gives(kind):
    """The scored record built from a server's error equals the one run_session builds from the exception itself."""
    from wildtoolbench.models.graph_contract import CandidateOutputError
    from wildtoolbench.models.transport import ModelRequestError
    from wildtoolbench.runner import run_session

    if kind == "http 400":
        exc = ModelRequestError(
            1, ["http 400: BadRequestError: maximum context length exceeded"], False, {"task": 0, "step": 0}, 400
        )
    else:
        exc = CandidateOutputError("the last message is a ToolMessage, not an AIMessage", {"task": 0, "step": 0})
    assert exc.rejected

    class Failing:
        async def ainvoke(self, *args, **kwargs):
            raise exc

    session = _sessions(1)[0]
    for scoring in ("reference", "fixed"):
        context = EvaluationContext(model=f"replay:{DEMO / 'demo_candidates.jsonl'}#oracle", scoring=scoring)
        local = (await run_session(Failing(), session, context)).record
        local.pop("usage")
        name = type(exc).__name__
        assert remote_evaluation.is_refused(name, str(exc))
        assert remote_evaluation.refused_record(session["id"], context, name, str(exc)) == local
    assert not remote_evaluation.is_refused(
        "ModelRequestError", "model request failed after 5 attempts: http 503: busy"
    )
    assert not remote_evaluation.is_refused("ValueError", "model request failed (not retried): http 400: x")
