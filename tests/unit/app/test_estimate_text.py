"""The cost line of the run estimate (``wtb eval --dry-run``, docs/trials.md §9): a candidate that calls no
paid model says so, others are asked for prices."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[3]
CANDIDATES = REPO / "bench" / "data" / "demo_candidates.jsonl"


def _dry_run(tmp_path: Path, *args: str) -> str:
    done = CliRunner().invoke(
        app, ["eval", "--dry-run", "--limit", "1", "--no-trace", "--out", str(tmp_path / "r"), *args]
    )
    assert done.exit_code == 0, done.output
    assert not (tmp_path / "r").exists()  # a dry run writes nothing
    return done.output


def test_a_replay_costs_nothing_and_a_paid_model_is_asked_for_prices(tmp_path, monkeypatch):
    replay = _dry_run(tmp_path, "--model", f"replay:{CANDIDATES}#oracle")
    assert "  cost: none (replay: no paid model is called)" in replay
    assert "--price-input" not in replay
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    paid = _dry_run(tmp_path, "--model", "openai:gpt-4o-mini", "--no-preflight")
    assert "  cost: give --price-input and --price-output (USD per million tokens) for a cost range" in paid
