"""A leaderboard sweep on ``langgraph dev`` against 20 one-process commands (issue 42): ``python -m benchmarks.sweep``.

The work: ``--models`` scripted models (``openai:bench-NN``, all answered by one loopback OpenAI-compatible
stub, :class:`tests.support.counting_stub.CountingServer`, in this process, after ``--latency`` seconds per
reply, with the fixtures' ``oracle`` replies) x the 24 fixture sessions x ``--trials`` trials.

1. **sweep**: one ``wtb eval --sweep FILE --server URL --trials K --cache DIR --concurrency C`` against a fresh
   ``langgraph dev`` (``--n-jobs-per-worker C``) started from this checkout;
2. **separate**: the same work as ``--models`` one-process commands run one after another
   (``wtb eval --model openai:bench-NN --trials K --concurrency C``, no server, no cache);
3. **kill and resume**: the sweep again into a new folder and a new cache, SIGKILL once the stub has
   answered about half of the sweep's requests, then the same command to the end. Every model's
   ``metric.json`` and ``trials.json`` must equal the uninterrupted sweep's; the requests the stub got over
   both commands, minus those of the uninterrupted sweep, are the requests paid twice (only those in flight
   at the kill can be: their replies never reached the cache).

Reported: wall time and session-trials per second of 1 and 2, the client's peak RSS (``ru_maxrss`` of the
command), the server's peak RSS (the sum over ``langgraph dev``'s process group, sampled every 0.5 s), the
stub's request counts, and ``uptime``'s load average before and after. Not a timed test: run it niced on a
quiet machine and read the load with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(os.environ.get("WTB_REFERENCE_DIR", ROOT.parent / "shared" / "fixtures" / "reference"))


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _group_rss(pgid: int) -> int:
    """Resident memory in bytes of every process in process group ``pgid`` (Linux ``/proc``)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[2]) != pgid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return total


class PeakSampler:
    """The peak of :func:`_group_rss` of a process group, sampled every 0.5 s in a thread while running."""

    def __init__(self, pgid: int):
        self.pgid, self.peak, self._stop = pgid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _group_rss(self.pgid))
            self._stop.wait(0.5)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "OPENAI_"))}
    env.update(OPENAI_API_KEY="bench-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _wtb(*args: str) -> list[str]:
    return [sys.executable, "-m", "wildtoolbench.cli", "eval", "--no-progress", "--no-trace", "--no-preflight", *args]


def _run(command: Sequence[str], *, kill_when: Any = None) -> dict[str, Any]:
    """Run ``command``; returns its wall time, exit status and peak RSS (``ru_maxrss``); ``kill_when()`` true: SIGKILL."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr: list[bytes] = []
    reader = threading.Thread(target=lambda: stderr.append(process.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    while kill_when is not None and process.poll() is None:
        if kill_when():
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "status": process.returncode,
        "rss_mb": round(usage.ru_maxrss / 1024, 1),
        "stderr_tail": b"".join(stderr).decode("utf-8", "replace")[-600:],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the three measurements and print them as JSON (also written to ``--json``)."""
    from tests.support.counting_stub import CountingServer
    from tests.support.langgraph_dev import LangGraphDev
    from wildtoolbench.runner import load_dataset

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--skip-separate", action="store_true", help="do not run the one-process commands")
    parser.add_argument("--skip-kill", action="store_true", help="do not run the kill-and-resume measurement")
    parser.add_argument("--no-server-threads", action="store_true", help="threadless server runs (wtb eval option)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    sessions = load_dataset(REFERENCE / "sessions.jsonl")
    rows = [json.loads(line) for line in (REFERENCE / "candidates.jsonl").read_text().splitlines() if line.strip()]
    script = {r["session_id"]: r["responses"] for r in rows if r["candidate"] == "oracle"}
    work = Path(tempfile.mkdtemp(prefix="wtb-sweep-bench-"))
    results: dict[str, Any] = {
        "models": args.models,
        "sessions": len(sessions),
        "trials": args.trials,
        "concurrency": args.concurrency,
        "server_threads": not args.no_server_threads,
        "latency": args.latency,
        "session_trials": args.models * len(sessions) * args.trials,
        "load_before": _uptime(),
        "cpus": os.cpu_count(),
    }
    with CountingServer(sessions, script, latency=args.latency) as stub:
        http = lambda: len(stub.attempts) + len(stub.repeats)  # noqa: E731 - every request the stub answered
        sweep_file = work / "models.toml"
        sweep_file.write_text(
            "".join(
                f'[[model]]\nmodel = "openai:bench-{n:02d}"\nbase_url = "{stub.base_url}"\n' for n in range(args.models)
            )
        )
        server_env = {
            "WTB_SERVER_MODELS": "openai:bench-*",
            "WTB_SERVER_BASE_URLS": stub.base_url,
            "OPENAI_API_KEY": "bench-key",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        common = ["--dataset", str(REFERENCE / "sessions.jsonl"), "--trials", str(args.trials)]
        common += ["--concurrency", str(args.concurrency)]
        server_extra = ["--no-server-threads"] if args.no_server_threads else []
        with LangGraphDev(work / "server-logs", jobs=args.concurrency, env=server_env) as dev:
            dev.start()
            url = dev.url

            def sweep_command(out: str, cache: str) -> list[str]:
                """The sweep on the server into ``work/out`` with the cache ``work/cache``."""
                return _wtb(
                    *common,
                    "--sweep",
                    str(sweep_file),
                    "--out",
                    str(work / out),
                    "--cache",
                    str(work / cache),
                    "--server",
                    url,
                    *server_extra,
                )

            before = http()
            with PeakSampler(dev.process.pid) as sampler:  # type: ignore[union-attr]
                sweep = _run(sweep_command("sweep", "cache"))
            sweep.update(server_rss_mb=round(sampler.peak / 2**20, 1), requests=http() - before)
            if sweep["status"] == 3:  # infrastructure errors: the same command retries them (resume)
                retry = _run(sweep_command("sweep", "cache"))
                sweep["retry_of_errors"] = {"seconds": retry["seconds"], "status": retry["status"]}
                sweep["requests"] = http() - before
            sweep["session_trials_per_second"] = round(results["session_trials"] / sweep["seconds"], 2)
            results["sweep"] = sweep
            print(json.dumps({"sweep": sweep}), flush=True)

            if not args.skip_kill:
                before = http()
                half = before + sweep["requests"] // 2
                killed = _run(
                    sweep_command("resumed", "cache2"),
                    kill_when=lambda: http() >= half,
                )
                resumed = _run(sweep_command("resumed", "cache2"))
                paid = http() - before
                compared = ["metric.json"] + (["trials.json"] if args.trials > 1 else [])  # one trial writes none
                exact = all(
                    (work / "resumed" / f"bench-{n:02d}" / name).read_text()
                    == (work / "sweep" / f"bench-{n:02d}" / name).read_text()
                    for n in range(args.models)
                    for name in compared
                )
                results["kill_and_resume"] = {
                    "killed_after_requests": half - before,
                    "killed_status": killed["status"],
                    "resumed": resumed,
                    "requests_both_commands": paid,
                    "paid_twice": paid - sweep["requests"],
                    "every_model_exact": exact,
                }
                print(json.dumps({"kill_and_resume": results["kill_and_resume"]}), flush=True)

        if not args.skip_separate:
            before = http()
            started = time.perf_counter()
            peak = 0.0
            statuses = []
            for n in range(args.models):
                one = _run(
                    _wtb(
                        *common,
                        "--model",
                        f"openai:bench-{n:02d}",
                        "--base-url",
                        stub.base_url,
                        "--out",
                        str(work / "separate" / f"bench-{n:02d}"),
                    )
                )
                peak, statuses = max(peak, one["rss_mb"]), [*statuses, one["status"]]
            seconds = round(time.perf_counter() - started, 2)
            results["separate"] = {
                "seconds": seconds,
                "session_trials_per_second": round(results["session_trials"] / seconds, 2),
                "client_rss_mb_peak": peak,
                "statuses": sorted(set(statuses)),
                "requests": http() - before,
                "same_metrics_as_sweep": all(
                    (work / "separate" / f"bench-{n:02d}" / "metric.json").read_text()
                    == (work / "sweep" / f"bench-{n:02d}" / "metric.json").read_text()
                    for n in range(args.models)
                ),
            }
    results["load_after"] = _uptime()
    results["work_dir"] = str(work)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
