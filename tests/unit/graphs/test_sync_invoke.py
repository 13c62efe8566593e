"""The compiled graphs answer ``invoke`` and ``stream`` as they answer ``ainvoke`` and ``astream`` (issue 36,
graphs/sync_nodes.py): the same record for every fixture session, from a script and from inside a running
event loop (a notebook cell), and the same generated session."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.agent_runs import jsonl
from tests.support.gen_scripts import session_script
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions
from wildtoolbench.graphs.evaluation import graph
from wildtoolbench.graphs.generation import graph as generation_graph
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.generation.context import Context


def _record(output):
    record = dict(output["record"])
    record["result"] = normalise(record["result"])
    return record


@pytest.mark.parametrize("candidate", ["oracle", "noisy"])
def test_invoke_equals_ainvoke_on_every_fixture_session(reference_dir, candidate):
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}"
    expected = {
        row["session_id"]: row for row in jsonl(reference_dir / "expected_results.jsonl") if row["candidate"] == candidate
    }
    assert expected  # the published results of this candidate
    for session in jsonl(reference_dir / "sessions.jsonl"):
        synchronous = graph.invoke({"session": session}, context=EvaluationContext(model=spec))
        asynchronous = asyncio.run(graph.ainvoke({"session": session}, context=EvaluationContext(model=spec)))
        assert _record(synchronous) == _record(asynchronous), session["id"]
        if session["id"] in expected:
            assert normalise(synchronous["record"]["result"]) == normalise(expected[session["id"]]["result"])


def test_stream_and_session_id_input(reference_dir):
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    dataset = str(reference_dir / "sessions.jsonl")
    session = jsonl(reference_dir / "sessions.jsonl")[3]
    context = EvaluationContext(model=spec, dataset=dataset)
    by_id = graph.invoke({"session_id": session["id"]}, context=context)
    chunks = list(graph.stream({"session": session}, context=EvaluationContext(model=spec), stream_mode="updates"))
    assert [next(iter(c)) for c in chunks][:3] == ["load_session", "build_prompt", "call_candidate"]
    assert next(iter(chunks[-1])) == "finish_session"

    async def astream():
        return [
            c
            async for c in graph.astream(
                {"session": session}, context=EvaluationContext(model=spec), stream_mode="updates"
            )
        ]

    assert [next(iter(c)) for c in chunks] == [next(iter(c)) for c in asyncio.run(astream())]
    streamed = chunks[-1]["finish_session"]["record"]
    assert _record({"record": streamed}) == _record(by_id)


def test_invoke_inside_a_running_loop(reference_dir):
    """A notebook cell calls ``invoke`` while its event loop runs: the nodes run on a helper thread."""
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#wrong_name"
    session = jsonl(reference_dir / "sessions.jsonl")[0]

    async def cell():
        return graph.invoke({"session": session}, context=EvaluationContext(model=spec))

    in_loop = asyncio.run(cell())
    assert _record(in_loop) == _record(
        asyncio.run(graph.ainvoke({"session": session}, context=EvaluationContext(model=spec)))
    )


def test_generation_graph_invoke_equals_ainvoke(shared_dir, tmp_path):
    plan = plan_sessions(load_tool_lists(shared_dir / "data" / "tools_en.jsonl"), [("ST",)], seed=21)[0]
    file = tmp_path / "script.json"
    file.write_text(json.dumps(session_script(plan.as_state()), ensure_ascii=False), encoding="utf-8")
    context = Context(
        models=dict.fromkeys(("user", "planner", "tool", "agent", "checker"), f"scripted:{file}"), vague_answer_rate=0.0
    )
    scripted.reset()
    asynchronous = asyncio.run(generation_graph.ainvoke(plan.as_state(), context=context))
    scripted.reset()
    synchronous = generation_graph.invoke(plan.as_state(), context=context)
    scripted.reset()
    assert synchronous["status"] == asynchronous["status"] == "done"
    assert synchronous["transcript"] == asynchronous["transcript"]
