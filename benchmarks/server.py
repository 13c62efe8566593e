"""``wtb eval --server`` against the local runner (issue 16): ``python -m benchmarks.server``.

What it measures, per concurrency C: the same synthetic sessions (copies of the demo sessions,
demo ``oracle`` replies, about 9.5 model requests each; :func:`benchmarks.perf.synthetic_run`)
answered by the loopback OpenAI-compatible stub (:mod:`tests.support.openai_stub`, its own process)
after a fixed latency (default 200 ms), evaluated twice:

- ``local``: :func:`wildtoolbench.runner.arun_eval` in a fresh client process (the graph runs in the client);
- ``server``: :func:`wildtoolbench.remote.arun_eval_remote` in a fresh client process against a fresh
  ``langgraph dev`` (in-memory runtime, one process, ``--n-jobs-per-worker C``) started from this
  checkout on loopback; the graph runs in the server, which calls the stub.

Reported: sessions, wall time, sessions/s, the client's CPU per session (user + system, measured
around the run only, imports excluded), the server's CPU per session (``langgraph dev``'s process
group, read from ``/proc``; ``server`` rows only) and the stub's. Both runs must evaluate every
session without an infrastructure error.

Usage::

    python -m benchmarks.server                                   # 200 ms, C = 4 16 64
    python -m benchmarks.server --latency 0.2 --concurrency 16 --budget 20 --json server.json

Each configuration runs ``--budget`` seconds' worth of model latency (at least 16 sessions,
at most ``--sessions``), as :mod:`benchmarks.perf` does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.perf import _Server, measured_run, sessions_for, synthetic_run

ROOT = Path(__file__).resolve().parents[1]


def run_client(
    mode: str, dataset: Path, base_url: str, server: str | None, concurrency: int, out: Path
) -> dict[str, Any]:
    """One measured run in this process (``--client``): ``arun_eval`` (local) or ``arun_eval_remote`` (server)."""
    import wildtoolbench.models.providers.openai  # noqa: F401 - imports happen before the measurement (the client names the model)

    if mode == "local":
        import wildtoolbench.graphs.evaluation  # noqa: F401
        from wildtoolbench.runner import arun_eval as run
    else:
        import httpx  # noqa: F401
        import langgraph_sdk.client  # noqa: F401

        from wildtoolbench.remote import arun_eval_remote

        async def run(*args: Any, **kwargs: Any) -> Any:
            return await arun_eval_remote(*args, server=server, no_trace=True, **kwargs)

    return measured_run(run, dataset, base_url, concurrency, out)


def _client(mode: str, dataset: Path, base_url: str, server: str | None, concurrency: int, out: Path) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "benchmarks.server",
        "--client",
        mode,
        "--dataset",
        str(dataset),
        "--base-url",
        base_url,
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
        *(["--server", server] if server else []),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_"))}
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} client failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(mode: str, sessions: int, latency: float, concurrency: int, workdir: Path) -> dict[str, Any]:
    """One configuration: a fresh stub, for ``server`` a fresh ``langgraph dev``, and a fresh client process."""
    from tests.support.langgraph_dev import LangGraphDev

    folder = workdir / f"{mode}-l{int(latency * 1000)}-c{concurrency}-n{sessions}"
    folder.mkdir(parents=True, exist_ok=True)
    dataset, candidates = synthetic_run(sessions, folder)
    stub = _Server(dataset, candidates, latency)
    dev = None
    server_cpu = None
    try:
        if mode == "server":
            # the deployment accepts the stub's endpoint and its model (docs/settings.md §8)
            deployment = {"WTB_SERVER_MODELS": "openai:", "WTB_SERVER_BASE_URLS": stub.base_url}
            dev = LangGraphDev(folder / "langgraph-dev", jobs=concurrency, env=deployment)
            url = dev.start()
            cpu_before = dev.cpu_seconds() or 0.0
            figures = _client(mode, dataset, stub.base_url, url, concurrency, folder / "out")
            server_cpu = (dev.cpu_seconds() or 0.0) - cpu_before
        else:
            figures = _client(mode, dataset, stub.base_url, None, concurrency, folder / "out")
    finally:
        if dev is not None:
            dev.close()
        stub_cpu = stub.stop()
    if figures["sessions"] != sessions or figures["infrastructure_errors"]:
        raise RuntimeError(
            f"{mode}: {figures['sessions']} of {sessions} sessions evaluated, {figures['infrastructure_errors']} errors"
        )
    figures.update(
        mode=mode,
        latency_ms=int(latency * 1000),
        concurrency=concurrency,
        sessions_per_s=sessions / figures["wall_s"],
        client_cpu_ms_per_session=1000.0 * figures["cpu_s"] / sessions,
        server_cpu_ms_per_session=None if server_cpu is None else 1000.0 * server_cpu / sessions,
        stub_cpu_ms_per_session=1000.0 * stub_cpu / sessions,
    )
    return figures


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| runner | latency | C | sessions | requests | wall s | sessions/s | client CPU ms/session | server CPU ms/session |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        server_cpu = "-" if r["server_cpu_ms_per_session"] is None else f"{r['server_cpu_ms_per_session']:.0f}"
        lines.append(
            f"| {'`--server`' if r['mode'] == 'server' else 'local'} | {r['latency_ms']} ms | {r['concurrency']} | "
            f"{r['sessions']} | {r['requests']} | {r['wall_s']:.1f} | {r['sessions_per_s']:.2f} | "
            f"{r['client_cpu_ms_per_session']:.1f} | {server_cpu} |"
        )
    return "\n".join(lines)


def _load() -> str:
    try:
        return " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module doc)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.server", description="wtb eval --server vs. the local runner."
    )
    parser.add_argument("--latency", type=float, default=0.2, help="stub latency in seconds (default 0.2)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--sessions", type=int, default=1024, help="most sessions per configuration")
    parser.add_argument(
        "--budget", type=float, default=20.0, help="seconds of model latency per configuration (default 20)"
    )
    parser.add_argument("--modes", nargs="+", default=["local", "server"], choices=["local", "server"])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--client", choices=["local", "server"], help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.client:
        print(
            json.dumps(run_client(args.client, args.dataset, args.base_url, args.server, args.concurrency[0], args.out))
        )
        return 0

    rows = []
    load_start = _load()
    with tempfile.TemporaryDirectory(prefix="wtb-server-bench-") as workdir:
        for concurrency in args.concurrency:
            n = sessions_for(args.latency, concurrency, args.sessions, args.budget)
            for mode in args.modes:
                row = measure(mode, n, args.latency, concurrency, Path(workdir))
                rows.append(row)
                print(
                    f"{mode} C={concurrency}: {n} sessions in {row['wall_s']:.1f}s, {row['sessions_per_s']:.2f} sessions/s, "
                    f"client CPU {row['client_cpu_ms_per_session']:.1f} ms/session (load {_load()})",
                    file=sys.stderr,
                    flush=True,
                )
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}; "
        f"load average {load_start} at the start, {_load()} at the end"
    )
    print(f"machine: {machine}\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
