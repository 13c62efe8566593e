"""Issue 42: ``--trials``, ``--cache`` (and so ``--until-decided``) over ``--workers 2`` and over ``--server``
give the same files and records as one process (docs/trials.md §8.1), and a warm cache is served wherever
it was filled."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.integration.test_server_eval import server_env
from tests.support.langgraph_dev import LangGraphDev
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.cli import app

CANDIDATE = "noisy"  # errs in some tasks: a metric that is not all-correct
TRIALS = "3"
SESSIONS = 8  # the first 8 reference sessions: every run below is compared file for file with one process,
# which needs no more sessions than the workers and the server's concurrency can spread (was all 24)
SCALE = ("--limit", str(SESSIONS), "--trials", TRIALS)


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _records(out: Path) -> list[tuple]:
    """Every trial's records without usage and with latencies counted (``normalise``), in file order."""
    rows = _jsonl(out / "result.jsonl") + _jsonl(out / "result.trials.jsonl")
    return [(r["id"], r.get("trial", 1), r["model_name"], normalise(r["result"])) for r in rows]


def eval_args(reference_dir: Path, out: Path, *extra: str, candidate: str = CANDIDATE) -> list[str]:
    """``wtb eval`` of a replay candidate of the fixtures into ``out``."""
    return [
        "eval",
        "--dataset",
        str(reference_dir / "sessions.jsonl"),
        "--model",
        f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
        *extra,
    ]


def _run(*args: str) -> None:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


_ONE: dict[str, Path] = {}


def one_process_run(reference_dir: Path, tmp_path_factory) -> Path:
    """The run everything is compared with: 3 trials of the first :data:`SESSIONS` sessions with a cache, in this
    process (made once)."""
    if "run" not in _ONE:
        base = tmp_path_factory.mktemp("one-process")
        _run(*eval_args(reference_dir, base / "run", *SCALE, "--cache", str(base / "cache")))
        _ONE["run"] = base / "run"
    return _ONE["run"]


def _same_as_one_process(one: Path, out: Path) -> None:
    for name in ("metric.json", "trials.json", "trials_summary.json"):
        assert (out / name).read_text(encoding="utf-8") == (one / name).read_text(encoding="utf-8"), name
    assert _records(out) == _records(one)
    assert _summary(out)["trials"] == _summary(one)["trials"] == {"trials": 3, "session_trials": 3 * SESSIONS}


def test_trials_and_cache_over_two_workers_equal_one_process(reference_dir, tmp_path, tmp_path_factory):
    one = one_process_run(reference_dir, tmp_path_factory)
    paid = _summary(one)["this_run"]["requests"]
    assert paid > 0 and _summary(one)["cache"]["writes"] == paid
    cache = tmp_path / "cache"
    first = tmp_path / "first"
    _run(*eval_args(reference_dir, first, *SCALE, "--cache", str(cache), "--workers", "2"))
    _same_as_one_process(one, first)
    assert _summary(first)["cache"] == {"dir": str(cache), "hits": 0, "misses": paid, "writes": paid, "rejected": 0}
    assert len(list(cache.glob("??/*.json"))) == paid  # every reply once, whichever process paid for it
    second = tmp_path / "second"  # the same cache again: nothing is paid
    _run(*eval_args(reference_dir, second, *SCALE, "--cache", str(cache), "--workers", "2"))
    _same_as_one_process(one, second)
    assert _summary(second)["cache"] == {"dir": str(cache), "hits": paid, "misses": 0, "writes": 0, "rejected": 0}
    assert _summary(second)["this_run"]["requests"] == 0 and _summary(second)["this_run"]["cache_hits"] == paid


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory, reference_dir):
    if importlib.util.find_spec("langgraph_api") is None:
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail("langgraph-cli[inmem] is not installed (it is in the test extra)")
        pytest.skip("langgraph-cli[inmem] is not installed (it is in the test extra)")
    env = {"WTB_REPLAY_DELAY": "0.01", **server_env(reference_dir, tmp_path_factory)}
    with LangGraphDev(tmp_path_factory.mktemp("langgraph-dev"), jobs=8, env=env) as dev:
        dev.start()
        yield dev


@pytest.mark.slow
def test_trials_and_cache_on_the_server_equal_one_process(dev_server, reference_dir, tmp_path, tmp_path_factory):
    """The cache lives on the client: a run on a server fills it, a local run is served from it, and a
    restarted server (a new process: nothing of the first one is kept) is served from it too."""
    one = one_process_run(reference_dir, tmp_path_factory)
    paid = _summary(one)["this_run"]["requests"]
    cache = tmp_path / "cache"
    remote = ("--server", dev_server.url, "--concurrency", "8")
    first = tmp_path / "first"
    _run(*eval_args(reference_dir, first, *SCALE, "--cache", str(cache), *remote))
    _same_as_one_process(one, first)
    assert _summary(first)["cache"] == {"dir": str(cache), "hits": 0, "misses": paid, "writes": paid, "rejected": 0}
    assert _summary(first)["this_run"]["requests"] == paid

    local = tmp_path / "local"  # what the server paid for serves a run in this process
    _run(*eval_args(reference_dir, local, *SCALE, "--cache", str(cache)))
    _same_as_one_process(one, local)
    assert _summary(local)["cache"]["hits"] == paid and _summary(local)["this_run"]["requests"] == 0

    dev_server.start()  # the server replaced
    again = tmp_path / "again"
    _run(*eval_args(reference_dir, again, *SCALE, "--cache", str(cache), "--server", dev_server.url))
    _same_as_one_process(one, again)
    assert _summary(again)["cache"] == {"dir": str(cache), "hits": paid, "misses": 0, "writes": 0, "rejected": 0}
    this_run = _summary(again)["this_run"]
    assert (this_run["requests"], this_run["input_tokens"], this_run["cache_hits"]) == (0, 0, paid)
