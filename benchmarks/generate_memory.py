"""Peak memory of ``wtb generate`` over many sessions with scripted role models (issue 42): ``python -m benchmarks.generate_memory``.

For each ``--samples`` count (default 100, 500 and 1,000) the benchmark plans the sessions ``wtb generate`` will
plan (``--tools`` real tool lists, ``--layers``, ``--seed``), writes one scripted reply file for every role
(``tests.support.gen_scripts.session_script``: every output accepted, so each session is generated at once),
then runs ``wtb generate`` in a child process and reads its peak resident memory (``ru_maxrss``) and wall time.

The script file is read whole by the scripted provider, so part of the memory grows with the number of sessions
for the benchmark's own sake: a child that only loads the script (``--script-only``) is measured beside it, and
the difference is what generating the sessions holds. Not a timed test: run it niced and read the load average
printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Path(os.environ.get("WTB_TOOLS_FILE", ROOT.parent / "shared" / "data" / "tools_en.jsonl"))


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def write_script(folder: Path, samples: int, layers: int, seed: int) -> Path:
    """The scripted replies of every role for the ``samples`` sessions ``wtb generate`` plans (``roles.json``)."""
    from tests.support.gen_scripts import session_script
    from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths

    paths = select_type_paths(layers, None, samples, seed)
    plans = plan_sessions(load_tool_lists(TOOLS), paths, seed=seed, language="en", year=2025)
    scripts = {}
    for plan in plans:
        try:
            scripts[plan.key] = session_script(plan.as_state())
        except AssertionError:  # a tool list the test script writer cannot fill: that session fails on the
            # planner's output (not on infrastructure), so the run exits 0 and the audit of the set runs too
            scripts[plan.key] = {"user": ["Please look this up for me."] * 3, "planner": ["not a decision"] * 3}
    script = folder / "roles.json"
    script.write_text(json.dumps({"sessions": scripts}), encoding="utf-8")
    return script


def _rss_of(command: Sequence[str]) -> dict[str, Any]:
    """Run ``command`` under a small wrapper that reports the child's peak RSS (``ru_maxrss``); the wrapper's
    JSON: ``rss_mb``, ``status``, ``out`` (the tail of its output), with ``seconds`` and ``stderr_tail`` added."""
    wrapper = (
        "import resource,subprocess,sys,json;"
        "p=subprocess.run(sys.argv[1:],capture_output=True);"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
        "sys.stderr.write(p.stderr.decode('utf-8','replace')[-400:]);"
        "print(json.dumps({'rss_mb':round(r/1024,1),'status':p.returncode,'out':p.stdout.decode()[-300:]}))"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", wrapper, *command], cwd=ROOT, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["stderr_tail"] = done.stderr[-300:]
    return result


def generate_command(script: Path, out: Path, samples: int, layers: int, seed: int, concurrency: int) -> list[str]:
    """``wtb generate`` of ``samples`` sessions with every role on the scripted replies of ``script``."""
    spec = f"scripted:{script}"
    return [
        *(sys.executable, "-m", "wildtoolbench.cli", "generate", "--tools", str(TOOLS), "--out", str(out)),
        *("--samples", str(samples), "--layers", str(layers), "--seed", str(seed), "--language", "en"),
        *("--year", "2025", "--vague-rate", "0", "--concurrency", str(concurrency), "--no-progress"),
        *(arg for role in ("user", "planner", "tool", "agent", "checker") for arg in (f"--{role}-model", spec)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every ``--samples`` count and print the figures as JSON (also to ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--audit", default="drop", help="wtb generate --audit (off: no audit of the set)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="wtb-gen-memory-"))
    results: dict[str, Any] = {"tools": str(TOOLS), "layers": args.layers, "audit": args.audit, "runs": []}
    results["load_before"] = _uptime()
    for samples in args.samples:
        folder = work / f"n{samples}"
        folder.mkdir()
        script = write_script(folder, samples, args.layers, args.seed)
        load_only = _rss_of([sys.executable, "-c", f"import json;d=json.load(open({str(script)!r}));print(len(d))"])
        command = generate_command(script, folder / "out", samples, args.layers, args.seed, args.concurrency)
        run = _rss_of([*command, "--audit", args.audit])
        done = folder / "out" / "manifest.json"
        manifest = json.loads(done.read_text()) if done.exists() else {}
        row = {
            "samples": samples,
            "seconds": run["seconds"],
            "status": run["status"],
            "peak_rss_mb": run["rss_mb"],
            "script_mb": round(script.stat().st_size / 2**20, 2),
            "script_load_rss_mb": load_only["rss_mb"],
            "succeeded": manifest.get("succeeded"),
            "failed": manifest.get("failed"),
            "stderr_tail": run["stderr_tail"] if run["status"] else "",
        }
        results["runs"].append(row)
        print(json.dumps(row), flush=True)
    results["load_after"] = _uptime()
    results["work_dir"] = str(work)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
