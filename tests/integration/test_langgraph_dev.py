"""`langgraph dev` serves both graphs and runs them through its API (issue 5, part 3).

Runs ``.ci/langgraph-dev-check`` (which starts the dev server on a free loopback port, checks the
assistants and context schemas, runs the evaluation graph with a replay candidate and the generation
graph with scripted role models, and always stops the server). About 5-10 s.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_langgraph_dev_serves_and_runs_both_graphs(reference_dir: Path):
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_"))}
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / ".ci" / "langgraph-dev-check"),
            "--reference",
            str(reference_dir),
            "--timeout",
            "180",
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=560,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "assistants: ['evaluation', 'generation', 'variants']" in output  # langgraph.json's three graphs
    assert "evaluation graph: wild_tool_bench_0 with replay oracle -> record matches (4 tasks)" in output
    assert "generation graph: 4-layer session" in output and "valid session" in output
