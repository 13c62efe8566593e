"""The run files of ``wtb generate`` streamed from the sessions' own files (docs/generation.md §12.1): the
atomic JSON Lines writer, the small per-session record, and ``sessions.jsonl`` built from ``outcome.json``."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.gen_scripts import session_script
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions
from wildtoolbench.common.files import JsonlFileWriter, write_jsonl_atomic
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.runner.generation import run_batch
from wildtoolbench.runner.generation_files import FinishedSession, write_run_files

RECORDS = [{"id": "a", "text": "café ☕"}, {"n": 1.5, "list": [1, None, True]}, "plain", {"deep": {"x": ["é"]}}]


@pytest.fixture(autouse=True)
def _fresh_scripts():
    scripted.reset()
    yield
    scripted.reset()


def test_the_streamed_file_has_the_bytes_of_the_whole_file_writer(tmp_path):
    with JsonlFileWriter(tmp_path / "streamed.jsonl") as writer:
        for record in RECORDS:
            writer.write(record)
    write_jsonl_atomic(tmp_path / "whole.jsonl", RECORDS)
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert writer.count == 4 and (tmp_path / "streamed.jsonl").read_text(encoding="utf-8").count("\n") == 4


def test_an_error_while_streaming_leaves_the_old_file_and_no_temp_file(tmp_path):
    path = tmp_path / "sessions.jsonl"
    path.write_text('{"old": true}\n', encoding="utf-8")
    with pytest.raises(TypeError), JsonlFileWriter(path) as writer:
        writer.write({"fine": 1})
        writer.write({"not json": object()})
    assert path.read_text(encoding="utf-8") == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.jsonl"]


def _scripted_run(shared_dir, tmp_path, samples=3):
    tool_lists = load_tool_lists(shared_dir / "data" / "tools_en.jsonl")
    plans = plan_sessions(tool_lists, [("ST",)] * samples, seed=21)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    context = Context(
        models=dict.fromkeys(("user", "planner", "tool", "agent", "checker"), spec),
        vague_answer_rate=0.0,
        rules="small",
    )
    out = tmp_path / "out"
    summary = asyncio.run(run_batch(plans, context, out, concurrency=2))
    return plans, out, summary


def test_the_sessions_file_is_the_recorded_sessions_renumbered_in_plan_order(shared_dir, tmp_path):
    plans, out, summary = _scripted_run(shared_dir, tmp_path)
    assert (summary.succeeded, summary.failed) == (3, 0)
    lines = [json.loads(line) for line in (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    for number, (plan, line) in enumerate(zip(plans, lines, strict=True)):
        recorded = json.loads((out / "sessions" / plan.key / "outcome.json").read_text(encoding="utf-8"))["session"]
        assert line == {**recorded, "id": f"wild_tool_bench_{number}"}
        assert json.loads((out / "sessions" / plan.key / "session.json").read_text(encoding="utf-8")) == line
    replays = (out / "replay.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(r)["session_id"] for r in replays] == [f"wild_tool_bench_{n}" for n in range(3)]


def test_a_missing_session_record_names_its_file_and_replaces_no_run_file(shared_dir, tmp_path):
    plans, out, _ = _scripted_run(shared_dir, tmp_path)
    before = (out / "sessions.jsonl").read_bytes()
    (out / "sessions" / plans[2].key / "outcome.json").unlink()
    records = [FinishedSession(plan, True, quality={"ok": True}) for plan in plans]
    with pytest.raises(ValueError, match=rf"{plans[2].key}/outcome.json: cannot read the finished session's record"):
        write_run_files(out, records, "drop")
    assert (out / "sessions.jsonl").read_bytes() == before
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_the_record_kept_per_session_holds_no_session_or_state():
    assert {"session", "state", "yields"}.isdisjoint(FinishedSession.__dataclass_fields__)


def test_the_audit_reads_sessions_one_at_a_time_and_names_a_bad_line(tmp_path):
    from wildtoolbench.generation.audit import FileSessions

    path = tmp_path / "sessions.jsonl"
    path.write_text('{"id": "a"}\n\n{"id": "b"}\nnot json\n', encoding="utf-8")
    sessions = FileSessions(path)
    try:
        assert len(sessions) == 3 and sessions[0] == {"id": "a"} and sessions[1] == {"id": "b"}
        assert sessions[0] is not sessions[0]  # parsed again at each read: nothing is held
        (tmp_path / "new.jsonl").write_text('{"id": "replaced"}\n', encoding="utf-8")
        (tmp_path / "new.jsonl").replace(path)  # a new file under the name (an atomic write): still the old one
        assert sessions[1] == {"id": "b"}
        with pytest.raises(ValueError, match=r"sessions.jsonl: line 4: not JSON"):
            sessions[2]
    finally:
        sessions.close()
    assert len(FileSessions(tmp_path / "missing.jsonl")) == 0
