"""``wtb report`` (wildtoolbench/reports/): files, tables beside the paper's rows, error counts, bootstrap intervals, inputs it refuses.

The acceptance runs (``oracle`` and ``noisy`` replayed on the public fixtures) need ../shared; the
demo-run tests and the unit tests do not.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.report_support import (
    REPO_ROOT,
    fixture_report,
    fixture_runs,
    official_pins,
    read_csv,
    read_json,
    run_cli,
)
from wildtoolbench.bench.errors import CATEGORIES
from wildtoolbench.cli import app
from wildtoolbench.reports import build_report
from wildtoolbench.reports.build import session_outcomes
from wildtoolbench.reports.dataset_stats import dataset_statistics, layer_widths, node_depths
from wildtoolbench.reports.html import pack_session, session_blocks, unpack_session
from wildtoolbench.reports.run_data import session_transitions
from wildtoolbench.reports.stats import SessionOutcomes, bootstrap_accuracy, clustered_wilson, paired_bootstrap, wilson
from wildtoolbench.reports.tables import LEADERBOARD_KEYS, ORCHESTRATION_KEYS, format_percent, paper_data

PAPER_MODELS = 57


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return tmp_path_factory.getbasetemp() / "report-fixture"


@pytest.fixture(scope="module")
def runs(base, reference_dir) -> dict[str, Path]:
    return fixture_runs(base, reference_dir)


@pytest.fixture(scope="module")
def report(base, reference_dir) -> Path:
    return fixture_report(base, reference_dir)


def _percent(ratio: float) -> str:
    return f"{ratio * 100:.2f}"


def invoke(*args: object):
    """``wtb ARGS`` in this process (fast; for the error paths): the click result, never a traceback."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result


# --------------------------------------------------------------------------- acceptance on the fixture runs


def test_report_writes_every_file(report):
    for name in (
        "index.html",
        "report.md",
        "leaderboard.csv",
        "orchestration.csv",
        "errors.csv",
        "tasks.csv",
        "report.json",
    ):
        assert (report / name).is_file() and (report / name).stat().st_size > 0, name
    for plot in ("order", "type", "transitions", "errors", "scatter"):
        assert (report / "plots" / f"{plot}.svg").read_text(encoding="utf-8").startswith("<svg")


def test_leaderboard_has_both_runs_and_the_paper_rows_with_metric_values(report, runs):
    rows = read_csv(report / "leaderboard.csv")
    assert list(rows[0]) == ["model", "source", "group", *LEADERBOARD_KEYS]
    assert len(rows) == 2 + PAPER_MODELS
    paper = [r for r in rows if r["source"] == "paper"]
    assert len(paper) == PAPER_MODELS and {r["model"] for r in paper} == {r["model"] for r in paper_data()["main"]}
    ours = {r["model"]: r for r in rows if r["source"] == "run"}
    assert set(ours) == {"oracle", "noisy"}
    for name, run_dir in runs.items():
        metric = read_json(run_dir / "metric.json")
        row = ours[name]
        assert row["group"] == "ours"
        assert row["task"] == _percent(metric["total_info"]["task"]["accuracy"])
        assert row["session"] == _percent(metric["total_info"]["session"]["accuracy"])
        assert row["t1"] == _percent(metric["layer_info"]["0"]["accuracy"])
        assert row["clarify"] == _percent(metric["task_type_info"]["Clarify"]["accuracy"])
    assert (ours["oracle"]["task"], ours["oracle"]["session"]) == ("98.96", "95.83")
    assert (ours["noisy"]["task"], ours["noisy"]["session"], ours["noisy"]["multi"]) == ("50.00", "4.17", "33.33")
    # Ranked by session then task accuracy: the oracle first, the noisy run between the paper's 4.30 and 3.91.
    assert rows[0]["model"] == "oracle"
    sessions = [float(r["session"]) for r in rows]
    assert sessions == sorted(sessions, reverse=True)
    position = [r["model"] for r in rows].index("noisy")
    assert float(rows[position - 1]["session"]) >= 4.17 >= float(rows[position + 1]["session"])
    gemini = next(r for r in paper if r["model"] == "Gemini-2.0-Thinking")
    assert (gemini["multi"], gemini["task"], gemini["session"]) == ("40.23", "61.04", "14.45")
    gpt4o = next(r for r in paper if r["model"] == "GPT-4o")
    assert gpt4o["multi"] == "41.80"  # two decimals, as the paper prints them


def test_orchestration_table(report, runs):
    rows = read_csv(report / "orchestration.csv")
    assert list(rows[0]) == ["model", "source", "group", *ORCHESTRATION_KEYS]
    assert len(rows) == 2 + len(paper_data()["orchestration"]) == 60
    noisy = next(r for r in rows if r["model"] == "noisy")
    metric = read_json(runs["noisy"] / "metric.json")
    assert noisy["op"] == _percent(metric["optimal_info"]["Total"]["accuracy"]) == "20.00"
    assert noisy["ap"] == _percent(metric["progress_info"]["Total"]["rate"]) == "63.93"
    assert noisy["p"] == "44.44" and noisy["s"] == "27.27" and noisy["mix"] == "14.29" and noisy["ta"] == "33.33"
    oracle = next(r for r in rows if r["model"] == "oracle")
    assert (oracle["op"], oracle["ap"], oracle["ap_mix"]) == ("100.00", "88.52", "75.00")


def test_error_counts_sum_to_the_failed_tasks(report, runs):
    rows = read_csv(report / "errors.csv")
    assert list(rows[0])[:12] == ["model", "source", "group", *CATEGORIES]
    assert len([r for r in rows if r["source"] == "paper"]) == PAPER_MODELS
    for name, run_dir in runs.items():
        metric = read_json(run_dir / "metric.json")
        failed = metric["total_info"]["task"]["total_count"] - metric["total_info"]["task"]["correct_count"]
        row = next(r for r in rows if r["model"] == name)
        counts = {c: int(row[f"{c}_count"]) for c in CATEGORIES}
        assert int(row["failed_tasks"]) == failed == sum(counts.values())
        assert abs(sum(float(row[c]) for c in CATEGORIES) - 100.0) < 0.05
    noisy = next(r for r in rows if r["model"] == "noisy")
    assert {c: int(noisy[f"{c}_count"]) for c in CATEGORIES} == {
        "refusal": 2,
        "wrong_name": 8,
        "wrong_refusal": 0,
        "redundant": 0,
        "call_error": 11,
        "early_term": 0,
        "param_type": 9,
        "param_halluc": 11,
        "param_value": 7,
    }
    assert noisy["call_error"] == "22.92"
    oracle = next(r for r in rows if r["model"] == "oracle")
    assert (oracle["param_halluc_count"], oracle["param_halluc"]) == ("1", "100.00")
    paper_row = next(r for r in rows if r["model"] == "Gemini-2.0-Thinking")
    assert paper_row["refusal"] == "24.56" and paper_row["failed_tasks"] == "" and paper_row["refusal_count"] == ""


def test_tasks_csv_lists_every_task_with_category_and_reason(report):
    rows = read_csv(report / "tasks.csv")
    assert len(rows) == 2 * 96
    failed = [r for r in rows if r["label"] == "error"]
    assert len(failed) == 1 + 48
    assert all(r["error_category"] in CATEGORIES and r["reason"] for r in failed)
    assert all(r["error_category"] == "" and r["reason"] == "" for r in rows if r["label"] == "correct")
    oracle_failure = next(r for r in failed if r["model"] == "oracle")
    assert (oracle_failure["session_id"], oracle_failure["task"], oracle_failure["error_category"]) == (
        "wild_tool_bench_3",
        "3",  # task_idx 2: the numbers people read count from 1 (docs/terms.md §1.2)
        "param_halluc",
    )
    assert oracle_failure["reason"] == "error_schema: nested args not defined" and oracle_failure["failing_step"] == "1"
    assert oracle_failure["trajectory"] == "index.html#traj/r0/3/2"
    empty = next(
        r for r in failed if r["model"] == "noisy" and r["session_id"] == "wild_tool_bench_1" and r["task"] == "3"
    )
    assert (empty["error_category"], empty["failing_step"], empty["reason"]) == (
        "call_error",
        "2",
        "tool_calls and content are None or empty",
    )


def test_intervals_and_paired_difference(report):
    figures = read_json(report / "report.json")
    assert figures["bootstrap"] == {
        "seed": 0,
        "resamples": 2000,
        "level": 0.95,
        "unit": "session",
        "used_for": "paired differences",
    }
    assert figures["intervals"]["proportions"] == "wilson"
    by_label = {r["label"]: r for r in figures["runs"]}
    for run in by_label.values():
        for key in ("task_accuracy", "session_accuracy"):
            interval = run[key]
            assert interval["low"] <= interval["value"] <= interval["high"]
    noisy = by_label["noisy"]["task_accuracy"]
    assert noisy["value"] == 0.5 and 0.35 < noisy["low"] < 0.45 and 0.55 < noisy["high"] < 0.65
    # Wilson on sessions: 1 of 24 sessions right gives [0.74%, 20.24%], never a point.
    session = by_label["noisy"]["session_accuracy"]
    assert (round(session["low"], 4), round(session["high"], 4)) == (0.0074, 0.2024)
    assert by_label["oracle"]["task_accuracy"]["high"] < 1.0  # 95 of 96: the interval does not reach 100%
    # Fixture sessions are not the official dataset: no rank, and the reason.
    assert by_label["oracle"]["rank"] is None and by_label["noisy"]["rank"] is None
    assert by_label["noisy"]["unranked"] == ["not the official dataset"]
    assert by_label["noisy"]["side"] == "en" and by_label["noisy"]["scoring"] == "reference"
    assert by_label["noisy"]["model_spec"].endswith("candidates.jsonl#noisy")
    assert by_label["noisy"]["dataset"]["name"] == "sessions.jsonl" and by_label["noisy"]["dataset"]["sessions"] == 24
    assert by_label["noisy"]["harness_version"] and by_label["noisy"]["date"].endswith("Z")
    clarify = by_label["noisy"]["task_type"]["Clarify"]
    assert (clarify["correct"], clarify["n"]) == (5, 11) and clarify["low"] < 5 / 11 < clarify["high"]
    (comparison,) = figures["comparisons"]
    assert comparison["a"] == "oracle" and comparison["b"] == "noisy" and comparison["sessions"] == 24
    assert comparison["task_accuracy_difference"]["value"] == pytest.approx(47 / 96)
    assert comparison["task_accuracy_difference"]["low"] > 0 and comparison["within_noise"] == {
        "task": False,
        "session": False,
    }
    assert comparison["verdict"] == "task accuracy: oracle higher; session accuracy: oracle higher"
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "| oracle | noisy | 24 | +48.96 [" in markdown and "## Error analysis" in markdown


def test_intervals_are_reproducible_with_a_fixed_seed(runs, report, tmp_path):
    """The same runs and seed give the same files, byte for byte; another seed moves only the interval ends."""
    again = build_report([runs["oracle"], runs["noisy"]], tmp_path / "again")
    assert (tmp_path / "again" / "report.json").read_text() == (report / "report.json").read_text()
    assert (tmp_path / "again" / "report.md").read_text() == (report / "report.md").read_text()
    assert (tmp_path / "again" / "index.html").read_bytes() == (report / "index.html").read_bytes()
    noisy = again.runs[1]
    outcomes = session_outcomes(noisy)
    seeded = [bootstrap_accuracy(outcomes, resamples=500, seed=s) for s in (7, 7, 8)]
    assert seeded[0] == seeded[1] and seeded[0]["task"].value == seeded[2]["task"].value == 0.5
    assert (seeded[0]["task"].low, seeded[0]["task"].high) != (seeded[2]["task"].low, seeded[2]["task"].high)


def test_cli_prints_the_intervals(runs, tmp_path):
    result = invoke(
        "report", runs["oracle"], runs["noisy"], "--out", tmp_path / "r", "--seed", "7", "--resamples", "500"
    )
    assert result.exit_code == 0
    assert (
        "noisy: task accuracy 50.00% [95% CI" in result.output
        and "oracle vs noisy (24 shared sessions)" in result.output
    )
    assert read_json(tmp_path / "r" / "report.json")["bootstrap"]["seed"] == 7


def test_a_copy_of_a_run_is_within_noise(runs, tmp_path):
    copy = tmp_path / "oracle-again"
    shutil.copytree(runs["oracle"], copy)
    build_report([runs["oracle"], copy], tmp_path / "r", resamples=300)
    figures = read_json(tmp_path / "r" / "report.json")
    assert [r["label"] for r in figures["runs"]] == ["oracle (oracle)", "oracle (oracle-again)"]
    (comparison,) = figures["comparisons"]
    assert comparison["task_accuracy_difference"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert comparison["within_noise"] == {"task": True, "session": True}
    assert "task accuracy: within noise; session accuracy: within noise" in (tmp_path / "r" / "report.md").read_text()


def test_page_is_self_contained(report):
    html = (report / "index.html").read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), (
        "the page must not load anything over the network"
    )
    data = json.loads(re.search(r'<script type="application/json" id="wtb-data">(.*?)</script>', html, re.S).group(1))
    assert [r["label"] for r in data["runs"]] == ["oracle", "noisy"]
    assert len(data["tables"]["main"]["rows"]) == 59 and len(data["tasks"]) == 192 and len(data["sessions"]) == 24
    blocks = session_blocks(html)
    assert sorted(blocks) == list(range(24))
    session = blocks[3]
    assert session["s"]["id"] == "wild_tool_bench_3" and set(session["r"]) == {"r0", "r1"}
    task = session["r"]["r0"]["tasks"][2]
    assert task["label"] == "error" and task["err"] == ["param_halluc", "error_schema: nested args not defined", 0]
    step = task["steps"][0]
    assert step["checks"][0][3] == "error_schema: nested args not defined" and step["args"] == "error"
    assert task["steps"][1]["dropped"] is True  # removed by the scorer after the argument error (quirk 14)


def test_session_blocks_round_trip():
    text = json.dumps({"s": {"id": "x", "note": "</script><b>é"}, "r": {}}, ensure_ascii=False)
    packed = pack_session(text)
    assert set(packed) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    assert unpack_session(packed) == json.loads(text) and pack_session(text) == packed


def test_message_prefixes_rebuild_the_requests(runs, report):
    """The page stores each request as (shared prefix, new messages); rebuilding gives the recorded messages."""
    html = (report / "index.html").read_text(encoding="utf-8")
    block = session_blocks(html)[5]
    record = next(
        json.loads(line)
        for line in (runs["noisy"] / "result.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == "wild_tool_bench_5"
    )
    previous: list = []
    for task, raw in zip(block["r"]["r1"]["tasks"], record["result"]):
        for step in task["steps"]:
            full = previous[: step["m"][0]] + step["m"][1]
            assert full == raw["inference_log"][f"step_{step['i']}"]["inference_input"]["messages"]
            previous = full


# --------------------------------------------------------------------------- inputs the report refuses or works around


def test_score_folder_needs_dataset_and_uses_scored_log(runs, reference_dir, tmp_path):
    scored = tmp_path / "scored"
    run_cli(
        "score",
        "--dataset",
        reference_dir / "sessions.jsonl",
        "--results",
        runs["noisy"] / "result.jsonl",
        "--out",
        scored,
    )
    refused = invoke("report", scored, "--out", tmp_path / "r")
    assert (
        refused.exit_code == 1 and "no run.json naming the dataset" in refused.output and "--dataset" in refused.output
    )
    invoke("report", scored, "--out", tmp_path / "r", "--dataset", reference_dir / "sessions.jsonl")
    html = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert '"rawResults":false' in html
    rows = read_csv(tmp_path / "r" / "leaderboard.csv")
    assert next(r for r in rows if r["source"] == "run")["task"] == "50.00"


def test_session_whose_inference_failed(runs, reference_dir, tmp_path):
    """A session recorded as "Error during inference" counts as 4 call errors and shows its message."""
    from wildtoolbench.scoring.run import score_run

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lines = (runs["oracle"] / "result.jsonl").read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[4])
    broken["result"] = "Error during inference: list index out of range"
    lines[4] = json.dumps(broken)
    (run_dir / "result.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run_dir / "run.json").write_text((runs["oracle"] / "run.json").read_text())
    score_run(reference_dir / "sessions.jsonl", run_dir / "result.jsonl", run_dir)
    report = build_report([run_dir], tmp_path / "r", resamples=200)
    failed = [r for r in read_csv(tmp_path / "r" / "tasks.csv") if r["label"] == "error"]
    broken_rows = [r for r in failed if r["session_id"] == broken["id"]]
    assert len(broken_rows) == 4 and len(failed) == 5
    assert {(r["error_category"], r["failing_step"], r["reason"]) for r in broken_rows} == {
        ("call_error", "", "Error during inference: list index out of range")
    }
    assert report.runs[0].error_counts()["call_error"] == 4
    block = session_blocks((tmp_path / "r" / "index.html").read_text(encoding="utf-8"))[4]
    assert block["r"]["r0"] == {"error": "Error during inference: list index out of range"}


def test_changed_dataset_is_refused(runs, reference_dir, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(runs["oracle"], run_dir)
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_bytes((reference_dir / "sessions.jsonl").read_bytes() + b"\n")
    info = read_json(run_dir / "run.json")
    info["dataset"] = str(dataset)
    (run_dir / "run.json").write_text(json.dumps(info))
    result = invoke("report", run_dir, "--out", tmp_path / "r")
    assert result.exit_code == 1 and "changed since the run (sha256 differs)" in result.output


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda d: (d / "metric.json").unlink(), "metric.json: missing"),
        (lambda d: (d / "score.jsonl").write_text("{not json\n"), "score.jsonl:1: not JSON"),
        (lambda d: (d / "score.jsonl").write_text(""), "holds no scored sessions"),
    ],
)
def test_broken_run_folders_give_one_line_errors(runs, tmp_path, setup, message):
    run_dir = tmp_path / "run"
    shutil.copytree(runs["oracle"], run_dir)
    setup(run_dir)
    result = invoke("report", run_dir, "--out", tmp_path / "r")
    assert result.exit_code == 1 and message in result.output


def test_an_undiffable_flipped_task_names_its_score_line_and_field(runs, tmp_path):
    """The report diffs every comparable pair (docs/diff.md §4): a flipped task whose log cannot be read is
    refused with the score file, its line and the field; a copy of a run diffs with no flip."""
    oracle = [json.loads(line) for line in (runs["oracle"] / "score.jsonl").read_text(encoding="utf-8").splitlines()]
    broken = tmp_path / "noisy"
    shutil.copytree(runs["noisy"], broken)
    lines = (broken / "score.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    number, t = next(
        (n, t)
        for n, (a, b) in enumerate(zip(oracle, records), 1)
        for t, (x, y) in enumerate(zip(a["results"], b["results"]))
        if x["label"] != y["label"]
    )
    records[number - 1]["results"][t]["inference_log"] = "not a log"
    (broken / "score.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = invoke("report", runs["oracle"], broken, "--out", tmp_path / "r")
    where = f"score.jsonl:{number}: {records[number - 1]['id']}.results[{t}].inference_log: missing or not an object"
    assert result.exit_code == 1 and where in result.output
    copy = tmp_path / "copy"
    shutil.copytree(runs["oracle"], copy)
    build_report([runs["oracle"], copy], tmp_path / "same", resamples=20)
    diffs = read_json(tmp_path / "same" / "report.json")["diffs"]
    assert [(d["sessions"], d["counts"], d["flipped"]) for d in diffs] == [
        (len(oracle), {"regressed": 0, "improved": 0, "total": 0}, [])
    ]


def test_missing_folder_and_folder_given_twice(tmp_path):
    result = invoke(
        "report", tmp_path / "nope", "--out", tmp_path / "r"
    )  # command-line mistakes: exit 2 (docs/cli.md §2)
    assert result.exit_code == 2 and "does not exist" in result.output and not (tmp_path / "r").exists()
    (tmp_path / "empty").mkdir()
    result = invoke("report", tmp_path / "empty", tmp_path / "empty", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "a run folder is given twice" in result.output
    result = invoke("report", tmp_path / "empty", "--out", tmp_path / "r")  # a folder without a run: its content
    assert result.exit_code == 1 and "metric.json: missing" in result.output


# --------------------------------------------------------------------------- the bundled demo (no ../shared)


def test_eval_report_on_the_bundled_demo(tmp_path):
    out = tmp_path / "demo-model"
    run_cli(
        "eval",
        "--model",
        f"replay:{REPO_ROOT / 'bench/data/demo_candidates.jsonl'}#demo-model",
        "--out",
        out,
        "--no-progress",
        "--no-trace",
        "--report",
    )
    report = out / "report"
    metric = read_json(out / "metric.json")
    rows = read_csv(report / "leaderboard.csv")
    assert len(rows) == 1 + PAPER_MODELS
    ours = next(r for r in rows if r["source"] == "run")
    assert ours["model"] == "demo-model" and ours["task"] == _percent(metric["total_info"]["task"]["accuracy"])
    errors = next(r for r in read_csv(report / "errors.csv") if r["source"] == "run")
    failed = metric["total_info"]["task"]["total_count"] - metric["total_info"]["task"]["correct_count"]
    assert failed > 0 and sum(int(errors[f"{c}_count"]) for c in CATEGORIES) == failed == int(errors["failed_tasks"])
    assert read_json(report / "report.json")["comparisons"] == []


# --------------------------------------------------------------------------- units


def test_bootstrap_of_all_correct_and_all_wrong_runs():
    perfect = SessionOutcomes.from_lists(["a", "b", "c"], [4, 4, 4], [4, 4, 4])
    intervals = bootstrap_accuracy(perfect, resamples=200, seed=1)
    assert (intervals["task"].value, intervals["task"].low, intervals["task"].high) == (1.0, 1.0, 1.0)
    wrong = SessionOutcomes.from_lists(["a", "b"], [0, 0], [4, 4])
    assert bootstrap_accuracy(wrong, resamples=50)["session"].high == 0.0


def test_bootstrap_is_seeded_and_resamples_sessions():
    outcomes = SessionOutcomes.from_lists([f"s{i}" for i in range(40)], [i % 5 for i in range(40)], [4] * 40)
    first = bootstrap_accuracy(outcomes, resamples=400, seed=3)
    assert first == bootstrap_accuracy(outcomes, resamples=400, seed=3)
    assert first["task"].value == pytest.approx(sum(i % 5 for i in range(40)) / 160)
    assert first["session"].value == pytest.approx(8 / 40)
    assert first["task"].low < first["task"].value < first["task"].high
    # Session-level resampling: the interval is wider than a naive task-level binomial one would be.
    naive = 1.96 * np.sqrt(first["task"].value * (1 - first["task"].value) / 160)
    assert first["task"].high - first["task"].low > 2 * naive


def test_paired_bootstrap_pairs_by_session_id():
    a = SessionOutcomes.from_lists(["x", "y", "z"], [4, 2, 0], [4, 4, 4])
    b = SessionOutcomes.from_lists(["z", "x", "w"], [0, 4, 1], [4, 4, 4])
    difference = paired_bootstrap(a, b, resamples=100)
    assert difference.sessions == 2  # x and z
    assert (difference.task.value, difference.task.low, difference.task.high) == (0.0, 0.0, 0.0)
    assert difference.within_noise()
    assert paired_bootstrap(a, SessionOutcomes.from_lists(["q"], [1], [4])) is None


def test_outcomes_validate_their_input():
    with pytest.raises(ValueError):
        SessionOutcomes.from_lists(["a"], [5], [4])
    with pytest.raises(ValueError):
        SessionOutcomes.from_lists([], [], [])
    with pytest.raises(ValueError):
        bootstrap_accuracy(SessionOutcomes.from_lists(["a"], [1], [4]), resamples=0)


def _node(name, deps=()):
    return {"action": {"name": name, "arguments": {}}, "observation": "", "dependency_list": list(deps)}


def test_layer_widths_and_depths():
    fan_in = [_node("a"), _node("b"), _node("c", [0, 1]), _node("prepare_to_answer", [0, 1, 2])]
    assert node_depths(fan_in) == [0, 0, 1, 2]
    assert layer_widths(fan_in) == [2, 1]
    clarify = [_node("ask_user_for_required_parameters"), _node("a", [0]), _node("prepare_to_answer", [1])]
    assert layer_widths(clarify) == [1]
    with pytest.raises(ValueError):
        node_depths([_node("a", [1]), _node("b", [0])])


def test_instruction_transitions():
    assert session_transitions(["Single-Tool", "Parallel Multi-Tool", "Mixed Multi-Tool", "Single-Tool"]) == 0
    assert session_transitions(["Single-Tool", "Chat", "Clarify", "Chat"]) == 3
    assert session_transitions(["Chat", "Chat", "Single-Tool", "Sequential Multi-Tool"]) == 1


def test_dataset_statistics_of_the_demo():
    sessions = [
        json.loads(line)
        for line in (REPO_ROOT / "bench/data/demo_sessions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    stats = dataset_statistics(sessions)
    assert stats["sessions"] == len(sessions) and stats["tasks"] == 4 * len(sessions)
    assert sum(stats["task_types"].values()) == stats["tasks"]
    assert sum(int(k) * v for k, v in stats["calls_per_task"].items()) == stats["calls"]
    assert sum(int(k) * v for k, v in stats["layer_widths"].items()) == stats["calls"]
    assert sum(stats["tools_per_session"].values()) == len(sessions)


def test_paper_figures_ship_with_the_package():
    data = paper_data()
    assert "WildToolBench" in data["source"] and "80a5f42" in data["source"]
    assert len(data["main"]) == PAPER_MODELS and len(data["errors"]) == PAPER_MODELS
    assert set(data["columns"]["errors"]) == set(CATEGORIES)


# --------------------------------------------------------------------------- reference and fixed scoring (issue 17)


def test_report_shows_reference_and_fixed_scoring_with_the_flips(report):
    data = read_json(report / "report.json")
    rescored = {entry["reference"]: entry for entry in data["scoring"] if entry["kind"] == "rescoring"}
    assert set(rescored) == {"r0", "r1"}  # both reference runs are rescored with fixes 5-8
    oracle = rescored["r0"]
    assert (oracle["tasks"], oracle["reference_correct"], oracle["fixed_correct"]) == (96, 95, 96)
    (flip,) = oracle["flips"]
    assert (flip["id"], flip["task_idx"], flip["reference_label"], flip["fixed_label"], flip["fixes"]) == (
        "wild_tool_bench_3",
        2,
        "error",
        "correct",
        [7],
    )
    assert oracle["by_fix"] == {"7": 1}
    noisy = rescored["r1"]
    assert noisy["reference_correct"] == noisy["fixed_correct"] == 48  # AP changes, no label flips
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "## Reference and fixed scoring" in markdown
    assert "| oracle | rescored | 96 | 98.96% | 100.00% | 1 | fix 7: 1 |" in markdown


def test_report_reads_a_fixed_run_and_compares_it_with_the_reference_run(runs, reference_dir, tmp_path):
    fixed = tmp_path / "oracle-fixed"
    run_cli(
        "eval",
        "--dataset",
        reference_dir / "sessions.jsonl",
        "--model",
        f"replay:{reference_dir / 'candidates.jsonl'}#oracle",
        "--scoring",
        "fixed",
        "--out",
        fixed,
        "--no-progress",
        "--no-trace",
    )
    out = tmp_path / "report"
    run_cli("report", runs["oracle"], fixed, "--out", out)
    data = read_json(out / "report.json")
    assert [r["label"] for r in data["runs"]] == ["oracle", "oracle (fixed)"]
    assert data["runs"][1]["task_accuracy"]["value"] == 1.0
    pair = [e for e in data["scoring"] if e["kind"] == "runs"]
    assert len(pair) == 1 and (pair[0]["reference"], pair[0]["fixed"]) == ("r0", "r1")
    assert (pair[0]["reference_correct"], pair[0]["fixed_correct"]) == (95, 96)
    assert data["runs"][1]["scoring"] == "fixed" and data["runs"][1]["rank"] is None
    assert "fixed scoring" in data["runs"][1]["unranked"]
    # A difference across scoring modes is not a paired comparison: listed as not compared, with why.
    assert data["comparisons"] == []
    assert data["not_compared"] == [
        {"a": "oracle", "b": "oracle (fixed)", "why": "different scoring modes (reference and fixed)"}
    ]


def test_runs_off_the_official_dataset_are_not_ranked(report):
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert (
        "**Not ranked against the paper: oracle (not the official dataset); noisy (not the official dataset)."
        in markdown
    )
    assert "| unranked (not the official dataset) |" in markdown
    assert "| – | **noisy** (ours) (unranked: not the official dataset) | ours |" in markdown
    assert "Not ranked against the paper" in (report / "index.html").read_text(encoding="utf-8")


def test_a_run_on_the_official_dataset_has_one_rank_everywhere(runs, reference_dir, tmp_path, monkeypatch):
    """With the fixture file pinned as the official dataset (``WTB_DATA_PINS``), reference runs of all its
    sessions are ranked: 1 + the paper's models strictly better, the same in report.json, report.md and both
    tables; the paper's rows keep their own ranks (runs never push a paper model down)."""
    monkeypatch.setenv("WTB_DATA_PINS", str(official_pins(reference_dir / "sessions.jsonl", tmp_path)))
    built = build_report([runs["oracle"], runs["noisy"]], tmp_path / "r", resamples=50)
    data = read_json(tmp_path / "r" / "report.json")
    ranks = {r["label"]: r["rank"] for r in data["runs"]}
    assert ranks == {"oracle": 1, "noisy": 43} and data["runs"][1]["unranked"] == []
    assert built.figures["r1"].rank == 43
    markdown = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "| 43 of 58 |" in markdown and "| 43 | **noisy** (ours) | ours |" in markdown
    assert "| 1 | Gemini-2.0-Thinking |" in markdown  # below oracle in the table, still the paper's first
    assert "Not ranked against the paper" not in markdown


def test_wilson_intervals_at_the_edges():
    none = wilson(0, 24)
    assert none.value == 0.0 and none.low == 0.0 and round(none.high, 4) == 0.1380
    every = wilson(24, 24)
    assert every.high == 1.0 and round(every.low, 4) == 0.8620
    half = wilson(12, 24)
    assert half.low == pytest.approx(1 - half.high) and half.low < 0.5 < half.high
    with pytest.raises(ValueError):
        wilson(3, 2)
    # Clustered tasks: all wrong or all right, the effective n is the number of sessions (widest choice).
    assert clustered_wilson([0] * 24, [4] * 24).high == pytest.approx(wilson(0, 24).high)
    assert clustered_wilson([4] * 24, [4] * 24).low == pytest.approx(wilson(24, 24).low)
    # Sessions all-or-nothing: tasks are as informative as sessions; independent-looking tasks count fully.
    lumped = clustered_wilson([4, 0] * 12, [4] * 24)
    spread = clustered_wilson([2] * 24, [4] * 24)
    assert lumped.value == spread.value == 0.5
    assert lumped.high - lumped.low == pytest.approx(wilson(12, 24).high - wilson(12, 24).low)
    assert spread.high - spread.low == pytest.approx(wilson(48, 96).high - wilson(48, 96).low)


def test_rounding_rule_is_pythons_half_even_on_the_binary_value():
    """docs/metrics.md §9: 0.40625 -> 40.62 (an exact tie, to even), 0.40626 -> 40.63, as the terminal prints."""
    assert format_percent(0.40625 * 100) == "40.62" and format_percent(0.40875 * 100) == "40.88"
    assert format_percent(0.40626 * 100) == "40.63" and format_percent(None) == ""


def test_a_verdict_on_few_shared_sessions_carries_a_warning():
    """Two shared sessions, both better for A: the intervals exclude 0, but the verdict says how few they are."""
    from types import SimpleNamespace

    from wildtoolbench.bench.trials import FEW_PAIRED_SESSIONS
    from wildtoolbench.reports.content import Comparison
    from wildtoolbench.reports.stats import Interval, PairedDifference

    def compared(sessions: int) -> str:
        difference = PairedDifference(Interval(0.5, 0.25, 0.75), Interval(1.0, 1.0, 1.0), sessions)
        return Comparison(SimpleNamespace(label="A"), SimpleNamespace(label="B"), difference).verdict()

    assert compared(2) == (
        "task accuracy: A higher; session accuracy: A higher (only 2 shared sessions, fewer than 20:"
        " the bootstrap interval is rough, read it as a hint)"
    )
    assert FEW_PAIRED_SESSIONS == 20
    assert compared(20) == "task accuracy: A higher; session accuracy: A higher"
