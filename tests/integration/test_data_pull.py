"""``wtb data pull`` and the official data names, against a loopback HTTP server (issue 14, parts 1-2).

The server (a thread of this process on 127.0.0.1, stopped at teardown and by a watchdog) serves
files under the repository paths: the two real tool lists from ``../shared/data`` (whose blob ids
are the real pins) and a small fake dataset (the first two demo sessions) under a test pin given
by ``WTB_DATA_PINS``. The CLI runs in subprocesses, so standard input is not a terminal.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.support.gen_scripts import session_script
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths
from wildtoolbench.data import names, official
from wildtoolbench.data.official import COMMIT, OFFICIAL_PINS, git_blob_id

REPO = Path(__file__).resolve().parents[2]
PINS = {pin.name: pin for pin in OFFICIAL_PINS}
DATASET_PATH = PINS["wildtoolbench"].path
TOOLS_EN_PATH = PINS["wildtoolbench-en"].path
TOOLS_ZH_PATH = PINS["wildtoolbench-zh"].path
SERVER_LIFETIME = 300.0  # seconds: the watchdog stops the server even if a teardown never runs


def _blob(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Files:
    """What the server serves: bytes per repository path, per-path faults, and a log of GETs."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        self.faults: dict[str, str] = {}  # path -> "tamper" | "close-early" | "short-length"
        self.gets: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    timeout = 10  # per connection: a stuck client cannot hold a server thread

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        files: _Files = self.server.files  # type: ignore[attr-defined]
        path = unquote(self.path.lstrip("/"))
        files.gets.append(path)
        body = files.files.get(path)
        if body is None:
            self.send_error(404)
            return
        fault = files.faults.get(path)
        if fault == "tamper":
            body = body.replace(b'"', b"'", 1)
        declared = len(body) - 100 if fault == "short-length" else len(body)
        sent = body[: len(body) // 2] if fault == "close-early" else body[:declared]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        self.wfile.write(sent)
        self.wfile.flush()
        if fault == "close-early":
            self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def fake_dataset() -> bytes:
    """The first two demo sessions: a small dataset with its own (test) pin."""
    lines = (REPO / "bench" / "data" / "demo_sessions.jsonl").read_bytes().splitlines(keepends=True)
    return b"".join(lines[:2])


@pytest.fixture
def server(shared_dir, fake_dataset):
    """A loopback server of the three files; yields (base URL, _Files). Stops at teardown or after
    SERVER_LIFETIME seconds, whichever comes first."""
    files = _Files(
        {
            DATASET_PATH: fake_dataset,
            TOOLS_EN_PATH: (shared_dir / "data" / "tools_en.jsonl").read_bytes(),
            TOOLS_ZH_PATH: (shared_dir / "data" / "tools_zh.jsonl").read_bytes(),
        }
    )
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.files = files  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    watchdog = threading.Timer(SERVER_LIFETIME, httpd.shutdown)
    watchdog.daemon = True
    thread.start()
    watchdog.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", files
    finally:
        watchdog.cancel()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def env(tmp_path, server, fake_dataset, monkeypatch):
    """Environment for the CLI (and this process): cache in tmp_path, base URL of the server, test pin."""
    pins = tmp_path / "pins.json"
    pins.write_text(
        json.dumps({"wildtoolbench": {"path": DATASET_PATH, "blob": _blob(fake_dataset)}}), encoding="utf-8"
    )
    values = {"WTB_CACHE_DIR": str(tmp_path / "cache"), "WTB_DATA_URL": server[0], "WTB_DATA_PINS": str(pins)}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return dict(os.environ, PYTHONPATH=str(REPO), LANGSMITH_TRACING="false", **values)


def _wtb(env: dict[str, str], *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        umask=0o022,
        stdin=subprocess.DEVNULL,
    )


def _cached(env: dict[str, str], repo_path: str) -> Path:
    return Path(env["WTB_CACHE_DIR"]).joinpath("data", COMMIT, *repo_path.split("/"))


def _cache_files(env: dict[str, str]) -> list[str]:
    root = Path(env["WTB_CACHE_DIR"])
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_git_blob_id_and_the_real_tool_list_pins(shared_dir, tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert git_blob_id(empty) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # `git hash-object /dev/null`
    assert git_blob_id(shared_dir / "data" / "tools_en.jsonl") == PINS["wildtoolbench-en"].blob
    assert git_blob_id(shared_dir / "data" / "tools_zh.jsonl") == PINS["wildtoolbench-zh"].blob


def test_pull_caches_verified_files_and_a_second_pull_is_a_no_op(env, server, fake_dataset, shared_dir):
    files = server[1]
    first = _wtb(env, "data", "pull")
    assert first.returncode == 0, first.stderr
    expected = {
        DATASET_PATH: fake_dataset,
        TOOLS_EN_PATH: (shared_dir / "data" / "tools_en.jsonl").read_bytes(),
        TOOLS_ZH_PATH: (shared_dir / "data" / "tools_zh.jsonl").read_bytes(),
    }
    for repo_path, data in expected.items():
        path = _cached(env, repo_path)
        assert path.read_bytes() == data
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert f"-> {path}" in first.stdout
    assert sorted(files.gets) == sorted(expected)
    assert len(_cache_files(env)) == 3  # no temporary files left

    second = _wtb(env, "data", "pull")
    assert second.returncode == 0, second.stderr
    assert "nothing to do" in second.stdout and "already in the cache and verified" in second.stdout
    assert len(files.gets) == 3  # no second GET


def test_pull_only_tools(env, server):
    result = _wtb(env, "data", "pull", "--only", "tools")
    assert result.returncode == 0, result.stderr
    assert sorted(server[1].gets) == sorted([TOOLS_EN_PATH, TOOLS_ZH_PATH])
    assert not _cached(env, DATASET_PATH).exists()
    assert _cached(env, TOOLS_EN_PATH).is_file() and _cached(env, TOOLS_ZH_PATH).is_file()


@pytest.mark.parametrize("fault", ["tamper", "close-early", "short-length"])
def test_a_bad_download_leaves_nothing_in_the_cache(env, server, fault):
    server[1].faults[TOOLS_EN_PATH] = fault
    result = _wtb(env, "data", "pull", "--only", "tools")
    assert result.returncode == 1
    assert f"error: wildtoolbench-en: {TOOLS_EN_PATH}: " in result.stderr
    assert "1 of 2 file(s) not in the cache" in result.stderr
    assert not _cached(env, TOOLS_EN_PATH).exists()
    assert _cache_files(env) == [str(Path("data", COMMIT, *TOOLS_ZH_PATH.split("/")))]  # the good file only
    if fault == "close-early":
        assert "broke off" in result.stderr or "incomplete download" in result.stderr
    else:
        assert f"expected {PINS['wildtoolbench-en'].blob}" in result.stderr and "nothing was written" in result.stderr


def test_a_failed_first_download_leaves_no_empty_folders(env, server):
    server[1].faults[DATASET_PATH] = "tamper"
    result = _wtb(env, "data", "pull", "--only", "dataset")
    assert result.returncode == 1 and f"error: wildtoolbench: {DATASET_PATH}" in result.stderr
    cache = Path(env["WTB_CACHE_DIR"])
    assert not cache.exists() or not any(cache.rglob("*"))


def test_pull_from_a_local_clone(env, server, tmp_path, fake_dataset, shared_dir):
    clone = tmp_path / "WildToolBench"
    for repo_path, data in ((DATASET_PATH, fake_dataset), (TOOLS_EN_PATH, None), (TOOLS_ZH_PATH, None)):
        target = clone.joinpath(*repo_path.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if data is not None else (shared_dir / "data" / Path(repo_path).name).read_bytes())
    offline = dict(env, WTB_DATA_URL=_closed_port_url())
    result = _wtb(offline, "data", "pull", "--from", str(clone))
    assert result.returncode == 0, result.stderr
    for repo_path in (DATASET_PATH, TOOLS_EN_PATH, TOOLS_ZH_PATH):
        assert _cached(env, repo_path).read_bytes() == clone.joinpath(*repo_path.split("/")).read_bytes()
        assert stat.S_IMODE(_cached(env, repo_path).stat().st_mode) == 0o644
    assert server[1].gets == []

    # A clone at another commit: the file is refused, with a hint.
    _cached(env, TOOLS_ZH_PATH).unlink()
    clone.joinpath(*TOOLS_ZH_PATH.split("/")).write_bytes(b"[]\n")
    stale = _wtb(offline, "data", "pull", "--from", str(clone), "--only", "tools")
    assert stale.returncode == 1
    assert (
        f"error: wildtoolbench-zh: {TOOLS_ZH_PATH}: " in stale.stderr and f"check out commit {COMMIT}" in stale.stderr
    )
    assert not _cached(env, TOOLS_ZH_PATH).exists()

    # A flat folder (files side by side, as in ../shared/data) works too.
    flat = _wtb(offline, "data", "pull", "--from", str(shared_dir / "data"), "--only", "tools")
    assert flat.returncode == 0, flat.stderr
    assert git_blob_id(_cached(env, TOOLS_ZH_PATH)) == PINS["wildtoolbench-zh"].blob


def test_offline_says_what_to_download_and_where_to_put_it(env):
    base = _closed_port_url()
    result = _wtb(dict(env, WTB_DATA_URL=base), "data", "pull")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    for repo_path in (DATASET_PATH, TOOLS_EN_PATH, TOOLS_ZH_PATH):
        [line] = [line for line in lines if f"{base}/{repo_path}" in line]
        assert f"download {base}/{repo_path} and save it as {_cached(env, repo_path)}" in line
    assert "wtb data pull --from" in result.stderr
    assert _cache_files(env) == []


def test_files_follow_the_umask(env, server):
    old = os.umask(0o027)
    try:
        result = official.pull_file(official.pin_table()["wildtoolbench-en"])
    finally:
        os.umask(old)
    assert result.action == "downloaded"
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o640


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"path": "../x", "blob": "0" * 40}, "relative path inside the repository"),
        ({"path": "a/b.jsonl", "blob": "xyz"}, "40 lowercase hex digits"),
        ({"path": "a/b.jsonl", "blob": "0" * 40, "kind": "models"}, "kind must be one of"),
    ],
)
def test_a_malformed_pin_table_is_refused(tmp_path, entry, message):
    pins = tmp_path / "pins.json"
    pins.write_text(json.dumps({"wildtoolbench": entry}), encoding="utf-8")
    with pytest.raises(official.PinsError, match=message):
        official.pin_table(pins)


def test_the_pin_table_override_replaces_and_adds(tmp_path, monkeypatch):
    pins = tmp_path / "pins.json"
    pins.write_text(
        json.dumps(
            {
                "wildtoolbench": {"path": "d/x.jsonl", "blob": "1" * 40},
                "extra-tools": {"path": "t/y.jsonl", "blob": "2" * 40, "kind": "tools"},
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.delenv("WTB_DATA_PINS", raising=False)
    assert official.pin_table() == PINS
    monkeypatch.setenv("WTB_DATA_PINS", str(pins))
    table = official.pin_table()
    assert table["wildtoolbench"] == official.Pin("wildtoolbench", "dataset", "d/x.jsonl", "1" * 40)
    assert table["wildtoolbench-en"] == PINS["wildtoolbench-en"]
    assert [p.name for p in official.select_pins("tools", table)] == [
        "wildtoolbench-en",
        "wildtoolbench-zh",
        "extra-tools",
    ]


# --- the names of the official data -------------------------------------------------------------------


def test_a_name_without_the_file_and_without_pull_is_an_error(env, server):
    # Run from the clone's root, where `wildtoolbench/` is also the package folder: the name still means the data.
    assert (REPO / "wildtoolbench").is_dir()
    for args in (
        ["validate", "wildtoolbench"],
        ["eval", "--dataset", "wildtoolbench", "--model", "replay:x#y"],
        ["generate", "--tools", "wildtoolbench-zh", "--out", "unused"],
    ):
        result = _wtb(env, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert "is not downloaded yet; run `wtb data pull" in result.stderr
    assert server[1].gets == []


def test_eval_score_validate_on_the_pulled_dataset(env, server, tmp_path):
    out = tmp_path / "run"
    model = f"replay:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}#oracle"
    result = _wtb(
        env,
        "eval",
        "--dataset",
        "wildtoolbench",
        "--pull",
        "--model",
        model,
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    )
    assert result.returncode == 0, result.stderr
    assert server[1].gets == [DATASET_PATH]
    records = [json.loads(line) for line in (out / "result.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ["wild_tool_bench_0", "wild_tool_bench_1"]
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["dataset"] == str(
        _cached(env, DATASET_PATH).resolve()
    )

    validate = _wtb(env, "validate", "wildtoolbench")
    assert validate.returncode == 0, validate.stderr
    assert "2 sessions" in validate.stdout, validate.stdout
    score = _wtb(
        env, "score", "--dataset", "wildtoolbench", "--results", str(out / "result.jsonl"), "--out", str(tmp_path / "s")
    )
    assert score.returncode == 0, score.stderr
    assert json.loads((tmp_path / "s" / "metric.json").read_text(encoding="utf-8")) == metric
    assert server[1].gets == [DATASET_PATH]  # cached: no second download


def test_generate_on_the_pulled_english_tool_lists(env, server, shared_dir, tmp_path):
    paths = ["ST,CC"]
    plans = plan_sessions(load_tool_lists(shared_dir / "data" / "tools_en.jsonl"), select_type_paths(2, paths), seed=0)
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    out = tmp_path / "gen"
    result = _wtb(
        env,
        "generate",
        "--tools",
        "wildtoolbench-en",
        "--pull",
        "--layers",
        "2",
        "--paths",
        paths[0],
        "--out",
        str(out),
        "--checker-model",
        "none",
        "--user-model",
        spec,
        "--planner-model",
        spec,
        "--tool-model",
        spec,
        "--agent-model",
        spec,
        "--no-progress",
        "--no-trace",
    )
    assert result.returncode == 0, result.stderr
    assert "generated 1 session(s), 0 failed" in result.stdout
    assert server[1].gets == [TOOLS_EN_PATH]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert str(_cached(env, TOOLS_EN_PATH)) in json.dumps(manifest)


def test_plain_paths_and_unknown_names_are_left_alone(env, tmp_path, monkeypatch):
    assert names.resolve_dataset(None, pull=False, interactive=False) is None
    assert names.resolve_dataset("some/file.jsonl", pull=False, interactive=False) == Path("some/file.jsonl")
    with pytest.raises(official.DataError, match="names the official tool list, not a dataset"):
        names.resolve_dataset("wildtoolbench-en", pull=True, interactive=False)
    with pytest.raises(official.DataError, match="names the official dataset, not a tool list"):
        names.resolve_tools("wildtoolbench", pull=True, interactive=False)
    monkeypatch.chdir(tmp_path)
    Path("wildtoolbench").write_text("{}\n", encoding="utf-8")  # an existing file wins over the name
    assert names.resolve_dataset(Path("wildtoolbench"), pull=False, interactive=False) == Path("wildtoolbench")
    assert not Path(os.environ["WTB_CACHE_DIR"]).exists()


def test_consent_on_a_terminal(env, server):
    asked: list[str] = []
    with pytest.raises(names.NotPulledError) as declined:
        names.resolve_tools(
            "wildtoolbench-zh", pull=False, interactive=True, confirm=lambda q: asked.append(q) or False
        )
    assert declined.value.command == "wtb data pull --only tools" and server[1].gets == []
    assert "Download it into" in asked[0]
    path = names.resolve_tools("wildtoolbench-zh", pull=False, interactive=True, confirm=lambda q: True)
    assert path == _cached(env, TOOLS_ZH_PATH) and server[1].gets == [TOOLS_ZH_PATH]
    # Cached now: no question, no download.
    assert names.resolve_tools("WildToolBench-ZH", pull=False, interactive=True, confirm=pytest.fail) == path
    assert server[1].gets == [TOOLS_ZH_PATH]
