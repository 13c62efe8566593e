"""Agent shape x fixture candidate x metric against ``openai:``: ``python -m benchmarks.agent_shapes``.

What it measures: for each public fixture candidate (``oracle``, ``noisy``, ``wrong_name``, ``over_ask``
of ``../shared/fixtures/reference/candidates.jsonl``), the loopback OpenAI-compatible server
(:class:`tests.support.openai_stub.ScriptedServer`) replays its replies to an ``openai:`` candidate and
to four agent factories wrapping a ``ChatOpenAI`` pointed at it: ``create_agent``,
``create_react_agent``, a model node + ``ToolNode`` loop (``tests/support/agent_shapes.py``) and the
react-agent template (``examples/react_agent.py``). Each run is scored (reference mode); the table
says, per agent and candidate, the task and session counts of both runs and whether the agent's
``metric.json`` equals the ``openai:`` run's and ``expected_metrics.jsonl``, and whether its records
equal the ``openai:`` run's (latencies and history ids aside). Nothing leaves 127.0.0.1.

Usage::

    python -m benchmarks.agent_shapes                  # from the repository root, ../shared beside it
    python -m benchmarks.agent_shapes --candidates oracle noisy
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHAPES = {
    "create_agent": "graph:tests/support/agent_shapes.py:langchain_agent",
    "create_react_agent": "graph:tests/support/agent_shapes.py:prebuilt_agent",
    "ToolNode loop": "graph:tests/support/agent_shapes.py:tool_node_loop",
    "react-agent template": "graph:examples/react_agent.py:make_graph",
}
CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]


def _counts(metric: dict) -> str:
    total = metric["total_info"]
    return (
        f"task {total['task']['correct_count']}/{total['task']['total_count']}, "
        f"session {total['session']['correct_count']}/{total['session']['total_count']}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the Markdown table (one row per agent shape and candidate); 1 when a row differs, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=REPO.parent / "shared" / "fixtures" / "reference")
    parser.add_argument("--candidates", nargs="+", default=CANDIDATES)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from tests.support.agent_runs import comparable, jsonl, run_over_server

    expected = {m["candidate"]: m["metric"] for m in jsonl(args.reference / "expected_metrics.jsonl")}
    print("| agent shape | candidate | agent | openai: | metric vs openai: | vs expected | records vs openai: |")
    print("|---|---|---|---|---|---|---|")
    differs = False
    with tempfile.TemporaryDirectory() as root:
        for candidate in args.candidates:
            base, base_metric, _ = run_over_server(
                args.reference, candidate, f"openai:{candidate}", Path(root) / f"openai-{candidate}"
            )
            for shape, spec in SHAPES.items():
                out = Path(root) / f"{shape.replace(' ', '_')}-{candidate}"
                records, metric, _ = run_over_server(args.reference, candidate, spec, out)
                same = list(records) == list(base) and all(comparable(records[s]) == comparable(base[s]) for s in base)
                cells = [metric == base_metric, metric == expected.get(candidate), same]
                differs = differs or not all(cells)
                verdicts = " | ".join("equal" if ok else "DIFFERENT" for ok in cells)
                print(
                    f"| {shape} | {candidate} | {_counts(metric)} | {_counts(base_metric)} | {verdicts} |", flush=True
                )
    print(json.dumps({"differs": differs}))
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
