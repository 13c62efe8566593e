"""``wtb eval`` with ``replay:`` for every fixture candidate gives exactly expected_metrics.jsonl (docs/evaluation.md-4).

Each candidate runs through the CLI (runner + graph + scorer) on the sessions
where it exists; metric.json must equal the fixture's metric dict.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from wildtoolbench.cli import app


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_every_candidate_metric(reference_dir, tmp_path):
    expected = _jsonl(reference_dir / "expected_metrics.jsonl")
    assert len(expected) == 30
    runner = CliRunner()
    for row in expected:
        out = tmp_path / row["candidate"]
        arguments = [
            "eval",
            "--dataset",
            str(reference_dir / "sessions.jsonl"),
            "--model",
            f"replay:{reference_dir / 'candidates.jsonl'}#{row['candidate']}",
            "--out",
            str(out),
            "--ids",
            ",".join(row["sessions"]),
            "--concurrency",
            "8",
            "--no-progress",
        ]
        result = runner.invoke(app, arguments, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert [r["id"] for r in _jsonl(out / "result.jsonl")] == sorted(
            row["sessions"], key=lambda i: int(i.rsplit("_", 1)[1])
        )
        with open(out / "metric.json", encoding="utf-8") as handle:
            assert json.load(handle) == row["metric"], row["candidate"]
