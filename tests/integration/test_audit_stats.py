"""``wtb audit --stats`` end to end (docs/coverage.md): the tables beside the published figures, the JSON
document, a reference dataset (computed figures and contamination), exit statuses (docs/cli.md §2)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from wildtoolbench.cli import app


def _invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def _empty_cache(tmp_path, monkeypatch):
    """No official dataset in the cache: the published figures are the default reference."""
    monkeypatch.setenv("WTB_CACHE_DIR", str(tmp_path / "cache"))


def test_stats_of_the_fixtures_beside_the_published_figures(reference_dir, tmp_path):
    out = tmp_path / "coverage.json"
    result = _invoke("audit", reference_dir / "sessions.jsonl", "--stats-json", out)
    assert result.exit_code == 0, result.output
    assert "against the official set (published figures)" in result.output
    assert "Audit of" not in result.output  # the coverage tables replace the findings table
    assert "24 session(s) audited (0 invalid): 3 finding(s)" in result.output
    assert "contamination: not checked" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert list(document) == [
        "dataset",
        "language",
        "statistics",
        "reference",
        "comparison",
        "contamination",
        "findings",
    ]
    assert document["reference"]["kind"] == "published" and "80a5f42" in document["reference"]["source"]
    assert document["statistics"]["sessions"] == 24 and document["statistics"]["calls"] == 131
    assert document["contamination"] is None
    assert document["findings"] == {"value_not_in_context": {"warning": 2}, "scorer_sensitive": {"error": 1}}
    by = {(row["figure"], row["key"]): row for row in document["comparison"]}
    assert by[("sessions", None)] == {
        "figure": "sessions", "key": None, "this": 24, "official": 256,
        "source": "docs/index.html, 'Benchmark at a Glance'",
    }  # fmt: skip
    assert by[("task type, % of tasks", "Single-Tool")]["this"] == 35.4


def test_stats_against_a_reference_dataset_flag_contamination(reference_dir, tmp_path):
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    fresh_sessions = [json.loads(lines[2]), json.loads(lines[5])]
    fresh_sessions[1]["english_tasks"] = [f"an unrelated request number {i} about nothing" for i in range(4)]
    fresh_sessions[1]["english_tools"] = fresh_sessions[1]["english_tools"][:1]
    for number, session in enumerate(fresh_sessions):
        session["id"] = f"wild_tool_bench_{number}"
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text("".join(json.dumps(s) + "\n" for s in fresh_sessions), encoding="utf-8")
    out = tmp_path / "coverage.json"
    result = _invoke("audit", fresh, "--stats-json", out, "--reference", reference_dir / "sessions.jsonl")
    assert result.exit_code == 0, result.output
    assert "Contamination: 1 session(s) repeat a session of" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["reference"]["kind"] == "dataset"
    assert document["reference"]["statistics"]["sessions"] == 24
    assert document["contamination"] == [
        {"id": "wild_tool_bench_0", "reference_id": "wild_tool_bench_2", "similarity": 1.0, "exact": True}
    ]
    by = {(row["figure"], row["key"]): row for row in document["comparison"]}
    assert by[("sessions", None)]["this"] == 2 and by[("sessions", None)]["official"] == 24


def test_a_reference_that_is_the_audited_file_is_not_compared(reference_dir, tmp_path):
    out = tmp_path / "coverage.json"
    dataset = reference_dir / "sessions.jsonl"
    result = _invoke("audit", dataset, "--stats-json", out, "--reference", dataset)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8"))["reference"]["kind"] == "published"


def test_a_missing_reference_is_a_usage_error(reference_dir, tmp_path):
    result = _invoke("audit", reference_dir / "sessions.jsonl", "--stats", "--reference", tmp_path / "nope.jsonl")
    assert result.exit_code == 2
    assert "--reference" in result.output


def test_the_cached_official_dataset_is_the_default_reference(reference_dir, tmp_path, monkeypatch):
    """With the official dataset in the cache (here the fixture file pinned as official), --stats compares with
    its computed figures and checks contamination without --reference."""
    import shutil

    from tests.support.report_support import official_pins
    from wildtoolbench.data.official import cache_path, pin_table

    monkeypatch.setenv("WTB_DATA_PINS", str(official_pins(reference_dir / "sessions.jsonl", tmp_path)))
    target = cache_path(pin_table()["wildtoolbench"])
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(reference_dir / "sessions.jsonl", target)
    fresh = tmp_path / "fresh.jsonl"
    first = json.loads((reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    fresh.write_text(json.dumps(first) + "\n", encoding="utf-8")
    out = tmp_path / "coverage.json"
    result = _invoke("audit", fresh, "--stats-json", out)
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["reference"] == {**document["reference"], "kind": "dataset", "path": str(target)}
    assert document["contamination"][0]["reference_id"] == "wild_tool_bench_0"
    # the official file audited against itself: the published figures
    result = _invoke("audit", target, "--stats-json", out)
    assert json.loads(out.read_text(encoding="utf-8"))["reference"]["kind"] == "published"
