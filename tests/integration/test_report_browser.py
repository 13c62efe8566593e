"""The report page in a real browser: headless Chromium (Debian ``chromium``) driven by Playwright.

Skipped with the reason when chromium or playwright is missing; fails instead under
``WTB_REQUIRE_BROWSER=1`` (set by CI). Never runs ``playwright install``: the browser is
the system one (``/usr/bin/chromium``, or ``WTB_CHROMIUM``).

``WTB_REPORT_SCREENSHOTS=DIR`` also saves the runs table, the leaderboard and a ``--lang zh`` trajectory as
small PNGs in DIR, with the diff view of two runs with a row opened (how ``docs/images/report-*.png`` were
made).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.browser import chromium
from tests.support.report_support import extra_runs, fixture_report, fixture_runs, official_pins, read_csv
from wildtoolbench.reports import build_report
from wildtoolbench.reports.html import diffs_block, session_blocks


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def report(tmp_path_factory, reference_dir) -> Path:
    return fixture_report(tmp_path_factory.getbasetemp() / "report-fixture", reference_dir)


@pytest.fixture(scope="module")
def six_runs(tmp_path_factory, reference_dir) -> dict[str, Path]:
    """oracle, noisy, noisy_fixed (``--scoring fixed``), oracle_zh (``--lang zh``), wrong_name, over_ask."""
    base = tmp_path_factory.getbasetemp() / "report-fixture"
    return {**fixture_runs(base, reference_dir), **extra_runs(base, reference_dir)}


@pytest.fixture(scope="module")
def wide_report(tmp_path_factory, six_runs) -> Path:
    """A report of the six runs (keys r0..r5 in the order of :func:`six_runs`)."""
    out = tmp_path_factory.mktemp("wide") / "report"
    order = ("oracle", "noisy", "noisy_fixed", "oracle_zh", "wrong_name", "over_ask")
    build_report([six_runs[name] for name in order], out, resamples=200)
    return out


@pytest.fixture(scope="module")
def official_report(tmp_path_factory, six_runs, reference_dir) -> Path:
    """oracle, noisy and noisy_fixed with the fixture file pinned as the official dataset (so that the
    reference runs are ranked and the fixed run is not for its scoring alone)."""
    folder = tmp_path_factory.mktemp("official")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WTB_DATA_PINS", str(official_pins(reference_dir / "sessions.jsonl", folder)))
        build_report([six_runs["oracle"], six_runs["noisy"], six_runs["noisy_fixed"]], folder / "report", resamples=200)
    return folder / "report"


VIEWS = (
    "#overview",
    "#leaderboard",
    "#orchestration",
    "#errors",
    "#plots",
    "#dataset",
    "#tasks",
    "#tasks?status=error",
    "#session/3",
    "#session/3?side=zh",
    "#traj/r3/3/2",
    "#traj/r1/3/1",
    "#diff",
    "#diff?pair=0&row=0",
    "#audit",
)


class Page:
    """A page of the report with every console error and uncaught exception collected."""

    def __init__(self, browser, path: Path, width: int = 1280, height: int = 860):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on(
            "console", lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
        )
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready='1']")

    def go(self, hash_: str) -> None:
        """Navigate to a view and wait until it is drawn (``body[data-rendered]`` names the hash)."""
        self.page.evaluate("h => { location.hash = h; }", hash_)
        self.wait_rendered(hash_)

    def wait_rendered(self, hash_: str) -> None:
        """Wait until the view of ``hash_`` is drawn (after a click that navigates there)."""
        self.page.wait_for_function("h => document.body.getAttribute('data-rendered') === h", arg=hash_)

    def rows(self, table: str) -> int:
        return self.page.locator(f"{table} tbody tr").count()

    def close(self) -> None:
        self.page.close()


def _pixel_spread(png: bytes) -> float:
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("L")
    return ImageStat.Stat(image).stddev[0]


def _save_small(png: bytes, path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(
        path, optimize=True
    )


def test_every_view_loads_without_console_errors(browser, report):
    page = Page(browser, report / "index.html")
    try:
        for view in (
            "#overview",
            "#leaderboard",
            "#orchestration",
            "#errors",
            "#plots",
            "#dataset",
            "#tasks",
            "#session/5",
            "#traj/r0/3/2",
            "#traj/r1/1/2",
            "#tasks?status=error&cat=call_error",
        ):
            page.go(view)
            assert page.page.locator("main#view h2").count() >= 1, view
        assert page.problems == []
        assert all(url.startswith(("file:", "data:", "about:")) for url in page.requests), page.requests
    finally:
        page.close()


def test_tables_have_the_runs_and_the_paper_rows(browser, report):
    page = Page(browser, report / "index.html")
    try:
        page.go("#leaderboard")
        assert page.rows("#table-main") == 2 + 57
        ours = page.page.locator("#table-main tbody tr.ours")
        assert ours.count() == 2
        assert ours.nth(0).locator("td").nth(1).inner_text().startswith("oracle")
        assert "unranked: not the official dataset" in ours.nth(0).inner_text()
        assert ours.nth(0).locator("td.rank").inner_text() == "–"
        page.go("#orchestration")
        assert page.rows("#table-orchestration") == 2 + 58
        page.go("#errors")
        assert page.rows("#table-errors") == 2 + 57
        noisy = page.page.locator("#table-errors tbody tr.ours").nth(1)
        assert "48" in noisy.locator("td").last.inner_text()
        page.go("#dataset")
        assert page.rows("#sessions-table") == 24
        assert page.problems == []
    finally:
        page.close()


def test_sorting_and_group_filter(browser, report):
    page = Page(browser, report / "index.html")
    try:
        page.go("#leaderboard")
        page.page.click("#table-main th[data-col='chat']")
        page.page.wait_for_selector("#table-main th[data-col='chat'] .arrow")
        first = page.page.locator("#table-main tbody tr").first.locator("td")
        assert first.nth(1).inner_text().split()[0] in {"oracle", "noisy"}  # 100.00 chat accuracy for both
        page.page.click("#table-main th[data-col='chat']")  # ascending now
        page.page.wait_for_function(
            "document.querySelector(\"#table-main th[data-col='chat'] .arrow\").textContent === '▲'"
        )
        lowest = page.page.locator("#table-main tbody tr").first.locator("td").nth(6).inner_text()  # the chat column
        values = [float(v) for v in page.page.locator("#table-main tbody tr td:nth-child(7)").all_inner_texts() if v]
        assert float(lowest) == min(values)
        page.page.select_option("select[data-group='main']", "ours")
        page.page.wait_for_function("document.querySelectorAll('#table-main tbody tr').length === 2")
        assert page.problems == []
    finally:
        page.close()


def test_clicking_a_failed_task_opens_its_trajectory(browser, report, tmp_path):
    expected = {(r["model"], r["session_id"], r["task"]): r for r in read_csv(report / "tasks.csv")}
    page = Page(browser, report / "index.html")
    try:
        page.go("#tasks")
        page.page.select_option("select[data-filter='run']", "r1")
        page.page.wait_for_function("(document.body.getAttribute('data-rendered') || '').indexOf('run=r1') >= 0")
        page.page.select_option("select[data-filter='status']", "error")
        page.page.wait_for_function("(document.body.getAttribute('data-rendered') || '').indexOf('status=error') >= 0")
        rows = page.page.locator("#tasks-table tbody tr")
        assert rows.count() == 48  # the noisy run's failed tasks (fewer than a page)
        first = rows.first
        session_id = first.locator("td").nth(1).inner_text().strip()
        task_number = int(first.locator("td").nth(2).inner_text())
        first.locator("td").nth(1).locator("a").click()
        page.page.wait_for_selector("#traj-summary")
        assert page.page.evaluate("location.hash").startswith("#traj/r1/")
        row = expected[("noisy", session_id, str(task_number))]  # tasks.csv numbers tasks from 1, as the page (docs/terms.md §1.2)
        title = page.page.locator("#traj-title").inner_text()
        assert session_id in title and f"task {task_number}" in title
        category = page.page.locator("#traj-category").inner_text()
        assert row["error_category"] and category.lower().startswith(row["error_category"].split("_")[0][:4])
        summary = page.page.locator("#traj-summary").inner_text()
        assert row["reason"][:40] in summary
        failing = page.page.locator(".step.failing")
        assert failing.count() == 1 and f"step {row['failing_step']}" in failing.locator(".head").inner_text()
        assert page.page.locator(".step").count() >= 1
        assert page.problems == []
    finally:
        page.close()


def test_trajectory_shows_messages_reply_gold_and_checks(browser, report):
    page = Page(browser, report / "index.html")
    try:
        page.go("#traj/r1/3/1")  # noisy, wild_tool_bench_3, task 2: a string-similarity argument error at step 0
        step = page.page.locator("#step-0")
        text = step.inner_text()
        assert "MESSAGES SENT" in text.upper() and "MODEL REPLY" in text.upper()
        assert "addCustomMarker" in text and "map-551" in text and "map-5521" in text
        assert "string similarity too low at 'mapId'" in text
        assert "latency" in text and "tokens in 0 / out 0" in text
        assert "removed by the scorer" in page.page.locator("#step-1").inner_text()
        page.page.locator("#step-0 details summary").first.click()
        assert "Current Date:" in step.inner_text()
        page.go("#session/8")
        page.page.wait_for_selector(".dag svg rect")
        assert page.page.locator(".dag svg rect").count() >= 6
        assert page.problems == []
    finally:
        page.close()


def test_screenshots_are_not_blank(browser, wide_report):
    save = os.environ.get("WTB_REPORT_SCREENSHOTS")
    page = Page(browser, wide_report / "index.html", width=1440, height=760)
    try:
        page.go("#overview")
        runs = page.page.locator("#runs-title").screenshot() and page.page.screenshot(
            clip={"x": 0, "y": 0, "width": 1440, "height": 760}
        )
        page.go("#leaderboard")
        leaderboard = page.page.screenshot()
        page.go("#traj/r3/3/2")
        page.page.locator("#traj-tools > summary").click()
        trajectory = page.page.screenshot()
        page.go("#diff?pair=0&row=1")
        diff = page.page.screenshot()
        for png in (runs, leaderboard, trajectory, diff):
            assert _pixel_spread(png) > 10.0  # a blank or single-colour page has a spread near 0
        if save:
            _save_small(runs, Path(save) / "report-runs.png")
            _save_small(leaderboard, Path(save) / "report-leaderboard.png")
            _save_small(trajectory, Path(save) / "report-trajectory-zh.png")
            _save_small(diff, Path(save) / "report-diff.png")
        assert page.problems == []
    finally:
        page.close()


def test_a_zh_trajectory_shows_its_chinese_side(browser, wide_report):
    """A ``--lang zh`` run's trajectory shows the Chinese side it ran: the unprefixed ``tasks`` text (marked
    ``lang="zh"``) and the Chinese tool list, never the English one; the dataset browser toggles sides."""
    gold = session_blocks((wide_report / "index.html").read_text(encoding="utf-8"))[3]["s"]
    page = Page(browser, wide_report / "index.html")
    try:
        page.go("#traj/r3/3/2")  # oracle_zh, wild_tool_bench_3, task 3
        user = page.page.locator("#traj-user .text")
        assert user.get_attribute("lang") == "zh" and user.inner_text() == gold["zh"]["tasks"][2]
        tools = page.page.locator("#traj-tools")
        tools.locator("summary").first.click()  # the first summary is the list's own
        text = tools.inner_text()
        chinese = gold["zh"]["tools"][0]["function"]["description"]
        english = gold["en"]["tools"][0]["function"]["description"]
        assert chinese != english and chinese[:20] in text and english[:20] not in text
        assert tools.locator("ul.tools").get_attribute("lang") == "zh"
        assert "中文" in page.page.locator("#traj-title").inner_text()
        assert gold["zh"]["types"][2] in page.page.locator("#traj-summary").inner_text()
        page.go("#session/3?side=zh")
        assert chinese[:20] in page.page.locator("main#view").inner_text()
        page.page.locator("#side-en").click()
        page.page.wait_for_function("h => document.body.getAttribute('data-rendered') === h", arg="#session/3?side=en")
        assert english[:20] in page.page.locator("main#view").inner_text()
        assert page.problems == []
    finally:
        page.close()


def test_overview_and_leaderboard_give_the_same_rank_and_fixed_runs_are_unranked(browser, official_report):
    page = Page(browser, official_report / "index.html")
    try:
        page.go("#overview")
        cells = [page.page.locator(f"#runs-table tr[data-run='r{i}'] td.rank").inner_text() for i in range(3)]
        assert cells[:2] == ["1 of 58", "43 of 58"]
        assert "unranked: fixed scoring" in cells[2]
        assert "fixed scoring" in page.page.locator("#runs-table tr[data-run='r2']").inner_text()
        assert "different scoring modes" in page.page.locator("#not-compared").inner_text()
        page.go("#leaderboard")
        ranks = {
            key: page.page.locator(f"#table-main tr[data-run='{key}'] td.rank").inner_text()
            for key in ("r0", "r1", "r2")
        }
        assert ranks == {"r0": "1", "r1": "43", "r2": "–"}
        fixed = page.page.locator("#table-main tr[data-run='r2']").inner_text()
        assert "fixed scoring" in fixed and "unranked" in fixed
        paper_first = page.page.locator("#table-main tbody tr:not(.ours)").first.locator("td.rank").inner_text()
        assert paper_first == "1"  # runs never push a paper model down
        assert page.problems == []
    finally:
        page.close()


def test_no_view_overflows_at_1024_px(browser, wide_report):
    page = Page(browser, wide_report / "index.html", width=1024, height=768)
    try:
        for view in VIEWS:
            page.go(view)
            page_overflow = page.page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            boxes = page.page.evaluate(
                "Array.from(document.querySelectorAll('main .scroll, main table')).map(e => [e.id || e.className, "
                "e.getBoundingClientRect().right - document.documentElement.clientWidth, e.scrollWidth - e.clientWidth])"
                ".filter(x => x[1] > 0.5 || x[2] > 0)"
            )
            assert page_overflow <= 0 and boxes == [], (view, page_overflow, boxes)
        assert page.problems == []
    finally:
        page.close()


def test_every_run_is_visible_in_every_plot(browser, wide_report):
    """Each of the six runs has its own marker shape and its own elements (with a tooltip giving value and n)
    in every run plot, even where runs coincide (oracle and oracle_zh, noisy and noisy_fixed)."""
    page = Page(browser, wide_report / "index.html")
    try:
        page.go("#plots")
        markers = page.page.evaluate(
            "JSON.parse(document.getElementById('wtb-data').textContent).runs.map(r => r.marker)"
        )
        assert len(set(markers)) == len(markers) == 6
        for plot in ("order", "type", "transitions", "errors", "scatter"):
            for i in range(6):
                tips = page.page.evaluate(
                    "s => Array.from(document.querySelectorAll(s)).map(t => t.textContent)",
                    f"#plot-{plot} svg g[id^='wtb-r{i}-'] > title",
                )
                assert tips, (plot, i)
                if plot != "errors":
                    assert any("n = " in tip for tip in tips), (plot, i, tips[:2])
        labels = page.page.evaluate(
            "Array.from(document.querySelectorAll('#plot-scatter svg text')).map(t => t.textContent.trim())"
        )
        for name in ("oracle", "oracle (zh)", "noisy", "noisy (fixed)", "wrong_name", "over_ask"):
            assert name in labels  # labelled directly, not by colour alone
        cell = page.page.locator("#table-type tbody tr").nth(1).locator("td").nth(5).inner_text()
        assert "n=11" in cell and "[" in cell  # noisy's Clarify tasks: n and interval
        assert page.problems == []
    finally:
        page.close()


def test_headers_sort_from_the_keyboard(browser, report):
    page = Page(browser, report / "index.html")
    try:
        page.go("#leaderboard")
        page.page.focus("#table-main button.sort[data-col='task']")
        page.page.keyboard.press("Enter")
        page.page.wait_for_selector("#table-main th[data-col='task'][aria-sort='descending']")
        assert page.page.evaluate("document.activeElement.getAttribute('data-col')") == "task"
        page.page.keyboard.press(" ")
        page.page.wait_for_selector("#table-main th[data-col='task'][aria-sort='ascending']")
        values = [float(v) for v in page.page.locator("#table-main tbody tr td:nth-child(12)").all_inner_texts() if v]
        assert values == sorted(values)
        # Tab order reaches the headers: from the group filter the next stop is a sort button.
        page.page.focus("select[data-group='main']")
        page.page.keyboard.press("Tab")
        assert page.page.evaluate("document.activeElement.className") == "sort"
        assert page.problems == []
    finally:
        page.close()


def test_page_rounds_as_python_does(browser, report):
    """docs/metrics.md §9: the page's formatting equals Python's format(x, '.2f') (ties to even on the binary value)."""
    values = [40.625, 40.875, -40.625, 12.5, 0.125, 33.333333333333336, 66.66666666666667, 4.166666666666666]
    values += [100 * k / 96 for k in range(97)] + [100 * k / 32 for k in range(33)] + [100 * k / 24 for k in range(25)]
    page = Page(browser, report / "index.html")
    try:
        shown = page.page.evaluate("xs => xs.map(x => window.wtbFixed2(x))", values)
        assert shown == [f"{v:.2f}" for v in values]
        assert shown[0] == "40.62"
    finally:
        page.close()


def test_filters_survive_navigation_and_failed_tasks_step(browser, report):
    page = Page(browser, report / "index.html")
    try:
        page.go("#tasks?run=r1&status=error&q=addcustommarker")
        rows = page.page.locator("#tasks-table tbody tr")
        assert rows.count() >= 1  # a tool name found through the search
        rows.first.locator("td").nth(1).locator("a").click()
        page.page.wait_for_selector("#traj-summary")
        page.page.locator("#next-failed").click()
        page.page.wait_for_selector("#traj-summary")
        assert "error" in page.page.locator("#traj-summary").inner_text()
        page.page.locator(".crumbs a").first.click()
        page.page.wait_for_selector("#tasks-table")
        assert "status=error" in page.page.evaluate("location.hash") and "q=addcustommarker" in page.page.evaluate(
            "location.hash"
        )
        assert "status=error" in page.page.locator("header nav a[data-view='tasks']").get_attribute("href")
        assert page.problems == []
    finally:
        page.close()


def test_an_extra_metric_is_a_leaderboard_column(browser, report, reference_dir, tmp_path):
    """A run's ``summary_metrics.json["extra"]`` (docs/metrics.md §8) becomes a leaderboard column after the
    paper's, with the metric's value in the run's row and nothing in the paper's rows."""
    run = tmp_path / "oracle"
    shutil.copytree(fixture_runs(report.parent, reference_dir)["oracle"], run)
    summary_path = run / "summary_metrics.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    summary["extra"] = {"tool_call_tasks": {"value": 0.75, "correct": 72, "total": 96}}
    summary_path.write_text(json.dumps(summary), encoding="utf-8")
    build_report([run], tmp_path / "report")
    page = Page(browser, tmp_path / "report" / "index.html")
    try:
        page.go("#leaderboard")
        header = page.page.locator('#table-main th[data-col="tool_call_tasks"]')
        assert header.inner_text().strip() == "tool_call_tasks"
        assert page.page.locator("#table-main thead th").last.get_attribute("data-col") == "tool_call_tasks"
        assert page.page.locator("#table-main tbody tr.ours td").last.inner_text() == "75.00"
        assert page.page.locator("#table-main tbody tr:not(.ours)").first.locator("td").last.inner_text() == ""
        assert page.problems == []
    finally:
        page.close()


CONTRAST = """
() => {
  function rgb(text) { const m = text.match(/[\\d.]+/g).map(Number); return m.length > 3 && m[3] === 0 ? null : m.slice(0, 3); }
  function lum(c) { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); }
  function background(e) { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c) return c; } return [255, 255, 255]; }
  const out = [];
  document.querySelectorAll('main .badge, main .muted, main .why, main a').forEach(e => {
    if (!e.textContent.trim() || !e.getClientRects().length) return;
    const a = lum(rgb(getComputedStyle(e).color)), b = lum(background(e));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) out.push([e.className, e.textContent.slice(0, 30), Math.round(ratio * 100) / 100]);
  });
  return out;
}
"""


def test_text_contrast_is_at_least_4_5(browser, wide_report):
    """WCAG AA for normal text: every badge, muted text, error text and link has contrast >= 4.5:1."""
    page = Page(browser, wide_report / "index.html")
    try:
        for view in ("#overview", "#leaderboard", "#errors", "#tasks?status=error", "#traj/r3/3/2", "#session/3"):
            page.go(view)
            assert page.page.evaluate(CONTRAST) == [], view
    finally:
        page.close()


def _labels(run: Path) -> dict[tuple[str, int], str]:
    """``{(session id, task index): label}`` of a run folder's ``score.jsonl``."""
    labels = {}
    for line in (run / "score.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            labels.update({(record["id"], t): task["label"] for t, task in enumerate(record["results"])})
    return labels


def _flips(a: Path, b: Path) -> dict[str, set[tuple[str, int]]]:
    """The tasks whose label differs between two run folders, by flip kind (docs/diff.md §4)."""
    la, lb = _labels(a), _labels(b)
    assert la.keys() == lb.keys()
    flipped = {k for k in la if la[k] != lb[k]}
    return {
        "regressed": {k for k in flipped if la[k] == "correct"},
        "improved": {k for k in flipped if lb[k] == "correct"},
        "all": flipped,
    }


def _listed(page: Page) -> set[tuple[str, int]]:
    rows = page.page.locator("#diff-table tbody tr[data-row]")
    return {
        (rows.nth(i).locator("td").nth(0).inner_text().strip(), int(rows.nth(i).locator("td").nth(1).inner_text()) - 1)
        for i in range(rows.count())
    }


def test_report_json_diffs_are_what_wtb_diff_finds(report, reference_dir):
    from wildtoolbench.comparison.diff import diff_runs

    runs = fixture_runs(report.parent, reference_dir)
    diffs = json.loads((report / "report.json").read_text(encoding="utf-8"))["diffs"]
    expected = diff_runs(runs["oracle"], runs["noisy"])
    assert [(d["a"], d["b"]) for d in diffs] == [("oracle", "noisy")]
    assert diffs[0]["counts"] == expected["counts"]
    assert diffs[0]["counts"]["total"] == len(_flips(runs["oracle"], runs["noisy"])["all"]) > 0
    assert diffs[0]["flipped"] == expected["flipped"]
    assert (diffs[0]["sessions"], diffs[0]["tasks"]) == (expected["sessions"], expected["tasks"])
    # the page: the counts in the summary data, the flipped tasks (with their session's position) in one packed block
    html = (report / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="wtb-data">(.*?)</script>', html, re.S).group(1))
    assert data["diffs"] == [{"a": "r0", "b": "r1", "sessions": 24, "tasks": 96, "counts": expected["counts"]}]
    blocks = session_blocks(html)
    packed = diffs_block(html)
    assert [[{k: v for k, v in f.items() if k != "k"} for f in flipped] for flipped in packed] == [expected["flipped"]]
    assert all(blocks[f["k"]]["s"]["id"] == f["id"] for f in packed[0])


def test_diff_view_lists_the_flipped_tasks_and_opens_the_divergence_step(browser, report, reference_dir):
    runs = fixture_runs(report.parent, reference_dir)
    flips = _flips(runs["oracle"], runs["noisy"])
    assert 0 < len(flips["all"]) <= 50  # one page
    flipped = json.loads((report / "report.json").read_text(encoding="utf-8"))["diffs"][0]["flipped"]
    page = Page(browser, report / "index.html")
    try:
        page.go("#diff")
        assert _listed(page) == flips["all"]
        kinds = page.page.locator("#diff-kinds").inner_text()
        assert f"regressed {len(flips['regressed'])}" in kinds and f"improved {len(flips['improved'])}" in kinds
        page.page.locator("#diff-kinds button[data-kind='regressed']").click()
        page.wait_rendered("#diff?pair=0&kind=regressed")
        assert _listed(page) == flips["regressed"]
        page.page.locator("#diff-kinds button[data-kind='all']").click()
        page.wait_rendered("#diff?pair=0")
        # open the row of a task whose divergent step has calls on both sides
        n = next(i for i, f in enumerate(flipped) if f["a_step"]["calls"] and f["b_step"] and f["b_step"]["calls"])
        task = flipped[n]
        page.page.locator(f"#diff-table tr[data-row='{n}'] td").nth(1).click()
        page.page.wait_for_selector("#diff-panel")
        side_a, side_b = page.page.locator("#diff-side-a"), page.page.locator("#diff-side-b")
        assert f"step {task['first_divergent_step']['a']}" in side_a.locator(".diff-step").inner_text()
        assert f"step {task['first_divergent_step']['b']}" in side_b.locator(".diff-step").inner_text()
        for side, step in ((side_a, task["a_step"]), (side_b, task["b_step"])):
            names = side.locator("table.diff-calls tbody tr td:first-child .fn").all_inner_texts()
            assert names == [c["name"] for c in step["calls"]]
            shown = side.locator("table.diff-calls tbody tr td:nth-child(2) pre").all_inner_texts()
            assert [json.loads(text) for text in shown] == [json.loads(c["arguments"]) for c in step["calls"]]
        assert "oracle" in side_a.inner_text() and "noisy" in side_b.inner_text()
        side_b.locator("a.to-traj").click()
        step = task["b_step"]["step"]
        page.page.wait_for_selector(f"#step-{step}.target")  # the trajectory, scrolled to the divergent step
        assert page.page.evaluate("location.hash").startswith("#traj/r1/") and f"task {task['task'] + 1}" in (
            page.page.locator("#traj-title").inner_text()
        )
        assert task["id"] in page.page.locator("#traj-title").inner_text()
        assert page.problems == []
    finally:
        page.close()


def test_diff_view_filters_by_flip_kind_and_picks_the_pair(browser, wide_report, six_runs):
    """In the six-run report the pairs are the comparable ones (same sessions, scoring and side); noisy
    against wrong_name has flips of both kinds, more than a page of them."""
    flips = _flips(six_runs["noisy"], six_runs["wrong_name"])
    assert 0 < len(flips["regressed"]) <= 50 and 0 < len(flips["improved"]) <= 50 and len(flips["all"]) > 50
    diffs = json.loads((wide_report / "report.json").read_text(encoding="utf-8"))["diffs"]
    pairs = [(d["a"], d["b"]) for d in diffs]
    assert pairs == [
        ("oracle", "noisy"), ("oracle", "wrong_name"), ("oracle", "over_ask"),
        ("noisy", "wrong_name"), ("noisy", "over_ask"), ("wrong_name", "over_ask"),
    ]  # fmt: skip
    page = Page(browser, wide_report / "index.html", width=1024, height=768)
    try:
        page.go("#diff")
        page.page.select_option("#diff-pair", str(pairs.index(("noisy", "wrong_name"))))
        page.wait_rendered("#diff?pair=3")
        first = _listed(page)
        assert len(first) == 50 and f"page 1 of 2 ({len(flips['all'])})" in page.page.locator(".pager").inner_text()
        page.page.locator(".pager button").last.click()  # next page
        page.wait_rendered("#diff?pair=3&page=1")
        assert first | _listed(page) == flips["all"]
        for kind in ("improved", "regressed"):
            page.page.locator(f"#diff-kinds button[data-kind='{kind}']").click()
            page.wait_rendered(f"#diff?pair=3&kind={kind}")
            assert _listed(page) == flips[kind]
            assert set(
                page.page.locator("#diff-table tr[data-row]").evaluate_all("rs => rs.map(r => r.dataset.flip)")
            ) == {kind}
            assert page.page.locator(f"#diff-kinds button[data-kind='{kind}']").get_attribute("aria-pressed") == "true"
        assert page.problems == []
    finally:
        page.close()


def test_diff_view_shows_hostile_ids_and_tool_names_as_text(browser, tmp_path):
    """Session ids, tool names and model names carrying HTML reach the diff view and its panel as text:
    no element is injected and no script runs."""
    from tests.integration.test_outputs_safety import EVIL_ID, EVIL_MODEL, EVIL_TOOL, evil_demo, replay_run

    sessions, candidates = evil_demo(tmp_path / "data")
    replay_run(sessions, candidates, tmp_path / "oracle", "oracle")
    replay_run(sessions, candidates, tmp_path / "evil", EVIL_MODEL)
    build_report([tmp_path / "oracle", tmp_path / "evil"], tmp_path / "report", resamples=50)
    flipped = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["diffs"][0]["flipped"]
    n = next(i for i, f in enumerate(flipped) if any(EVIL_TOOL == c["name"] for c in f["b_step"]["calls"]))
    page = Page(browser, tmp_path / "report" / "index.html")
    try:
        dialogs: list[str] = []
        page.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.go(f"#diff?pair=0&row={n}")
        main = page.page.locator("main#view")
        assert main.locator("img, script, iframe, svg").count() == 0
        assert flipped[n]["id"] in main.inner_text() and EVIL_ID in flipped[n]["id"]
        assert EVIL_TOOL in page.page.locator("#diff-side-b").inner_text()
        assert EVIL_MODEL in page.page.locator("#diff-summary").inner_text()
        assert dialogs == [] and page.problems == []
    finally:
        page.close()
