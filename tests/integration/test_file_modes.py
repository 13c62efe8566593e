"""Output files get the mode of a plain file (issue 14 part 4): 0644 under umask 022, 0640 under 027,
for every writer: result.jsonl (appended, then rewritten sorted), errors.jsonl, summary.json,
run.json, score.jsonl, metric.json, summary_metrics.json and the outputs of ``wtb generate``."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gen_scripts import session_script
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths

REPO = Path(__file__).resolve().parents[2]


def _wtb(*args: str, umask: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=str(REPO), LANGSMITH_TRACING="false"),
        timeout=300,
        umask=umask,
        stdin=subprocess.DEVNULL,
    )


def _modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
        for p in folder.rglob("*")
        if p.is_file() and p.name != ".wtb-eval.lock"
    }


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_every_eval_and_score_output_gets_the_mode_of_a_plain_file(tmp_path, umask, mode):
    run = tmp_path / "run"
    # --ids out of order: result.jsonl is appended, then rewritten sorted at the end.
    ok = _wtb(
        "eval",
        "--model",
        f"replay:{CANDIDATES_PATH}#demo-model",
        "--ids",
        "3,1,0",
        "--out",
        str(run),
        "--no-progress",
        "--no-trace",
        umask=umask,
    )
    assert ok.returncode == 0, ok.stderr
    assert [json.loads(line)["id"] for line in (run / "result.jsonl").read_text(encoding="utf-8").splitlines()] == [
        "wild_tool_bench_0",
        "wild_tool_bench_1",
        "wild_tool_bench_3",
    ]
    expected = {"result.jsonl", "score.jsonl", "metric.json", "summary_metrics.json", "summary.json", "run.json"}
    assert _modes(run) == {name: mode for name in expected}

    failing = tmp_path / "failing"  # a model request that fails for good: errors.jsonl
    failed = _wtb(
        "eval",
        "--model",
        "openai:any-model",
        "--base-url",
        f"http://127.0.0.1:{_closed_port()}/v1",
        "--no-preflight",  # the session runs and fails: errors.jsonl
        "--max-attempts",
        "1",
        "--ids",
        "0",
        "--out",
        str(failing),
        "--no-progress",
        "--no-trace",
        umask=umask,
    )
    assert failed.returncode == 3, failed.stderr
    assert _modes(failing) == {name: mode for name in ("errors.jsonl", "result.jsonl", "summary.json", "run.json")}

    scored = _wtb(
        "score",
        "--dataset",
        str(SESSIONS_PATH),
        "--results",
        str(run / "result.jsonl"),
        "--out",
        str(tmp_path / "scored"),
        umask=umask,
    )
    assert scored.returncode == 0, scored.stderr
    assert _modes(tmp_path / "scored") == {n: mode for n in ("score.jsonl", "metric.json", "summary_metrics.json")}


def test_generation_outputs_get_the_mode_of_a_plain_file(tmp_path):
    session = json.loads(SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[0])
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(session["english_tools"], ensure_ascii=False) + "\n", encoding="utf-8")
    paths = ["ST,CC"]
    plans = plan_sessions(load_tool_lists(tools), select_type_paths(2, paths), seed=0)
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    out = tmp_path / "gen"
    result = _wtb(
        "generate",
        "--tools",
        str(tools),
        "--layers",
        "2",
        "--paths",
        paths[0],
        "--out",
        str(out),
        "--checker-model",
        "none",
        "--user-model",
        spec,
        "--planner-model",
        spec,
        "--tool-model",
        spec,
        "--agent-model",
        spec,
        "--no-progress",
        "--no-trace",
        umask=0o027,
    )
    assert result.returncode == 0, result.stderr
    modes = _modes(out)
    assert {"sessions.jsonl", "replay.jsonl", "failures.jsonl", "manifest.json"} <= set(modes)
    assert any(name.endswith("transcript.json") for name in modes)
    assert set(modes.values()) == {0o640}, modes
