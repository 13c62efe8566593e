"""How fast a large report opens (issue 13): ``python -m benchmarks.report_open``.

What it does: writes a dataset of ``--sessions`` sessions (copies of the bundled demo sessions,
or of the public fixture sessions with ``--data fixtures``, under new ids ``wild_tool_bench_<N>``)
and the replay responses of two scripted candidates for every copy (demo: ``oracle`` and
``demo-model``; fixtures: ``oracle`` and ``noisy``), evaluates both with ``wtb eval``, builds the
report of the two runs with ``wtb report``, then opens ``index.html`` from ``file://`` in headless
Chromium (the Debian package, driven by Playwright) ``--repeat`` times in fresh pages.

Reported: the report's size, the time to build it, and per page load the time from navigation
start to the page being interactive (the script has parsed the data and drawn the overview:
``body[data-ready]``), the browser's DOMContentLoaded and load times, and the time to open one
failed task's trajectory by clicking it in the task list (its session's data is parsed on that
click). Issue 13 asks for under 3 s to interactive at 1,024 sessions.

Usage::

    python -m benchmarks.report_open                       # 1,024 demo copies, 2 runs, 3 page loads
    python -m benchmarks.report_open --data fixtures       # copies of ../shared/fixtures/reference/sessions.jsonl
    python -m benchmarks.report_open --sessions 256 --keep /tmp/bench-report
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "reference"
CHROMIUM = os.environ.get("WTB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def copies(
    sessions_path: Path, candidates_path: Path, names: tuple[str, str], count: int, directory: Path
) -> tuple[Path, Path]:
    """Write ``count`` renamed copies of the sessions and both candidates' responses for each copy.

    Returns:
        ``(dataset path, candidates path)`` inside ``directory``.
    """
    base = [json.loads(line) for line in sessions_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    responses: dict[tuple[str, str], Any] = {}
    for line in candidates_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["candidate"] in names:
                responses[(row["candidate"], row["session_id"])] = row["responses"]
    dataset, candidates = directory / "sessions.jsonl", directory / "candidates.jsonl"
    with open(dataset, "w", encoding="utf-8") as data, open(candidates, "w", encoding="utf-8") as out:
        for number in range(count):
            original = base[number % len(base)]
            session = json.loads(json.dumps(original))
            session["id"] = f"wild_tool_bench_{number}"
            data.write(json.dumps(session, ensure_ascii=False) + "\n")
            for name in names:
                row = {"session_id": session["id"], "candidate": name, "responses": responses[(name, original["id"])]}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return dataset, candidates


def wtb(*args: object) -> float:
    """Run ``python -m wildtoolbench.cli ARGS`` (this checkout first on the path); returns the wall time in seconds."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *map(str, args)],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def measure_page(index: Path, repeat: int) -> list[dict[str, float]]:
    """Open ``index`` ``repeat`` times in fresh headless-Chromium pages; timings in seconds per load."""
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for _ in range(repeat):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                started = time.perf_counter()
                page.goto(index.as_uri(), wait_until="commit")
                page.wait_for_selector("body[data-ready='1']", timeout=120_000)
                interactive = time.perf_counter() - started
                timing = page.evaluate(
                    "() => { const t = performance.getEntriesByType('navigation')[0];"
                    " return {dcl: t.domContentLoadedEventEnd, load: t.loadEventEnd}; }"
                )
                page.evaluate("location.hash = '#tasks?status=error'")
                page.wait_for_selector("#tasks-table tbody tr")
                clicked = time.perf_counter()
                page.locator("#tasks-table tbody tr").first.locator("td").nth(1).locator("a").click()
                page.wait_for_selector("#traj-summary")
                trajectory = time.perf_counter() - clicked
                if errors:
                    raise RuntimeError(f"page errors: {errors}")
                results.append(
                    {
                        "interactive": interactive,
                        "dom_content_loaded": timing["dcl"] / 1000.0,
                        "load": timing["load"] / 1000.0,
                        "open_trajectory": trajectory,
                    }
                )
                page.close()
        finally:
            browser.close()
    return results


def main(argv: list[str] | None = None) -> int:
    """Build a report of ``--sessions`` sessions and two runs, time its opening in Chromium, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1024)
    parser.add_argument("--data", choices=("demo", "fixtures"), default="demo")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it (default: a temporary folder).")
    args = parser.parse_args(argv)

    if args.data == "fixtures":
        sources, names = (FIXTURES / "sessions.jsonl", FIXTURES / "candidates.jsonl"), ("oracle", "noisy")
    else:
        sources, names = (SESSIONS_PATH, CANDIDATES_PATH), ("oracle", "demo-model")
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        dataset, candidates = copies(*sources, names, args.sessions, work)
        runs = []
        for name in names:
            out = work / "runs" / name
            seconds = wtb(
                "eval",
                "--dataset",
                dataset,
                "--model",
                f"replay:{candidates}#{name}",
                "--out",
                out,
                "--concurrency",
                "16",
                "--no-progress",
                "--no-trace",
                "--overwrite",
            )
            print(f"wtb eval {name}: {args.sessions} sessions in {seconds:.1f} s", flush=True)
            runs.append(out)
        report = work / "report"
        build = wtb("report", *runs, "--out", report)
        index = report / "index.html"
        size = index.stat().st_size
        result_size = sum((run / "result.jsonl").stat().st_size for run in runs)
        print(
            f"wtb report: {build:.1f} s (process start to exit); index.html {size / 1e6:.1f} MB "
            f"(result.jsonl of both runs: {result_size / 1e6:.1f} MB)",
            flush=True,
        )
        loads = measure_page(index, args.repeat)
        for key, label in (
            ("interactive", "navigation to interactive"),
            ("dom_content_loaded", "DOMContentLoaded"),
            ("load", "load event"),
            ("open_trajectory", "click a failed task -> trajectory drawn"),
        ):
            values = [load[key] for load in loads]
            print(f"{label}: median {statistics.median(values):.2f} s (runs: {', '.join(f'{v:.2f}' for v in values)})")
        print(
            json.dumps(
                {
                    "sessions": args.sessions,
                    "data": args.data,
                    "runs": list(names),
                    "index_bytes": size,
                    "build_seconds": round(build, 2),
                    "loads": loads,
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
