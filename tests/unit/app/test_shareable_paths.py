"""Shareable outputs name files without the absolute paths of the user's machine (docs/cli.md §4)."""

from __future__ import annotations

from pathlib import Path

from wildtoolbench.common.shareable import full_paths, shareable_path, shareable_text


def test_paths_are_relative_to_the_current_or_home_folder_else_shortened(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/alice")
    assert shareable_path(tmp_path / "runs" / "a") == "runs/a"
    assert shareable_path(tmp_path) == "."
    assert shareable_path("/home/alice/data/x.jsonl") == "~/data/x.jsonl"
    assert shareable_path("/srv/team/secret-project/data/x.jsonl") == ".../data/x.jsonl"
    assert shareable_path("runs/a") == "runs/a" and shareable_path(None) == ""
    assert shareable_text("replay:/srv/team/p/c.jsonl#oracle") == "replay:.../p/c.jsonl#oracle"
    assert shareable_text("openai:gpt-4o at http://127.0.0.1:8080/v1") == "openai:gpt-4o at http://127.0.0.1:8080/v1"
    assert shareable_text("graph:/home/alice/agents/a.py:build") == "graph:~/agents/a.py:build"
    with full_paths():
        assert shareable_path("/srv/team/p/x.jsonl") == "/srv/team/p/x.jsonl"
        assert shareable_text("replay:/srv/x.jsonl#m") == "replay:/srv/x.jsonl#m"


def test_a_report_names_no_absolute_path_unless_asked(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from wildtoolbench.cli import app

    repo = Path(__file__).resolve().parents[3]
    candidates = repo / "bench" / "data" / "demo_candidates.jsonl"
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(app, ["eval", "--model", f"replay:{candidates}#oracle", "--out", str(tmp_path / "run"),
                               "--no-progress", "--no-trace"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert runner.invoke(app, ["report", str(tmp_path / "run"), "--out", "rep"]).exit_code == 0
    for name in ("index.html", "report.md", "report.json"):
        text = (tmp_path / "rep" / name).read_text()
        assert str(repo) not in text and str(tmp_path) not in text, name
    assert ".../data/demo_candidates.jsonl#oracle" in (tmp_path / "rep" / "report.md").read_text()
    assert runner.invoke(app, ["report", str(tmp_path / "run"), "--out", "full", "--full-paths"]).exit_code == 0
    assert str(candidates) in (tmp_path / "full" / "report.md").read_text()
