"""What a run writes is only what it produced, and what it exports runs nothing when opened elsewhere
(docs/cli.md §3-§5): stale metrics, leftover temporary files, symbolic links in ``--out``, a stopped
worker process, the size limit of ``wtb data pull``, HTML in ``report.md`` and formulas in the CSV files."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH

REPO = Path(__file__).resolve().parents[2]

EVIL_ID = '=HYPERLINK("http://evil.invalid/")<script>alert(1)</script>_'
EVIL_TOOL = "<img src=x onerror=alert(2)>bookFlight"
EVIL_MODEL = "<script>alert(3)</script>demo-model"


def wtb(*args: object, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m wtb.cli ARGS`` with this worktree first on the path and tracing off."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full_env.pop("LANGSMITH_TRACING", None)
    result = subprocess.run(
        [sys.executable, "-m", "wtb.cli", *map(str, args)],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"wtb {args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def _replace(value, old_new):
    if isinstance(value, str):
        for old, new in old_new:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace(v, old_new) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, old_new) for k, v in value.items()}
    return value


def evil_demo(folder: Path) -> tuple[Path, Path]:
    """The demo sessions and candidates with an HTML / formula payload in every session id, in the tool
    name ``bookFlight`` and in the candidate's model name; returns ``(sessions, candidates)``."""
    folder.mkdir(parents=True, exist_ok=True)
    old_new = [("wild_tool_bench_", EVIL_ID), ("bookFlight", EVIL_TOOL), ("demo-model", EVIL_MODEL)]
    paths = []
    for source, name in ((SESSIONS_PATH, "sessions.jsonl"), (CANDIDATES_PATH, "candidates.jsonl")):
        lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        target = folder / name
        target.write_text("".join(json.dumps(_replace(v, old_new)) + "\n" for v in lines), encoding="utf-8")
        paths.append(target)
    return paths[0], paths[1]


def replay_run(sessions: Path, candidates: Path, out: Path, candidate: str = "oracle", *more: object):
    return wtb(
        "eval", "--dataset", sessions, "--model", f"replay:{candidates}#{candidate}", "--out", out,
        "--no-progress", "--no-trace", *more,
    )  # fmt: skip


@pytest.fixture(scope="module")
def evil_report(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("evil")
    sessions, candidates = evil_demo(base / "data")
    replay_run(sessions, candidates, base / "run", EVIL_MODEL)
    wtb("report", base / "run", "--out", base / "report")
    return base / "report"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


MARKDOWN_TAGS = {"h1", "h2", "h3", "p", "strong", "em", "code", "a", "img", "ul", "li", "br", "hr"}
MARKDOWN_TAGS |= {"table", "thead", "tbody", "tr", "th", "td"}


def test_report_md_renders_no_injected_tag(evil_report):
    markdown = (evil_report / "report.md").read_text(encoding="utf-8")
    assert EVIL_ID.replace("<", "&lt;").replace(">", "&gt;") in markdown  # the ids are there, escaped
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parser = _Tags()
    parser.feed(html)
    tags = {tag for tag, _ in parser.tags}
    assert tags <= MARKDOWN_TAGS, tags - MARKDOWN_TAGS
    assert not [(t, a) for t, a in parser.tags for name, _ in a if name.startswith("on")]
    images = [dict(a)["src"] for t, a in parser.tags if t == "img"]
    assert images and all(src.startswith("plots/") for src in images)
    links = [dict(a)["href"] for t, a in parser.tags if t == "a"]
    assert links and all(href.startswith("index.html#traj/") for href in links)
    # the payloads are shown as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;script&gt;alert(3)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;bookFlight" in html


def test_csv_cells_never_start_a_formula(evil_report):
    for name in ("tasks.csv", "leaderboard.csv", "orchestration.csv", "errors.csv"):
        rows = list(csv.reader(io.StringIO((evil_report / name).read_text(encoding="utf-8"))))
        cells = [cell for row in rows for cell in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], name
        assert not [c for c in cells if c.startswith("-") and not c.lstrip("-").replace(".", "").isdigit()], name
    rows = list(csv.DictReader(io.StringIO((evil_report / "tasks.csv").read_text(encoding="utf-8"))))
    assert rows and {row["session_id"][: len(EVIL_ID) + 1] for row in rows} == {"'" + EVIL_ID}
    assert {row["model"] for row in rows} == {EVIL_MODEL}  # starts with '<': not a formula, left as it is


# --------------------------------------------------------------------------- finding 4: stale metrics

SCORE_OUTPUTS = ("score.jsonl", "metric.json", "summary_metrics.json")


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the socket is: connections are refused


def test_overwrite_with_every_session_failing_leaves_no_metric_of_the_previous_run(tmp_path):
    out = tmp_path / "run"
    replay_run(SESSIONS_PATH, CANDIDATES_PATH, out)
    assert json.loads((out / "summary_metrics.json").read_text())  # the oracle's 100% run
    failing = wtb(
        "eval", "--dataset", SESSIONS_PATH, "--model", "openai:gpt-test", "--base-url",
        f"http://127.0.0.1:{_closed_port()}/v1", "--max-attempts", "1", "--out", out, "--overwrite",
        "--no-progress", "--no-trace", env={"OPENAI_API_KEY": "sk-test"}, check=False,
    )  # fmt: skip
    assert failing.returncode == 3, failing.stderr
    assert (out / "result.jsonl").read_text() == ""
    assert len((out / "errors.jsonl").read_text().splitlines()) == 6
    assert [name for name in SCORE_OUTPUTS if (out / name).exists()] == []


def test_a_failed_rescoring_leaves_no_metric_of_the_earlier_one(tmp_path):
    out = tmp_path / "run"
    replay_run(SESSIONS_PATH, CANDIDATES_PATH, out)
    assert all((out / name).exists() for name in SCORE_OUTPUTS)
    broken = tmp_path / "result.jsonl"
    broken.write_text((out / "result.jsonl").read_text() + "{not json\n", encoding="utf-8")
    scored = wtb("score", "--dataset", SESSIONS_PATH, "--results", broken, "--out", out, check=False)
    assert scored.returncode == 1
    assert f"{broken}:7: (json): invalid JSON" in scored.stderr
    assert [name for name in SCORE_OUTPUTS if (out / name).exists()] == []
