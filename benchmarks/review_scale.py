"""``wtb review`` at scale (issue 38): ``python -m benchmarks.review_scale [--sessions 10000]``.

What it does: writes a dataset of ``--sessions`` generated sessions (the bundled demo sessions under new
ids ``gen_<N>``, each user message extended by a seeded random sentence so that sessions differ as
generated ones do, and one session in a hundred an exact copy of another's messages, so the duplicate
check has work), then

1. starts ``wtb review DATASET`` cold (no review database yet) in a child process and polls the queue page
   until it answers: the time to the first page and the child's peak memory (``VmHWM``) at that moment;
2. times every page (the queue, the first, a middle and the last session, the agreement and export pages,
   ``--repeat`` times each, the slowest reported);
3. waits for the background audit to end (the time from the start, and its process's peak memory), times
   the pages again, then one edit (a gold argument of a session, as a reviewer saves it; the duplicates
   the edit can change are re-audited), three times, and one verdict;
4. stops the server, then times ``wtb review DATASET --export OUT`` (a child process) and reports the peak
   memory of the server over its whole life.

Targets of issue 38 (2 cores): first page within 60 s of a cold start and under 500 MB, every page under
1 s, one edit under 1 s, the export under 60 s. A measurement, not a test: it prints the figures and
whether each target is met, and exits 0 either way.

Usage::

    python -m benchmarks.review_scale                      # 10,000 sessions
    python -m benchmarks.review_scale --sessions 1000 --keep /tmp/review-bench [--reuse]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
EDIT_PATH = "english_answer_list[2][2].action.arguments.current_weekly_km"
"""An argument of demo session 4 a reviewer may correct (the copies at positions 4, 10, 16, ... hold it)."""


def write_dataset(path: Path, count: int, seed: int = 38) -> None:
    """``count`` generated sessions into ``path`` (see the module doc)."""
    demo = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(6000)]
    with open(path, "w", encoding="utf-8") as handle:
        kept: list[list[str]] = []
        for number in range(count):
            session = json.loads(json.dumps(demo[number % len(demo)]))
            session["id"] = f"gen_{number}"
            if kept and rng.random() < 0.01:
                session["english_tasks"] = list(kept[rng.randrange(len(kept))])[: len(session["english_tasks"])]
            else:
                session["english_tasks"] = [
                    f"{message} Also, {' '.join(rng.choice(words) for _ in range(12))}."
                    for message in session["english_tasks"]
                ]
            if len(kept) < 500:
                kept.append(session["english_tasks"])
            handle.write(json.dumps(session, ensure_ascii=False) + "\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    """The peak resident memory of process ``pid`` (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children(pid: int) -> list[str]:
    """The child process ids of ``pid`` (Linux)."""
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += (task / "children").read_text().split()
    return found


def get(url: str) -> tuple[float, int, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as answer:
        body = answer.read().decode("utf-8")
        return time.perf_counter() - start, answer.status, body


def post(url: str, body: dict, token: str, origin: str) -> tuple[float, int, str]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "X-WTB-Token": token, "origin": origin},
        method="POST",
    )
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            return time.perf_counter() - start, answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return time.perf_counter() - start, exc.code, exc.read().decode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    parser.add_argument("--reuse", action="store_true", help="keep the dataset already in --keep")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="wtb-review-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    dataset = work / "sessions.jsonl"
    for stale in (work / "review.sqlite3", work / "review.sqlite3-wal", work / "review.sqlite3-shm"):
        stale.unlink(missing_ok=True)
    start = time.perf_counter()
    if not (args.reuse and dataset.is_file()):
        write_dataset(dataset, args.sessions)
    print(f"dataset: {args.sessions} sessions, {dataset.stat().st_size / 1e6:.1f} MB, "
          f"written in {time.perf_counter() - start:.1f} s")  # fmt: skip
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "wildtoolbench.cli", "review", str(work), "--port", str(port)]
    start = time.perf_counter()
    server = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    figures: dict[str, float] = {}
    try:
        while True:
            if server.poll() is not None:
                print(server.stderr.read(), file=sys.stderr)
                return 1
            try:
                _, status, queue = get(base + "/")
                if status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        figures["first page after a cold start (s)"] = time.perf_counter() - start
        figures["peak memory at the first page (MB)"] = peak_rss_mb(server.pid)
        last = args.sessions - 1
        pages = {"queue": "/", "queue, last page": f"/?page={(args.sessions - 1) // 500}", "first session": "/session/0", "middle session": f"/session/{args.sessions // 2}",
                 "last session": f"/session/{last}", "agreement": "/agreement", "export page": "/export"}  # fmt: skip

        def time_pages(when: str) -> None:
            for name, path in pages.items():
                times = []
                for _ in range(args.repeat):
                    took, status, _ = get(base + path)
                    assert status == 200, (path, status)
                    times.append(took)
                figures[f"page {name}, {when} (s, slowest of {args.repeat})"] = max(times)

        time_pages("during the audit")
        audit_peak = float("nan")
        while 'id="audit-progress"' in get(base + "/")[2]:
            for child in children(server.pid):
                with contextlib.suppress(OSError, ValueError):
                    audit_peak = (
                        max(peak_rss_mb(int(child)), audit_peak)
                        if audit_peak == audit_peak
                        else peak_rss_mb(int(child))
                    )
            time.sleep(2)
        figures["audit done after the start (s)"] = time.perf_counter() - start
        figures["peak memory of the audit process (MB)"] = audit_peak
        time_pages("after the audit")
        page = get(base + "/session/4")[2]
        token = re.search(r'name="wtb-token" content="([^"]+)"', page)
        assert token, "no token in the page"
        key = token.group(1)
        edits = []
        for number, pos in enumerate((4, args.sessions // 2 - (args.sessions // 2) % 6 + 4, 10)):
            took, status, text = post(base + "/api/edit", {"pos": pos, "version": 1, "reviewer": "bench",
                                      "path": EDIT_PATH, "text": str(24 + number), "mode": "json"}, key, base)  # fmt: skip
            assert status == 200, (status, text)
            edits.append(took)
        figures["one edit (s, slowest of 3)"] = max(edits)
        took, status, text = post(base + "/api/verdict", {"pos": 0, "task": 0, "verdict": "accept", "version": 1,
                                  "reviewer": "bench"}, key, base)  # fmt: skip
        assert status == 200, (status, text)
        figures["one verdict (s)"] = took
        figures["peak memory of the server (MB)"] = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
    out = work / "export"
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run([*command[:5], "--export", str(out)], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    figures["export (s)"] = time.perf_counter() - start
    targets = {"first page after a cold start (s)": 60, "peak memory at the first page (MB)": 500,
               "peak memory of the server (MB)": 500, "peak memory of the audit process (MB)": 500,
               "one edit (s, slowest of 3)": 1, "export (s)": 60}  # fmt: skip
    for name, value in figures.items():
        limit = targets.get(name, 1 if name.startswith("page ") else None)
        verdict = "" if limit is None else f"  (target < {limit:g}: {'met' if value < limit else 'NOT MET'})"
        print(f"{name}: {value:.3f}{verdict}")
    print(f"cores: {os.cpu_count()}; python {sys.version.split()[0]}; work folder {work}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
