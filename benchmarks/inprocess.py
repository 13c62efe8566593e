"""In-process CPU cost of the harness per model request: ``python -m benchmarks.inprocess``.

What it measures: the harness around path matching with no network in the way.
The reference fixtures' sessions (``../shared/fixtures/reference/sessions.jsonl``,
24 sessions) are answered by their scripted ``oracle`` candidate
(``candidates.jsonl``) through the ``replay:`` provider, each session run
``--repeat`` times under fresh ids (copies made like
:func:`tests.support.openai_stub.session_copy`, so no cache of an earlier copy
helps a later one), one session at a time (concurrency 1) through the real
batch runner (:func:`wildtoolbench.runner.arun_eval`: evaluation graph, replay model,
redaction, result file with its fsync), with tracing off
(``wildtoolbench.tracing.tracing_scope(no_trace=True)``).

The run happens in a fresh child process. Reported: ``cpu_ms_per_request``,
the user + system CPU time of that process around the run only (imports, the
dataset load and the replay file's parse happen before and are excluded)
divided by the model requests made; the requests, sessions, wall time and the
child's peak resident memory (``ru_maxrss``). When the fixtures folder is
absent, the bundled demo (``bench/data/demo_sessions.jsonl`` with
``bench/data/demo_candidates.jsonl#oracle``) is used instead, and the output
says so (``source: demo``).

Usage::

    python -m benchmarks.inprocess                      # ../shared/fixtures/reference, 5 repeats
    python -m benchmarks.inprocess --repeat 10 --json inprocess.json
    python -m benchmarks.inprocess --fixtures DIR       # DIR holds sessions.jsonl + candidates.jsonl
    python -m benchmarks.inprocess --profile run.prof   # also a cProfile of the measured run (pstats file)

From Python (``benchmarks.perf`` does this)::

    from benchmarks.inprocess import measure_in_process
    figures = measure_in_process(repeat=5)   # {"source", "sessions", "requests", "wall_s", "cpu_s", ...}
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH

REPO_ROOT = Path(__file__).resolve().parents[1]
REFERENCE_FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "reference"
CANDIDATE = "oracle"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def source_files(fixtures: Path | None) -> tuple[str, Path, Path]:
    """``(source, sessions path, candidates path)`` of a fixtures folder.

    ``fixtures=None`` means :data:`REFERENCE_FIXTURES` when it exists, else the
    bundled demo (``source == "demo"``).

    Raises:
        FileNotFoundError: an explicit ``fixtures`` folder without ``sessions.jsonl``
            or ``candidates.jsonl``.
    """
    if fixtures is None:
        if not (REFERENCE_FIXTURES / "sessions.jsonl").is_file():
            return "demo", SESSIONS_PATH, CANDIDATES_PATH
        fixtures = REFERENCE_FIXTURES
    sessions, candidates = fixtures / "sessions.jsonl", fixtures / "candidates.jsonl"
    for path in (sessions, candidates):
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found (--fixtures needs sessions.jsonl and candidates.jsonl)")
    return str(fixtures), sessions, candidates


def write_copies(sessions_path: Path, candidates_path: Path, repeat: int, directory: Path) -> tuple[Path, Path]:
    """Write ``repeat`` copies of every session with fresh ids, and the oracle's responses for them.

    Returns:
        ``(dataset path, replay file path)`` inside ``directory``.

    Raises:
        ValueError: the candidates file has no ``oracle`` responses for a session.
    """
    from tests.support.openai_stub import session_copy

    sessions = _jsonl(sessions_path)
    responses = {
        row["session_id"]: row["responses"] for row in _jsonl(candidates_path) if row["candidate"] == CANDIDATE
    }
    missing = [s["id"] for s in sessions if s["id"] not in responses]
    if missing:
        raise ValueError(f"{candidates_path}: no {CANDIDATE!r} responses for {', '.join(missing)}")
    dataset, script = directory / "sessions.jsonl", directory / "candidates.jsonl"
    with (
        open(dataset, "w", encoding="utf-8") as data,
        open(script, "w", encoding="utf-8") as replay,
    ):
        number = 0
        for _ in range(repeat):
            for base in sessions:
                copy = session_copy(base, f"wild_tool_bench_{number}", f"inprocess {number}")
                data.write(json.dumps(copy, ensure_ascii=False) + "\n")
                row = {
                    "session_id": copy["id"],
                    "candidate": CANDIDATE,
                    "responses": responses[base["id"]],
                }
                replay.write(json.dumps(row, ensure_ascii=False) + "\n")
                number += 1
    return dataset, script


def run_worker(dataset: Path, script: Path, out: Path, profile: Path | None = None) -> dict[str, Any]:
    """The measured run, in this process (called by ``--worker``): ``arun_eval`` at concurrency 1.

    Returns:
        ``{"sessions", "requests", "infrastructure_errors", "wall_s", "cpu_s", "peak_rss_mb"}``.
    """
    import wildtoolbench.graphs.evaluation  # noqa: F401 - imports happen before the measurement
    from wildtoolbench.models.providers.replay import load_responses
    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.runner import arun_eval, load_dataset
    from wildtoolbench.runner.loop import run as run_loop
    from wildtoolbench.tracing import tracing_scope

    sessions = load_dataset(dataset)
    load_responses(script, CANDIDATE)  # parse the replay file once, outside the measurement (it is cached)
    context = EvaluationContext(model=f"replay:{script}#{CANDIDATE}")
    profiler = None
    if profile is not None:
        import cProfile

        profiler = cProfile.Profile()
    with tracing_scope(no_trace=True):
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        summary = run_loop(arun_eval(sessions, context, out, concurrency=1, progress=False))
        if profiler is not None:
            profiler.disable()
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
    if profiler is not None:
        profiler.dump_stats(str(profile))
    return {
        "sessions": summary.evaluated,
        "requests": summary.requests,
        "infrastructure_errors": len(summary.infrastructure_errors),
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_rss_mb": after.ru_maxrss / 1024.0,  # kilobytes on Linux
    }


def measure_in_process(fixtures: Path | None = None, repeat: int = 5, *, profile: Path | None = None) -> dict[str, Any]:
    """Run the benchmark of the module doc in a fresh child process; returns its figures.

    Args:
        fixtures: folder with ``sessions.jsonl`` and ``candidates.jsonl`` (an ``oracle`` line per
            session); ``None`` means ``../shared/fixtures/reference`` beside the repository when it
            exists, else the bundled demo.
        repeat: copies of every session (each under a fresh id).
        profile: also write a cProfile of the measured run to this file (the figures then include
            the profiler's overhead).

    Returns:
        ``{"source" (the fixtures folder, or "demo"), "repeat", "sessions", "requests",
        "infrastructure_errors", "wall_s", "cpu_s", "cpu_ms_per_request", "peak_rss_mb"}``.

    Raises:
        FileNotFoundError: an explicit ``fixtures`` folder without the two files.
        RuntimeError: the child process failed.
    """
    source, sessions_path, candidates_path = source_files(fixtures)
    with tempfile.TemporaryDirectory(prefix="wtb-inprocess-") as workdir:
        folder = Path(workdir)
        dataset, script = write_copies(sessions_path, candidates_path, repeat, folder)
        command = [
            sys.executable,
            "-m",
            "benchmarks.inprocess",
            "--worker",
            "--dataset",
            str(dataset),
            "--script",
            str(script),
            "--out",
            str(folder / "out"),
        ]
        if profile is not None:
            command += ["--profile", str(Path(profile).resolve())]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        done = subprocess.run(command, check=False, capture_output=True, text=True, env=env, cwd=REPO_ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark worker failed: {done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["source"] = source
    figures["repeat"] = repeat
    figures["cpu_ms_per_request"] = 1000.0 * figures["cpu_s"] / max(figures["requests"], 1)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module doc)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.inprocess",
        description="Harness CPU per model request, in process, concurrency 1.",
    )
    parser.add_argument(
        "--fixtures",
        type=Path,
        help="folder with sessions.jsonl + candidates.jsonl (default ../shared/fixtures/reference, else the demo)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="runs of every session, each under a fresh id (default 5)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--profile",
        type=Path,
        help="write a cProfile (pstats) of the measured run here",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--script", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.dataset, args.script, args.out, args.profile)))
        return 0
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    figures = measure_in_process(args.fixtures, args.repeat, profile=args.profile)
    if figures["source"] == "demo":
        print("fixtures: ../shared/fixtures/reference not found; using the bundled demo sessions (source: demo)")
    else:
        print(f"fixtures: {figures['source']}")
    print(
        f"{figures['sessions']} sessions, {figures['requests']} model requests, concurrency 1: "
        f"{figures['cpu_ms_per_request']:.3f} ms harness CPU per request "
        f"(cpu {figures['cpu_s']:.2f} s, wall {figures['wall_s']:.2f} s, peak RSS {figures['peak_rss_mb']:.0f} MB)"
    )
    if figures["infrastructure_errors"]:
        print(f"warning: {figures['infrastructure_errors']} sessions failed (infrastructure errors)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
