"""One exit-status rule for every sub-command (docs/cli.md §2, issue 14).

2: the command line or the run's configuration is wrong (click's usage format naming the option),
nothing written; 1: the content of an input file is bad; 3: infrastructure errors (tested in
tests/integration/test_faults.py). Also what `wtb score --scoring fixed` says when no label flips but the
accomplish progress rate changes (docs/fixed-mode.md §9).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
ORACLE = f"replay:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}#oracle"
TOOL = {"type": "function", "function": {"name": "a"}}


@pytest.fixture(autouse=True)
def _no_run_settings(monkeypatch):
    for name in ("WTB_SCORING", "WTB_LANG", "WTB_MODEL", "WTB_TEMPERATURE"):
        monkeypatch.delenv(name, raising=False)


def _wtb(*args: object):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result


def _usage_error(result, option: str, *fragments: str) -> None:
    """Exit 2 with click's usage format: the usage line, then ``Error: Invalid value for 'OPTION': ...``."""
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Usage: "), result.output
    error = result.output.split("Error: ", 1)[1]
    assert error.startswith(f"Invalid value for '{option}': "), result.output
    for fragment in fragments:
        assert fragment in " ".join(error.split()), result.output


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The oracle replay of the bundled demo: (its folder, its result file)."""
    out = tmp_path_factory.mktemp("demo") / "run"
    done = _wtb("eval", "--model", ORACLE, "--out", out, "--no-progress", "--no-trace")
    assert done.exit_code == 0, done.output
    return out, out / "result.jsonl"


# --------------------------------------------------------------------------- wtb eval


def test_eval_usage_errors_exit_2_and_write_nothing(tmp_path):
    out = tmp_path / "out"
    common = ["eval", "--model", ORACLE, "--out", out, "--no-progress", "--no-trace"]
    _usage_error(
        _wtb(*common, "--dataset", tmp_path / "missing.jsonl"),
        "--dataset",
        "does not exist",
    )
    _usage_error(
        _wtb(*common, "--scoring", "fixd"),
        "--scoring",
        "'fixd' is not one of 'reference', 'fixed'",
    )
    _usage_error(
        _wtb(*common, "--ids", "99"),
        "--ids",
        "session id(s) not in the dataset: wild_tool_bench_99",
    )
    _usage_error(_wtb(*common, "--ids", "0,nope"), "--ids", "not in the dataset: nope")
    _usage_error(_wtb(*common, "--ids", " , "), "--ids", "names no session")
    assert _wtb(*common, "--lang", "fr").exit_code == 2
    assert not out.exists()


def test_eval_configuration_errors_exit_2_and_write_nothing(tmp_path, monkeypatch):
    out = tmp_path / "out"
    bad_model = _wtb("eval", "--model", "nosuch:x", "--out", out, "--no-progress", "--no-trace")
    assert bad_model.exit_code == 2 and "error: unknown model provider 'nosuch'" in bad_model.output
    experiment = _wtb(
        "eval",
        "--model",
        ORACLE,
        "--out",
        out,
        "--scoring",
        "fixed",
        "--langsmith-dataset",
        "x",
        "--no-progress",
    )
    assert experiment.exit_code == 2 and "--langsmith-dataset scores in reference mode only" in experiment.output
    # a bad WTB_* setting is the run's configuration too
    monkeypatch.setenv("WTB_SCORING", "fixd")
    setting = _wtb("eval", "--model", ORACLE, "--out", out, "--no-progress", "--no-trace")
    assert setting.exit_code == 2 and "error: unknown scoring mode 'fixd'" in setting.output
    assert not out.exists()


def test_eval_bad_dataset_content_exits_1(tmp_path):
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text('{"id": "s0"}\n', encoding="utf-8")
    result = _wtb(
        "eval",
        "--dataset",
        dataset,
        "--model",
        ORACLE,
        "--out",
        tmp_path / "out",
        "--no-progress",
    )
    assert result.exit_code == 1 and f"{dataset}:1: " in result.output
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- wtb score and wtb validate


def test_score_usage_errors_exit_2(demo_run, tmp_path):
    _, results = demo_run
    out = tmp_path / "scored"
    common = ["score", "--out", out]
    _usage_error(
        _wtb(*common, "--dataset", tmp_path / "no.jsonl", "--results", results),
        "--dataset",
        "does not exist",
    )
    _usage_error(
        _wtb(*common, "--dataset", DEMO, "--results", tmp_path / "no.jsonl"),
        "--results",
        "does not exist",
    )
    _usage_error(
        _wtb(*common, "--dataset", DEMO, "--results", results, "--scoring", "best"),
        "--scoring",
        "'best'",
    )
    _usage_error(
        _wtb(*common, "--dataset", DEMO, "--results", results, "--lang", "fr"),
        "--lang",
        "'fr'",
    )
    assert not out.exists()


def test_score_bad_result_content_exits_1(demo_run, tmp_path):
    _, results = demo_run
    broken = tmp_path / "result.jsonl"
    broken.write_text(
        results.read_text(encoding="utf-8").splitlines()[0] + "\n{oops\n",
        encoding="utf-8",
    )
    result = _wtb("score", "--dataset", DEMO, "--results", broken, "--out", tmp_path / "scored")
    assert result.exit_code == 1 and f"{broken}:2: (json): invalid JSON" in result.output
    assert not (tmp_path / "scored").exists()


def test_validate_exit_codes(tmp_path):
    _usage_error(_wtb("validate", tmp_path / "no.jsonl"), "path", "does not exist")
    _usage_error(_wtb("validate", tmp_path), "path", "is a directory")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = _wtb("validate", bad)
    assert result.exit_code == 1 and f"{bad}:1: (json): invalid JSON" in result.output
    assert _wtb("validate", DEMO).exit_code == 0


def test_fixed_rescoring_says_when_only_the_progress_rate_changes(demo_run, tmp_path):
    """The oracle's labels are the same in both modes, its accomplish progress rate is not (fix 8)."""
    run_dir, results = demo_run
    reference = json.loads((run_dir / "metric.json").read_text(encoding="utf-8"))["progress_info"]["Total"]
    assert reference == {"rate": 0.875, "complete_step": 21, "total_step": 24}
    result = _wtb(
        "score",
        "--dataset",
        DEMO,
        "--results",
        results,
        "--out",
        tmp_path / "fixed",
        "--scoring",
        "fixed",
    )
    assert result.exit_code == 0, result.output
    line = next(text for text in result.output.splitlines() if text.startswith("fixed vs reference scoring"))
    assert line == (
        "fixed vs reference scoring: no task label flips (24 correct of 24); "
        "accomplish progress rate 87.50% -> 100.00% (fix 8)"
    )


def test_rescoring_line_with_flips_and_an_unchanged_rate():
    from wildtoolbench.scoring.command import rescoring_line

    flips = {
        "flips": [{"fixes": [5]}],
        "by_fix": {5: 1},
        "reference_correct": 3,
        "fixed_correct": 4,
        "tasks": 4,
    }
    progress = {"rate": 0.75, "complete_step": 3, "total_step": 4}
    assert rescoring_line(flips, progress, dict(progress)) == (
        "fixed vs reference scoring: 1 task label(s) flip (3 -> 4 correct of 4); by fix: fix 5: 1; "
        "accomplish progress rate unchanged (75.00%)"
    )
    # no Sequential or Mixed task: no rate to show
    no_steps = {"rate": 0.0, "complete_step": 0, "total_step": 0}
    assert rescoring_line({**flips, "flips": [], "by_fix": {}}, no_steps, no_steps) == (
        "fixed vs reference scoring: no task label flips (3 correct of 4)"
    )


# --------------------------------------------------------------------------- wtb generate, report, data


def test_generate_exit_codes(tmp_path):
    out = tmp_path / "gen"
    _usage_error(
        _wtb("generate", "--tools", tmp_path / "no.jsonl", "--out", out),
        "--tools",
        "does not exist",
    )
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps([TOOL]) + "\n", encoding="utf-8")
    _usage_error(
        _wtb("generate", "--tools", tools, "--out", out, "--language", "fr"),
        "--language",
        "'fr'",
    )
    unknown_path = _wtb("generate", "--tools", tools, "--out", out, "--paths", "ST,XX,CC,CC")
    assert unknown_path.exit_code == 2 and "unknown layer type(s) ['XX']" in unknown_path.output
    official = _wtb("generate", "--tools", "wildtoolbench", "--out", out)
    _usage_error(official, "--tools", "names the official dataset, not a tool list")
    tools.write_text(json.dumps([TOOL]) + "\n{oops\n", encoding="utf-8")
    content = _wtb("generate", "--tools", tools, "--out", out)
    assert content.exit_code == 1 and f"{tools}:2: not JSON" in content.output
    assert not out.exists()


def test_report_and_data_exit_codes(tmp_path):
    out = tmp_path / "report"
    _usage_error(_wtb("report", tmp_path / "nope", "--out", out), "run_dirs", "does not exist")
    (tmp_path / "run").mkdir()
    _usage_error(
        _wtb("report", tmp_path / "run", tmp_path / "run", "--out", out),
        "run_dirs",
        "given twice",
    )
    missing_dataset = _wtb("report", tmp_path / "run", "--out", out, "--dataset", tmp_path / "no.jsonl")
    _usage_error(missing_dataset, "--dataset", "does not exist")
    not_a_run = _wtb("report", tmp_path / "run", "--out", out)
    assert not_a_run.exit_code == 1 and f"{tmp_path / 'run' / 'metric.json'}: missing" in not_a_run.output
    assert not out.exists()
    _usage_error(_wtb("data", "pull", "--only", "everything"), "--only", "'everything'")
