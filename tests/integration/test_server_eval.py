"""``wtb eval --server`` / ``wtb generate --server`` against ``langgraph dev`` on loopback (issue 16 acceptance).

One ``langgraph dev`` (8 jobs per worker, replies slowed by ``WTB_REPLAY_DELAY`` in the server's
environment) serves the module. On the public fixtures with the ``oracle`` and ``noisy`` replay
candidates, a ``--server`` run gives the records (latency values and the random history ids aside,
usage included), the metrics and the accounting of a local run; a client killed mid-run resumes to
one record per session; a server stopped mid-run turns the affected sessions into infrastructure
errors (exit 3) that a resumed run against a restarted server completes. Threads on the server carry
the session's metadata.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.langgraph_dev import LangGraphDev
from wildtoolbench.cli import app
from wildtoolbench.models.providers import scripted

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HISTORY_ID = re.compile(r"toolu_bdrk_[A-Za-z0-9]{24}")
DELAY = "0.05"  # seconds per replayed reply, on the server


def server_env(reference_dir: Path, tmp_path_factory) -> dict[str, str]:
    """The deployment's settings of these tests (docs/settings.md §8): replay and script specs, with their files
    in the reference fixtures, this session's temporary folders or /nonexistent/wtb (to see a missing file)."""
    folders = [reference_dir.resolve(), tmp_path_factory.getbasetemp().resolve(), Path("/nonexistent/wtb")]
    return {"WTB_SERVER_MODELS": "replay:*,scripted:*", "WTB_SERVER_FILES": ",".join(str(f) for f in folders)}


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory, reference_dir):
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    env = {"WTB_REPLAY_DELAY": DELAY, **server_env(reference_dir, tmp_path_factory)}
    with LangGraphDev(tmp_path_factory.mktemp("langgraph-dev"), jobs=8, env=env) as dev:
        dev.start()
        yield dev


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in _lines(out / "result.jsonl")]


def _comparable(record: dict) -> tuple:
    """A record with latency values counted instead of kept and history ids masked; usage without wall time."""
    result = record["result"]
    if isinstance(result, list):
        result = [{**task, "latency": len(task["latency"])} for task in result]
    usage = {k: v for k, v in record["usage"].items() if k != "wall_time"}
    text = HISTORY_ID.sub("toolu_bdrk_<id>", json.dumps(result, ensure_ascii=False, sort_keys=True))
    return record["id"], record["model_name"], record.get("error_detail"), text, usage


def _without_latency(value):
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if k != "latency"}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value


def _scores(out: Path) -> list:
    """``score.jsonl`` without latency values, history ids masked."""
    return [
        _without_latency(json.loads(HISTORY_ID.sub("toolu_bdrk_<id>", line))) for line in _lines(out / "score.jsonl")
    ]


def _eval_args(reference_dir: Path, candidate: str, out: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "--dataset",
        str(reference_dir / "sessions.jsonl"),
        "--model",
        f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


_LOCAL: dict[str, Path] = {}


def _local_run(reference_dir: Path, candidate: str, tmp_path_factory) -> Path:
    """The same command without --server (once per candidate in this module)."""
    if candidate not in _LOCAL:
        out = tmp_path_factory.mktemp(f"local-{candidate}")
        result = CliRunner().invoke(
            app, _eval_args(reference_dir, candidate, out, "--concurrency", "8"), catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        _LOCAL[candidate] = out
    return _LOCAL[candidate]


@pytest.mark.parametrize("candidate", ["oracle", "noisy"])
def test_server_run_equals_a_local_run(dev_server, reference_dir, tmp_path, tmp_path_factory, candidate):
    out = tmp_path / "server"
    result = CliRunner().invoke(
        app,
        _eval_args(reference_dir, candidate, out, "--server", dev_server.url, "--concurrency", "8"),
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "24 sessions: 24 evaluated, 0 already done" in result.output
    local = _local_run(reference_dir, candidate, tmp_path_factory)

    records, expected = _records(out), _records(local)
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(24)]
    assert [_comparable(r) for r in records] == [_comparable(r) for r in expected]
    assert json.loads((out / "metric.json").read_text()) == json.loads((local / "metric.json").read_text())
    assert _scores(out) == _scores(local)
    summary, local_summary = (json.loads((d / "summary.json").read_text()) for d in (out, local))
    assert summary["selected_sessions"] == local_summary["selected_sessions"]
    assert summary["selected_sessions"]["requests"] == sum(len(t["latency"]) for r in records for t in r["result"])
    assert summary["tasks_right_tool_names"] == local_summary["tasks_right_tool_names"]
    run = json.loads((out / "run.json").read_text())
    assert run["settings"]["server"] == dev_server.url
    assert {k: v for k, v in run["settings"].items() if k != "server"} == json.loads((local / "run.json").read_text())[
        "settings"
    ]

    # each session ran on its own thread, found on the server by its metadata
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=dev_server.url, api_key=None)
    threads = client.threads.search(
        metadata={"session_id": "wild_tool_bench_3", "model": run["settings"]["model"]}, limit=10
    )
    assert threads, "no thread with the session's metadata"
    meta = threads[0]["metadata"]
    assert meta["graph_id"] == "evaluation" and meta["dataset"] == str(reference_dir / "sessions.jsonl")
    assert meta["language"] == "en" and meta["project_version"] == run["settings"]["project_version"]
    assert meta["settings"]["max_steps"] == 32 and len(meta["wtb_batch_id"]) == 32
    (server_run,) = client.runs.list(threads[0]["thread_id"])
    assert server_run["status"] == "success"
    assert server_run["kwargs"]["config"]["run_name"] == "wtb eval wild_tool_bench_3"
    assert server_run["kwargs"]["config"]["tags"] == ["wildtoolbench", "wtb-eval"]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "wildtoolbench.cli", *args]


def _wait_for_records(process: subprocess.Popen, out: Path, count: int, bound: float = 120.0) -> None:
    deadline = time.monotonic() + bound  # a bound on waiting, not a timing assertion
    while len(_lines(out / "result.jsonl")) < count and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


IDS = ",".join(str(i) for i in range(12))


def _subset(records: list[dict], count: int = 12) -> list[tuple]:
    return [_comparable(r) for r in records if int(r["id"].rsplit("_", 1)[1]) < count]


def test_a_killed_client_resumes_to_one_record_per_session(dev_server, reference_dir, tmp_path, tmp_path_factory):
    out = tmp_path / "run"
    command = _cli(
        *_eval_args(reference_dir, "noisy", out, "--server", dev_server.url, "--concurrency", "2", "--ids", IDS)
    )
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for_records(process, out, 3)
        assert process.poll() is None, "the run finished before it could be killed"
        process.send_signal(signal.SIGKILL)  # mid-run: two sessions in flight on the server
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    interrupted = _lines(out / "result.jsonl")
    assert 3 <= len(interrupted) < 12
    # the server cancelled the runs the killed client was waiting for (on_disconnect="cancel")
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=dev_server.url, api_key=None)
    deadline = time.monotonic() + 30  # a bound on waiting, not a timing assertion
    while client.threads.search(status="busy", limit=10) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.threads.search(status="busy", limit=10) == []
    model = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    # The runs were tagged on the server; whether a killed client's run ends "interrupted" (cancelled on
    # disconnect) or "idle" (it finished before the server noticed) depends on timing, so both are accepted.
    statuses = {t["status"] for t in client.threads.search(metadata={"model": model}, limit=100)}
    assert statuses and statuses <= {"idle", "interrupted"}

    resumed = CliRunner().invoke(app, command[3:], catch_exceptions=False)  # the same command, in this process
    assert resumed.exit_code == 0, resumed.output
    assert f"12 sessions: {12 - len(interrupted)} evaluated, {len(interrupted)} already done" in resumed.output
    records = _records(out)
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(12)]  # one record per session
    local = _local_run(reference_dir, "noisy", tmp_path_factory)
    assert [_comparable(r) for r in records] == _subset(_records(local))


def test_a_stopped_server_gives_infrastructure_errors_and_a_restarted_one_completes_them(
    dev_server, reference_dir, tmp_path, tmp_path_factory
):
    out = tmp_path / "run"
    command = _cli(
        *_eval_args(reference_dir, "noisy", out, "--server", dev_server.url, "--concurrency", "4", "--ids", IDS)
    )
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_records(process, out, 3)
        assert process.poll() is None, "the run finished before the server could be stopped"
        dev_server.stop(signal.SIGKILL)  # a crash: the runs in flight are cut off, new connections refused
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 3, stderr
    kept = _records(out)
    errors = [json.loads(line) for line in _lines(out / "errors.jsonl")]
    assert 3 <= len(kept) < 12 and len(kept) + len(errors) == 12
    assert {e["id"] for e in errors}.isdisjoint(r["id"] for r in kept)
    assert all(e["error"].startswith("LangGraph server: ") and e["where"]["server"] == dev_server.url for e in errors)
    assert any("cannot connect to the server" in e["error"] for e in errors)
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["infrastructure_errors"]) == len(errors) and summary["evaluated"] == len(kept)
    assert f"infrastructure errors in {len(errors)} sessions" in stderr

    restarted = dev_server.start()  # a new process on a new port: the server is not part of the run's identity
    command[command.index("--server") + 1] = restarted
    resumed = CliRunner().invoke(app, command[3:], catch_exceptions=False)
    assert resumed.exit_code == 0, resumed.output
    assert f"12 sessions: {len(errors)} evaluated, {len(kept)} already done" in resumed.output
    records = _records(out)
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(12)]
    local = _local_run(reference_dir, "noisy", tmp_path_factory)
    assert [_comparable(r) for r in records] == _subset(_records(local))
    assert _lines(out / "errors.jsonl") == []


def test_configuration_errors_stop_before_the_first_session(dev_server, reference_dir, tmp_path):
    out = tmp_path / "run"
    cases = [
        (
            ["--model", "replay:bench/data/demo_candidates.jsonl#oracle", "--server", dev_server.url],
            "must be an absolute path",
        ),
        (
            ["--model", "replay:/nonexistent/wtb/candidates.jsonl#oracle", "--server", dev_server.url],
            "the server cannot open /nonexistent/wtb/candidates.jsonl (FileNotFoundError",
        ),
        (
            ["--model", f"replay:{reference_dir / 'candidates.jsonl'}#oracle", "--server", "http://127.0.0.1:9"],
            "LangGraph server http://127.0.0.1:9: cannot connect to the server",
        ),
        (
            ["--model", f"replay:{reference_dir / 'candidates.jsonl'}#oracle", "--server", "localhost:2024"],
            "must be an http:// or https:// URL",
        ),
    ]
    for args, message in cases:
        result = CliRunner().invoke(
            app, ["eval", "--dataset", str(reference_dir / "sessions.jsonl"), "--out", str(out), *args]
        )
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, result.output
        assert not out.exists()


def test_generate_on_the_server_equals_a_local_run(dev_server, shared_dir, tmp_path):
    from tests.support.gen_scripts import session_script
    from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths

    tools = tmp_path / "tools.jsonl"
    tools.write_text((shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n")
    paths = ["ST,CC,CC,CC", "CC-ST-CC-CC", "ST-MT-CQ-CC"]
    plans = plan_sessions(load_tool_lists(tools), select_type_paths(4, paths), seed=0)
    scripts = {p.key: session_script(p.as_state()) for p in plans}
    scripts[plans[0].key]["planner"] = ["not json at all"] * 2  # fails on the models' output
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": scripts}))
    spec = f"scripted:{script}"

    def generate(out: Path, *extra: str):
        scripted.reset()
        args = [
            "generate",
            "--tools",
            str(tools),
            "--out",
            str(out),
            *(a for p in paths for a in ("--paths", p)),
            "--max-retries",
            "2",
            "--checker-model",
            "none",
            "--vague-rate",
            "0",
            "--user-model",
            spec,
            "--planner-model",
            spec,
            "--tool-model",
            spec,
            "--agent-model",
            spec,
            "--concurrency",
            "3",
            *extra,
        ]
        return CliRunner().invoke(app, args, catch_exceptions=False)

    remote = generate(tmp_path / "server", "--server", dev_server.url)
    local = generate(tmp_path / "local")
    assert remote.exit_code == 0 and local.exit_code == 0, remote.output + local.output
    assert "generated 2 session(s), 1 failed" in remote.output
    for name in ("sessions.jsonl", "replay.jsonl"):
        assert (tmp_path / "server" / name).read_text() == (tmp_path / "local" / name).read_text()
    failures = [json.loads(line) for line in _lines(tmp_path / "server" / "failures.jsonl")]
    assert failures == [json.loads(line) for line in _lines(tmp_path / "local" / "failures.jsonl")]
    assert failures[0]["key"] == plans[0].key and failures[0]["infrastructure"] is False
    for plan in plans:
        for name in ("transcript.json", "raw_transcript.json", "requests/planner.jsonl"):
            server_file, local_file = (tmp_path / d / "sessions" / plan.key / name for d in ("server", "local"))
            if name.endswith(".jsonl"):  # request logs: equal but for each request's wall seconds
                server_lines, local_lines = (
                    [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in _lines(f)]
                    for f in (server_file, local_file)
                )
                assert server_lines == local_lines and server_lines, (plan.key, name)
            else:
                assert server_file.read_text() == local_file.read_text(), (plan.key, name)
    manifest = json.loads((tmp_path / "server" / "manifest.json").read_text())
    local_manifest = json.loads((tmp_path / "local" / "manifest.json").read_text())
    assert manifest["settings"]["server"] == dev_server.url
    assert manifest["usage"]["requests"] == local_manifest["usage"]["requests"] > 0

    def _timeless(entries):  # each session's wall seconds differ between any two runs
        return [{k: v for k, v in entry.items() if k != "seconds"} for entry in entries]

    assert _timeless(manifest["sessions"]) == _timeless(local_manifest["sessions"])
    assert all(entry["seconds"] > 0 for entry in manifest["sessions"])


def test_server_runs_are_traced_like_local_ones(reference_dir, tmp_path, tmp_path_factory, monkeypatch):
    """A server that traces (here to a loopback LangSmith stand-in) records one root run per session, named,
    tagged and with the metadata of a local run's trace, in the client's LANGSMITH_PROJECT."""
    from tests.support.langsmith_stub import LangSmithStub

    if importlib.util.find_spec("langgraph_api") is None:
        pytest.skip("langgraph-cli[inmem] is not installed")
    with LangSmithStub(lifetime=240) as stub:
        tracing = {
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": stub.url,
            "LANGSMITH_API_KEY": "lsv2_pt_" + "0" * 32,
        }
        env = {**tracing, "LANGSMITH_PROJECT": "deployment", **server_env(reference_dir, tmp_path_factory)}
        with LangGraphDev(tmp_path / "traced", jobs=2, env=env) as dev:
            dev.start()
            for name, value in {**tracing, "LANGSMITH_PROJECT": "wtb-client"}.items():
                monkeypatch.setenv(name, value)
            out = tmp_path / "run"
            result = CliRunner().invoke(
                app,
                _eval_args(reference_dir, "oracle", out, "--server", dev.url, "--ids", "0,1"),
                catch_exceptions=False,
            )
            assert result.exit_code == 0, result.output
            deadline = time.monotonic() + 60  # the server sends its traces in the background
            while time.monotonic() < deadline:
                runs = list(stub.runs.values())
                client_roots = sorted(
                    (
                        r
                        for r in runs
                        if r.get("name", "").startswith("wtb eval ")
                        and r.get("end_time")
                        and r.get("session_name") == "wtb-client"
                    ),
                    key=lambda r: r["name"],
                )
                if len(client_roots) >= 2 and any(r.get("name") == "candidate" for r in runs):
                    break
                time.sleep(0.2)
    assert [r["name"] for r in client_roots] == ["wtb eval wild_tool_bench_0", "wtb eval wild_tool_bench_1"]
    for root, session_id in zip(client_roots, ["wild_tool_bench_0", "wild_tool_bench_1"]):
        assert sorted(root["tags"]) == ["wildtoolbench", "wtb-eval"]
        meta = root["extra"]["metadata"]
        assert meta["session_id"] == session_id and meta["dataset"] == str(reference_dir / "sessions.jsonl")
        assert meta["model"] == f"replay:{reference_dir / 'candidates.jsonl'}#oracle" and meta["language"] == "en"
        assert meta["project_version"] and meta["settings"]["max_steps"] == 32
    # the graph's nodes and the model calls are traced below the roots, as in a local run
    names = {r.get("name") for r in stub.runs.values()}
    assert {"load_session", "call_candidate", "match_response", "candidate"} <= names
    assert "lsv2_pt_" + "0" * 32 not in json.dumps(list(stub.runs.values()))
