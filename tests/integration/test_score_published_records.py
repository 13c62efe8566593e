"""``wtb score`` of the published runner's result files, whose error records name no model
(issue 24 finding 10, docs/scoring.md §5.1; the record rules: tests/unit/bench/test_published_error_records.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.demo_data import SESSIONS_PATH
from wildtoolbench.bench.scoring import MODEL_NAME_MISSING
from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[2]
ORACLE = f"replay:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}#oracle"


@pytest.fixture(scope="module")
def oracle_records(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("oracle") / "run"
    done = CliRunner().invoke(app, ["eval", "--model", ORACLE, "--out", str(out), "--no-progress", "--no-trace"])
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in (out / "result.jsonl").read_text().splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _score(results: Path, out: Path, *more: str):
    return CliRunner().invoke(
        app, ["score", "--dataset", str(SESSIONS_PATH), "--results", str(results), "--out", str(out), *more]
    )


def test_wtb_score_reads_a_published_file_taking_the_model_from_its_other_records(oracle_records, tmp_path):
    records = [
        {"id": r["id"], "model_name": r["model_name"], "result": r["result"]} for r in oracle_records
    ]  # the published runner's keys only
    records[0] = {"id": records[0]["id"], "result": "Error during inference: 'parameters'"}  # first line: no model
    result = _score(_write(tmp_path / "published.jsonl", records), tmp_path / "out")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (tmp_path / "out" / "score.jsonl").read_text().splitlines()]
    assert {line["model_name"] for line in lines} == {"oracle"}
    failed = next(line for line in lines if line["id"] == records[0]["id"])
    assert [t["label"] for t in failed["results"]] == ["error"] * 4  # four wrong tasks (docs/scoring.md §5)
    assert {t["error_reason"] for t in failed["results"]} == {"Error during inference: 'parameters'"}
    metric = json.loads((tmp_path / "out" / "metric.json").read_text())
    assert metric["total_info"]["task"]["correct_count"] == sum(
        t["label"] == "correct" for line in lines for t in line["results"]
    )


def test_a_file_of_error_records_only_needs_model_name(tmp_path):
    records = [{"id": f"wild_tool_bench_{i}", "result": "Error during inference: 'parameters'"} for i in range(3)]
    results = _write(tmp_path / "all_failed.jsonl", records)
    refused = _score(results, tmp_path / "refused")
    assert refused.exit_code == 1
    assert f"{results}:1: model_name: {MODEL_NAME_MISSING}" in " ".join(refused.output.split())
    assert not (tmp_path / "refused").exists()
    done = _score(results, tmp_path / "out", "--model-name", "claude-sonnet")
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in (tmp_path / "out" / "score.jsonl").read_text().splitlines()]
    assert [line["model_name"] for line in lines] == ["claude-sonnet"] * 3
    assert json.loads((tmp_path / "out" / "metric.json").read_text())["total_info"]["task"]["correct_count"] == 0


def test_model_name_names_no_other_model_and_fixed_rescoring_reads_the_file_too(oracle_records, tmp_path):
    records = [dict(r) for r in oracle_records]
    records[2] = {"id": records[2]["id"], "result": "Error during inference: 'parameters'"}
    results = _write(tmp_path / "published.jsonl", records)
    mixed = _score(results, tmp_path / "mixed", "--model-name", "another")
    assert mixed.exit_code == 1
    assert "one model per result file expected" in mixed.output
    fixed = _score(results, tmp_path / "fixed", "--scoring", "fixed")
    assert fixed.exit_code == 0, fixed.output
    assert "fixed vs reference scoring" in fixed.output
    empty = _score(results, tmp_path / "empty", "--model-name", " ")
    assert empty.exit_code == 2 and "Invalid value for '--model-name': must not be empty" in empty.output
