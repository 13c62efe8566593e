"""The evaluation graph against every scripted candidate of the reference fixtures (docs/evaluation.md, quirks 1-11).

For each of the 240 rows of candidates.jsonl the graph runs the session with
``replay:candidates.jsonl#<candidate>``; the record must equal the row of
expected_results.jsonl after the normalisation the fixtures README prescribes:
``inference_input.tools`` removed (checked separately against english_tools
with float -> number), latency values set aside (lengths compared), and the
random history ids ``toolu_bdrk_<24 alphanumerics>`` compared by pattern (their
pairing with tool messages is checked separately). All sessions run
concurrently in one event loop.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re

import pytest

from wildtoolbench.bench.harness import float_to_number
from wildtoolbench.graphs.evaluation import graph
from wildtoolbench.nodes.evaluation.candidate import candidate_model
from wildtoolbench.nodes.evaluation.context import EvaluationContext

HISTORY_ID = re.compile(r"toolu_bdrk_[A-Za-z0-9]{24}")


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _steps(task_result):
    log = task_result["inference_log"]
    return [log[key] for key in log if key.startswith("step_")]


def normalise(result):
    """The fixtures' comparison form of a session result (see module doc)."""
    result = copy.deepcopy(result)
    if isinstance(result, list):
        for task in result:
            task["latency"] = len(task["latency"])
            for step in _steps(task):
                step["inference_input"].pop("tools", None)
    return json.loads(HISTORY_ID.sub("toolu_bdrk_<id>", json.dumps(result, ensure_ascii=False)))


def check_tool_message_ids(messages):
    """Every tool message carries the id of the call at its position in the preceding assistant message."""
    position, calls = 0, []
    for message in messages:
        if message["role"] == "assistant":
            calls, position = [c["id"] for c in (message.get("tool_calls") or [])], 0
        elif message["role"] == "tool":
            assert position < len(calls), messages
            assert message["tool_call_id"] == calls[position]
            position += 1
        else:
            calls, position = [], 0


@pytest.fixture(scope="module")
def replayed(reference_dir):
    """``[(candidate row, record, replay model)]`` for all 240 rows, run concurrently."""
    sessions = {s["id"]: s for s in _jsonl(reference_dir / "sessions.jsonl")}
    rows = _jsonl(reference_dir / "candidates.jsonl")
    script = reference_dir / "candidates.jsonl"

    async def run_all():
        async def one(row):
            context = EvaluationContext(model=f"replay:{script}#{row['candidate']}")
            output = await graph.ainvoke({"session": sessions[row["session_id"]]}, context=context)
            return row, output["record"], candidate_model(context)

        return await asyncio.gather(*(one(row) for row in rows))

    return asyncio.run(run_all())


def test_all_240_rows_match_expected_results(replayed, reference_dir):
    expected = {(r["session_id"], r["candidate"]): r for r in _jsonl(reference_dir / "expected_results.jsonl")}
    assert len(replayed) == len(expected) == 240
    mismatches = []
    for row, record, _ in replayed:
        want = expected[(row["session_id"], row["candidate"])]
        assert record["id"] == row["session_id"]
        assert record["model_name"] == row["candidate"]
        if normalise(record["result"]) != normalise(want["result"]):
            mismatches.append((row["session_id"], row["candidate"]))
    assert mismatches == []


def test_responses_consumed_and_spare_never_used(replayed, reference_dir):
    expected = {
        (r["session_id"], r["candidate"]): r["responses_consumed"]
        for r in _jsonl(reference_dir / "expected_results.jsonl")
    }
    for row, record, model in replayed:
        consumed = model.consumed(row["session_id"])
        assert consumed == expected[(row["session_id"], row["candidate"])] == len(row["responses"]) - 1
        assert model.served_indices(row["session_id"]) == set(range(consumed))
        requests = sum(len(task["latency"]) for task in record["result"])
        assert requests == consumed


def test_tools_latency_tokens_and_ids_at_every_step(replayed, reference_dir):
    sessions = {s["id"]: s for s in _jsonl(reference_dir / "sessions.jsonl")}
    for row, record, _ in replayed:
        tools = float_to_number(sessions[row["session_id"]]["english_tools"])
        for task in record["result"]:
            steps = _steps(task)
            assert (
                len(task["latency"]) == len(task["input_token_count"]) == len(task["output_token_count"]) == len(steps)
            )
            assert all(isinstance(x, float) and x >= 0 for x in task["latency"])
            assert task["input_token_count"] == task["output_token_count"] == [0] * len(steps)
            for step in steps:
                assert step["inference_input"]["tools"] == tools
                assert '"type": "float"' not in json.dumps(step["inference_input"]["tools"])
                check_tool_message_ids(step["inference_input"]["messages"])
