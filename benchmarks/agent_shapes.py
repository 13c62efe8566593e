"""Agent shape x fixture candidate x metric against ``openai:``: ``python -m benchmarks.agent_shapes``.

What it measures: for each public fixture candidate (``oracle``, ``noisy``, ``wrong_name``, ``over_ask``
of ``../shared/fixtures/reference/candidates.jsonl``), the loopback OpenAI-compatible server
(:class:`tests.support.openai_stub.ScriptedServer`) replays its replies to an ``openai:`` candidate and
to every agent shape of the agents guide (docs/guides/agents.md): ``create_agent``, ``create_react_agent``,
a model node + ``ToolNode`` loop, the react-agent template, a streaming model, parallel tool calls and the
wrapper models (``tests/support/agent_shapes.py``), and the quickstart's Graph API (with and without
``try/except``) and functional API agents, structured output, a supervisor, a swarm and a deep agent
(``examples/agent_shapes.py``, its worker model ``openai:<candidate>`` at the server). Each run is scored
(reference mode); the table says, per shape and candidate, the task and session counts of both runs,
whether the agent's ``metric.json`` equals the ``openai:`` run's and ``expected_metrics.jsonl``, whether
its records equal the ``openai:`` run's (latencies and history ids aside; a structured answer is recorded
as the ``Answer`` call's arguments, so its answer steps differ by design), the agent's internal requests
(``summary.json``, docs/evaluation.md §8.9) and the mean wall time of a session (``usage.wall_time``) of
the agent and of ``openai:``. Nothing leaves 127.0.0.1.

Usage::

    python -m benchmarks.agent_shapes                  # from the repository root, ../shared beside it
    python -m benchmarks.agent_shapes --candidates oracle noisy --shapes supervisor swarm
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUPPORT = "graph:tests/support/agent_shapes.py"
EXAMPLES = "graph:examples/agent_shapes.py"
SHAPES = {
    "create_agent": f"{SUPPORT}:langchain_agent",
    "create_react_agent": f"{SUPPORT}:prebuilt_agent",
    "ToolNode loop": f"{SUPPORT}:tool_node_loop",
    "react-agent template": "graph:examples/react_agent.py:make_graph",
    "quickstart Graph API": f"{EXAMPLES}:quickstart_graph",
    "quickstart Graph API, try/except": f"{EXAMPLES}:quickstart_graph_try",
    "quickstart functional API": f"{EXAMPLES}:functional",
    "streaming create_agent": f"{SUPPORT}:streaming_agent",
    "parallel tool calls": f"{SUPPORT}:parallel_tools_agent",
    "structured answer (ToolStrategy)": f"{EXAMPLES}:structured_answer",
    "supervisor": f"{EXAMPLES}:supervisor",
    "swarm": f"{EXAMPLES}:swarm",
    "deep agent": f"{EXAMPLES}:deep_agent",
    "wrapper model": f"{SUPPORT}:wrapper_agent",
    "router model (sync)": f"{SUPPORT}:router_agent",
    "with_fallbacks": f"{SUPPORT}:fallbacks_agent",
    "with_retry": f"{SUPPORT}:retry_agent",
}
CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]


def _counts(metric: dict) -> str:
    total = metric["total_info"]
    return (
        f"task {total['task']['correct_count']}/{total['task']['total_count']}, "
        f"session {total['session']['correct_count']}/{total['session']['total_count']}"
    )


def _session_seconds(records: dict) -> float:
    """Mean wall time of a session's evaluation (``usage.wall_time``)."""
    times = [float(r.get("usage", {}).get("wall_time") or 0.0) for r in records.values()]
    return sum(times) / len(times) if times else 0.0


def main(argv: list[str] | None = None) -> int:
    """Print the Markdown table (one row per agent shape and candidate); 1 when a metric differs, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=REPO.parent / "shared" / "fixtures" / "reference")
    parser.add_argument("--candidates", nargs="+", default=CANDIDATES)
    parser.add_argument("--shapes", nargs="+", default=None, help="spec suffixes (e.g. supervisor langchain_agent)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from tests.support.agent_runs import comparable, jsonl, run_over_server

    shapes = {k: v for k, v in SHAPES.items() if args.shapes is None or v.rsplit(":", 1)[1] in args.shapes}
    expected = {m["candidate"]: m["metric"] for m in jsonl(args.reference / "expected_metrics.jsonl")}
    print(
        "| agent shape | candidate | agent | openai: | metric vs openai: | vs expected | records vs openai: "
        "| internal requests | s per session (agent / openai:) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    differs = False
    with tempfile.TemporaryDirectory() as root:
        for candidate in args.candidates:
            base, base_metric, _ = run_over_server(
                args.reference, candidate, f"openai:{candidate}", Path(root) / f"openai-{candidate}"
            )
            for shape, spec in shapes.items():
                out = Path(root) / f"{spec.rsplit(':', 1)[1]}-{candidate}"
                records, metric, _ = run_over_server(args.reference, candidate, spec, out)
                same = list(records) == list(base) and all(comparable(records[s]) == comparable(base[s]) for s in base)
                cells = [metric == base_metric, metric == expected.get(candidate)]
                differs = differs or not all(cells)
                verdicts = " | ".join("equal" if ok else "DIFFERENT" for ok in [*cells, same])
                summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
                internal = summary["this_run"].get("agent_internal", {}).get("requests", 0)
                seconds = f"{_session_seconds(records):.3f} / {_session_seconds(base):.3f}"
                print(
                    f"| {shape} | {candidate} | {_counts(metric)} | {_counts(base_metric)} | {verdicts} "
                    f"| {internal} | {seconds} |",
                    flush=True,
                )
    print(json.dumps({"differs": differs}))
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
