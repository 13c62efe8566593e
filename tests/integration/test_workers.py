"""``wtb eval --workers N`` (docs/settings.md §2.1): sessions run in worker processes, the outputs
are those of a one-process run, a dying worker costs only its sessions in flight."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import open_dataset, run_eval
from wildtoolbench.tracing import tracing_scope

REPO = Path(__file__).resolve().parents[2]
ORACLE = f"replay:{CANDIDATES_PATH}#oracle"


def _records(path: Path) -> list[dict]:
    """The result lines without what depends on timing (latencies, wall time)."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["usage"].pop("wall_time")
        for task in record["result"] if isinstance(record["result"], list) else []:
            task.pop("latency")
    return records


def test_two_workers_write_what_one_process_writes(tmp_path):
    context = EvaluationContext(model=ORACLE)
    with tracing_scope(no_trace=True):
        one = run_eval(open_dataset(SESSIONS_PATH), context, tmp_path / "one", concurrency=3, progress=False)
        two = run_eval(open_dataset(SESSIONS_PATH), context, tmp_path / "two", concurrency=3, progress=False, workers=2)
    assert (two.evaluated, two.tasks, two.tasks_right_tool_names, two.requests) == (
        one.evaluated,
        one.tasks,
        one.tasks_right_tool_names,
        one.requests,
    )
    assert one.evaluated == 6 and one.tasks_right_tool_names == one.tasks  # the oracle answers every task of the demo
    assert _records(tmp_path / "two" / "result.jsonl") == _records(tmp_path / "one" / "result.jsonl")


DYING_GRAPH = """
import os
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def answer(state):
    if "Lisbon" in str(state["messages"][1].content):  # the first demo session: the worker process dies
        os._exit(7)
    return {"messages": [AIMessage("I cannot help with that.")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile()
"""


def test_a_dying_worker_costs_only_its_sessions(tmp_path):
    candidate = tmp_path / "dying.py"
    candidate.write_text(DYING_GRAPH, encoding="utf-8")
    first_id = json.loads(SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[0])["id"]
    context = EvaluationContext(model=f"graph:{candidate}:graph")
    with tracing_scope(no_trace=True):
        summary = run_eval(
            open_dataset(SESSIONS_PATH), context, tmp_path / "out", concurrency=1, progress=False, workers=2
        )
    # one worker died on the first session; the other ran the five others
    assert [e["id"] for e in summary.infrastructure_errors] == [first_id]
    assert summary.infrastructure_errors[0]["error"] == "the worker process exited (status 7)"
    assert summary.evaluated == 5
    written = [json.loads(line)["id"] for line in (tmp_path / "out" / "result.jsonl").read_text().splitlines()]
    assert first_id not in written and len(written) == 5
    errors = [json.loads(line) for line in (tmp_path / "out" / "errors.jsonl").read_text().splitlines()]
    assert [e["id"] for e in errors] == [first_id]


def _wtb(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_"))}
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "local"], "every worker process would start its own copy"),
        (["--model", ORACLE, "--server", "http://127.0.0.1:9"], "--server runs it on the server"),
    ],
)
def test_workers_with_what_cannot_share_them_is_a_configuration_error(tmp_path, extra, message):
    done = _wtb("eval", "--workers", "2", "--out", str(tmp_path / "out"), "--no-progress", *extra)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not (tmp_path / "out").exists()


def test_cli_runs_with_workers(tmp_path):
    done = _wtb(
        "eval",
        "--model",
        ORACLE,
        "--workers",
        "2",
        "--concurrency",
        "4",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
        "--no-trace",
    )
    assert done.returncode == 0, done.stderr
    metric = json.loads((tmp_path / "out" / "metric.json").read_text())
    assert len((tmp_path / "out" / "result.jsonl").read_text().splitlines()) == 6
    # scored after the run, as with one process: the oracle gets every task and session
    assert metric["total_info"]["task"] == {"accuracy": 1.0, "correct_count": 24, "total_count": 24}
    assert metric["total_info"]["session"] == {"accuracy": 1.0, "correct_count": 6, "total_count": 6}
