"""``wtb review`` in a real browser: headless Chromium (Debian ``chromium``) driven by Playwright (docs/review.md).

Two reviewers review the same sessions in two browser contexts: one edits a gold argument (an invalid
edit and a schema-breaking one are refused first; the saved one is re-audited and its finding
disappears), the other rejects tasks; a stale verdict is refused; the agreement page shows Cohen's
kappa; the export validates and its oracle replay scores 100%; a reload and a restart of the server
lose nothing. The server is ``wtb review`` itself, started on an ephemeral loopback port and stopped at
the end of each test.

Skipped with the reason when chromium or playwright is missing; fails instead under
``WTB_REQUIRE_BROWSER=1``. ``WTB_REVIEW_SCREENSHOTS=DIR`` also saves the queue, a session, a refused edit
and the agreement page as PNGs in DIR (how ``docs/images/review-*.png`` were made).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tests.support.browser import chromium
from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@contextlib.contextmanager
def review_server(dataset: Path, db: Path):
    """``wtb review DATASET --db DB --port 0`` in a subprocess; yields its URL (no trailing slash); stopped
    with SIGTERM at the end (killed if it does not stop)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "wildtoolbench.cli", "review", str(dataset), "--db", str(db), "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        url = None
        lines = []
        for line in process.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("review app on "):
                url = line.split()[3].rstrip("/")
                break
        assert url is not None, "".join(lines) + process.stderr.read()  # type: ignore[union-attr]
        assert url.startswith("http://127.0.0.1:")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


class Reviewer:
    """One reviewer: a browser context of their own (their own cookie), console errors collected."""

    def __init__(self, browser, url: str, name: str):
        self.url = url
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url + "/")
        self.page.wait_for_selector("#name-dialog[open]")
        self.page.fill("#name-input", name)
        with self.page.expect_navigation():
            self.page.press("#name-input", "Enter")
        assert self.page.text_content("#reviewer-name") == name

    def _console(self, message) -> None:
        # a refused change is an HTTP 409 or 422 answer, which Chromium also logs as a failed resource
        expected = "Failed to load resource: the server responded with a status of 4"
        if message.type == "error" and not (
            message.text.startswith(expected) and ("409" in message.text or "422" in message.text)
        ):
            self.problems.append(f"console {message.type}: {message.text}")

    def open(self, pos: int, task: int | None = None) -> None:
        self.page.goto(f"{self.url}/session/{pos}" + (f"#t{task}" if task is not None else ""))
        self.page.wait_for_selector("#session")

    def key(self, key: str) -> None:
        """Press a key that saves something and reloads the page; wait for the reload."""
        with self.page.expect_navigation():
            self.page.keyboard.press(key)

    def go_to_task(self, task: int) -> None:
        for _ in range(8):
            self.page.keyboard.press("k")
        for _ in range(task):
            self.page.keyboard.press("j")

    def select_field(self, path: str) -> None:
        for _ in range(60):
            self.page.keyboard.press("f")
            if self.page.get_attribute(".field.selected", "data-path") == path:
                return
        raise AssertionError(f"no field {path}")

    def reject(self, task: int, reason: str) -> None:
        self.go_to_task(task)
        self.page.keyboard.press("r")
        box = self.page.locator(f"section#t{task} .reason-form input")
        box.fill(reason)
        with self.page.expect_navigation():
            box.press("Enter")

    def accept_all(self, positions) -> None:
        for pos in positions:
            self.open(pos)
            self.key("A")

    def accept_all_by_request(self, positions, name: str) -> None:
        """What :meth:`accept_all` does, as the page's own ``POST /api/accept-rest`` (token, reviewer, version)
        without loading each session page: the keys are tested on the demo sessions, this keeps the 24
        reference sessions from costing two page loads each."""
        token = self.page.get_attribute('meta[name="wtb-token"]', "content")
        for pos in positions:
            body = {"reviewer": name, "pos": pos, "version": self.state(pos)["version"]}
            answer = self.page.request.post(f"{self.url}/api/accept-rest", data=body, headers={"X-WTB-Token": token})
            assert answer.ok, answer.text()

    def state(self, pos: int) -> dict:
        return json.loads(self.page.request.get(f"{self.url}/api/session/{pos}").text())

    def close(self) -> None:
        self.context.close()
        assert self.problems == []
        assert all(r.startswith(self.url) or r.startswith("data:") for r in self.requests), self.requests


def expect(locator):
    """Playwright's ``expect`` (imported when a browser test runs: playwright may be missing)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def _shot(page, name: str) -> None:
    folder = os.environ.get("WTB_REVIEW_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"review-{name}.png"))


def _edit(reviewer: Reviewer, text: str) -> None:
    reviewer.page.keyboard.press("e")
    area = reviewer.page.locator(".field.selected textarea")
    area.fill(text)
    area.press("Control+Enter")


def _wtb(*args: str) -> subprocess.CompletedProcess:
    """``wtb ARGS`` in a fresh interpreter (Playwright's event loop runs in this one); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _validate_and_replay(export: Path, tmp_path: Path, sessions: int, tasks: int) -> None:
    """``wtb validate`` accepts the export and the oracle replay of it scores every task correct."""
    checked = _wtb("validate", str(export / "sessions.jsonl"))
    assert f"{sessions} sessions, {tasks} tasks" in checked.stdout
    run = tmp_path / "oracle-run"
    oracle = f"replay:{export / 'replay.jsonl'}#oracle"
    _wtb("eval", "--dataset", str(export / "sessions.jsonl"), "--model", oracle, "--out", str(run), "--no-progress")
    metric = json.loads((run / "metric.json").read_text(encoding="utf-8"))
    assert metric["total_info"] == {
        "task": {"accuracy": 1.0, "correct_count": tasks, "total_count": tasks},
        "session": {"accuracy": 1.0, "correct_count": sessions, "total_count": sessions},
    }


def test_two_reviewers_on_the_demo_sessions(browser, tmp_path):
    dataset = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, dataset)
    db = tmp_path / "reviews.sqlite3"
    path = "english_answer_list[2][2].action.arguments"
    with review_server(dataset, db) as url:
        alice = Reviewer(browser, url, "alice")
        bob = Reviewer(browser, url, "bob")

        # the queue puts the one session with a finding first
        first = alice.page.locator("#queue tbody tr").first
        assert first.locator("td").first.text_content().strip() == "wild_tool_bench_4"
        assert "value.not_in_context" in first.text_content()  # counted by rule id (docs/review.md §2.4)
        _shot(alice.page, "queue")
        with alice.page.expect_navigation():
            alice.page.keyboard.press("Enter")
        assert alice.page.url.split("#")[0].endswith("/session/4")
        side = alice.page.locator("section#t2 .task-side")
        assert "current_weekly_km = 24.1 appears in no user message" in side.text_content()
        assert alice.page.locator("section#t2 svg.dag .dag-flag").count() == 1  # node 2 outlined in the DAG
        bob.open(4)  # bob loads version 1 before alice's edit

        alice.go_to_task(2)
        _shot(alice.page, "session")
        alice.select_field(path)
        original = alice.page.locator(".field.selected pre.value").text_content()
        assert '"current_weekly_km": 24.1' in original
        _edit(alice, original.replace('"current_weekly_km": 24.1', '"current_weekly_km": '))  # not JSON
        problem = alice.page.locator(".field.selected .problem")
        expect(problem).to_contain_text("not JSON")
        alice.page.locator(".field.selected textarea").fill(
            original.replace('"current_weekly_km": 24.1', '"current_weekly_km": "about 24"')
        )
        alice.page.locator(".field.selected textarea").press("Control+Enter")
        expect(problem).to_contain_text("schema_violation")
        assert "expected float" in problem.text_content()
        _shot(alice.page, "refused-edit")
        assert alice.state(4)["version"] == 1  # nothing was saved
        alice.page.locator(".field.selected textarea").fill(
            original.replace('"current_weekly_km": 24.1', '"current_weekly_km": 24')
        )
        with alice.page.expect_navigation():
            alice.page.locator(".field.selected textarea").press("Control+Enter")
        assert "saved english_answer_list[2][2].action.arguments: version 2, 0 finding(s)" in alice.page.text_content(
            "#flash"
        )
        assert alice.page.locator("section#t2 .task-side li.finding").count() == 0
        assert alice.page.locator("section#t2 svg.dag .dag-flag").count() == 0
        state = alice.state(4)
        assert state["version"] == 2 and state["findings"] == []
        assert state["session"]["english_answer_list"][2][2]["action"]["arguments"]["current_weekly_km"] == 24

        # bob's page still shows version 1: his verdict is refused, not applied to what he did not see
        bob.page.keyboard.press("a")
        expect(bob.page.locator("#flash")).to_contain_text("changed since you loaded it")
        assert "it is now version 2 by alice" in bob.page.text_content("#flash")
        assert bob.state(4)["verdicts"] == []

        alice.reject(3, "the plan's answer names a start date the user never gave")  # wild_tool_bench_4 is pos 4
        alice.accept_all(range(6))
        bob.open(0)
        bob.reject(1, "the gold books the flight before asking which one")
        bob.open(4)
        bob.reject(3, "same start date problem")
        bob.accept_all(range(6))
        bob.open(4, 2)
        assert "version 2, last edited by alice" in bob.page.text_content("h1")
        assert bob.page.locator("section#t2 li.verdict").all_text_contents() == ["alice accept", "bob accept"]

        # agreement: 24 tasks both judged, 23 alike; alice 23 accept 1 reject, bob 22 / 2 -> kappa 0.647
        bob.page.goto(url + "/agreement")
        row = bob.page.locator("#agreement tbody tr.pair")
        cells = [c.strip() for c in row.locator("td").all_text_contents()]
        assert cells[:5] == ["alice", "bob", "24", "0.958", "0.647"]
        assert "wild_tool_bench_0 task 2" in cells[5]  # the second task (index 1): tasks are numbered from 1 for people
        _shot(bob.page, "agreement")

        bob.page.goto(url + "/export")
        assert bob.page.text_content("#export-summary").startswith("4 of 6 session(s) would be exported")
        downloaded = tmp_path / "downloaded"
        downloaded.mkdir()
        for name in ("sessions.jsonl", "replay.jsonl", "review_log.jsonl", "errata.jsonl"):
            (downloaded / name).write_text(bob.page.request.get(f"{url}/export/{name}").text(), encoding="utf-8")

        # the safety checks of docs/review.md §9, from outside the browser
        token = bob.page.get_attribute('meta[name="wtb-token"]', "content")
        body = {"pos": 1, "task": 0, "verdict": "accept", "version": 1, "reviewer": "mallory"}
        assert httpx.get(url + "/", headers={"Host": "attacker.example:80"}).status_code == 400
        assert httpx.post(url + "/api/verdict", json=body).status_code == 403  # no token
        plain = {"X-WTB-Token": token, "Content-Type": "text/plain"}
        assert httpx.post(url + "/api/verdict", content=json.dumps(body).encode(), headers=plain).status_code == 415
        other = {"X-WTB-Token": token, "Origin": "http://attacker.example"}
        assert httpx.post(url + "/api/verdict", json=body, headers=other).status_code == 403
        assert "mallory" not in json.dumps(bob.state(1))
        csp = httpx.get(url + "/").headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        alice.close()
        bob.close()

    exported = [json.loads(line) for line in (downloaded / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [s["id"] for s in exported] == [
        "wild_tool_bench_1",
        "wild_tool_bench_2",
        "wild_tool_bench_3",
        "wild_tool_bench_5",
    ]
    _validate_and_replay(downloaded, tmp_path, sessions=4, tasks=16)
    log = [json.loads(line) for line in (downloaded / "review_log.jsonl").read_text(encoding="utf-8").splitlines()]
    edits = [e for e in log if e["action"] == "edit"]
    assert len(edits) == 1 and edits[0]["reviewer"] == "alice" and edits[0]["path"] == path
    assert edits[0]["old"]["current_weekly_km"] == 24.1 and edits[0]["new"]["current_weekly_km"] == 24
    assert sum(1 for e in log if e["action"] == "reject") == 3
    errata = [json.loads(line) for line in (downloaded / "errata.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(e["session"], e["task"], e["kind"]) for e in errata] == [
        ("wild_tool_bench_4", 2, "review_edit"),
        ("wild_tool_bench_0", 1, "review_reject"),
        ("wild_tool_bench_4", 3, "review_reject"),
    ]

    # a restart on the same database loses nothing; --export writes the same files as the download
    with review_server(dataset, db) as url:
        carol = Reviewer(browser, url, "carol")
        assert carol.state(4)["version"] == 2
        assert len(carol.state(4)["verdicts"]) == 8
        carol.page.goto(url + "/agreement")
        assert carol.page.locator("#agreement td.kappa").first.text_content() == "0.647"
        carol.open(4, 2)
        assert carol.page.locator("section#t2 li.verdict").count() == 2
        carol.close()
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["review", str(dataset), "--db", str(db), "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert "exported 4 of 6 session(s)" in result.output
    for name in ("sessions.jsonl", "replay.jsonl", "errata.jsonl"):
        assert (out / name).read_text(encoding="utf-8") == (downloaded / name).read_text(encoding="utf-8")


@pytest.mark.shared
def test_two_reviewers_on_the_reference_sessions(browser, tmp_path, reference_dir):
    """The 24 reference sessions: alice corrects the user message that never named the gold's trading pair
    (XRPEUR), bob rejects the task whose gold fails under reference scoring (quirk 24); the other 23 sessions
    export and replay at 100%."""
    dataset = tmp_path / "sessions.jsonl"
    shutil.copy(reference_dir / "sessions.jsonl", dataset)
    sessions = [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines()]
    pos19 = next(i for i, s in enumerate(sessions) if s["id"] == "wild_tool_bench_19")
    pos3 = next(i for i, s in enumerate(sessions) if s["id"] == "wild_tool_bench_3")
    assert sessions[pos19]["english_answer_list"][1][1]["action"]["arguments"]["pair"] == "XRPEUR"
    message = sessions[pos19]["english_tasks"][1]
    db = tmp_path / "reviews.sqlite3"
    with review_server(dataset, db) as url:
        alice = Reviewer(browser, url, "alice")
        bob = Reviewer(browser, url, "bob")
        rows = alice.page.locator("#queue tbody tr td:first-child").all_text_contents()
        assert rows[0].strip() == "wild_tool_bench_3"  # the one error finding comes first
        assert {r.strip() for r in rows[1:3]} == {"wild_tool_bench_19", "wild_tool_bench_21"}
        alice.open(pos19, 1)
        assert "XRPEUR" in alice.page.locator("section#t1 .task-side").text_content()
        alice.go_to_task(1)
        alice.select_field("english_tasks[1]")  # the user names the pair: the gold value is in context now
        assert alice.page.locator(".field.selected pre.value").text_content() == message
        with alice.page.expect_navigation():
            _edit(alice, message + " Use the XRPEUR pair.")
        assert alice.page.locator("section#t1 .task-side li.finding").count() == 0
        assert alice.state(pos19)["findings"] == []
        bob.open(pos3, 2)
        assert "scores error under the reference scorer" in bob.page.locator("section#t2 .task-side").text_content()
        bob.reject(2, "the gold fails under reference scoring (quirk 24)")
        alice.accept_all_by_request(range(len(sessions)), "alice")
        bob.accept_all_by_request(range(len(sessions)), "bob")
        bob.page.goto(url + "/agreement")
        cells = [c.strip() for c in bob.page.locator("#agreement tbody tr.pair td").all_text_contents()]
        assert cells[:5] == ["alice", "bob", "96", "0.990", "0.000"]
        alice.close()
        bob.close()
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["review", str(dataset), "--db", str(db), "--export", str(out)])
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(exported) == 23 and "wild_tool_bench_3" not in {s["id"] for s in exported}
    corrected = next(s for s in exported if s["id"] == "wild_tool_bench_19")
    assert corrected["english_tasks"][1] == message + " Use the XRPEUR pair."
    _validate_and_replay(out, tmp_path, sessions=23, tasks=92)


def test_a_non_loopback_bind_is_refused_unless_asked(tmp_path):
    dataset = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, dataset)
    for host in ("0.0.0.0", "192.168.1.20", "example.org", "::"):
        result = CliRunner().invoke(app, ["review", str(dataset), "--host", host, "--port", "0"])
        assert result.exit_code == 2, result.output
        assert "is not a loopback address" in result.output and "--allow-remote" in result.output
    assert not (tmp_path / "demo.review.sqlite3").exists()  # refused before anything is written

    from wildtoolbench.review.serve import check_bind

    assert check_bind("0.0.0.0", allow_remote=True) is None
    assert all(check_bind(host, allow_remote=False) is None for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1"))
