"""Faithful records for every candidate that wraps a LangChain chat model (issue 23 item 5, docs/evaluation.md §8.5).

The loopback server sends, for one session, a reply whose first call has malformed arguments before
two valid ones, with ``content: null``, and an empty reply (``content: null``, no calls). The
``openai:`` candidate records them as sent; ``langchain:openai:``, a one-request ``graph:`` candidate
and an agent factory around a ``ChatOpenAI`` must record the same: calls in the order the model
emitted them (not valid-first), ``content`` ``null``. A graph that consults a planner model first
records the model whose reply was scored, with every model it called beside it.
"""

from __future__ import annotations

import pytest

from tests.support.agent_runs import AGENTS, comparable, run_over_server, script

MODEL = "faithful-model"
SESSION = "wild_tool_bench_0"

SPECS = [
    f"langchain:openai:{MODEL}",
    f"graph:{AGENTS}:one_request_graph",
    f"graph:{AGENTS}:planner_graph",
    f"graph:{AGENTS}:langchain_agent",
]


def _call(call_id: str, city_arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "getRealtimeCity", "arguments": city_arguments}}


def _replies(reference_dir) -> dict[str, list[dict]]:
    """The oracle's first task, then the odd replies; the session's later requests get plain text."""
    oracle = script(reference_dir, "oracle")[SESSION]
    odd = [
        {
            "content": None,
            "tool_calls": [
                _call("call_p", '{"city": "Portland"'),  # malformed: cut off
                _call("call_v", '{"city": "Vancouver"}'),
                _call("call_s", '{"city": "San Francisco"}'),
            ],
            "reasoning_content": None,
        },
        {"content": None, "tool_calls": None, "reasoning_content": None},
    ]
    text = [{"content": f"Answer {n}.", "tool_calls": None, "reasoning_content": None} for n in range(6)]
    return {SESSION: [*oracle[:2], *odd, *text]}


def _outputs(record: dict) -> list[dict]:
    """Every step's ``inference_output`` of a record, in order."""
    found = []
    for task in record["result"]:
        log = task["inference_log"]
        steps = sorted((k for k in log if k.startswith("step_")), key=lambda k: int(k.split("_")[1]))
        found.extend(log[k]["inference_output"] for k in steps)
    return found


@pytest.fixture(scope="module")
def openai_record(reference_dir, tmp_path_factory):
    sessions = [s for s in _sessions(reference_dir) if s["id"] == SESSION]
    records, _, _ = run_over_server(
        reference_dir,
        MODEL,
        f"openai:{MODEL}",
        tmp_path_factory.mktemp("openai"),
        sessions=sessions,
        replies=_replies(reference_dir),
    )
    return records[SESSION]


def _sessions(reference_dir):
    from wildtoolbench.runner import load_dataset

    return load_dataset(reference_dir / "sessions.jsonl")


def test_the_openai_record_keeps_the_order_and_the_null_content(openai_record):
    outputs = _outputs(openai_record)
    (parallel,) = [o for o in outputs if o["tool_calls"] and len(o["tool_calls"]) == 3]
    assert [c["id"] for c in parallel["tool_calls"]] == ["call_p", "call_v", "call_s"]
    assert parallel["tool_calls"][0]["function"]["arguments"] == '{"city": "Portland"'
    assert parallel["content"] is None
    empty = [o for o in outputs if not o["tool_calls"] and o["content"] is None]
    assert len(empty) == 1


@pytest.mark.parametrize("spec", SPECS)
def test_call_order_and_null_content_are_recorded_as_sent(reference_dir, tmp_path, openai_record, spec):
    sessions = [s for s in _sessions(reference_dir) if s["id"] == SESSION]
    records, _, server = run_over_server(
        reference_dir, MODEL, spec, tmp_path, sessions=sessions, replies=_replies(reference_dir)
    )
    record = records[SESSION]
    assert comparable(record) == comparable(openai_record)
    outputs = _outputs(record)
    (parallel,) = [o for o in outputs if o["tool_calls"] and len(o["tool_calls"]) == 3]
    assert [c["id"] for c in parallel["tool_calls"]] == ["call_p", "call_v", "call_s"]  # not valid-first
    assert parallel["tool_calls"][0]["function"]["arguments"] == '{"city": "Portland"'  # the raw text
    assert parallel["content"] is None
    empty = [o for o in outputs if not o["tool_calls"] and not o["content"]]
    assert len(empty) == 1 and empty[0]["content"] is None  # the empty reply, not ""
    assert record["candidate"]["model"] == MODEL


def test_a_graph_with_a_planner_records_the_model_that_answered(reference_dir, tmp_path):
    sessions = [s for s in _sessions(reference_dir) if s["id"] == SESSION]
    records, _, _ = run_over_server(
        reference_dir,
        MODEL,
        f"graph:{AGENTS}:planner_graph",
        tmp_path,
        sessions=sessions,
        replies=_replies(reference_dir),
    )
    candidate = records[SESSION]["candidate"]
    assert candidate["kind"] == "graph"
    assert candidate["model"] == MODEL  # the planner was called first, but its reply was not scored
    assert candidate["models"] == ["planner", MODEL]


def test_a_call_of_the_agents_own_tool_is_internal_work_or_under_strict_a_wrong_call(reference_dir, tmp_path):
    """The agent's own tool is bound beside the benchmark's. Under the strict reading the model calling it ends the
    task as a wrong call, as it would for an ``openai:`` candidate sent the same reply, and the agent's tool never
    runs; by default the call is the agent's internal work: its tool runs and the next reply is the step
    (docs/evaluation.md §8.3, §8.9)."""
    sessions = [s for s in _sessions(reference_dir) if s["id"] == SESSION]
    own = {
        "content": None,
        "tool_calls": [
            {"id": "call_own", "type": "function", "function": {"name": "lookup_notes", "arguments": '{"topic": "x"}'}}
        ],
        "reasoning_content": None,
    }
    text = [{"content": f"Answer {n}.", "tool_calls": None, "reasoning_content": None} for n in range(6)]
    replies = {SESSION: [own, *text]}
    runs = {}
    for spec in (f"openai:{MODEL}", f"graph:{AGENTS}:agent_with_own_tool"):
        records, _, server = run_over_server(
            reference_dir,
            MODEL,
            spec,
            tmp_path / spec.split(":")[0],
            sessions=sessions,
            replies=replies,
            agent_steps="strict",
        )
        runs[spec] = (records[SESSION], server)
    (openai_record, openai_server), (agent_record, agent_server) = runs.values()
    assert comparable(agent_record) == comparable(openai_record)
    assert agent_record["result"][0]["action_name_label"] == "error"
    first = agent_server.requests[SESSION][0]
    assert [t["function"]["name"] for t in first["tools"]][-1] == "lookup_notes"  # bound beside the task's
    # the task ended at the call: as many requests as openai:'s, none carrying what the agent's tool returns
    assert len(agent_server.requests[SESSION]) == len(openai_server.requests[SESSION])
    sent = [m for request in agent_server.requests[SESSION] for m in request["messages"]]
    assert not any("no notes on" in str(m.get("content")) for m in sent)
    assert not any(m.get("tool_call_id") == "call_own" for m in sent)

    records, _, server = run_over_server(
        reference_dir,
        MODEL,
        f"graph:{AGENTS}:agent_with_own_tool",
        tmp_path / "answers",
        sessions=sessions,
        replies=replies,
    )
    record = records[SESSION]
    assert record["usage"]["agent_internal"]["requests"] == 1  # the own tool's call
    second = server.requests[SESSION][1]["messages"]
    assert any(m.get("tool_call_id") == "call_own" and m.get("content") == "no notes on x" for m in second)
    first_step = record["result"][0]["inference_log"]["step_0"]["inference_output"]
    assert first_step["content"] == "Answer 0." and first_step["tool_calls"] is None
