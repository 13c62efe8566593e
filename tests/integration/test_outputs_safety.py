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

from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH

REPO = Path(__file__).resolve().parents[2]

EVIL_ID = '=HYPERLINK("http://evil.invalid/")<script>alert(1)</script>_'
EVIL_TOOL = "<img src=x onerror=alert(2)>bookFlight"
EVIL_MODEL = "<script>alert(3)</script>demo-model"


def wtb(*args: object, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m wildtoolbench.cli ARGS`` with this worktree first on the path and tracing off."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full_env.pop("LANGSMITH_TRACING", None)
    result = subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *map(str, args)],
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
        f"http://127.0.0.1:{_closed_port()}/v1", "--no-preflight", "--max-attempts", "1", "--out", out, "--overwrite",
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


# --------------------------------------------------------------------------- finding 7: the run folder, workers

STOPPING_GRAPH = """
import os, signal
from pathlib import Path
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

MARK = Path(__file__).with_suffix(".stopped")


def answer(state):
    if "Lisbon" in str(state["messages"][1].content) and not MARK.exists():  # the first demo session, once
        MARK.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGSTOP)  # this worker process stops (as under `kill -STOP`)
    return {"messages": [AIMessage("I cannot help with that.")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile()
"""


def test_a_stopped_worker_is_detected_and_its_sessions_run_elsewhere(tmp_path, monkeypatch):
    import asyncio

    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.runner import arun_eval, open_dataset, processes
    from wildtoolbench.tracing import tracing_scope

    candidate = tmp_path / "stopping.py"
    candidate.write_text(STOPPING_GRAPH, encoding="utf-8")
    monkeypatch.setattr(processes, "HEARTBEAT_SECONDS", 0.2, raising=False)
    monkeypatch.setattr(processes, "STALL_SECONDS", 10.0, raising=False)
    context = EvaluationContext(model=f"graph:{candidate}:graph")
    run = arun_eval(open_dataset(SESSIONS_PATH), context, tmp_path / "out", concurrency=2, progress=False, workers=2)
    with tracing_scope(no_trace=True):
        # the guard only keeps a regression from hanging the suite; a healthy run takes seconds
        summary = asyncio.run(asyncio.wait_for(run, 120))
    stopped = int(candidate.with_suffix(".stopped").read_text())
    assert summary.infrastructure_errors == []  # the stopped worker's session ran on the other one
    assert summary.evaluated == 6
    records = [json.loads(line) for line in (tmp_path / "out" / "result.jsonl").read_text().splitlines()]
    assert len(records) == 6 and not (tmp_path / "out" / "errors.jsonl").exists()
    with pytest.raises(ProcessLookupError):  # killed (SIGKILL ends a stopped process) and reaped
        os.kill(stopped, 0)


@pytest.mark.parametrize("name", ["result.jsonl", "errors.jsonl", ".wtb-eval.lock", "summary.json"])
def test_a_symlink_in_out_is_refused_and_its_target_untouched(tmp_path, name):
    out = tmp_path / "run"
    out.mkdir()
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n", encoding="utf-8")
    (out / name).symlink_to(target)
    refused = wtb(
        "eval", "--dataset", SESSIONS_PATH, "--model", f"replay:{CANDIDATES_PATH}#oracle", "--out", out,
        "--no-progress", "--no-trace", check=False,
    )  # fmt: skip
    assert refused.returncode == 1
    assert f"error: {out / name}: is a symbolic link (to {target})" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert sorted(p.name for p in out.iterdir()) == [name]  # nothing written


def test_temp_files_of_a_killed_run_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    leftovers = [".result.jsonl.k3j2x9a1.tmp", ".score.jsonl.0a9z8y7x.tmp", ".metric.json.abc123.tmp"]
    leftovers += [".summary.json.q1w2e3.tmp", ".errors.jsonl.zz.tmp", ".run.json.r4t5y6.tmp"]
    for name in leftovers:
        (out / name).write_text("half a line", encoding="utf-8")
    foreign = [".notes.txt.tmp", "keep.tmp"]  # not a leftover of a run file: left alone
    for name in foreign:
        (out / name).write_text("mine", encoding="utf-8")
    replay_run(SESSIONS_PATH, CANDIDATES_PATH, out)
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == sorted(foreign)


DISK_FULL = """
import errno, os, runpy, sys
real_fsync, full_at = os.fsync, sys.argv[-1]
def fsync(fd):  # the disk is full when this file is flushed
    if full_at in os.readlink(f"/proc/self/fd/{fd}"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_fsync(fd)
os.fsync = fsync
sys.argv = [sys.argv[0], *sys.argv[1:-1]]
runpy.run_module("wildtoolbench.cli", run_name="__main__")
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to find the file of a descriptor")
@pytest.mark.parametrize(
    ("full_at", "named"),
    [(".score.jsonl.", "score.jsonl"), (".metric.json.", "metric.json"), ("result.jsonl", "result.jsonl")],
)
def test_a_full_disk_names_the_file_without_a_traceback(tmp_path, full_at, named):
    script = tmp_path / "disk_full.py"
    script.write_text(DISK_FULL, encoding="utf-8")
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("LANGSMITH_TRACING", None)
    args = ["eval", "--dataset", SESSIONS_PATH, "--model", f"replay:{CANDIDATES_PATH}#oracle", "--out", out]
    run = subprocess.run(
        [sys.executable, str(script), *map(str, args), "--no-progress", "--no-trace", full_at],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert f"No space left on device: '{out / named}'" in run.stderr
    assert [name for name in SCORE_OUTPUTS if (out / name).exists()] == []
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- finding 7: wtb data pull


class _Endless:
    """A loopback server whose every file is endless (no Content-Length) or announces ``declared`` bytes."""

    def __init__(self, declared: int | None) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                if server.declared is not None:
                    self.send_header("Content-Length", str(server.declared))
                self.end_headers()
                chunk = b'{"id": "x"}\n' * 4096
                try:
                    for _ in range(2000):  # ~100 MB at most, so that a regression ends too
                        self.wfile.write(chunk)
                        server.sent += len(chunk)
                except OSError:
                    pass  # the client hung up
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.declared = declared
        self.sent = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.mark.parametrize("declared", [None, 10**9])
def test_data_pull_stops_at_the_size_limit(tmp_path, declared):
    server = _Endless(declared)
    try:
        env = {"WTB_CACHE_DIR": str(tmp_path / "cache"), "WTB_DATA_URL": server.url, "WTB_DATA_MAX_BYTES": "1000000"}
        pulled = wtb("data", "pull", "--only", "dataset", env=env, check=False)
    finally:
        server.close()
    assert pulled.returncode == 1
    assert "Traceback" not in pulled.stderr
    assert "1000000 bytes, the size limit (WTB_DATA_MAX_BYTES); nothing was written to the cache" in pulled.stderr
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert server.sent < 50_000_000  # stopped long before the server's end
