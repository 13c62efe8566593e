"""``wtb generate`` audits what it produced (docs/generation.md §9): with scripted role models on real tool
lists, the manifest holds the audit summary and the coverage figures; a session that repeats an official
session is dropped and the rest renumbered; ``--audit flag`` drops nothing; ``--audit off`` skips the audit;
a planted defect in a generated set is dropped by the policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.gen_scripts import session_script
from wildtoolbench.bench.generation import load_tool_lists, oracle_candidate, plan_sessions, select_type_paths
from wildtoolbench.bench.schema import validate_file
from wildtoolbench.cli import app
from wildtoolbench.generation.audit import audit_generation, closing_line, drop_reasons
from wildtoolbench.models.providers import scripted

SESSIONS = 6


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    scripted.reset()
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path / "cache"))  # no official dataset cached
    yield
    scripted.reset()


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _command(shared_dir: Path, tmp_path: Path, *extra: str) -> list[str]:
    lines = (shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()
    tools = tmp_path / "tools.jsonl"
    tools.write_text("\n".join(lines[30:40]) + "\n", encoding="utf-8")
    plans = plan_sessions(
        load_tool_lists(tools), select_type_paths(4, None, SESSIONS, 5), seed=5, language="en", year=2025
    )
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    roles = [a for role in ("user", "planner", "tool", "agent", "checker") for a in (f"--{role}-model", spec)]
    return [
        "generate", "--tools", str(tools), "--layers", "4", "--samples", str(SESSIONS), "--seed", "5", "--year", "2025",
        "--out", str(tmp_path / "out"), "--vague-rate", "0", "--concurrency", "2", "--no-progress", *roles, *extra,
    ]  # fmt: skip


def _generate(args: list[str]):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result


def test_the_manifest_holds_the_audit_summary_and_the_coverage(shared_dir, tmp_path):
    result = _generate(_command(shared_dir, tmp_path))
    out = tmp_path / "out"
    assert f"audit (drop): {SESSIONS} session(s) audited, {SESSIONS} kept, 0 dropped" in result.output
    assert "contamination not checked (no official dataset)" in result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    audit = manifest["audit"]
    findings = _read_jsonl(out / "audit.jsonl")
    assert audit["policy"] == "drop" and (audit["audited"], audit["kept"], audit["dropped"]) == (SESSIONS, SESSIONS, 0)
    assert audit["contamination"] is None and audit["dropped_sessions"] == []
    # what the audit file lists is what the summary counts, and every flagged session is named with its key
    counted = sum(n for by in audit["findings"].values() for n in by.values())
    assert counted == len(findings)
    assert audit["flagged"] == len({f["id"] for f in findings}) == len(audit["flagged_sessions"])
    assert all(f["severity"] == "warning" for f in findings)  # scripted sessions have no error defect
    keys = {entry["id"]: entry["key"] for entry in manifest["sessions"]}
    assert all(keys[entry["id"]] == entry["key"] for entry in audit["flagged_sessions"])
    coverage = manifest["coverage"]
    stats = coverage["statistics"]
    sessions = _read_jsonl(out / "sessions.jsonl")
    assert stats["sessions"] == SESSIONS and stats["tasks"] == 4 * SESSIONS
    assert sum(stats["task_types"].values()) == 4 * SESSIONS
    assert stats["calls"] == sum(
        1 for s in sessions for a in s["english_answer_list"] for n in a if n["action"]["name"] not in (
            "prepare_to_answer", "ask_user_for_required_parameters")
    )  # fmt: skip
    assert coverage["reference"]["kind"] == "published" and coverage["contamination"] is None
    by = {(row["figure"], row["key"]): row for row in coverage["comparison"]}
    assert by[("sessions", None)]["this"] == SESSIONS and by[("sessions", None)]["official"] == 256
    assert _read_jsonl(out / "dropped.jsonl") == []


def test_a_session_that_repeats_an_official_one_is_dropped(shared_dir, tmp_path):
    args = _command(shared_dir, tmp_path)
    _generate(args)
    out = tmp_path / "out"
    first = _read_jsonl(out / "sessions.jsonl")
    official = tmp_path / "official.jsonl"
    copied = {**first[1], "id": "wild_tool_bench_77"}
    official.write_text(json.dumps(copied) + "\n", encoding="utf-8")
    scripted.reset()
    # the same command again resumes (no model call) and audits against the "official" file
    result = _generate([*args, "--audit-reference", str(official)])
    assert "1 dropped (contamination 1)" in result.output and "1 repeat an official session" in result.output
    sessions = _read_jsonl(out / "sessions.jsonl")
    assert [s["id"] for s in sessions] == [f"wild_tool_bench_{i}" for i in range(SESSIONS - 1)]
    assert [s["english_tasks"] for s in sessions] == [s["english_tasks"] for s in first[:1] + first[2:]]
    assert validate_file(out / "sessions.jsonl").ok
    assert _read_jsonl(out / "replay.jsonl") == [oracle_candidate(s) for s in sessions]
    (dropped,) = _read_jsonl(out / "dropped.jsonl")
    assert dropped["reasons"] == ["contamination: repeats wild_tool_bench_77 of the official dataset"]
    assert dropped["session"]["english_tasks"] == first[1]["english_tasks"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["audit"]["dropped_sessions"] == [
        {"key": dropped["key"], "id": "wild_tool_bench_1", "reasons": dropped["reasons"]}
    ]
    entries = {entry["key"]: entry for entry in manifest["sessions"]}
    assert entries[dropped["key"]]["status"] == "dropped" and entries[dropped["key"]]["id"] is None
    for session in sessions:  # each kept session's folder matches its line
        key = next(k for k, e in entries.items() if e["id"] == session["id"])
        assert json.loads((out / "sessions" / key / "session.json").read_text(encoding="utf-8")) == session
    assert not (out / "sessions" / dropped["key"] / "session.json").exists()
    assert manifest["coverage"]["statistics"]["sessions"] == SESSIONS - 1
    assert manifest["coverage"]["contamination"] == []  # of what is kept


def test_flag_drops_nothing_and_off_skips_the_audit(shared_dir, tmp_path):
    args = _command(shared_dir, tmp_path)
    out = tmp_path / "out"
    _generate([*args, "--audit", "off"])
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["audit"] == {"policy": "off"} and "coverage" not in manifest
    assert not (out / "audit.jsonl").exists()
    first = _read_jsonl(out / "sessions.jsonl")
    official = tmp_path / "official.jsonl"
    official.write_text(json.dumps(first[0]) + "\n", encoding="utf-8")
    scripted.reset()
    result = _generate([*args, "--audit", "flag", "--audit-reference", str(official)])
    assert "audit (flag)" in result.output and "0 dropped" in result.output
    assert _read_jsonl(out / "sessions.jsonl") == first
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["audit"]["contamination"] == 1


def test_an_unknown_policy_is_a_usage_error(shared_dir, tmp_path):
    result = CliRunner().invoke(app, _command(shared_dir, tmp_path, "--audit", "maybe"))
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_a_planted_defect_is_dropped_and_duplicates_keep_the_first(shared_dir, tmp_path):
    _generate(_command(shared_dir, tmp_path, "--audit", "off"))
    out = tmp_path / "out"
    sessions = _read_jsonl(out / "sessions.jsonl")
    # plant a gold call to a tool the session lacks (unknown_tool, an error) in session 2 ...
    node = next(n for a in sessions[2]["english_answer_list"] for n in a if n["action"]["name"] != "prepare_to_answer")
    node["action"]["name"] = "noSuchTool"
    # ... and make session 4 an exact copy of session 0 (the later one goes)
    sessions[4] = {**sessions[0], "id": "wild_tool_bench_4"}
    (out / "sessions.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    found = audit_generation(out)
    assert [(d["id"], [r.split(":")[0] for r in d["reasons"]]) for d in found.dropped] == [
        ("wild_tool_bench_2", ["unknown_tool"]),
        ("wild_tool_bench_4", ["duplicate_session"]),
    ]
    assert found.kept == SESSIONS - 2
    kept = _read_jsonl(out / "sessions.jsonl")
    assert [s["english_tasks"] for s in kept] == [sessions[i]["english_tasks"] for i in (0, 1, 3, 5)]
    assert "2 dropped (unknown_tool 1, duplicate_session 1)" in closing_line(found)
    lines = _read_jsonl(out / "audit.jsonl")
    assert {line["id"] for line in lines} <= {s["id"] for s in kept}
    # the kept copy is flagged with its duplicate finding (an error that leaves it as it is)
    assert any(line["id"] == "wild_tool_bench_0" and line["kind"] == "duplicate_session" for line in lines)


def test_drop_reasons_follow_the_policy():
    from wildtoolbench.bench.audit import Finding

    findings = [
        Finding("a", 0, "schema_violation", "error", "bad type", correction=None),
        Finding("a", 1, "schema_violation", "error", "bad enum"),
        Finding("b", None, "duplicate_session", "error", "same as c", correction={}),
        Finding("c", None, "duplicate_session", "error", "same as b", correction={"exclude": True}),
        Finding("d", 0, "value_not_in_context", "warning", "x"),
    ]
    assert drop_reasons(findings, {"e": "wild_tool_bench_9"}, "drop") == {
        "a": ["schema_violation: bad type"],
        "c": ["duplicate_session: same as b"],
        "e": ["contamination: repeats wild_tool_bench_9 of the official dataset"],
    }
    assert drop_reasons(findings, {"e": "x"}, "flag") == {}
