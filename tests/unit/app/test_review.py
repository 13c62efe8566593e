"""The review app's parts without a browser (docs/review.md): Cohen's kappa, the DAG layout, which fields may
be edited, an edit re-validated and re-audited, the database's versioning, the export and its errata, and
the request checks of the app (in-process, through Starlette's test client)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from wildtoolbench.bench.errata import apply_errata, parse_erratum
from wildtoolbench.review.agreement import agreement, cohen_kappa, task_status
from wildtoolbench.review.app import ReviewConfig, create_app
from wildtoolbench.review.checks import EditRefused, apply_edit, check_edit, decode_value, edit_target, own_findings
from wildtoolbench.review.command import open_store
from wildtoolbench.review.dag import dag_svg, drawn_depths
from wildtoolbench.review.export import export_texts, plan_export
from wildtoolbench.review.pages import h
from wildtoolbench.review.serve import check_bind, is_loopback
from wildtoolbench.review.store import Stale, Verdict

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
KM = "english_answer_list[2][2].action.arguments.current_weekly_km"


def test_cohen_kappa_by_hand():
    # 22 accepted by both, 1 rejected by both, 1 accepted by A and rejected by B
    pairs = [("accept", "accept")] * 22 + [("reject", "reject"), ("accept", "reject")]
    n, observed, kappa = cohen_kappa(pairs)
    assert n == 24 and observed == pytest.approx(23 / 24)
    expected = (23 / 24) * (22 / 24) + (1 / 24) * (2 / 24)
    assert kappa == pytest.approx((23 / 24 - expected) / (1 - expected)) and round(kappa, 3) == 0.647
    assert cohen_kappa([("accept", "reject"), ("reject", "accept")])[2] == pytest.approx(-1.0)
    assert cohen_kappa([("accept", "accept")] * 3) == (3, 1.0, None)  # chance agreement 1: undefined
    assert cohen_kappa([]) == (0, None, None)


def test_agreement_pairs_only_the_tasks_both_judged():
    verdicts = [
        Verdict(0, 0, "bob", "accept", "", 1, ""),
        Verdict(0, 1, "bob", "reject", "why", 1, ""),
        Verdict(0, 0, "alice", "accept", "", 1, ""),
        Verdict(0, 1, "alice", "accept", "", 1, ""),
        Verdict(0, 2, "alice", "accept", "", 1, ""),
        Verdict(0, 2, "carol", "reject", "no", 1, ""),
    ]
    pairs = {(p.first, p.second): p for p in agreement(verdicts)}
    assert list(pairs) == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
    assert (pairs["alice", "bob"].n, pairs["alice", "bob"].observed, pairs["alice", "bob"].kappa) == (2, 0.5, 0.0)
    assert pairs["alice", "bob"].disagreements == [(0, 1)]
    assert pairs["bob", "carol"].n == 0 and pairs["bob", "carol"].kappa is None
    assert task_status({"a": "accept", "b": "reject"}) == "rejected"
    assert task_status({"a": "accept"}) == "accepted" and task_status({}) == "open"


def test_dag_depths_and_escaped_labels():
    nodes = [
        {"action": {"name": "<script>alert(1)</script>"}, "dependency_list": []},
        {"action": {"name": "b"}, "dependency_list": [0]},
        {"action": {"name": "prepare_to_answer"}, "dependency_list": [0, 1]},
    ]
    assert drawn_depths(nodes) == [0, 1, 2]
    svg = dag_svg(nodes, 3, {1})
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert svg.count('class="dag-node') == 3 and "dag-flag" in svg and "dag-answer" in svg
    assert svg.count('<path class="dag-edge"') == 3
    # a cycle, a bad index and a string are drawn as far as they go
    assert drawn_depths([{"dependency_list": [1]}, {"dependency_list": [0]}, {"dependency_list": ["x", 9, True]}]) == [
        1,
        0,
        0,
    ]
    assert h("\"<&>'") == "&quot;&lt;&amp;&gt;&#x27;"


def test_editable_fields_only():
    assert edit_target(KM).task == 2 and edit_target(KM).what == "gold argument"
    assert edit_target("english_tasks[3]").what == "user message"
    assert edit_target("answer_list[1][0].observation", "zh").task == 1
    for path in (
        "id",
        "english_tools[0]",
        "english_answer_list[0][0].dependency_list",
        "answer_list[0][0].observation",
        "",
    ):
        with pytest.raises(EditRefused, match="cannot be edited"):
            edit_target(path)
    assert decode_value('{"a": [1, 2.5]}', "json") == {"a": [1, 2.5]}
    assert decode_value("plain text", "text") == "plain text"
    with pytest.raises(EditRefused, match="not JSON"):
        decode_value("{nope", "json")
    with pytest.raises(EditRefused, match="nested too deeply"):
        decode_value("[" * 101 + "]" * 101, "json")
    with pytest.raises(EditRefused, match="lone surrogate"):
        decode_value('"\\ud800"', "json")


def _demo() -> list[dict]:
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]


def test_an_edit_is_revalidated_and_reaudited():
    session = _demo()[4]
    before = own_findings(session, tasks=4, language="en")
    assert [(f.task, f.kind) for f in before] == [(2, "value_not_in_context")]
    edited = apply_edit(session, KM, 24)
    assert session["english_answer_list"][2][2]["action"]["arguments"]["current_weekly_km"] == 24.1  # a copy
    assert check_edit(session, edited, tasks=4, language="en") == []
    assert own_findings(edited, tasks=4, language="en") == []
    broken = apply_edit(session, "english_answer_list[2][2].action.arguments", [1, 2])
    problems = check_edit(session, broken, tasks=4, language="en")
    assert problems and problems[0][0] == "english_answer_list[2][2].action.arguments"
    deep = apply_edit(session, KM, json.loads("[" * 95 + "]" * 95))  # the session's line would nest too deeply
    assert check_edit(session, deep, tasks=4, language="en")[0][0] == "(json)"
    with pytest.raises(EditRefused, match="no element"):
        apply_edit(session, "english_answer_list[2][9].observation", "x")


def _store(tmp_path):
    dataset = tmp_path / "demo.jsonl"
    dataset.write_bytes(DEMO.read_bytes())
    store, meta = open_store(dataset, tmp_path / "r.sqlite3", language="en", tasks=None)
    return dataset, store, meta


def test_versions_refuse_a_stale_change_and_a_changed_dataset(tmp_path):
    from wildtoolbench.common.exits import BadInput

    dataset, store, meta = _store(tmp_path)
    assert meta["tasks"] == "4" and len(store.sessions()) == 6
    store.set_verdict(4, 0, "alice", "accept", "", 1)

    def edit(current):
        return apply_edit(current, KM, 24), 24.1, 24, True, []

    assert store.save_edit(4, 1, "alice", path=KM, task=2, note="", edit=edit, duplicates=lambda db, s: {}) == 2
    with pytest.raises(Stale, match="you saw version 1, it is now version 2 by alice"):
        store.set_verdict(4, 1, "bob", "accept", "", 1)
    with pytest.raises(Stale):
        store.save_edit(4, 1, "bob", path=KM, task=2, note="", edit=edit, duplicates=lambda db, s: {})
    with pytest.raises(ValueError, match="needs a reason"):
        store.set_verdict(4, 1, "bob", "reject", " ", 2)
    with pytest.raises(ValueError, match="reviewer's name"):
        store.set_verdict(4, 1, "<b>", "accept", "", 2)
    assert [e["action"] for e in store.events()] == ["accept", "edit"]
    dataset.write_text(dataset.read_text(encoding="utf-8").replace("24.1", "24.2"), encoding="utf-8")
    with pytest.raises(BadInput, match="is now another file"):
        open_store(dataset, tmp_path / "r.sqlite3", language="en", tasks=None)


def test_the_export_and_its_errata_reproduce_the_review(tmp_path):
    _, store, meta = _store(tmp_path)

    def edit(current):
        return apply_edit(current, KM, 24), 24.1, 24, True, []

    store.save_edit(4, 1, "alice", path=KM, task=2, note="", edit=edit, duplicates=lambda db, s: {})
    for pos in range(6):
        for task in range(4):
            store.set_verdict(
                pos,
                task,
                "alice",
                "reject" if (pos, task) == (0, 1) else "accept",
                "bad gold",
                store.session(pos).version,
            )
    plan = plan_export(store.sessions(), store.verdicts())
    assert (plan["exported"], plan["rejected"], plan["open"], plan["edited"]) == (5, 1, 0, 1)
    texts = export_texts(store.sessions(), store.verdicts(), store.events(), meta)
    exported = [json.loads(line) for line in texts["sessions.jsonl"].splitlines()]
    assert [s["id"] for s in exported] == [f"wild_tool_bench_{i}" for i in (1, 2, 3, 4, 5)]
    replays = [json.loads(line) for line in texts["replay.jsonl"].splitlines()]
    assert [r["session_id"] for r in replays] == [s["id"] for s in exported] and replays[0]["candidate"] == "oracle"
    errata = [parse_erratum(json.loads(line))[0] for line in texts["errata.jsonl"].splitlines()]
    assert [(e.session, e.task, e.kind) for e in errata] == [
        ("wild_tool_bench_4", 2, "review_edit"),
        ("wild_tool_bench_0", 1, "review_reject"),
    ]
    originals = {s["id"]: s for s in _demo()}
    applied = apply_errata(errata, copy.deepcopy(originals))
    assert applied.sessions["wild_tool_bench_4"] == exported[3] and applied.excluded == {"wild_tool_bench_0": {1}}
    assert json.loads(texts["summary.json"])["agreement"] == []


def test_the_app_checks_every_request(tmp_path):
    _, store, _ = _store(tmp_path)
    config = ReviewConfig(store)
    client = TestClient(create_app(config), base_url="http://127.0.0.1:8765")
    page = client.get("/session/4")
    assert page.status_code == 200 and config.token in page.text
    assert page.headers["x-frame-options"] == "DENY" and "default-src 'none'" in page.headers["content-security-policy"]
    assert client.get("/", headers={"host": "rebound.example:8765"}).status_code == 400
    body = {"pos": 4, "task": 0, "verdict": "accept", "version": 1, "reviewer": "alice"}
    assert client.post("/api/verdict", json=body).status_code == 403
    token = {"X-WTB-Token": config.token}
    assert (
        client.post("/api/verdict", content=b"{}", headers={**token, "content-type": "text/plain"}).status_code == 415
    )
    assert client.post("/api/verdict", json=body, headers={**token, "origin": "http://evil.example"}).status_code == 403
    assert (
        client.post(
            "/api/verdict", content=b"x" * 1_000_001, headers={**token, "content-type": "application/json"}
        ).status_code
        == 413
    )
    assert (
        client.post("/api/verdict", json=body, headers={**token, "origin": "http://127.0.0.1:8765"}).status_code == 200
    )
    refused = client.post(
        "/api/edit",
        json={"pos": 4, "version": 1, "reviewer": "alice", "path": KM, "text": '"about 24"', "mode": "json"},
        headers=token,
    )
    assert refused.status_code == 422 and refused.json()["problems"][0]["field"] == "schema_violation"
    saved = client.post(
        "/api/edit",
        json={"pos": 4, "version": 1, "reviewer": "alice", "path": KM, "text": "24", "mode": "json"},
        headers=token,
    )
    assert saved.status_code == 200 and saved.json() == {"version": 2, "findings": [], "valid": True}
    stale = client.post("/api/verdict", json={**body, "task": 1}, headers=token)
    assert stale.status_code == 409 and "it is now version 2" in stale.json()["error"]
    hostile = client.post(
        "/api/edit",
        json={
            "pos": 4,
            "version": 2,
            "reviewer": "alice",
            "path": "english_tasks[0]",
            "text": "<img src=x onerror=alert(1)>",
            "mode": "text",
        },
        headers=token,
    )
    assert hostile.status_code == 200
    shown = client.get("/session/4").text
    assert "<img src=x" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown


def test_loopback_rule():
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "10.0.0.1", "example.org", "localhost.example.org"))
    assert check_bind("0.0.0.0", allow_remote=False).startswith("'0.0.0.0' is not a loopback address")
    assert check_bind("0.0.0.0", allow_remote=True) is None


def test_the_chinese_side_is_shown_and_edited_by_its_own_fields(tmp_path):
    dataset = tmp_path / "demo.jsonl"
    dataset.write_bytes(DEMO.read_bytes())
    store, _ = open_store(dataset, tmp_path / "zh.sqlite3", language="zh", tasks=None)
    config = ReviewConfig(store, language="zh")
    client = TestClient(create_app(config), base_url="http://localhost:8765")
    chinese = _demo()[0]["tasks"][0]
    shown = client.get("/session/0").text
    assert h(chinese) in shown and 'data-path="answer_list[0][0].action.arguments"' in shown
    assert 'data-path="english_tasks[0]"' not in shown
    edit = {"pos": 0, "version": 1, "reviewer": "李雷", "path": "tasks[0]", "text": chinese + "。", "mode": "text"}
    assert client.post("/api/edit", json=edit, headers={"X-WTB-Token": config.token}).json()["version"] == 2
    assert store.session(0).current["tasks"][0] == chinese + "。"
    refused = client.post(
        "/api/edit", json={**edit, "version": 2, "path": "english_tasks[0]"}, headers={"X-WTB-Token": config.token}
    )
    assert refused.status_code == 422 and "cannot be edited" in refused.json()["error"]


def test_findings_are_named_counted_and_shown_by_rule_id(tmp_path):
    """docs/review.md §2: a finding of a kind a catalog rule checks names the rule id and its docs section;
    the queue and the export's summary count findings by rule id, by kind where no rule applies."""
    from wildtoolbench.review.pages import queue_page, session_page

    sessions = _demo()
    sessions[0]["english_answer_list"][0][0]["action"]["name"] = "noSuchTool"  # unknown_tool
    sessions.append(copy.deepcopy(sessions[1]))  # duplicate_session (no rule checks it)
    dataset = tmp_path / "planted.jsonl"
    dataset.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    store, meta = open_store(dataset, tmp_path / "r.sqlite3", language="en", tasks=None)
    rows = store.sessions()
    found = [f for row in rows for f in row.findings]
    named = {(f["kind"], f["rule"], f["doc"]) for f in found}
    assert ("unknown_tool", "structure.unknown_tool", "docs/generation.md §2") in named
    assert ("value_not_in_context", "value.not_in_context", "docs/generation.md §2") in named
    assert ("duplicate_session", None, "docs/audit.md §4") in named
    labels = [f["rule"] or f["kind"] for f in found]
    expected = {label: labels.count(label) for label in set(labels)}
    assert expected["structure.unknown_tool"] >= 1 and expected["duplicate_session"] >= 1

    queue = queue_page(rows, [], token="t", reviewer="alice", meta=meta)
    line = queue.split('id="findings-by-rule"', 1)[1].split("</p>", 1)[0]
    shown = dict(re.findall(r'<span class="kind">([^<]+)</span> (\d+)', line))
    assert {label: int(n) for label, n in shown.items()} == expected
    assert ">unknown_tool<" not in queue and ">value_not_in_context<" not in queue  # no kind where a rule applies

    first = store.session(0)
    page_html = session_page(first, [], token="t", reviewer="alice", language="en", neighbours=(None, 1),
                             position=(0, len(rows)))  # fmt: skip
    assert 'data-rule="structure.unknown_tool"' in page_html and "docs/generation.md §2" in page_html

    summary = json.loads(export_texts(rows, [], [], meta)["summary.json"])
    assert summary["findings_by_rule"] == dict(sorted(expected.items(), key=lambda item: (-item[1], item[0])))
