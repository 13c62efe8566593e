"""Benchmark: wide gold layers matched and scored end to end (docs/evaluation.md §3, docs/paths.md, docs/scoring.md; issue 2).

Run ``python -m benchmarks.oracle``. Not a test: it prints a table.

Each case is one synthetic session of 4 tasks (a synthetic tool list, a small
Single-Tool task, the *wide* task, a Chat task and a Sequential task; the wide
task also appears as gold history in the requests of the two tasks after it).
The wide task is either

- ``distinct_12``: 12 independent calls with distinct names, then
  ``prepare_to_answer`` (the reference would enumerate Fubini(12) =
  28,091,567,595 paths), or
- ``same_name_10``: 10 independent calls of one tool, then ``prepare_to_answer``.

A ``replay:`` candidate file is written on the fly with two candidates:
``oracle`` (the first optimal gold path: all the wide calls in one step) and
``suboptimal`` (one call per step). The session runs through the real
evaluation graph (``wildtoolbench.graphs.evaluation.graph`` with an ``EvaluationContext``)
and the record is scored by the real scorer (``wildtoolbench.scoring.run.score_run``,
which calls ``wildtoolbench.bench.scoring.score_session`` and ``wildtoolbench.bench.metrics``). The labels
are checked (every task correct; ``is_optimal`` true for the oracle, false for
the suboptimal run on the wide task) so the figures are of a correct run.

Every (case, candidate) runs in a fresh subprocess: the wall time of the
first graph run + scoring in that process (after the imports, which are not
counted; no warm-up, so first-call costs are), the process's ``ru_maxrss``
right after it (peak resident set, the imports of LangGraph/LangChain
included; the figure after the imports alone is shown beside it), and the
peak of Python allocations during a second, ``tracemalloc``-traced run.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from wildtoolbench.bench.paths import PathTracker, _shape_for
from wildtoolbench.bench.terms import PREPARE_TO_ANSWER

TARGET_SECONDS = 1.0
TARGET_MIB = 200.0
CANDIDATES = ("oracle", "suboptimal")


# --------------------------------------------------------------------------- the synthetic session


def _tool(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name."}, "day": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }


def _node(name: str, arguments: dict[str, Any], observation: Any, deps: list[int] | None = None) -> dict[str, Any]:
    return {"action": {"name": name, "arguments": arguments}, "observation": observation, "dependency_list": deps or []}


def wide_task(names: list[str]) -> list[dict[str, Any]]:
    """Gold answer list: one independent call per name (arguments differ per node), then
    ``prepare_to_answer`` depending on all of them."""
    nodes = [
        _node(name, {"city": f"City {i}", "day": i}, {"index": i, "value": f"result {i}"})
        for i, name in enumerate(names)
    ]
    nodes.append(
        _node(PREPARE_TO_ANSWER, {"answer_type": "tool"}, "Here is everything you asked for.", list(range(len(names))))
    )
    return nodes


def synthetic_session(case: str, session_id: str = "wild_tool_bench_0") -> dict[str, Any]:
    """A valid 4-task session (docs/dataset.md) whose task 1 is the wide task of ``case``.

    Raises:
        KeyError: unknown case.
    """
    wide_names = {
        "distinct_12": [f"lookup_{i:02d}" for i in range(12)],
        "same_name_10": ["get_weather"] * 10,
    }[case]
    tool_names = sorted(set(wide_names) | {"get_weather", "book_table"})
    tools = [_tool(name, f"Synthetic tool {name}.") for name in tool_names]
    answers = [
        [
            _node("get_weather", {"city": "Oslo"}, "cold"),
            _node(PREPARE_TO_ANSWER, {"answer_type": "tool"}, "It is cold in Oslo.", [0]),
        ],
        wide_task(wide_names),
        [_node(PREPARE_TO_ANSWER, {"answer_type": "chat"}, "You're welcome.")],
        [
            _node("get_weather", {"city": "Rome"}, {"sky": "clear"}),
            _node("book_table", {"city": "Rome", "day": 2}, {"booked": True}, [0]),
            _node(PREPARE_TO_ANSWER, {"answer_type": "tool"}, "Clear sky; table booked.", [1]),
        ],
    ]
    tasks = ["Weather in Oslo?", "Look all of these up for me.", "Thanks!", "Rome weather, then book a table there."]
    return {
        "id": session_id,
        "english_env_info": "2025-03-14 09:30:00 Friday",
        "english_tools": tools,
        "english_tasks": tasks,
        "english_answer_list": answers,
        "english_task_types": ["Single-Tool", "Parallel Multi-Tool", "Chat", "Sequential Multi-Tool"],
        "english_turn_subtypes": ["Partial Information", "Coreferential Reference", "Long-Range Dependency"],
        "env_info": "2025-03-14 09:30:00 星期五",
        "tools": copy.deepcopy(tools),
        "tasks": list(tasks),
        "answer_list": copy.deepcopy(answers),
        "task_types": ["单工具", "多工具", "闲聊", "多工具"],
        "turn_subtypes": ["省略成分", "指代", "长期记忆"],
    }


# --------------------------------------------------------------------------- scripted candidates


def _call(session_id: str, task: int, step: int, j: int, node: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{session_id}_{task}_{step}_{j}",
        "type": "function",
        "function": {
            "name": node["action"]["name"],
            "arguments": json.dumps(node["action"]["arguments"], ensure_ascii=False),
        },
    }


def scripted_responses(session: dict[str, Any], candidate: str) -> list[dict[str, Any]]:
    """The response queue of ``candidate`` for ``session`` (``replay:`` format), plus a spare response.

    ``oracle`` follows each task's first optimal gold path (``PathTracker.gold_path``);
    ``suboptimal`` issues one call per step in node-index order (a valid path: the
    same-name run one node per step, distinct names one at a time). Pseudo-tool
    nodes become text replies (the gold question / the gold reply).
    """
    responses: list[dict[str, Any]] = []
    sid = session["id"]
    for t, answer_list in enumerate(session["english_answer_list"]):
        if candidate == "oracle":
            steps = PathTracker(answer_list).gold_path
        elif candidate == "suboptimal":
            order = PathTracker(answer_list).gold_path  # topological; split every step into single calls
            steps = [[i] for step in order for i in step]
        else:
            raise ValueError(f"unknown candidate {candidate!r}")
        for s, step in enumerate(steps):
            names = [answer_list[i]["action"]["name"] for i in step]
            if names[0] in ("ask_user_for_required_parameters", PREPARE_TO_ANSWER):
                responses.append(
                    {"content": answer_list[step[0]]["observation"], "tool_calls": None, "reasoning_content": None}
                )
            else:
                calls = [_call(sid, t, s, j, answer_list[i]) for j, i in enumerate(step)]
                responses.append({"content": "", "tool_calls": calls, "reasoning_content": None})
    responses.append({"content": "SPARE RESPONSE", "tool_calls": None, "reasoning_content": None})
    return responses


def write_inputs(case: str, folder: Path) -> tuple[Path, Path]:
    """Write ``sessions.jsonl`` (one session) and ``candidates.jsonl`` (both candidates) into ``folder``."""
    session = synthetic_session(case)
    dataset = folder / "sessions.jsonl"
    dataset.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    script = folder / "candidates.jsonl"
    script.write_text(
        "".join(
            json.dumps(
                {"session_id": session["id"], "candidate": c, "responses": scripted_responses(session, c)},
                ensure_ascii=False,
            )
            + "\n"
            for c in CANDIDATES
        ),
        encoding="utf-8",
    )
    return dataset, script


# --------------------------------------------------------------------------- one measured run


def run_case(case: str, candidate: str, folder: Path) -> dict[str, Any]:
    """Match (evaluation graph, ``replay:`` candidate) and score (``score_run``) the case's session once.

    Returns:
        ``{"record", "metric", "scores"}``: the docs/evaluation.md §5 record, the metric dict and the score lines.

    Raises:
        AssertionError: the run is not what an oracle / one-call-per-step run must give.
    """
    from wildtoolbench.bench.schema import load_sessions
    from wildtoolbench.common.run_folder import SCORE_FILE
    from wildtoolbench.graphs.evaluation import graph
    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.scoring.run import score_run

    dataset, script = folder / "sessions.jsonl", folder / "candidates.jsonl"
    session = load_sessions(dataset)[0].to_dict()
    context = EvaluationContext(model=f"replay:{script}#{candidate}", dataset=str(dataset))
    record = asyncio.run(graph.ainvoke({"session": session}, context=context))["record"]
    results = folder / f"result_{candidate}.jsonl"
    results.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    out = folder / f"score_{candidate}"
    metric = score_run(dataset, results, out)
    scores = [json.loads(line) for line in (out / SCORE_FILE).read_text(encoding="utf-8").splitlines()]

    tasks = scores[0]["results"]
    assert [t["label"] for t in tasks] == ["correct"] * 4, [t["label"] for t in tasks]
    wide = tasks[1]
    assert wide["is_optimal"] is (candidate == "oracle"), wide["is_optimal"]
    width = len(session["english_answer_list"][1]) - 1
    steps = [k for k in wide["inference_log"] if k.startswith("step_")]
    assert len(steps) == (2 if candidate == "oracle" else width + 1), steps
    assert metric["total_info"]["session"]["accuracy"] == 1.0
    return {"record": record, "metric": metric, "scores": scores}


def _maxrss_mib() -> float:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def measure(case: str, candidate: str) -> dict[str, Any]:
    """Measure one (case, candidate) in this process; see the module doc for what is measured."""
    import wildtoolbench.graphs.evaluation  # noqa: F401 - imports are not part of the measurement
    import wildtoolbench.scoring.run  # noqa: F401

    baseline = _maxrss_mib()
    with tempfile.TemporaryDirectory(prefix="wtb-bench-") as tmp:
        folder = Path(tmp)
        write_inputs(case, folder)
        started = time.perf_counter()
        out = run_case(case, candidate, folder)
        wall = time.perf_counter() - started
        maxrss = _maxrss_mib()

        _shape_for.cache_clear()  # the traced run must not reuse the first run's shared DAG caches
        tracemalloc.start()
        run_case(case, candidate, folder)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    wide = out["scores"][0]["results"][1]
    return {
        "case": case,
        "candidate": candidate,
        "wall_s": wall,
        "traced_peak_mib": peak / 2**20,
        "maxrss_mib": maxrss,
        "baseline_rss_mib": baseline,
        "wide_steps": sum(1 for k in wide["inference_log"] if k.startswith("step_")),
        "wide_optimal": wide["is_optimal"],
        "task_accuracy": out["metric"]["total_info"]["task"]["accuracy"],
    }


def main(argv: list[str] | None = None) -> int:
    """Run every (case, candidate) in its own subprocess, or one with ``--case/--candidate`` (prints JSON).

    Returns the exit code: 0 when every run met the targets (< 1 s wall, < 200 MiB peak), else 1.
    """
    parser = argparse.ArgumentParser(description="Wide gold layers matched and scored end to end (see module doc).")
    parser.add_argument("--case", choices=["distinct_12", "same_name_10"])
    parser.add_argument("--candidate", choices=CANDIDATES, default="oracle")
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(measure(args.case, args.candidate)))
        return 0
    header = (
        f"{'case':14} {'candidate':11} {'wall s':>8} {'traced MiB':>11} {'maxrss MiB':>11} "
        f"{'after imports':>14} {'steps':>6} {'optimal':>8}  target"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for case in ("distinct_12", "same_name_10"):
        for candidate in CANDIDATES:
            proc = subprocess.run(
                [sys.executable, "-m", "benchmarks.oracle", "--case", case, "--candidate", candidate],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                print(f"{case:14} {candidate:11} FAILED\n{proc.stderr}")
                ok = False
                continue
            r = json.loads(proc.stdout)
            met = r["wall_s"] < TARGET_SECONDS and r["maxrss_mib"] < TARGET_MIB
            ok &= met
            print(
                f"{case:14} {candidate:11} {r['wall_s']:8.3f} {r['traced_peak_mib']:11.2f} {r['maxrss_mib']:11.1f} "
                f"{r['baseline_rss_mib']:14.1f} {r['wide_steps']:6d} {str(r['wide_optimal']):>8}  {'met' if met else 'MISSED'}"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
