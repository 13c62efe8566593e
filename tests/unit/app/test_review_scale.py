"""The review database at scale (wildtoolbench/review/audit_job.py, duplicates.py; docs/review.md §3, §5.3): a
database audited in the background ends with the findings of the synchronous audit, and an edit's
incremental duplicate refresh gives every session the findings a full recomputation gives."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from wildtoolbench.review.audit_job import audit_store
from wildtoolbench.review.checks import duplicate_map, finding_json
from wildtoolbench.review.command import open_store

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"


def _dataset(tmp_path: Path) -> Path:
    demo = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    sessions = []
    for number in range(18):
        session = copy.deepcopy(demo[number % len(demo)])
        session["id"] = f"gen_{number}"
        if number % 6 != 0:  # sessions 6 and 12 stay exact duplicates of 0; the others differ
            session["english_tasks"] = [
                f"{m} Variant {number} with extra words {number * 7}" for m in session["english_tasks"]
            ]
        sessions.append(session)
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    return path


def _full(store) -> dict[int, list]:
    currents = [row.current for row in store.sessions()]
    return {pos: [finding_json(f) for f in found] for pos, found in duplicate_map(currents, "en").items()}


def _stored(store) -> dict[int, list]:
    return {row.pos: [f for f in row.findings if f["kind"] == "duplicate_session"] for row in store.sessions() if
            any(f["kind"] == "duplicate_session" for f in row.findings)}  # fmt: skip


def test_a_background_audit_ends_with_the_synchronous_findings(tmp_path, monkeypatch):
    import wildtoolbench.review.command as command

    monkeypatch.setattr(command, "SYNC_AUDIT_SESSIONS", 10)  # 18 sessions: above it, audited in the background
    dataset = _dataset(tmp_path)
    now, _ = open_store(dataset, tmp_path / "now.sqlite3", language="en", tasks=None)
    later, meta = open_store(dataset, tmp_path / "later.sqlite3", language="en", tasks=None, background=True)
    assert meta["audit"] == "pending" and all(row.findings == [] for row in later.sessions())
    audit_store(tmp_path / "later.sqlite3", "en", int(meta["tasks"]), chunk=5)
    assert later.meta()["audit"] == "done" and later.meta()["audited"] == "18"
    assert [(r.findings, r.valid) for r in later.sessions()] == [(r.findings, r.valid) for r in now.sessions()]
    assert _stored(now) == _full(now) and {0, 6, 12} <= set(_full(now))
    from wildtoolbench.review import pages

    assert now.order() == [r.pos for r in sorted(now.sessions(light=True), key=pages.priority)]


def test_an_edit_refreshes_exactly_the_duplicates_it_changes(tmp_path):
    from wildtoolbench.review.duplicates import refresh_after_edit

    store, meta = open_store(_dataset(tmp_path), tmp_path / "r.sqlite3", language="en", tasks=None)

    def edit(pos: int, tasks: list[str]) -> None:
        row = store.session(pos)

        def make(current):
            edited = {**current, "english_tasks": tasks}
            own = [f for f in row.findings if f["kind"] != "duplicate_session"]
            return edited, current["english_tasks"], tasks, True, own

        store.save_edit(pos, row.version, "alice", path="english_tasks[0]", task=0, note="", edit=make,
                        duplicates=lambda db, edited: refresh_after_edit(db, pos, edited, "en"))  # fmt: skip
        assert _stored(store) == _full(store)

    edit(6, [f"{m} now different {i}" for i, m in enumerate(store.session(6).current["english_tasks"])])
    assert not any("same user messages" in f["message"] for f in _full(store).get(6, []))  # 6 left the group
    edit(13, list(store.session(1).current["english_tasks"]))  # 13 becomes an exact copy of 1 (same tools)
    assert any("same user messages and tools as gen_1" in f["message"] for f in _full(store)[13])
    near = list(store.session(2).current["english_tasks"])
    near[-1] += " plus"
    edit(14, near)  # 14 is now a near duplicate of 2
    assert any("near duplicate of gen_2" in f["message"] for f in _full(store)[14])


def test_the_streaming_export_writes_the_files_of_the_whole_export(tmp_path):
    from wildtoolbench.review.duplicates import refresh_after_edit
    from wildtoolbench.review.export import export_texts, write_export_streaming

    store, meta = open_store(_dataset(tmp_path), tmp_path / "r.sqlite3", language="en", tasks=None)
    for pos in range(18):
        for task in range(4):
            verdict = "reject" if (pos, task) == (3, 2) else "accept"
            store.set_verdict(pos, task, "alice", verdict, "wrong gold" if verdict == "reject" else "", 1)
    row = store.session(4)
    km = "english_answer_list[2][2].action.arguments.current_weekly_km"

    def make(current):
        from wildtoolbench.review.checks import apply_edit

        return apply_edit(current, km, 24), 25, 24, True, [f for f in row.findings if f["kind"] != "duplicate_session"]

    store.save_edit(4, 1, "alice", path=km, task=2, note="", edit=make,
                    duplicates=lambda db, edited: refresh_after_edit(db, 4, edited, "en"))  # fmt: skip
    texts = export_texts(store.sessions(), store.verdicts(), store.events(), store.meta())
    plan = write_export_streaming(
        tmp_path / "out", store.sessions(light=True), store.verdicts(), store.events(), store.meta(), store.session
    )
    for name, text in texts.items():
        assert (tmp_path / "out" / name).read_text(encoding="utf-8") == text, name
    assert plan["exported"] >= 1 and plan["rejected"] == 1
    assert {"session": "gen_3", "why": "task(s) 3 rejected"} in plan["left_out"]  # task numbers from 1


def test_the_queue_is_paged_and_light_rows_follow_every_change(tmp_path, monkeypatch):
    from starlette.testclient import TestClient

    from wildtoolbench.review import pages
    from wildtoolbench.review.app import ReviewConfig, create_app

    monkeypatch.setattr(pages, "QUEUE_ROWS", 5)
    store, _ = open_store(_dataset(tmp_path), tmp_path / "r.sqlite3", language="en", tasks=None)
    client = TestClient(create_app(ReviewConfig(store)), base_url="http://127.0.0.1:8765")
    first, last = client.get("/").text, client.get("/?page=3").text
    assert "sessions 1-5 of 18" in first and 'id="queue-next"' in first and 'id="queue-prev"' not in first
    assert "sessions 16-18 of 18" in last and 'id="queue-next"' not in last
    assert client.get("/?page=99").text.count('class="qrow') == 3  # past the end: the last page
    order = store.order()
    shown = [int(p) for p in __import__("re").findall(r'data-href="/session/(\d+)"', first)]
    assert shown == order[:5]
    before = store.sessions(light=True)
    store.set_meta({"audited": "17"})  # the audit's progress invalidates the cached light rows
    assert store.sessions(light=True) is not before and [r.pos for r in store.sessions(light=True)] == list(range(18))
