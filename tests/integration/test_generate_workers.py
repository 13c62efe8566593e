"""``wtb generate --workers N`` (issue 42): the same outputs as one process for a scripted run, resume per
session, and the combinations it refuses (docs/generation.md §12)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.support.gen_scripts import session_script
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths
from wildtoolbench.cli import app

SAMPLES = 6


def _args(shared_dir: Path, tmp_path: Path, out: Path, *extra: str) -> list[str]:
    """A scripted ``wtb generate`` of 6 sessions on 6 real tool lists; the first session's planner fails."""
    tools = tmp_path / "tools.jsonl"
    if not tools.exists():
        lines = (shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()
        tools.write_text("\n".join(lines[10:16]) + "\n", encoding="utf-8")
        plans = plan_sessions(load_tool_lists(tools), select_type_paths(2, None, SAMPLES, 5), seed=5, year=2025)
        scripts = {p.key: session_script(p.as_state()) for p in plans}
        scripts[plans[0].key]["planner"] = ["not json at all"] * 3  # fails on the models' output
        (tmp_path / "roles.json").write_text(json.dumps({"sessions": scripts}), encoding="utf-8")
    spec = f"scripted:{tmp_path / 'roles.json'}"
    return [
        *("generate", "--tools", str(tools), "--out", str(out), "--layers", "2", "--samples", str(SAMPLES)),
        *("--seed", "5", "--year", "2025", "--vague-rate", "0", "--concurrency", "3", "--no-progress"),
        *(arg for role in ("user", "planner", "tool", "agent", "checker") for arg in (f"--{role}-model", spec)),
        *extra,
    ]


def _timeless(value):
    """``value`` without its measured times (``seconds`` of a captured model call)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _files(out: Path) -> dict[str, object]:
    """Every output file's content without times, but the manifest, ``outcome.json`` and the live transcripts."""
    found: dict[str, object] = {}
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.name in ("manifest.json", "outcome.json") or "transcripts" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            found[str(path.relative_to(out))] = [_timeless(json.loads(line)) for line in text.splitlines() if line]
        else:
            found[str(path.relative_to(out))] = _timeless(json.loads(text)) if path.suffix == ".json" else text
    return found


def _manifest(out: Path) -> dict:
    """``manifest.json`` without times and without its own folder's name (the coverage's dataset path)."""
    manifest = _timeless(json.loads((out / "manifest.json").read_text(encoding="utf-8")))
    assert manifest["coverage"].pop("dataset") == str(out / "sessions.jsonl")
    return manifest


def _outcome(out: Path, key: str) -> dict:
    outcome = _timeless(json.loads((out / "sessions" / key / "outcome.json").read_text(encoding="utf-8")))
    outcome.get("usage", {}).pop("wall_time", None)
    return outcome


def test_two_workers_write_what_one_process_writes_and_resume_per_session(shared_dir, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    first = CliRunner().invoke(app, _args(shared_dir, tmp_path, one))
    assert first.exit_code == 0, first.output
    result = CliRunner().invoke(app, _args(shared_dir, tmp_path, two, "--workers", "2"))
    assert result.exit_code == 0, result.output
    assert "generated 5 session(s), 1 failed" in result.output
    assert _files(two) == _files(one) and len(_files(one)) > 6 * 5
    assert _manifest(two) == _manifest(one)
    keys = sorted(p.name for p in (one / "sessions").iterdir())
    assert len(keys) == SAMPLES and all(_outcome(two, k) == _outcome(one, k) for k in keys)
    assert all((two / "transcripts" / f"{k}.jsonl").stat().st_size > 0 for k in keys)

    # resume: one session's outcome.json removed; the same command generates only that session again
    (two / "sessions" / keys[3] / "outcome.json").unlink()
    (two / "sessions" / keys[4] / "transcript.json").write_text("[]", encoding="utf-8")  # kept, not rewritten
    again = CliRunner().invoke(app, _args(shared_dir, tmp_path, two, "--workers", "2"))
    assert again.exit_code == 0, again.output
    assert "resumed: kept 5 session(s) finished by an earlier run" in again.output, again.output
    assert _outcome(two, keys[3]) == _outcome(one, keys[3])
    assert (two / "sessions" / keys[4] / "transcript.json").read_text(encoding="utf-8") == "[]"
    assert (two / "sessions.jsonl").read_text(encoding="utf-8") == (one / "sessions.jsonl").read_text(encoding="utf-8")


def test_workers_are_refused_with_a_server_or_a_local_model(shared_dir, tmp_path):
    out = tmp_path / "o"
    server = CliRunner().invoke(
        app, _args(shared_dir, tmp_path, out, "--workers", "2", "--server", "http://127.0.0.1:9")
    )
    assert server.exit_code == 2 and "--workers > 1 runs the graph in local processes" in server.output
    local = CliRunner().invoke(app, [*_args(shared_dir, tmp_path, out, "--workers", "2"), "--agent-model", "local"])
    assert local.exit_code == 2 and "'local' is served by one local server" in local.output
    assert not (out / "sessions").exists()
