"""Several ``wtb eval`` on one finished folder at once (docs/cli.md §3.2): scoring holds the folder's lock, so no
command removes or replaces another's temporary files; each ends with the scores or with the clear "another
wtb eval is already writing" message, never a rename error, and the folder's scores are those of the run."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from filelock import FileLock

from wildtoolbench.common.run_folder import LOCK_FILE

REPO = Path(__file__).resolve().parents[2]
MODEL = f"replay:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}#demo-model"


def _command(out: Path) -> list[str]:
    return [sys.executable, "-m", "wildtoolbench.cli", "eval", "--model", MODEL, "--out", str(out),
            "--no-progress", "--no-trace"]  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "WTB_"))}
    return {**env, "PYTHONPATH": str(REPO)}


def test_concurrent_evals_on_a_finished_folder(tmp_path):
    out = tmp_path / "run"
    subprocess.run(_command(out), cwd=REPO, env=_env(), check=True, capture_output=True, timeout=300)
    metric = (out / "metric.json").read_text()
    scores = (out / "score.jsonl").read_text()
    processes = [
        subprocess.Popen(_command(out), cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in processes]
    for code, stderr in outcomes:
        assert code in (0, 1), stderr
        assert ".tmp" not in stderr and "Traceback" not in stderr and "No such file" not in stderr, stderr
        if code == 1:
            assert "another `wtb eval` is already writing to" in stderr, stderr
    assert any(code == 0 for code, _ in outcomes)
    assert (out / "metric.json").read_text() == metric and (out / "score.jsonl").read_text() == scores
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_scoring_waits_for_the_folder_lock(tmp_path):
    from wildtoolbench.scoring.run import score_run

    out = tmp_path / "run"
    subprocess.run(_command(out), cwd=REPO, env=_env(), check=True, capture_output=True, timeout=300)
    (out / "metric.json").unlink()
    held = FileLock(str(out / LOCK_FILE))
    held.acquire()
    done = threading.Event()
    thread = threading.Thread(
        target=lambda: (
            score_run(REPO / "bench" / "data" / "demo_sessions.jsonl", out / "result.jsonl", out),
            done.set(),
        )
    )
    thread.start()
    time.sleep(1.0)  # a bound on how long the scoring is watched while the lock is held, not a timing assertion
    assert not done.is_set() and not (out / "metric.json").exists()
    held.release()
    thread.join(timeout=120)
    assert done.is_set() and (out / "metric.json").is_file()
