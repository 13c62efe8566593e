"""``wtb eval --scoring semantic``, ``wtb score RUN_FOLDER --scoring ...`` and ``wtb compare RUN_FOLDER --scorings``
(docs/semantic-mode.md §1, §4) on a hand-made session with planted equivalent answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.unit.bench.test_semantic import _call, _reply, _session
from wildtoolbench.bench.generation import SPARE_RESPONSE

REPO = Path(__file__).resolve().parents[2]


def _wtb(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update(PYTHONPATH=str(REPO), LANGSMITH_TRACING="false")
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )


def _inputs(tmp_path: Path) -> tuple[Path, str]:
    session = _session()
    responses = [
        _call({"count": "2", "checkIn": "2024-07-13"}, "a"),  # number-form
        _reply(),
        _call({"count": 1, "city": "Lima"}, "b"),  # extra-stated (the user said Lima)
        _reply(),
        _call({"count": 3, "unit": "kelvin"}, "c"),  # outside the enum: stays wrong
        _reply(),
        _call({"count": 4, "nights": 7}, "d"),  # an extra value nobody said: stays wrong
        _reply(),
    ]
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text(json.dumps(session) + "\n", encoding="utf-8")
    replay = tmp_path / "candidates.jsonl"
    record = {"session_id": session["id"], "candidate": "planted", "responses": [*responses, dict(SPARE_RESPONSE)]}
    replay.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return dataset, f"replay:{replay}#planted"


def test_regrade_a_fixed_run_and_list_the_flips_by_rule(tmp_path):
    dataset, model = _inputs(tmp_path)
    out = tmp_path / "run"
    done = _wtb("eval", "--dataset", str(dataset), "--model", model, "--scoring", "fixed", "--out", str(out), "--no-progress", "--no-trace")
    assert done.returncode == 0, done.stderr
    regraded = _wtb("score", str(out), "--scoring", "semantic")
    assert regraded.returncode == 0, regraded.stderr
    assert "semantic scoring of the stored replies is exact" in regraded.stdout
    assert (out / "score.semantic.jsonl").is_file() and (out / "metric.fixed.json").is_file()
    compared = _wtb("compare", str(out), "--scorings", "fixed,semantic", "--json", str(tmp_path / "flips.json"))
    assert compared.returncode == 0, compared.stderr
    flips = json.loads((tmp_path / "flips.json").read_text(encoding="utf-8"))
    assert [(f["task_idx"], f["rules"]) for f in flips["flips"]] == [(0, ["number-form"]), (1, ["extra-stated"])]
    assert flips["by_rule"] == {"number-form": 1} and flips["arguable"] == {"extra-stated": 1}
    assert (flips["a"]["correct_tasks"], flips["b"]["correct_tasks"]) == (0, 2)
    assert "reported apart" in compared.stdout and "comparability: mixes fixed, semantic" in compared.stdout
    # reference scoring of a fixed run is refused: its replies answered another history
    refused = _wtb("score", str(out), "--scoring", "reference")
    assert refused.returncode == 1 and "cannot be scored in reference mode" in refused.stderr


def test_regrade_a_reference_run_names_what_needs_a_rerun(tmp_path):
    dataset, model = _inputs(tmp_path)
    out = tmp_path / "run"
    assert _wtb("eval", "--dataset", str(dataset), "--model", model, "--out", str(out), "--no-progress", "--no-trace").returncode == 0
    regraded = _wtb("score", str(out), "--scoring", "semantic")
    assert regraded.returncode == 0, regraded.stderr
    # string observations: the reference history of tasks 1-3 quotes them a second time, fixed mode does not (fix 4)
    assert "3 of 4 tasks need a re-run with --scoring semantic" in regraded.stdout
    assert "(wild_tool_bench_0#1, wild_tool_bench_0#2, wild_tool_bench_0#3)" in regraded.stdout
    compared = _wtb("compare", str(out), "--scorings", "reference,semantic")
    assert compared.returncode == 0, compared.stderr
    assert "only the reference figures compare with the paper's leaderboard" in compared.stdout
    assert _wtb("compare", str(out), "--scorings", "semantic").returncode == 2


def test_the_report_shows_every_scoring_of_a_folder_and_the_papers_scoring(tmp_path):
    dataset, model = _inputs(tmp_path)
    out = tmp_path / "run"
    assert _wtb("eval", "--dataset", str(dataset), "--model", model, "--scoring", "fixed", "--out", str(out), "--no-progress", "--no-trace").returncode == 0
    assert _wtb("score", str(out), "--scoring", "semantic").returncode == 0
    done = _wtb("report", str(out), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| planted (fixed) | fixed | 4 | 0.00% | 0.00% |" in markdown
    assert "| planted (fixed) | semantic | 4 | 50.00% | 0.00% |" in markdown
    assert "Scoring modes mixed (fixed, semantic)" in markdown
    assert "The paper's figures use reference scoring" in markdown
    facts = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    run = facts["runs"][0] if isinstance(facts.get("runs"), list) else None
    assert run is not None and [s["scoring"] for s in run["scorings"]] == ["fixed", "semantic"]
    assert [s["correct_tasks"] for s in run["scorings"]] == [0, 2]
