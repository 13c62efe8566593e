"""The end-to-end benchmark's inputs and runs are right (no timing asserted here; see benchmarks/oracle.py)."""

from __future__ import annotations

import pytest

from benchmarks.oracle import run_case, scripted_responses, synthetic_session, write_inputs
from wildtoolbench.bench.schema import Session


@pytest.mark.parametrize("case, width", [("distinct_12", 12), ("same_name_10", 10)])
def test_synthetic_session_is_valid_and_scripts_follow_the_paths(case, width):
    session = synthetic_session(case)
    Session.model_validate(session)
    wide = session["english_answer_list"][1]
    assert len(wide) == width + 1 and wide[-1]["dependency_list"] == list(range(width))
    oracle = scripted_responses(session, "oracle")
    suboptimal = scripted_responses(session, "suboptimal")
    # task 0: 2 steps, task 1: 2 (oracle) or width + 1, task 2: 1, task 3: 3; plus the spare response
    assert len(oracle) == 2 + 2 + 1 + 3 + 1
    assert len(suboptimal) == 2 + width + 1 + 1 + 3 + 1
    assert len(oracle[2]["tool_calls"]) == width
    assert [len(r["tool_calls"]) for r in suboptimal[2 : 2 + width]] == [1] * width


@pytest.mark.parametrize("case", ["distinct_12", "same_name_10"])
@pytest.mark.parametrize("candidate, optimal", [("oracle", 1.0), ("suboptimal", 0.0)])
def test_graph_and_scorer_on_the_wide_task(case, candidate, optimal, tmp_path):
    write_inputs(case, tmp_path)
    out = run_case(case, candidate, tmp_path)
    metric = out["metric"]
    assert metric["total_info"]["task"]["accuracy"] == 1.0
    assert metric["optimal_info"]["Total"]["accuracy"] == optimal  # only the wide Parallel task counts
    assert metric["progress_info"]["Total"]["rate"] == 1.0  # the Sequential task: 3 steps of 3 nodes
    calls = [
        out["record"]["result"][1]["inference_log"][k]["inference_output"]["tool_calls"] for k in ("step_0", "step_1")
    ]
    width = 12 if case == "distinct_12" else 10
    assert [len(c or []) for c in calls] == ([width, 0] if candidate == "oracle" else [1, 1])
