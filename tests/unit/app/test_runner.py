"""Batch runner: result file, resume, errors, concurrency, lock (wildtoolbench.runner)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any, ClassVar

import pytest
from filelock import FileLock
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.bench.demo_data import SESSIONS_PATH
from wildtoolbench.bench.schema import DatasetError, load_sessions
from wildtoolbench.models import register_provider
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import (
    LOCK_FILE,
    DatasetSessions,
    ResultFile,
    SessionOutcome,
    arun_eval,
    load_dataset,
    open_dataset,
    run_eval,
    select_sessions,
    session_ids,
    session_sort_key,
)


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture()
def oracle(reference_dir):
    sessions = load_dataset(reference_dir / "sessions.jsonl")
    return sessions, EvaluationContext(model=f"replay:{reference_dir / 'candidates.jsonl'}#oracle")


def test_select_sessions(oracle):
    sessions, _ = oracle
    chosen = select_sessions(sessions, ["3", "wild_tool_bench_1", "3"], None)
    assert [s["id"] for s in chosen] == ["wild_tool_bench_3", "wild_tool_bench_1"]
    assert [s["id"] for s in select_sessions(sessions, None, 2)] == ["wild_tool_bench_0", "wild_tool_bench_1"]
    with pytest.raises(ValueError, match="wild_tool_bench_99"):
        select_sessions(sessions, ["99"], None)
    assert sorted(["wild_tool_bench_10", "wild_tool_bench_9", "x"], key=session_sort_key) == [
        "wild_tool_bench_9",
        "wild_tool_bench_10",
        "x",
    ]


def test_resume_skips_done_sessions_and_drops_a_torn_line(oracle, tmp_path):
    sessions, context = oracle
    first = run_eval(sessions[:3], context, tmp_path, concurrency=2, progress=False)
    assert (first.evaluated, first.skipped, first.tasks, first.tasks_right_tool_names) == (3, 0, 12, 12)
    path = tmp_path / "result.jsonl"
    done = path.read_text(encoding="utf-8")
    # a crash in the middle of an append leaves a line without its newline
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"id": "wild_tool_bench_3", "model_name": "oracle", "res')
    second = run_eval(sessions[:5], context, tmp_path, concurrency=2, progress=False)
    assert (second.evaluated, second.skipped) == (2, 3)
    records = _jsonl(path)
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(5)]
    assert path.read_text(encoding="utf-8").startswith(done)
    # nothing left to do: nothing is run or duplicated
    third = run_eval(sessions[:5], context, tmp_path, progress=False)
    assert (third.evaluated, third.skipped, third.tasks_right_tool_names) == (0, 5, 20)
    assert len(_jsonl(path)) == 5
    # --overwrite starts again
    fourth = run_eval(sessions[:1], context, tmp_path, overwrite=True, progress=False)
    assert fourth.evaluated == 1 and [r["id"] for r in _jsonl(path)] == ["wild_tool_bench_0"]


def test_refuses_results_of_another_model_and_bad_lines(oracle, reference_dir, tmp_path):
    sessions, context = oracle
    run_eval(sessions[:1], context, tmp_path, progress=False)
    other = EvaluationContext(model=f"replay:{reference_dir / 'candidates.jsonl'}#noisy")
    with pytest.raises(ValueError, match="holds results of model oracle"):
        run_eval(sessions[:2], other, tmp_path, progress=False)
    path = tmp_path / "result.jsonl"
    path.write_text('{"id": "wild_tool_bench_0"}\nnot json\n{"id": "wild_tool_bench_1"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"result.jsonl, line 2: not valid JSON"):
        ResultFile(path).load()


def test_lock_refuses_a_second_run(oracle, tmp_path):
    sessions, context = oracle
    with FileLock(str(tmp_path / LOCK_FILE)):
        with pytest.raises(RuntimeError, match="another `wtb eval`"):
            run_eval(sessions[:1], context, tmp_path, progress=False)


class _FlakyModel(BaseChatModel):
    """Answers in plain text; raises for one session; tracks requests in flight."""

    fail_session: str = ""
    active: int = 0
    peak: int = 0

    @property
    def _llm_type(self) -> str:
        return "flaky"

    def bind_tools(self, tools, **kwargs: Any):
        return self

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:  # pragma: no cover - async only
        raise NotImplementedError

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        if run_manager.metadata["wtb_session_id"] == self.fail_session:
            raise ConnectionError("server went away")
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.005)
        self.active -= 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="A plain answer."))])


def test_failing_endpoint_is_an_infrastructure_error_and_resume_reruns_it(oracle, tmp_path):
    sessions, _ = oracle
    model = _FlakyModel(fail_session="wild_tool_bench_2")
    register_provider("flaky-test", lambda name, settings: model)
    context = EvaluationContext(model="flaky-test:m", max_attempts=3, backoff=0.001)
    summary = asyncio.run(arun_eval(sessions[:8], context, tmp_path, concurrency=3, progress=False))
    records = {r["id"]: r for r in _jsonl(tmp_path / "result.jsonl")}
    # the failing session is not scored: no record, an errors.jsonl entry, listed in the summary
    assert sorted(records) == [f"wild_tool_bench_{i}" for i in range(8) if i != 2] and summary.evaluated == 7
    assert summary.inference_errors == []
    (error,) = _jsonl(tmp_path / "errors.jsonl")
    assert (error["id"], error["model_name"], error["attempts"]) == ("wild_tool_bench_2", "m", 3)
    assert error["where"] == {"task": 0, "step": 0}
    assert error["errors"] == ["connection: ConnectionError: server went away"] * 3
    assert error["error"] == "model request failed after 3 attempts: connection: ConnectionError: server went away"
    assert [e["id"] for e in summary.infrastructure_errors] == ["wild_tool_bench_2"]
    assert summary.retried_requests == [
        {
            "id": "wild_tool_bench_2",
            "task": 0,
            "step": 0,
            "attempts": 3,
            "errors": error["errors"],
            "waited": summary.retried_requests[0]["waited"],
            "ok": False,
        }
    ]
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert [e["id"] for e in saved["infrastructure_errors"]] == ["wild_tool_bench_2"]
    assert saved["this_run"]["sessions"] == 8 and saved["this_run"]["attempts"] == saved["this_run"]["requests"] + 3
    assert all(isinstance(r["result"], list) and len(r["result"]) == 4 for r in records.values())
    assert 1 <= model.peak <= 3

    # the endpoint recovers: the resume runs only the missing session, and errors.jsonl empties
    model.fail_session = ""
    again = asyncio.run(arun_eval(sessions[:8], context, tmp_path, concurrency=3, progress=False))
    assert (again.evaluated, again.skipped, again.infrastructure_errors) == (1, 7, [])
    assert [r["id"] for r in _jsonl(tmp_path / "result.jsonl")] == [f"wild_tool_bench_{i}" for i in range(8)]
    assert _jsonl(tmp_path / "errors.jsonl") == []


def test_result_file_index_sorts_by_copying_lines_and_cuts_a_torn_tail(tmp_path):
    path = tmp_path / "result.jsonl"
    lines = [
        '{"id": "wild_tool_bench_10", "model_name": "m", "result": []}\n',
        '{"id": "wild_tool_bench_2", "model_name": "m", "result": "Error during inference: x"}\n',
        '{"id": "wild_tool_bench_10", "model_name": "m", "result": "second copy"}\n',
        '{"id": "wild_tool_bench_9",  "model_name": "m", "result": [], "usage": {"requests": 3}}\n',
    ]
    path.write_text("".join(lines) + '{"id": "wild_tool_bench_1", "mo', encoding="utf-8")
    results = ResultFile(path)
    infos = results.scan()
    assert sorted(infos) == ["wild_tool_bench_10", "wild_tool_bench_2", "wild_tool_bench_9"]
    assert path.read_text(encoding="utf-8") == "".join(lines)  # the torn tail is cut
    assert infos["wild_tool_bench_2"].inference_error and infos["wild_tool_bench_9"].usage == {"requests": 3}
    results.append({"id": "wild_tool_bench_0", "model_name": "m", "result": []})
    ordered = results.finalize()
    assert [i.id for i in ordered] == [
        "wild_tool_bench_0",
        "wild_tool_bench_2",
        "wild_tool_bench_9",
        "wild_tool_bench_10",
    ]
    # lines are copied byte for byte (the odd spacing survives), the first copy of a duplicate wins
    assert path.read_text(encoding="utf-8") == (
        '{"id": "wild_tool_bench_0", "model_name": "m", "result": []}\n' + lines[1] + lines[3] + lines[0]
    )
    assert ResultFile(path).finalize() == ordered  # already sorted: nothing to do


def _outcome(session_id: str, *, error: bool = False) -> SessionOutcome:
    usage = {"requests": 1, "attempts": 1, "input_tokens": 3, "output_tokens": 2}
    if error:
        entry = {"id": session_id, "model_name": "oracle", "error": "model request failed", "attempts": 1}
        return SessionOutcome(session_id, None, entry, usage)
    record = {"id": session_id, "model_name": "oracle", "result": [{"action_name_label": "correct"}], "usage": usage}
    return SessionOutcome(session_id, record, None, usage)


def _fsyncs_of(monkeypatch, path, on_fsync=None) -> list[int]:
    """Patch os.fsync; returns the list of sizes ``path`` had at each of its fsyncs (filled as they happen)."""
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        if path.exists() and os.path.samestat(os.fstat(fd), os.stat(path)):
            if on_fsync is not None:
                on_fsync()
            real(fd)
            synced.append(os.fstat(fd).st_size)
            return
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_sessions_finishing_together_share_one_fsync_and_count_only_after_it(oracle, tmp_path, monkeypatch):
    """The single writer appends every record handed over meanwhile with ONE fsync, and a record is
    reported (summary, on_record) only once the fsync that covers its line has returned."""
    _, context = oracle
    sessions = [{"id": f"wild_tool_bench_{i}"} for i in range(16)]
    path = tmp_path / "result.jsonl"
    synced = _fsyncs_of(monkeypatch, path)
    rounds = [asyncio.Event(), asyncio.Event()]  # sessions 0-7 finish together, then 8-15
    started = 0

    async def invoke(session, ctx, *, prices=None):
        nonlocal started
        started += 1
        if started % 8 == 0:
            rounds[started // 8 - 1].set()
        await rounds[int(session["id"].rsplit("_", 1)[1]) // 8].wait()
        return _outcome(session["id"], error=session["id"] == "wild_tool_bench_5")

    reported: list[str] = []

    def on_record(record):
        assert synced, "reported before any fsync"
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        assert line in path.read_bytes()[: synced[-1]], "reported before the fsync of its line"
        reported.append(record["id"])

    summary = asyncio.run(
        arun_eval(sessions, context, tmp_path, concurrency=8, progress=False, invoke=invoke, on_record=on_record)
    )
    assert 1 <= len(synced) <= 4  # for 15 records (one session is an infrastructure error)
    assert sorted(reported, key=session_sort_key) == [s["id"] for s in sessions if s["id"] != "wild_tool_bench_5"]
    assert (summary.evaluated, summary.tasks, summary.tasks_right_tool_names, summary.requests) == (15, 15, 15, 16)
    assert [e["id"] for e in summary.infrastructure_errors] == ["wild_tool_bench_5"]
    assert [r["id"] for r in _jsonl(path)] == [s["id"] for s in sessions if s["id"] != "wild_tool_bench_5"]
    assert [e["id"] for e in _jsonl(tmp_path / "errors.jsonl")] == ["wild_tool_bench_5"]


def test_workers_take_the_next_session_while_a_write_waits_for_the_disk(oracle, tmp_path, monkeypatch):
    """One worker, and the disk holds the first fsync until every session has been taken: a worker that
    waited for its own write would never take the next session."""
    _, context = oracle
    sessions = [{"id": f"wild_tool_bench_{i}"} for i in range(5)]
    all_taken = threading.Event()
    released: list[bool] = []
    synced = _fsyncs_of(monkeypatch, tmp_path / "result.jsonl", lambda: released.append(all_taken.wait(timeout=60)))
    taken: list[str] = []

    async def invoke(session, ctx, *, prices=None):
        taken.append(session["id"])
        if len(taken) == len(sessions):
            all_taken.set()
        await asyncio.sleep(0.01)  # the writer's thread gets going meanwhile
        return _outcome(session["id"])

    summary = asyncio.run(arun_eval(sessions, context, tmp_path, concurrency=1, progress=False, invoke=invoke))
    assert released and all(released), "the first fsync was still waiting when every session should have been taken"
    assert summary.evaluated == 5 and len(synced) < 5
    assert [r["id"] for r in _jsonl(tmp_path / "result.jsonl")] == [s["id"] for s in sessions]


def test_a_failed_write_stops_the_run_and_the_directory_resumes(oracle, tmp_path, monkeypatch):
    _, context = oracle
    sessions = [{"id": f"wild_tool_bench_{i}"} for i in range(6)]

    def full() -> None:
        raise OSError(28, "No space left on device")

    async def invoke(session, ctx, *, prices=None):
        await asyncio.sleep(0)
        return _outcome(session["id"])

    _fsyncs_of(monkeypatch, tmp_path / "result.jsonl", full)
    with pytest.raises(OSError, match="No space left"):
        asyncio.run(arun_eval(sessions, context, tmp_path, concurrency=2, progress=False, invoke=invoke))
    monkeypatch.undo()
    again = asyncio.run(arun_eval(sessions, context, tmp_path, concurrency=2, progress=False, invoke=invoke))
    assert again.evaluated + again.skipped == 6  # the lock was released; lines written before the failure count
    assert [r["id"] for r in _jsonl(tmp_path / "result.jsonl")] == [s["id"] for s in sessions]


def test_open_dataset_keeps_byte_ranges_and_parses_a_session_when_taken(reference_dir, tmp_path):
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "sessions.jsonl"
    path.write_bytes(
        ("\r\n".join(lines[:4]) + "\r\n\n  \n" + "\n".join(lines[4:6])).encode("utf-8")
    )  # no final newline
    eager = load_dataset(path)
    lazy = open_dataset(path)
    assert isinstance(lazy, DatasetSessions) and len(lazy) == len(eager) == 6
    assert lazy.ids == [s["id"] for s in eager] and list(lazy) == eager and lazy[-1] == eager[-1]
    assert lazy[0] is not lazy[0]  # parsed again: a caller's changes never reach another taker
    chosen = select_sessions(lazy, ["3", "wild_tool_bench_1", "3"], None)
    assert isinstance(chosen, DatasetSessions) and chosen.ids == ["wild_tool_bench_3", "wild_tool_bench_1"]
    assert list(chosen) == select_sessions(eager, ["3", "wild_tool_bench_1"], None)
    assert select_sessions(lazy, None, 2).ids == lazy[:2].ids == ["wild_tool_bench_0", "wild_tool_bench_1"]
    assert session_ids(chosen) == chosen.ids and session_ids(eager) == lazy.ids
    with pytest.raises(ValueError, match="wild_tool_bench_99"):
        select_sessions(lazy, ["99"], None)
    with pytest.raises(IndexError):
        lazy[6]
    path.write_bytes(path.read_bytes().replace(b"wild_tool_bench_5", b"wild_tool_bench_9"))
    with pytest.raises(ValueError, match="changed since the run read it"):
        lazy[5]


def test_a_run_on_the_lazy_form_writes_what_a_run_on_dicts_writes(oracle, reference_dir, tmp_path):
    sessions, context = oracle
    lazy = select_sessions(open_dataset(reference_dir / "sessions.jsonl"), None, 5)
    run_eval(sessions[:5], context, tmp_path / "dicts", concurrency=3, progress=False)
    run_eval(lazy, context, tmp_path / "lazy", concurrency=3, progress=False)

    def comparable(record):  # latencies, wall time and generated tool-call ids differ from run to run
        usage = {k: v for k, v in record["usage"].items() if k != "wall_time"}
        return {**record, "result": normalise(record["result"]), "usage": usage}

    dicts, lazies = _jsonl(tmp_path / "dicts" / "result.jsonl"), _jsonl(tmp_path / "lazy" / "result.jsonl")
    assert [comparable(r) for r in lazies] == [comparable(r) for r in dicts]
    summaries = [json.loads((tmp_path / d / "summary.json").read_text()) for d in ("dicts", "lazy")]
    for summary in summaries:
        summary.pop("wall_time"), summary.pop("result_file")
    assert summaries[0] == summaries[1]


def test_open_dataset_reports_what_the_whole_file_loader_reports_for_each_side(tmp_path):
    rows = [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[:4]]
    rows[1]["english_task_types"][0] = "Chat"  # no bucket on the zh side only
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert open_dataset(path).ids == [r["id"] for r in rows]
    for broken in (False, True):
        if broken:  # and a line that is wrong on both sides
            rows[3]["english_tasks"] = "not a list"
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        for language in ["zh", "en"] if broken else ["zh"]:
            with pytest.raises(DatasetError) as expected:
                load_sessions(path, language=language)
            with pytest.raises(DatasetError) as caught:
                open_dataset(path, language=language)
            assert [str(i) for i in caught.value.issues] == [str(i) for i in expected.value.issues]
    with pytest.raises(DatasetError, match="file not found"):
        open_dataset(tmp_path / "missing.jsonl")


def test_a_checkpointed_graph_is_saved_once_per_session(oracle):
    """The batch runner asks LangGraph to save a checkpointed run only when it ends (``durability="exit"``);
    a graph without a checkpointer gets no durability (LangGraph would warn about it)."""
    import warnings

    from langgraph.checkpoint.memory import InMemorySaver

    from wildtoolbench.graphs.evaluation import graph
    from wildtoolbench.runner import run_session

    sessions, context = oracle
    saver = InMemorySaver()
    checkpointed = graph.copy(update={"checkpointer": saver}).with_config(configurable={"thread_id": "t1"})
    saved = asyncio.run(run_session(checkpointed, sessions[0], context)).record
    checkpoints = list(saver.list({"configurable": {"thread_id": "t1"}}))
    assert len(checkpoints) == 1
    assert checkpoints[0].checkpoint["channel_values"]["record"]["id"] == "wild_tool_bench_0"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = asyncio.run(run_session(graph, sessions[0], context)).record
    for record in (saved, plain):
        for task in record["result"]:
            task["latency"] = len(task["latency"])
        record["usage"].pop("wall_time")
    assert saved == plain and [t["action_name_label"] for t in plain["result"]] == ["correct"] * 4


class _KeyRecordingModel(BaseChatModel):
    """Answers in text and records, per request, the session it serves and the conversation key it sees."""

    seen: ClassVar[list[tuple[str | None, str | None]]] = []

    @property
    def _llm_type(self) -> str:
        return "key-recording"

    def bind_tools(self, tools, **kwargs: Any):
        return self

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:  # pragma: no cover - async only
        raise NotImplementedError

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        from wildtoolbench.models.prefix import current_prefix_key

        session = run_manager.metadata["wtb_session_id"] if run_manager else None
        self.seen.append((session, current_prefix_key()))
        await asyncio.sleep(0.001)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="A plain answer."))])


def test_every_request_continues_its_sessions_conversation(tmp_path):
    """The key a local server pins to a slot (models/prefix.py): ``session:<id>`` on every request of the session,
    with several sessions in flight."""
    sessions = load_dataset(SESSIONS_PATH)[:3]
    model = _KeyRecordingModel()
    _KeyRecordingModel.seen = []
    register_provider("key-test", lambda name, settings: model)
    context = EvaluationContext(model="key-test:m")
    asyncio.run(arun_eval(sessions, context, tmp_path, concurrency=3, progress=False))
    assert {session for session, _ in model.seen} == {s["id"] for s in sessions}
    assert all(key == f"session:{session}" for session, key in model.seen) and len(model.seen) >= 3 * 4
