"""``wtb report --audit`` / ``--errata`` (docs/audit.md, docs/guides/reports.md): the audit section of a
report (findings per kind, severity and session, failed_by_all over the runs), the scores without and
with errata, the coverage of the dataset view (docs/coverage.md); in report.json, report.md and the
page (headless Chromium when present)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.browser import chromium
from wildtoolbench.cli import app
from wildtoolbench.reports import build_report

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
CANDIDATES = REPO / "bench" / "data" / "demo_candidates.jsonl"


def _invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("audit-report") / "demo"
    result = _invoke(
        "eval", "--model", f"replay:{CANDIDATES}#demo-model", "--dataset", DEMO, "--out", out, "--no-progress"
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def errata(tmp_path_factory) -> Path:
    """Exclude a task the demo model failed (session 0, task 1) and one it got right (session 0, task 0)."""
    path = tmp_path_factory.mktemp("errata") / "errata.jsonl"
    lines = [
        {
            "session": "wild_tool_bench_0",
            "task": 1,
            "kind": "failed_by_all",
            "note": "n",
            "correction": {"exclude": True},
        },
        {"session": "wild_tool_bench_0", "task": 0, "kind": "other", "note": "n", "correction": {"exclude": True}},
        {"session": "wild_tool_bench_1", "task": 1, "kind": "failed_by_all", "note": "n", "correction": None},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def audited_report(tmp_path_factory, demo_run, errata) -> Path:
    out = tmp_path_factory.mktemp("report") / "report"
    build_report([demo_run], out, resamples=200, errata=errata)
    return out


def test_the_audit_section_in_report_json(audited_report):
    audit = json.loads((audited_report / "report.json").read_text(encoding="utf-8"))["audit"]
    (entry,) = audit["datasets"]
    assert entry["language"] == "en" and entry["runs"] == ["demo-model"] and entry["sessions_audited"] == 6
    assert entry["counts"] == {"value_not_in_context": {"warning": 1}, "failed_by_all": {"warning": 8}}
    assert entry["findings"] == 9
    sessions = {session_id: (position, found) for session_id, position, found in entry["sessions"]}
    assert sorted(sessions) == [f"wild_tool_bench_{n}" for n in (0, 1, 3, 4, 5)]
    assert sessions["wild_tool_bench_4"][0] == 4
    assert [f[:3] for f in sessions["wild_tool_bench_4"][1]] == [
        [2, "value_not_in_context", "warning"],
        [2, "failed_by_all", "warning"],
    ]
    (run,) = audit["errata"]["runs"]
    assert (run["excluded"], run["pending"], run["argument_changes"]) == (2, 1, 0)
    rows = {(section, name): (without, with_errata) for section, name, without, _, with_errata, _ in run["rows"]}
    assert rows[("Overall", "Task accuracy")] == ("66.67%", "68.18%")  # 16/24 -> 15/22
    assert rows[("Task type", "Chat")] == ("100.00%", "100.00%")
    assert audit["errata"]["skipped"] == []


def test_the_audit_section_in_report_md(audited_report):
    text = (audited_report / "report.md").read_text(encoding="utf-8")
    audit = text[text.index("## Audit") :]
    assert "| failed_by_all | 0 | 8 |" in audit
    assert "| wild_tool_bench_4 | 2 | value_not_in_context | warning |" in audit
    assert "| Overall | Task accuracy | 66.67% (16/24) | 68.18% (15/22) |" in audit
    assert "2 task(s) excluded" in audit
    coverage = text[text.index("## Dataset statistics") : text.index("## Plots")]
    assert "Coverage beside the official set's published figures" in coverage
    assert "| sessions |  | 6 | 256 |" in coverage


def test_without_audit_no_section_and_the_coverage_is_still_shown(tmp_path, demo_run):
    build_report([demo_run], tmp_path / "report", resamples=200)
    assert json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["audit"] is None
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Audit" not in text and "Coverage beside the official set" in text


def test_cli_audit_and_a_bad_errata_file(tmp_path, demo_run):
    result = _invoke("report", demo_run, "--out", tmp_path / "a", "--audit", "--resamples", 100)
    assert result.exit_code == 0, result.output
    assert "audit of" in result.output and "9 finding(s) in 5 session(s)" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session": "wild_tool_bench_99", "task": 0, "kind": "x", "note": "", "correction": null}\n')
    result = _invoke("report", demo_run, "--out", tmp_path / "b", "--errata", bad, "--resamples", 100)
    assert result.exit_code == 1
    assert "wild_tool_bench_99" in result.output
    assert not (tmp_path / "b" / "index.html").exists()


def test_the_page_shows_the_audit_and_the_coverage(audited_report):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto((audited_report / "index.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        for view in ("#audit", "#dataset"):
            page.evaluate("h => { location.hash = h; }", view)
            page.wait_for_function("h => document.body.getAttribute('data-rendered') === h", arg=view)
            if view == "#audit":
                assert page.locator("#audit-findings tbody tr").count() == 9
                assert page.locator("#audit-counts tbody tr").count() == 2
                assert "68.18%" in page.locator(".errata-table").inner_text()
                page.locator("#audit-findings a").first.click()
                page.wait_for_function(
                    "() => (document.body.getAttribute('data-rendered') || '').startsWith('#session/')"
                )
            else:
                assert page.locator("#coverage-table tbody tr").count() > 30
                assert "distinct-1" in page.locator("#diversity-table").inner_text()
    assert problems == []
