"""Performance benchmark of the evaluation harness (issue 6): ``python -m benchmarks.perf``.

What it measures: ``wtb eval``'s batch runner (:func:`wtb.runner.arun_eval`,
the evaluation graph, the ``openai:`` provider with its HTTP client, retries
and accounting) against a local OpenAI-compatible server
(:mod:`tests.support.openai_stub`) that answers every request after a fixed latency.
The server runs in its own process, so the harness's CPU time is measured
apart from the server's; each configuration runs in a fresh harness process
(clean peak-memory figure, no warm caches from the previous one).

Sessions are synthetic copies of the bundled demo sessions
(``bench/data/demo_sessions.jsonl``, new ids ``wild_tool_bench_<N>`` and a
tag in the first user message so the server tells them apart) answered by the
demo ``oracle`` candidate (about 9.5 model requests per session).

Reported per (latency, concurrency): sessions, model requests, wall time,
sessions/s, requests/s, harness CPU time per model request (user + system,
measured around the run only, imports excluded), server CPU per request, and
the harness's peak resident memory (``ru_maxrss``).

Usage::

    python -m benchmarks.perf                              # 1,024 sessions; latency 0 and 200 ms; concurrency 1, 4, 16, 64
    python -m benchmarks.perf --latency 0 --concurrency 16 --sessions 256
    python -m benchmarks.perf --json perf.json             # also write the figures as JSON

At 200 ms a run of ``--sessions`` at concurrency 1 would take hours, so each
200 ms configuration runs at most ``--budget`` seconds' worth of sessions
(estimated from the latency; at least 16 sessions); 0 ms configurations run
all ``--sessions``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from tests.support.openai_stub import session_copy

REQUESTS_PER_DEMO_SESSION = 9.5  # the oracle's mean over the 6 demo sessions (57 requests)


def synthetic_run(sessions: int, directory: Path, candidate: str = "oracle") -> tuple[Path, Path]:
    """Write ``sessions`` copies of the demo sessions and the candidate's responses for them.

    Returns:
        ``(dataset path, candidates path)`` inside ``directory``.
    """
    demo = [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    responses = {
        row["session_id"]: row["responses"]
        for row in (json.loads(line) for line in CANDIDATES_PATH.read_text(encoding="utf-8").splitlines() if line.strip())
        if row["candidate"] == candidate
    }
    dataset, candidates = directory / "sessions.jsonl", directory / "candidates.jsonl"
    with open(dataset, "w", encoding="utf-8") as data, open(candidates, "w", encoding="utf-8") as cands:
        for number in range(sessions):
            base = demo[number % len(demo)]
            copy = session_copy(base, f"wild_tool_bench_{number}", f"perf {number}")
            data.write(json.dumps(copy, ensure_ascii=False) + "\n")
            row = {"session_id": copy["id"], "candidate": candidate, "responses": responses[base["id"]]}
            cands.write(json.dumps(row, ensure_ascii=False) + "\n")
    return dataset, candidates


class _Server:
    """``python -m tests.support.openai_stub`` in a child process; its CPU time is read when it exits."""

    def __init__(self, dataset: Path, candidates: Path, latency: float):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.openai_stub", "--dataset", str(dataset), "--candidates", str(candidates),
             "--latency", str(latency)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        line = self.process.stdout.readline().strip() if self.process.stdout else ""
        if not line.startswith("READY "):
            self.process.kill()
            raise RuntimeError(f"stub server did not start: {line!r}")
        self.base_url = line.split(" ", 1)[1]
        self.cpu = 0.0

    def stop(self) -> float:
        """Stop the server; returns its CPU seconds (user + system)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self.cpu = usage.ru_utime + usage.ru_stime
        return self.cpu


def run_worker(dataset: Path, base_url: str, concurrency: int, out: Path) -> dict[str, Any]:
    """One measured run in this process: ``arun_eval`` over the whole dataset (called by ``--worker``)."""
    from wtb.runner import arun_eval, load_dataset
    from wtb.tracing import tracing_scope
    from graphs.evaluation_context import EvaluationContext

    import graphs.evaluation  # noqa: F401 - imports happen before the measurement
    import models.openai  # noqa: F401

    sessions = load_dataset(dataset)
    context = EvaluationContext(model="openai:perf", base_url=base_url, timeout=600.0)
    with tracing_scope(no_trace=True):
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        summary = asyncio.run(arun_eval(sessions, context, out, concurrency=concurrency, progress=False))
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "sessions": summary.evaluated,
        "requests": summary.requests,
        "infrastructure_errors": len(summary.infrastructure_errors),
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_rss_mb": after.ru_maxrss / 1024.0,  # kilobytes on Linux
    }


def measure(sessions: int, latency: float, concurrency: int, workdir: Path) -> dict[str, Any]:
    """One configuration: a fresh server process and a fresh harness process; returns the figures."""
    folder = workdir / f"l{int(latency * 1000)}-c{concurrency}-n{sessions}"
    folder.mkdir(parents=True, exist_ok=True)
    dataset, candidates = synthetic_run(sessions, folder)
    server = _Server(dataset, candidates, latency)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.perf", "--worker", "--dataset", str(dataset), "--base-url", server.base_url,
             "--concurrency", str(concurrency), "--out", str(folder / "out")],
            capture_output=True, text=True, env={k: v for k, v in os.environ.items() if not k.startswith("LANGSMITH_")},
        )  # fmt: skip
    finally:
        server_cpu = server.stop()
    if done.returncode != 0:
        raise RuntimeError(f"worker failed: {done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    requests = max(figures["requests"], 1)
    figures.update(
        latency_ms=int(latency * 1000),
        concurrency=concurrency,
        sessions_per_s=figures["sessions"] / figures["wall_s"],
        requests_per_s=figures["requests"] / figures["wall_s"],
        cpu_ms_per_request=1000.0 * figures["cpu_s"] / requests,
        server_cpu_ms_per_request=1000.0 * server_cpu / requests,
    )
    return figures


def sessions_for(latency: float, concurrency: int, sessions: int, budget: float) -> int:
    """Sessions to run for one configuration: all of them at 0 ms; at most ``budget`` seconds' worth otherwise."""
    if latency <= 0:
        return sessions
    per_session = REQUESTS_PER_DEMO_SESSION * latency / concurrency
    return max(16, min(sessions, int(budget / per_session)))


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| latency | concurrency | sessions | requests | wall s | sessions/s | requests/s | harness CPU ms/request | server CPU ms/request | harness peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['latency_ms']} ms | {r['concurrency']} | {r['sessions']} | {r['requests']} | {r['wall_s']:.1f} | "
            f"{r['sessions_per_s']:.2f} | {r['requests_per_s']:.1f} | {r['cpu_ms_per_request']:.2f} | "
            f"{r['server_cpu_ms_per_request']:.2f} | {r['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module doc)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf", description="Throughput, CPU and memory of wtb eval.")
    parser.add_argument("--sessions", type=int, default=1024, help="sessions per configuration (default 1024)")
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.2], help="server latency in seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of model latency per configuration with latency > 0")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.dataset, args.base_url, args.concurrency[0], args.out)))
        return 0

    rows = []
    with tempfile.TemporaryDirectory(prefix="wtb-perf-") as workdir:
        for latency in args.latency:
            for concurrency in args.concurrency:
                n = sessions_for(latency, concurrency, args.sessions, args.budget)
                row = measure(n, latency, concurrency, Path(workdir))
                rows.append(row)
                print(
                    f"latency {row['latency_ms']} ms, concurrency {concurrency}: {row['sessions']} sessions, "
                    f"{row['sessions_per_s']:.2f} sessions/s, {row['cpu_ms_per_request']:.2f} ms CPU/request, "
                    f"peak RSS {row['peak_rss_mb']:.0f} MB",
                    file=sys.stderr,
                    flush=True,
                )
    machine = f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}"
    print(f"machine: {machine}\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
