"""Peak memory of a run whose gold holds one huge observation: ``python -m benchmarks.big_observation``.

What it measures: the first demo session (``bench/data/demo_sessions.jsonl``) with the observation of
its first gold node replaced by a string of ``--mb`` megabytes (default 50), answered by its scripted
``oracle`` candidate through ``replay:``, run by ``wtb eval`` (in-process, concurrency 1, tracing off)
and then scored, in a fresh child process. Reported: the observation's size, the dataset file's size,
and the child's peak resident memory (``ru_maxrss`` of the child, MB), with the peak of the same run
on an observation of 0 MB as the baseline. The figure of interest is ``extra_mb / observation_mb``:
how many times the observation is held at once.

Usage::

    python -m benchmarks.big_observation            # 50 MB
    python -m benchmarks.big_observation --mb 20 --json big.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _dataset(folder: Path, megabytes: float) -> tuple[Path, Path]:
    from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH

    session = json.loads(SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[0])
    node = session["english_answer_list"][0][0]
    node["observation"] = {"payload": "x" * int(megabytes * 1_000_000)}
    session["answer_list"][0][0]["observation"] = node["observation"]
    sessions = folder / "sessions.jsonl"
    sessions.write_text(json.dumps(session) + "\n", encoding="utf-8")
    candidates = folder / "candidates.jsonl"
    lines = [line for line in CANDIDATES_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = [line for line in lines if json.loads(line)["session_id"] == session["id"]]
    candidates.write_text("\n".join(keep) + "\n", encoding="utf-8")
    return sessions, candidates


def peak_rss_mb(megabytes: float) -> dict[str, float]:
    """Run ``wtb eval`` on the session with a ``megabytes`` MB observation in a child; its peak RSS (MB)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sessions, candidates = _dataset(folder, megabytes)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env.pop("LANGSMITH_TRACING", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        run = subprocess.run(
            [sys.executable, "-m", "wildtoolbench.cli", "eval", "--dataset", str(sessions), "--model",
             f"replay:{candidates}#oracle", "--out", str(folder / "run"), "--no-progress", "--no-trace"],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        if run.returncode != 0:
            raise SystemExit(f"wtb eval failed ({run.returncode}):\n{run.stderr[-2000:]}")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if peak <= before:
            raise SystemExit("the child's peak is hidden by an earlier, larger child: run one size per process")
        return {"observation_mb": megabytes, "dataset_mb": sessions.stat().st_size / 1e6, "peak_rss_mb": peak / 1024}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the observation in MB (default 50)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    base = peak_rss_mb(0)  # the smaller run first: ru_maxrss of children is the largest so far
    big = peak_rss_mb(args.mb)
    extra = big["peak_rss_mb"] - base["peak_rss_mb"]
    figures = {**big, "baseline_peak_rss_mb": base["peak_rss_mb"], "extra_mb": extra, "copies": extra / args.mb}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
