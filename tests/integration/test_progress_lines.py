"""``wtb eval`` off a terminal prints one line per finished session on stderr (issue 24 finding 11,
docs/settings.md §7.7); before the fix it printed nothing until the end (24 minutes of silence). The
counter is named for what it counts (a name check, marked unscored), never the accuracy the table reports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from wildtoolbench.bench.demo_data import CANDIDATES_PATH

REPO = Path(__file__).resolve().parents[2]


def test_a_line_per_session_when_stderr_is_not_a_terminal(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WTB_")}
    command = [sys.executable, "-m", "wildtoolbench", "eval", "--model", f"replay:{CANDIDATES_PATH}#demo-model"]
    command += ["--out", str(tmp_path), "--no-trace"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    pattern = re.compile(r"^\[(\d)/6\] (wild_tool_bench_\d): name check (\d)/4 tasks \(unscored\), \d+\.\d+s$")
    matches = [pattern.match(line) for line in lines]
    assert len(lines) == 6 and all(matches), lines
    assert [int(m.group(1)) for m in matches] == [1, 2, 3, 4, 5, 6]
    right = {m.group(2): int(m.group(3)) for m in matches}
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "result.jsonl").read_text().splitlines())}
    assert right == {
        session_id: sum(t["action_name_label"] == "correct" for t in record["result"])
        for session_id, record in records.items()
    }
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["tasks_right_tool_names"] == sum(right.values()) == 20 and "tasks_correct" not in summary
    assert "16/24" in done.stdout  # the accuracy: in the table only, a different count
    assert "right actions" not in done.stderr


def test_no_progress_prints_no_session_lines(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WTB_")}
    command = [sys.executable, "-m", "wildtoolbench", "eval", "--model", f"replay:{CANDIDATES_PATH}#demo-model"]
    command += ["--out", str(tmp_path), "--no-trace", "--no-progress", "--limit", "2"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("[")]


def test_a_long_session_line_is_never_folded(tmp_path):
    """A variant's id (``wild_tool_bench_0~transitions+1~t0``) makes the line longer than the 80 columns a console
    assumes off a terminal: it stays one line (before: folded in two, the time alone on the next line)."""
    sessions = [json.loads(line) for line in (REPO / "bench" / "data" / "demo_sessions.jsonl").read_text().splitlines()]
    session = dict(sessions[0], id="wild_tool_bench_0~transitions+1~t0" + "~x" * 20)
    dataset = tmp_path / "long_ids.jsonl"
    dataset.write_text(json.dumps(session, ensure_ascii=False) + "\n", "utf-8")
    replies = next(
        row
        for row in map(json.loads, Path(CANDIDATES_PATH).read_text("utf-8").splitlines())
        if row["session_id"] == sessions[0]["id"] and row["candidate"] == "demo-model"
    )
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(json.dumps(dict(replies, session_id=session["id"])) + "\n", "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WTB_")} | {"COLUMNS": "80"}
    command = [sys.executable, "-m", "wildtoolbench", "eval", "--model", f"replay:{candidates}#demo-model"]
    command += ["--dataset", str(dataset), "--out", str(tmp_path / "run"), "--no-trace"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(line) > 80
    assert re.match(r"^\[1/1\] " + re.escape(session["id"]) + r": name check \d/4 tasks \(unscored\), \d+\.\d+s$", line)
