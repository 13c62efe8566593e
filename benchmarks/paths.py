"""Benchmark of the lazy path tracker against the materialised reference (docs/paths.md).

Run ``python -m benchmarks.paths``. Each case runs in a fresh subprocess so
that ``ru_maxrss`` (peak resident set of that process) belongs to the case;
wall time is measured without tracing, and the peak of Python allocations is
measured by a second, ``tracemalloc``-traced run. Not a test: prints a table.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from tests.support.paths_reference import MaterialisedPathTracker, enumerate_paths
from wildtoolbench.bench.paths import PathTracker, _shape_for
from wildtoolbench.bench.terms import PREPARE_TO_ANSWER


def parallel_task(names: list[str]) -> list[dict[str, Any]]:
    """Gold answer list of independent calls named ``names`` plus a final
    ``prepare_to_answer`` node that depends on all of them (index ``len(names)``)."""
    nodes: list[dict[str, Any]] = [
        {"action": {"name": name, "arguments": {"i": i}}, "observation": f"obs {i}", "dependency_list": []}
        for i, name in enumerate(names)
    ]
    nodes.append(
        {
            "action": {"name": PREPARE_TO_ANSWER, "arguments": {}},
            "observation": "reply",
            "dependency_list": list(range(len(names))),
        }
    )
    return nodes


def oracle_walk(tracker: PathTracker | MaterialisedPathTracker) -> int:
    """Drive ``tracker`` like the oracle candidate: at each step take the
    candidate equal to that step of ``gold_path`` and prune to it.

    Returns the total number of candidates seen over the walk.
    """
    seen = 0
    for step, gold_step in enumerate(tracker.gold_path):
        candidates = tracker.candidates(step)
        seen += len(candidates)
        chosen = next(c for c in candidates if sorted(c) == gold_step)
        tracker.prune(step, chosen)
    return seen


CASES: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "independent_distinct_12": lambda: parallel_task([f"tool_{i:02d}" for i in range(12)]),
    "independent_same_name_10": lambda: parallel_task(["get_weather"] * 10),
    "independent_distinct_8": lambda: parallel_task([f"tool_{i:02d}" for i in range(8)]),
}
IMPLS = {
    "lazy": PathTracker,
    "materialised": MaterialisedPathTracker,
}
RUNS = [
    ("independent_distinct_12", "lazy"),
    ("independent_same_name_10", "lazy"),
    ("independent_same_name_10", "materialised"),
    ("independent_distinct_8", "lazy"),
    ("independent_distinct_8", "materialised"),
    ("independent_distinct_8", "enumerate_paths"),
]


def _run_once(case: str, impl: str) -> dict[str, Any]:
    answer_list = CASES[case]()
    start = time.perf_counter()
    if impl == "enumerate_paths":
        paths = enumerate_paths(answer_list)
        build = time.perf_counter() - start
        return {"build_s": build, "walk_s": 0.0, "paths": len(paths)}
    tracker = IMPLS[impl](answer_list)
    _ = tracker.gold_path
    build = time.perf_counter() - start
    start = time.perf_counter()
    seen = oracle_walk(tracker)
    walk = time.perf_counter() - start
    return {"build_s": build, "walk_s": walk, "min_length": tracker.min_length, "candidates_seen": seen}


def _measure(case: str, impl: str) -> dict[str, Any]:
    """One case in this process: timings, tracemalloc peak (MiB) and ru_maxrss (MiB)."""
    result = _run_once(case, impl)
    _shape_for.cache_clear()  # the traced run must not reuse the first run's shared DAG caches
    tracemalloc.start()
    _run_once(case, impl)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    result.update(case=case, impl=impl, traced_peak_mib=peak / 2**20, maxrss_mib=maxrss * scale / 2**20)
    return result


def main(argv: list[str] | None = None) -> None:
    """Run every case in its own subprocess (or one case with ``--case/--impl``) and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--impl", choices=[*IMPLS, "enumerate_paths"])
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(_measure(args.case, args.impl or "lazy")))
        return
    header = f"{'case':26} {'impl':16} {'build s':>9} {'walk s':>9} {'traced MiB':>11} {'maxrss MiB':>11}  notes"
    print(header)
    print("-" * len(header))
    for case, impl in RUNS:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.paths", "--case", case, "--impl", impl],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout)
        notes = (
            f"paths={r['paths']}"
            if "paths" in r
            else f"min_length={r['min_length']} candidates_seen={r['candidates_seen']}"
        )
        print(
            f"{case:26} {impl:16} {r['build_s']:9.4f} {r['walk_s']:9.4f} "
            f"{r['traced_peak_mib']:11.2f} {r['maxrss_mib']:11.1f}  {notes}"
        )


if __name__ == "__main__":
    main()
