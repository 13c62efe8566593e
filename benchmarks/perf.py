"""Performance benchmark of ``wtb`` (issues 6 and 15): ``python -m benchmarks.perf``.

One command reproduces every row of issue 15's table for our side, prints it against the published
harness's figures and the targets, and writes everything as JSON (``--json``):

- **in process** (:mod:`benchmarks.inprocess`): harness CPU per model request with the ``replay:``
  oracle, no HTTP, concurrency 1 (the reference fixtures' 24 sessions x ``--repeat``, or the demo);
- **HTTP** (``--latency`` x ``--concurrency`` x ``--workers``): ``wtb eval``'s batch runner
  (:func:`wildtoolbench.runner.arun_eval`, the evaluation graph, the ``openai:`` provider with its HTTP client,
  retries and accounting) against a local OpenAI-compatible server (:mod:`tests.support.openai_stub`)
  that answers every request after a fixed latency. The server runs in its own process, so the
  harness's CPU time is measured apart from the server's; each configuration runs in a fresh harness
  process (clean peak-memory figure, no warm caches from the previous one); with ``--workers`` above 1
  (``wtb eval --workers``) the sessions run in that many worker processes, whose CPU time (start-up
  included) counts as the harness's;
- **cli**: the ``wtb eval`` command itself (run + scoring) on ``--sessions`` sessions at concurrency 64
  against the 0 ms server, then ``wtb score`` alone on its result file; peak RSS of each process
  (``wait4``), CPU, and whether the rescoring gives the same metric.json;
- **large**: the HTTP run and the cli run again at ``--large`` sessions (default 4,096), to show how
  cost grows with the run's size;
- **startup**: median wall time of ``wtb --help`` over ``--repeat-help`` runs.

Sessions are synthetic copies of the bundled demo sessions
(``bench/data/demo_sessions.jsonl``, new ids ``wild_tool_bench_<N>`` and a
tag in the first user message so the server tells them apart) answered by the
demo ``oracle`` candidate (about 9.5 model requests per session).

Reported per HTTP configuration (latency, concurrency, workers): sessions, model requests, wall time,
sessions/s, requests/s, harness CPU time per model request (user + system,
measured around the run only, imports excluded), server CPU per request, and
the harness's peak resident memory (``ru_maxrss``).

Usage::

    python -m benchmarks.perf                              # everything (about 30 minutes on 2 idle cores)
    python -m benchmarks.perf --only http --latency 0 --concurrency 16 --sessions 256
    python -m benchmarks.perf --only cli startup --sessions 1024
    python -m benchmarks.perf --json perf.json             # also write the figures as JSON

At 200 ms a run of ``--sessions`` at concurrency 1 would take hours, so each
200 ms configuration runs at most ``--budget`` seconds' worth of sessions
(estimated from the latency; at least 16 sessions); 0 ms configurations run
all ``--sessions``. Measure on an idle machine: wall-time figures (sessions/s, start-up)
depend on what else runs; CPU per request much less.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.openai_stub import session_copy
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH

REQUESTS_PER_DEMO_SESSION = 9.5  # the oracle's mean over the 6 demo sessions (57 requests)


def synthetic_run(sessions: int, directory: Path, candidate: str = "oracle") -> tuple[Path, Path]:
    """Write ``sessions`` copies of the demo sessions and the candidate's responses for them.

    Returns:
        ``(dataset path, candidates path)`` inside ``directory``.
    """
    demo = [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    responses = {
        row["session_id"]: row["responses"]
        for row in (
            json.loads(line) for line in CANDIDATES_PATH.read_text(encoding="utf-8").splitlines() if line.strip()
        )
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
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]),
        )
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.openai_stub",
                "--dataset",
                str(dataset),
                "--candidates",
                str(candidates),
                "--latency",
                str(latency),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
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


def measured_run(
    run: Any, dataset: Path, base_url: str, concurrency: int, out: Path, workers: int = 1
) -> dict[str, Any]:
    """Run ``run(sessions, context, out, ...)`` (``arun_eval`` or a drop-in) over the whole dataset against
    ``base_url`` with tracing off; returns sessions, requests, infrastructure errors, wall and CPU seconds
    around the run only (this process and its worker processes, ``workers > 1``: their start-up included),
    and peak RSS (MB, this process). The dataset stays on disk, as ``wtb eval`` keeps it."""
    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.runner import open_dataset
    from wildtoolbench.runner.loop import run as run_loop
    from wildtoolbench.tracing import tracing_scope

    sessions = open_dataset(dataset)
    context = EvaluationContext(model="openai:perf", base_url=base_url, timeout=600.0)
    with tracing_scope(no_trace=True):
        before = resource.getrusage(resource.RUSAGE_SELF)
        kids_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        extra = {"workers": workers} if workers > 1 else {}
        summary = run_loop(run(sessions, context, out, concurrency=concurrency, progress=False, **extra))
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "sessions": summary.evaluated,
        "requests": summary.requests,
        "infrastructure_errors": len(summary.infrastructure_errors),
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime)
        + (after.ru_stime - before.ru_stime)
        + (kids.ru_utime - kids_before.ru_utime)
        + (kids.ru_stime - kids_before.ru_stime),
        "peak_rss_mb": after.ru_maxrss / 1024.0,  # kilobytes on Linux
    }


def run_worker(dataset: Path, base_url: str, concurrency: int, out: Path, workers: int = 1) -> dict[str, Any]:
    """One measured run in this process: ``arun_eval`` over the whole dataset (called by ``--worker``), in
    ``workers`` worker processes when above 1 (``wtb eval --workers``)."""
    import wildtoolbench.graphs.evaluation  # noqa: F401 - imports happen before the measurement
    import wildtoolbench.models.providers.openai  # noqa: F401
    from wildtoolbench.runner import arun_eval

    return measured_run(arun_eval, dataset, base_url, concurrency, out, workers)


def measure(sessions: int, latency: float, concurrency: int, workdir: Path, workers: int = 1) -> dict[str, Any]:
    """One configuration: a fresh server process and a fresh harness process (with ``workers`` worker
    processes when above 1); returns the figures."""
    folder = workdir / f"l{int(latency * 1000)}-c{concurrency}-n{sessions}-w{workers}"
    folder.mkdir(parents=True, exist_ok=True)
    dataset, candidates = synthetic_run(sessions, folder)
    server = _Server(dataset, candidates, latency)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.perf",
                "--worker",
                "--dataset",
                str(dataset),
                "--base-url",
                server.base_url,
                "--concurrency",
                str(concurrency),
                "--workers",
                str(workers),
                "--out",
                str(folder / "out"),
            ],
            check=False,
            capture_output=True,
            text=True,
            env=_child_env(),
        )
    finally:
        server_cpu = server.stop()
    if done.returncode != 0:
        raise RuntimeError(f"worker failed: {done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    requests = max(figures["requests"], 1)
    figures.update(
        latency_ms=int(latency * 1000),
        concurrency=concurrency,
        workers=workers,
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
        "| latency | concurrency | workers | sessions | requests | wall s | sessions/s | requests/s | harness CPU ms/request | server CPU ms/request | harness peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['latency_ms']} ms | {r['concurrency']} | {r.get('workers', 1)} | {r['sessions']} | {r['requests']} | {r['wall_s']:.1f} | "
            f"{r['sessions_per_s']:.2f} | {r['requests_per_s']:.1f} | {r['cpu_ms_per_request']:.2f} | "
            f"{r['server_cpu_ms_per_request']:.2f} | {r['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


PUBLISHED = {
    "in_process_cpu_ms": 0.41,
    "http0": {4: 23.2, 16: 22.3, 64: 18.5},
    "http200_c64": 18.1,
    "scaling_200": 34.1,
    "eval_rss_mb": 310.0,
    "help_s": 0.72,
}
"""The published WildToolBench harness on the same 2-core machine (issue 15's table; its eval memory is inference only)."""

TARGETS = {
    "in_process_cpu_ms": 1.0,
    "http0": PUBLISHED["http0"],
    "http200_c64": 30.0,
    "scaling_200": 50.0,
    "eval_rss_mb": 200.0,
    "score_rss_mb": 100.0,
    "help_s": 0.4,
}
"""What we aim for (issue 15): at most / at least these figures."""


def _child_env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    return env


def run_child(argv: Sequence[str]) -> dict[str, Any]:
    """Run ``argv`` to completion; returns its wall seconds, CPU seconds (user + system) and peak RSS (MB).

    Raises:
        RuntimeError: the command exited non-zero (its stderr tail is in the message).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(argv), stdout=out, stderr=err, env=_child_env())
        _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage (peak RSS, CPU)
        wall = time.perf_counter() - started
        process.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {code}: {stderr.decode(errors='replace')[-2000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024.0,
        "stdout": stdout.decode(errors="replace"),
    }


def _wtb() -> list[str]:
    """How to start the command line: the ``wtb`` console script beside this interpreter, else ``python -m wildtoolbench``."""
    script = Path(sys.executable).with_name("wtb")
    return [str(script)] if script.exists() else [sys.executable, "-m", "wildtoolbench"]


def measure_cli_run(sessions: int, concurrency: int, workdir: Path) -> dict[str, Any]:
    """``wtb eval`` (run and its scoring) on ``sessions`` synthetic sessions against the 0 ms server, then
    ``wtb score`` alone on the result file; each in its own process (peak RSS from ``wait4``)."""
    folder = workdir / f"cli-c{concurrency}-n{sessions}"
    folder.mkdir(parents=True, exist_ok=True)
    dataset, candidates = synthetic_run(sessions, folder)
    out = folder / "run"
    server = _Server(dataset, candidates, 0.0)
    try:
        evaluated = run_child(
            [
                *_wtb(),
                "eval",
                "--dataset",
                str(dataset),
                "--model",
                "openai:perf",
                "--base-url",
                server.base_url,
                "--concurrency",
                str(concurrency),
                "--timeout",
                "600",
                "--no-progress",
                "--no-trace",
                "--out",
                str(out),
            ]
        )
    finally:
        server.stop()
    result = out / "result.jsonl"
    scored = run_child(
        [*_wtb(), "score", "--dataset", str(dataset), "--results", str(result), "--out", str(folder / "score")]
    )
    metric = json.loads((folder / "score" / "metric.json").read_text(encoding="utf-8"))
    same = metric == json.loads((out / "metric.json").read_text(encoding="utf-8"))
    return {
        "sessions": sessions,
        "concurrency": concurrency,
        "result_file_mb": result.stat().st_size / 1e6,
        "eval_wall_s": evaluated["wall_s"],
        "eval_cpu_s": evaluated["cpu_s"],
        "eval_peak_rss_mb": evaluated["peak_rss_mb"],
        "score_wall_s": scored["wall_s"],
        "score_cpu_s": scored["cpu_s"],
        "score_peak_rss_mb": scored["peak_rss_mb"],
        "task_accuracy": metric["total_info"]["task"]["accuracy"],
        "rescore_identical": same,
    }


def measure_startup(repeat: int = 10) -> dict[str, Any]:
    """Median and minimum wall seconds of ``wtb --help`` over ``repeat`` runs (one warm-up run first)."""
    command = [*_wtb(), "--help"]
    run_child(command)
    walls = sorted(run_child(command)["wall_s"] for _ in range(repeat))
    return {"command": "wtb --help", "runs": repeat, "median_s": statistics.median(walls), "min_s": walls[0]}


def _http_row(
    rows: Sequence[dict[str, Any]], latency_ms: int, concurrency: int, sessions: int | None = None, workers: int = 1
) -> dict[str, Any] | None:
    for row in rows:
        if (
            row["latency_ms"] == latency_ms
            and row["concurrency"] == concurrency
            and (sessions is None or row["sessions"] == sessions)
            and row.get("workers", 1) == workers
        ):
            return row
    return None


def summary_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Issue 15's table: ``{"measure", "ours", "published", "target", "met"}`` per row, from the figures of :func:`run_all`."""
    rows: list[dict[str, Any]] = []

    def add(measure: str, ours: Any, published: Any, target: str, met: bool | None) -> None:
        rows.append({"measure": measure, "ours": ours, "published": published, "target": target, "met": met})

    inproc = results.get("in_process")
    if inproc:
        cpu = inproc["cpu_ms_per_request"]
        add(
            f"in-process CPU per model request ({inproc['sessions']} sessions, C=1)",
            f"{cpu:.2f} ms",
            f"{PUBLISHED['in_process_cpu_ms']} ms",
            f"<= {TARGETS['in_process_cpu_ms']} ms",
            cpu <= TARGETS["in_process_cpu_ms"],
        )
    http = results.get("http", [])
    sessions = results.get("sessions")
    for workers in sorted({row.get("workers", 1) for row in http}):
        how = "" if workers == 1 else f", --workers {workers}"
        found = [(_http_row(http, 0, c, sessions, workers), c) for c in (4, 16, 64)]
        if all(row is not None for row, _ in found):
            ours = [row["sessions_per_s"] for row, _ in found]  # type: ignore[index]
            published = [PUBLISHED["http0"][c] for _, c in found]
            add(
                f"sessions/s over HTTP, 0 ms server, C=4 / 16 / 64{how}",
                " / ".join(f"{v:.1f}" for v in ours),
                " / ".join(f"{v:.1f}" for v in published),
                ">= published at every C",
                all(o >= p for o, p in zip(ours, published)),
            )
        c1, c64 = _http_row(http, 200, 1), _http_row(http, 200, 64, workers=workers)
        if c64 is not None:
            value = c64["sessions_per_s"]
            add(
                f"sessions/s over HTTP, 200 ms server, C=64{how}",
                f"{value:.1f}",
                f"{PUBLISHED['http200_c64']}",
                f">= {TARGETS['http200_c64']:.0f}",
                value >= TARGETS["http200_c64"],
            )
        if c1 is not None and c64 is not None:
            scaling = c64["sessions_per_s"] / c1["sessions_per_s"]
            add(
                f"scaling 1 -> 64 at 200 ms (ideal 64x){how}",
                f"{scaling:.1f}x",
                f"{PUBLISHED['scaling_200']}x",
                f">= {TARGETS['scaling_200']:.0f}x",
                scaling >= TARGETS["scaling_200"],
            )
    for cli in results.get("cli", []):
        add(
            f"peak RSS of `wtb eval`, {cli['sessions']:,} sessions, incl. scoring",
            f"{cli['eval_peak_rss_mb']:.0f} MB",
            f"{PUBLISHED['eval_rss_mb']:.0f} MB (inference only)",
            f"<= {TARGETS['eval_rss_mb']:.0f} MB",
            cli["eval_peak_rss_mb"] <= TARGETS["eval_rss_mb"],
        )
        add(
            f"`wtb score` alone on that {cli['result_file_mb']:.0f} MB result file",
            f"{cli['score_peak_rss_mb']:.0f} MB, {cli['score_cpu_s']:.1f} s CPU",
            "-",
            f"<= {TARGETS['score_rss_mb']:.0f} MB",
            cli["score_peak_rss_mb"] <= TARGETS["score_rss_mb"],
        )
    startup = results.get("startup")
    if startup:
        add(
            "`wtb --help` (median)",
            f"{startup['median_s']:.2f} s",
            f"{PUBLISHED['help_s']} s",
            f"<= {TARGETS['help_s']} s",
            startup["median_s"] <= TARGETS["help_s"],
        )
    return rows


def summary_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """:func:`summary_rows` as a Markdown table."""
    lines = ["| measure | ours | published | target | met |", "|---|---|---|---|---|"]
    for row in rows:
        met = "-" if row["met"] is None else ("yes" if row["met"] else "**no**")
        lines.append(f"| {row['measure']} | {row['ours']} | {row['published']} | {row['target']} | {met} |")
    return "\n".join(lines)


def cli_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The ``wtb eval`` + ``wtb score`` figures as a Markdown table."""
    lines = [
        "| sessions | concurrency | result file MB | eval wall s | eval CPU s | eval peak RSS MB | score wall s | score CPU s | score peak RSS MB | same metric |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['sessions']} | {r['concurrency']} | {r['result_file_mb']:.1f} | {r['eval_wall_s']:.1f} | {r['eval_cpu_s']:.1f} | "
            f"{r['eval_peak_rss_mb']:.0f} | {r['score_wall_s']:.1f} | {r['score_cpu_s']:.1f} | {r['score_peak_rss_mb']:.0f} | "
            f"{'yes' if r['rescore_identical'] else 'no'} |"
        )
    return "\n".join(lines)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement the arguments ask for (see the module doc); returns the figures."""
    results: dict[str, Any] = {"sessions": args.sessions, "http": [], "cli": []}
    parts = set(args.only or ("in-process", "http", "cli", "startup", "large"))
    if "in-process" in parts:
        from benchmarks.inprocess import measure_in_process

        results["in_process"] = measure_in_process(args.fixtures, repeat=args.repeat)
        _log(f"in process: {results['in_process']['cpu_ms_per_request']:.2f} ms CPU/request")
    with tempfile.TemporaryDirectory(prefix="wtb-perf-") as workdir:
        if "http" in parts:
            for workers in args.workers:
                for latency in args.latency:
                    for concurrency in args.concurrency:
                        if workers > 1 and concurrency < workers:
                            continue  # a worker would idle
                        n = sessions_for(latency, concurrency, args.sessions, args.budget)
                        row = measure(n, latency, concurrency, Path(workdir), workers)
                        results["http"].append(row)
                        _log(
                            f"latency {row['latency_ms']} ms, concurrency {concurrency}, workers {workers}: "
                            f"{row['sessions']} sessions, {row['sessions_per_s']:.2f} sessions/s, "
                            f"{row['cpu_ms_per_request']:.2f} ms CPU/request, peak RSS {row['peak_rss_mb']:.0f} MB"
                        )
        if "cli" in parts:
            results["cli"].append(measure_cli_run(args.sessions, 64, Path(workdir)))
            _log(f"wtb eval + score, {args.sessions} sessions: {results['cli'][-1]}")
        if "large" in parts:
            for workers in args.workers:
                row = measure(args.large, 0.0, 64, Path(workdir), workers)
                results["http"].append(row)
                _log(
                    f"latency 0 ms, concurrency 64, workers {workers}: {row['sessions']} sessions, {row['sessions_per_s']:.2f} sessions/s"
                )
            results["cli"].append(measure_cli_run(args.large, 64, Path(workdir)))
            _log(f"wtb eval + score, {args.large} sessions: {results['cli'][-1]}")
    if "startup" in parts:
        results["startup"] = measure_startup(args.repeat_help)
        _log(f"wtb --help: median {results['startup']['median_s']:.3f} s")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module doc)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.perf", description="Throughput, CPU, memory and start-up of wtb."
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=1024,
        help="sessions per HTTP configuration and for the memory run (default 1024)",
    )
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.2], help="server latency in seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        help="HTTP runs: worker processes (`wtb eval --workers`; default 1 2)",
    )
    parser.add_argument(
        "--budget", type=float, default=30.0, help="seconds of model latency per configuration with latency > 0"
    )
    parser.add_argument(
        "--large", type=int, default=4096, help="sessions of the large run (0 ms, concurrency 64; default 4096)"
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="in-process run: times each fixture session runs (default 5)"
    )
    parser.add_argument("--repeat-help", type=int, default=10, help="runs of `wtb --help` (default 10)")
    parser.add_argument(
        "--fixtures",
        type=Path,
        help="reference fixtures folder for the in-process run (default ../shared/fixtures/reference, else the demo)",
    )
    parser.add_argument(
        "--only", nargs="+", choices=["in-process", "http", "cli", "startup", "large"], help="run only these parts"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.dataset, args.base_url, args.concurrency[0], args.out, args.workers[0])))
        return 0

    started = time.perf_counter()
    results = run_all(args)
    load = os.getloadavg()
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}"
    )
    results.update(machine=machine, load_average_end=load, total_wall_s=time.perf_counter() - started)
    results["summary"] = summary_rows(results)
    print(f"machine: {machine}; load average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}\n")
    if results["summary"]:  # a part run may measure no row of issue 15's table
        print(summary_table(results["summary"]))
    if results["http"]:
        print("\nHTTP runs (batch runner, no scoring):\n")
        print(table(results["http"]))
    if results["cli"]:
        print("\n`wtb eval` (run + scoring) and `wtb score` alone, 0 ms server:\n")
        print(cli_table(results["cli"]))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
