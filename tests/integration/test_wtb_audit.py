"""``wtb audit`` and ``wtb score --errata`` end to end (docs/audit.md): the table, ``--json`` lines of
exactly the documented shape, ``--runs`` with two replay runs, ``--write-errata``, ``--verified``,
exit statuses (docs/cli.md §2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
CANDIDATES = REPO / "bench" / "data" / "demo_candidates.jsonl"


def _invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two replay runs of the demo sessions: the demo model and a copy of it under another name."""
    root = tmp_path_factory.mktemp("runs")
    rows = _lines(CANDIDATES)
    twin = [dict(copy.deepcopy(r), candidate="demo-twin") for r in rows if r["candidate"] == "demo-model"]
    candidates = root / "candidates.jsonl"
    candidates.write_text("".join(json.dumps(r) + "\n" for r in rows + twin), encoding="utf-8")
    out = []
    for name in ("demo-model", "demo-twin"):
        result = _invoke(
            "eval", "--model", f"replay:{candidates}#{name}", "--dataset", DEMO, "--out", root / name, "--no-progress"
        )
        assert result.exit_code == 0, result.output
        out.append(root / name)
    return out[0], out[1]


def test_audit_prints_a_table_and_writes_json_lines_of_the_documented_shape(reference_dir, tmp_path):
    out = tmp_path / "findings.jsonl"
    result = _invoke("audit", reference_dir / "sessions.jsonl", "--json", out)
    assert result.exit_code == 0, result.output
    assert "Audit of" in result.output and "scorer_sensitive" in result.output
    assert "24 session(s) audited (0 invalid): 3 finding(s)" in result.output
    lines = _lines(out)
    assert all(list(line) == ["id", "task", "kind", "severity", "message"] for line in lines)
    assert [(line["id"], line["task"], line["kind"], line["severity"]) for line in lines] == [
        ("wild_tool_bench_3", 2, "scorer_sensitive", "error"),
        ("wild_tool_bench_19", 1, "value_not_in_context", "warning"),
        ("wild_tool_bench_21", 2, "value_not_in_context", "warning"),
    ]


def test_failed_by_all_with_two_replay_runs(runs, tmp_path):
    out = tmp_path / "findings.jsonl"
    result = _invoke("audit", DEMO, "--runs", runs[0], "--runs", runs[1] / "result.jsonl", "--json", out)
    assert result.exit_code == 0, result.output
    failed = {(line["id"], line["task"]) for line in _lines(out) if line["kind"] == "failed_by_all"}
    scored = _lines(runs[0] / "score.jsonl")
    expected = {
        (line["id"], t) for line in scored for t, task in enumerate(line["results"]) if task["label"] != "correct"
    }
    assert failed == expected and len(failed) == 8
    message = next(line["message"] for line in _lines(out) if line["kind"] == "failed_by_all")
    assert message.startswith("failed by all 2 run(s): demo-model: step ") and "; demo-twin: step " in message


def test_write_errata_then_score_with_and_without(runs, tmp_path):
    dataset = tmp_path / "sessions.jsonl"
    rows = _lines(DEMO)
    rows[3]["english_answer_list"][0][0]["action"]["name"] = "nowhere"  # an unknown tool: drafted as an exclusion
    dataset.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    errata = tmp_path / "errata.jsonl"
    result = _invoke("audit", dataset, "--write-errata", errata)
    assert result.exit_code == 0, result.output
    drafted = _lines(errata)
    assert all(list(line) == ["session", "task", "kind", "note", "correction"] for line in drafted)
    assert {"session": "wild_tool_bench_3", "task": 0, "kind": "unknown_tool"}.items() <= drafted[0].items()
    assert drafted[0]["correction"] == {"exclude": True}

    results = runs[0] / "result.jsonl"
    plain = tmp_path / "plain"
    assert _invoke("score", "--dataset", DEMO, "--results", results, "--out", plain).exit_code == 0
    # The demo model's thermostat call sends 17 where the gold says 17.0: an erratum accepts 17.
    fix = {
        "session": "wild_tool_bench_1", "task": 1, "kind": "schema_violation", "note": "an integer is fine",
        "correction": {"path": "english_answer_list[1][0].action.arguments.target_temperature_c", "value": 17, "was": 17.0},
    }  # fmt: skip
    exclude = {"session": "wild_tool_bench_0", "task": 1, "kind": "review", "note": "", "correction": {"exclude": True}}
    errata.write_text(json.dumps(fix) + "\n" + json.dumps(exclude) + "\n", encoding="utf-8")
    out = tmp_path / "scored"
    result = _invoke("score", "--dataset", DEMO, "--results", results, "--out", out, "--errata", errata)
    assert result.exit_code == 0, result.output
    assert "Scores without and with errata" in result.output
    assert "errata: 1 task(s) excluded, 1 gold argument change(s) (1 logged gold call(s) rewritten)" in result.output
    assert (out / "metric.json").read_text() == (plain / "metric.json").read_text()  # the published score is unchanged
    with_errata = json.loads((out / "metric.errata.json").read_text())
    before = json.loads((plain / "metric.json").read_text())["total_info"]["task"]
    assert (before["correct_count"], before["total_count"]) == (16, 24)
    assert with_errata["total_info"]["task"] == {"accuracy": 17 / 23, "correct_count": 17, "total_count": 23}
    assert json.loads((out / "summary_metrics.errata.json").read_text())["task_accuracy"]["total"] == 23


def test_the_api_scores_with_errata_as_the_command_does(runs, tmp_path):
    """``wildtoolbench.score(errata=...)`` goes through the same scoring function as ``wtb score --errata``
    (wildtoolbench/scoring/errata.py): the same files, byte for byte, and the published metric returned."""
    import wildtoolbench

    exclude = {"session": "wild_tool_bench_2", "task": 0, "kind": "review", "note": "", "correction": {"exclude": True}}
    errata = tmp_path / "errata.jsonl"
    errata.write_text(json.dumps(exclude) + "\n", encoding="utf-8")
    results = runs[0] / "result.jsonl"
    cli = tmp_path / "cli"
    assert _invoke("score", "--dataset", DEMO, "--results", results, "--out", cli, "--errata", errata).exit_code == 0
    metric = wildtoolbench.score(DEMO, results, tmp_path / "api", errata=errata)
    for name in ("metric.json", "metric.errata.json", "summary_metrics.errata.json"):
        assert (tmp_path / "api" / name).read_text() == (cli / name).read_text(), name
    assert metric == json.loads((cli / "metric.json").read_text())
    assert json.loads((cli / "metric.errata.json").read_text())["total_info"]["task"]["total_count"] == 23


def test_a_bad_errata_file_stops_score_before_anything_is_written(runs, tmp_path):
    errata = tmp_path / "errata.jsonl"
    errata.write_text('{"session": "nope", "task": 0, "kind": "k", "correction": null}\nnot json\n', encoding="utf-8")
    out = tmp_path / "scored"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--dataset",
            str(DEMO),
            "--results",
            str(runs[0] / "result.jsonl"),
            "--out",
            str(out),
            "--errata",
            str(errata),
        ],
    )
    assert result.exit_code == 1
    assert f"{errata}:1: session: no session 'nope' in the dataset" in result.output
    assert f"{errata}:2: (json): not JSON" in result.output
    assert not out.exists()


def test_a_broken_file_is_audited_and_only_an_unreadable_one_refused(tmp_path):
    dataset = tmp_path / "sessions.jsonl"
    rows = _lines(DEMO)
    rows[2]["english_task_types"][1] = "Juggling"
    rows[4] = rows[4] | {"english_answer_list": "nothing"}
    dataset.write_text("\n".join([*(json.dumps(r) for r in rows), "{not json"]) + "\n", encoding="utf-8")
    out = tmp_path / "f.jsonl"
    result = _invoke("audit", dataset, "--json", out, "--verified", tmp_path / "verified.jsonl")
    assert result.exit_code == 0, result.output
    invalid = [(line["id"], line["task"]) for line in _lines(out) if line["kind"] == "invalid_session"]
    assert ("wild_tool_bench_2", 1) in invalid and ("wild_tool_bench_4", None) in invalid and (None, None) in invalid
    kept = [line["id"] for line in _lines(tmp_path / "verified.jsonl")]
    assert kept == ["wild_tool_bench_0", "wild_tool_bench_1", "wild_tool_bench_3", "wild_tool_bench_5"]

    junk = tmp_path / "junk.jsonl"
    junk.write_text("[1]\nnot json\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["audit", str(junk)])
    assert result.exit_code == 1 and f"{junk}:2: (json)" in result.output
    assert CliRunner().invoke(app, ["audit", str(tmp_path / "missing.jsonl")]).exit_code == 2
    assert CliRunner().invoke(app, ["audit", str(DEMO), "--lang", "fr"]).exit_code == 2
