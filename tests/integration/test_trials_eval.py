"""``wtb eval --trials K``, ``--cache``, ``--dry-run`` and ``--until-decided`` end to end (docs/trials.md).

The stochastic candidate (tests/support/stochastic.py) answers task ``t`` as the fixtures' oracle with a
known chance ``p_t`` per trial, seeded, so every figure below is reproducible; the loopback OpenAI server
(tests/support/counting_stub.py) reports the prompt tokens of the requests it actually received.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support import stochastic
from tests.support.counting_stub import CountingServer
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.cli import app
from wildtoolbench.runner import load_dataset

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"
DEMO_CANDIDATES = REPO / "bench" / "data" / "demo_candidates.jsonl"


@pytest.fixture(autouse=True)
def _stochastic_provider():
    stochastic.register()


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _eval(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["eval", "--no-progress", "--no-trace", *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def _comparable(record: dict) -> tuple:
    """A record without what differs between runs of the same replies: its usage and the latencies
    (``normalise`` keeps their count)."""
    return record["id"], record.get("trial", 1), record["model_name"], normalise(record["result"])


def _chances(reference_dir: Path, seed: int = 12345) -> dict[str, float]:
    """Each task's chance, spread over [0.3, 1.0] as in tests/unit/bench/test_trials.py."""
    ids = [s["id"] for s in _jsonl(reference_dir / "sessions.jsonl")]
    values = np.linspace(0.3, 1.0, len(ids) * 4)[np.random.default_rng(seed).permutation(len(ids) * 4)]
    return {f"{s}:{t}": round(float(values[4 * i + t]), 6) for i, s in enumerate(ids) for t in range(4)}


# --------------------------------------------------------------------------- trials


@pytest.mark.slow
def test_twenty_trials_of_a_stochastic_candidate_give_the_analytic_pass_hat_k(reference_dir, tmp_path):
    """K = 20: task pass^k for k = 1..5 inside its 95% interval of mean(p_t^k) (p_t = 0 for the one task the
    oracle itself gets wrong), the flip rate near its expectation, trial 1 exactly a single run."""
    chances = _chances(reference_dir)
    spec = stochastic.write_config(tmp_path / "c.json", reference_dir, seed=3, p=0.5, tasks=chances)
    dataset = str(reference_dir / "sessions.jsonl")
    out = tmp_path / "k20"
    output = _eval("--dataset", dataset, "--model", spec, "--out", str(out), "--trials", "20", "--concurrency", "8")
    assert "Trials: c, K = 20" in output and "pass^5" in output and "flip rate (20 trials)" in output

    first, later = _jsonl(out / "result.jsonl"), _jsonl(out / "result.trials.jsonl")
    assert len(first) == 24 and all("trial" not in r for r in first)
    assert sorted((r["trial"], r["id"]) for r in later) == sorted((t, s["id"]) for t in range(2, 21) for s in first)
    document = json.loads((out / "trials.json").read_text())
    assert set(document) == {"trials", "pass_hat_k", "pass_at_k", "flip_rate"} and document["trials"] == 20
    assert list(document["pass_hat_k"]["task"]) == [str(k) for k in range(1, 21)]

    right = stochastic.oracle_correct(reference_dir / "expected_scores.jsonl")
    p = np.array([chances[key] * ((key.rsplit(":", 1)[0], int(key.rsplit(":", 1)[1])) in right) for key in chances])
    assert len(right) == 95 and (p == 0).sum() == 1
    summary = json.loads((out / "trials_summary.json").read_text())
    for k in range(1, 6):
        estimate = summary["task"]["pass_hat_k"][str(k)]
        assert estimate["low"] <= float((p**k).mean()) <= estimate["high"], (k, estimate, (p**k).mean())
        assert document["pass_hat_k"]["task"][str(k)] == estimate["value"]
    expected_flip = 1 - p**20 - (1 - p) ** 20
    sd = math.sqrt(float((expected_flip * (1 - expected_flip)).sum())) / p.size
    assert abs(summary["task"]["flip_rate"] - expected_flip.mean()) <= 4 * sd
    assert document["flip_rate"]["task"] == summary["task"]["flip_rate"]
    assert set(summary["task_type"]) >= {"Single-Tool", "Multi-Tool", "Clarify", "Chat"}

    single = tmp_path / "k1"  # trial 1 of K is what a single run writes, metric.json in the published format
    _eval("--dataset", dataset, "--model", spec, "--out", str(single))
    assert (out / "metric.json").read_text() == (single / "metric.json").read_text()
    assert [_comparable(r) for r in first] == [_comparable(r) for r in _jsonl(single / "result.jsonl")]
    assert not (single / "trials.json").exists()

    compared = CliRunner().invoke(app, ["compare", str(out), str(single)], catch_exceptions=False)
    assert compared.exit_code == 0 and "20 trials" in compared.output and "1 trial)" in compared.output


def test_trials_resume_one_session_trial_at_a_time(tmp_path):
    model = f"replay:{DEMO_CANDIDATES}#demo-model"
    out = tmp_path / "run"
    _eval("--model", model, "--out", str(out), "--trials", "2")
    assert len(_jsonl(out / "result.trials.jsonl")) == 6
    more = subprocess.run(  # the same folder, one trial more: only trial 3 runs
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "eval",
            "--model",
            model,
            "--out",
            str(out),
            "--trials",
            "3",
            "--no-progress",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_"))},
    )
    assert more.returncode == 0, more.stderr
    assert "6 session-trials evaluated, 12 already done" in more.stderr
    later = _jsonl(out / "result.trials.jsonl")
    assert [(r["trial"], r["id"]) for r in later] == [(t, f"wild_tool_bench_{i}") for t in (2, 3) for i in range(6)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trials"] == {"trials": 3, "session_trials": 18}
    assert summary["selected_sessions"]["sessions"] == 18
    assert json.loads((out / "trials.json").read_text())["trials"] == 3  # a deterministic replay: nothing flips
    assert json.loads((out / "trials.json").read_text())["flip_rate"] == {"task": 0.0}


# --------------------------------------------------------------------------- cache


def test_a_different_trial_index_never_hits_the_cache(tmp_path):
    model = f"replay:{DEMO_CANDIDATES}#demo-model"
    cache = tmp_path / "cache"
    _eval("--model", model, "--out", str(tmp_path / "one"), "--cache", str(cache))
    paid = json.loads((tmp_path / "one" / "summary.json").read_text())["this_run"]["requests"]
    assert paid > 0 and len(list(cache.rglob("*.json"))) == paid
    _eval("--model", model, "--out", str(tmp_path / "two"), "--cache", str(cache), "--trials", "2")
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    # trial 1 is served from the cache, trial 2 (the same requests, another trial index) is paid again
    assert summary["cache"]["hits"] == paid and summary["cache"]["misses"] == paid
    assert summary["this_run"] == {**summary["this_run"], "requests": paid, "cache_hits": paid}
    entries = [json.loads(p.read_text())["entry"] for p in cache.rglob("*.json")]
    assert sorted({e["trial"] for e in entries}) == [1, 2] and len(entries) == 2 * paid


def _stub_script(reference_dir: Path) -> dict[str, list]:
    return {
        r["session_id"]: r["responses"]
        for r in _jsonl(reference_dir / "candidates.jsonl")
        if r["candidate"] == "oracle"
    }


def _stub_args(reference_dir: Path, server: CountingServer, out: Path, *extra: str) -> list[str]:
    return [
        "--dataset",
        str(reference_dir / "sessions.jsonl"),
        "--model",
        "openai:stub-model",
        "--base-url",
        server.base_url,
        "--out",
        str(out),
        "--no-preflight",
        *extra,
    ]


def test_dry_run_then_cached_rerun_on_the_loopback_server(reference_dir, tmp_path, monkeypatch):
    """The dry run sends nothing and its gold-path estimate matches what the server received; a second run
    with the cache sends nothing and writes the same records."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "no-encodings"))  # the approximation, offline
    sessions, script = load_dataset(reference_dir / "sessions.jsonl"), _stub_script(reference_dir)
    cache, first, second = tmp_path / "cache", tmp_path / "first", tmp_path / "second"
    with CountingServer(sessions, script) as server:
        output = _eval(
            *_stub_args(reference_dir, server, first, "--dry-run", "--price-input", "1", "--price-output", "2")
        )
        assert server.attempts == [] and not first.exists()
        assert (
            "estimate: 24 sessions; model requests 209 - 3,072 (gold path - step limit; fewer when the model stops early)"
            in output
        )
        assert "counted with chars/4: an approximation" in output
        low_prompt = int(output.split("prompt tokens ")[1].split(" ")[0].replace(",", ""))
        low_reply = int(output.split("reply tokens ")[1].split(" ")[0].replace(",", ""))
        assert f"cost ${(low_prompt + 2 * low_reply) / 1e6:,.4f} - " in output
        _eval(*_stub_args(reference_dir, server, first, "--cache", str(cache)))
        actual = json.loads((first / "summary.json").read_text())["this_run"]
        assert actual["requests"] == 209 == len(server.attempts)  # the oracle follows the gold path: the low end
        assert actual["input_tokens"] == server.prompt_tokens
        assert abs(actual["input_tokens"] - low_prompt) <= 0.01 * low_prompt  # measured: 192,821 against 192,914
        assert actual["output_tokens"] == low_reply
        _eval(*_stub_args(reference_dir, server, second, "--cache", str(cache)))  # the same endpoint (it is in the key)
        assert len(server.attempts) == 209  # not one request more
    summary = json.loads((second / "summary.json").read_text())
    assert summary["this_run"]["requests"] == 0 and summary["this_run"]["cache_hits"] == 209
    assert summary["cache"] == {"dir": str(cache), "hits": 209, "misses": 0, "writes": 0, "rejected": 0}
    a, b = _jsonl(first / "result.jsonl"), _jsonl(second / "result.jsonl")
    assert [_comparable(r) for r in a] == [_comparable(r) for r in b]

    # byte for byte, latencies aside: the served replies keep their keys' order (id, type, function)
    def without_latency(record: dict) -> str:
        return json.dumps([{**t, "latency": None} for t in record["result"]], ensure_ascii=False)

    assert [without_latency(r) for r in a] == [without_latency(r) for r in b]
    assert '"id": "' in without_latency(b[0]) and '{"id": ' in json.dumps(b[0]["result"])
    assert [[t["input_token_count"] for t in r["result"]] for r in a] == [
        [t["input_token_count"] for t in r["result"]] for r in b
    ]
    assert (first / "metric.json").read_text() == (second / "metric.json").read_text()


@pytest.mark.slow
def test_a_killed_run_resumed_with_the_cache_pays_each_request_once(reference_dir, tmp_path):
    """SIGKILL mid-run (twice), then the same command: every request the run needs reaches the server once;
    only a request in flight at a kill (its reply never cached) is sent again, at most --concurrency per kill.
    Without the cache a resumed session would send every request it had paid for again."""
    sessions, script = load_dataset(reference_dir / "sessions.jsonl"), _stub_script(reference_dir)
    out, cache = tmp_path / "run", tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "OPENAI_"))}
    env.update(OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    with CountingServer(sessions, script, latency=0.03) as server:
        command = [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "eval",
            "--no-progress",
            "--no-trace",
            "--concurrency",
            "2",
        ]
        command += _stub_args(reference_dir, server, out, "--cache", str(cache))
        rng = random.Random(26)
        for _ in range(2):
            process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wanted = len(server.attempts) + rng.randint(20, 50)
            deadline = time.monotonic() + 120  # a bound on waiting, not a timing assertion
            while len(server.attempts) < wanted and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        assert len(server.attempts) < 209 and len(_jsonl(out / "result.jsonl")) < 24
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    keys = [(session, index) for session, index, outcome in server.attempts]
    assert {outcome for *_, outcome in server.attempts} == {"ok"}
    assert len(keys) == len(set(keys)) == 209  # each request of the run reached the server, none refused
    assert len(server.repeats) <= 2 * 2  # re-sent: only what was in flight at the two kills
    records = _jsonl(out / "result.jsonl")
    assert len(records) == 24
    assert sum(len(task["latency"]) for r in records for task in r["result"]) == 209
    expected = json.loads(
        next(line for line in open(reference_dir / "expected_metrics.jsonl") if '"candidate": "oracle"' in line)
    )["metric"]
    assert json.loads((out / "metric.json").read_text())["total_info"] == {**expected["total_info"]}


# --------------------------------------------------------------------------- until decided


def _chances_b(reference_dir: Path) -> dict[str, float]:
    rng = random.Random(7)
    ids = [s["id"] for s in _jsonl(reference_dir / "sessions.jsonl")]
    return {f"{s}:{t}": round(rng.uniform(0.2, 0.8), 3) for s in ids for t in range(4)}


@pytest.fixture(scope="module")
def baseline_b(reference_dir, tmp_path_factory) -> Path:
    """Candidate B's run with 3 trials, the baseline both until-decided tests compare against (they only read
    it): made once for the module, as each test made the same run before."""
    stochastic.register()
    folder = tmp_path_factory.mktemp("baseline")
    b = stochastic.write_config(folder / "b.json", reference_dir, seed=11, p=0.5, tasks=_chances_b(reference_dir))
    dataset = str(reference_dir / "sessions.jsonl")
    _eval("--dataset", dataset, "--model", b, "--out", str(folder / "B"), "--trials", "3")
    return folder / "B"


def _candidate_a(reference_dir: Path, tmp_path: Path, gap: float) -> str:
    """Candidate A: B's chance per task raised by ``gap`` (capped at 1), another seed."""
    better = {key: min(1.0, value + gap) for key, value in _chances_b(reference_dir).items()}
    return stochastic.write_config(tmp_path / "a.json", reference_dir, seed=12, p=0.5, tasks=better)


@pytest.mark.slow
def test_until_decided_finds_a_ten_point_gap_with_fewer_requests_than_ten_full_trials(
    reference_dir, tmp_path, baseline_b
):
    a = _candidate_a(reference_dir, tmp_path, 0.10)
    dataset = str(reference_dir / "sessions.jsonl")
    output = _eval(
        "--dataset", dataset, "--model", a, "--out", str(tmp_path / "A"), "--until-decided",
        "--baseline", str(baseline_b), "--max-trials", "10",
    )  # fmt: skip
    document = json.loads((tmp_path / "A" / "until_decided.json").read_text())
    assert document["decision"] == "A better" and document["low"] > 0
    assert document["session_trials"] < document["full_session_trials"] == 240
    assert document["requests"] < document["full_requests_estimate"]
    assert f"model requests: {document['requests']}, about {document['full_requests_estimate']}" in output
    assert len(document["rounds"]) >= 2 and document["rounds"][0]["session_trials"] == 24
    rounds = len(document["rounds"])
    assert f"round {rounds} of {rounds}: its run summary below counts this round's session-trials" in output


@pytest.mark.slow
def test_until_decided_says_within_noise_for_equal_candidates_at_the_budget(reference_dir, tmp_path, baseline_b):
    a = _candidate_a(reference_dir, tmp_path, 0.0)
    dataset = str(reference_dir / "sessions.jsonl")
    output = _eval(
        "--dataset", dataset, "--model", a, "--out", str(tmp_path / "A"), "--until-decided",
        "--baseline", str(baseline_b), "--max-trials", "4",
    )  # fmt: skip
    document = json.loads((tmp_path / "A" / "until_decided.json").read_text())
    assert document["decision"] == "within noise" and document["low"] < 0 < document["high"]
    assert "until decided: within noise" in output
    counts = {}
    for record in _jsonl(tmp_path / "A" / "result.jsonl") + _jsonl(tmp_path / "A" / "result.trials.jsonl"):
        counts[record["id"]] = counts.get(record["id"], 0) + 1
    assert max(counts.values()) == 4 and document["session_trials"] == sum(counts.values()) <= 96


def test_trial_options_are_checked_before_anything_runs(tmp_path):
    model = f"replay:{DEMO_CANDIDATES}#demo-model"
    out = str(tmp_path / "x")
    assert "--until-decided needs --baseline" in _eval("--model", model, "--out", out, "--until-decided", code=2)
    assert "only with --until-decided" in _eval("--model", model, "--out", out, "--max-trials", "3", code=2)
    refused = _eval("--model", model, "--out", out, "--trials", "2", "--langsmith-dataset", "d", code=2)
    assert "--trials cannot be combined with --langsmith-dataset" in refused  # --workers, --server: issue 42
    assert not Path(out).exists()


# --------------------------------------------------------------------------- report


def test_the_report_shows_trials_and_baselines_as_floor_rows(tmp_path):
    trials, floor = tmp_path / "trials", tmp_path / "floor"
    _eval("--model", f"replay:{DEMO_CANDIDATES}#demo-model", "--out", str(trials), "--trials", "2")
    _eval("--model", "baseline:chat", "--out", str(floor))
    report = tmp_path / "report"
    done = CliRunner().invoke(app, ["report", str(trials), str(floor), "--out", str(report)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    from wildtoolbench.reports.runs import load_runs
    from wildtoolbench.reports.tables import FLOOR_GROUP, leaderboard_rows

    runs, _ = load_runs([trials, floor])
    rows = {row.model: row for row in leaderboard_rows(runs) if row.source == "run"}
    assert rows["baseline:chat"].group == FLOOR_GROUP and rows["baseline:chat"].rank is None
    assert "a floor: a baseline without a model" in rows["baseline:chat"].unranked
    assert rows["demo-model"].group != FLOOR_GROUP
    text = (report / "report.md").read_text(encoding="utf-8")
    section = text.split("## Repeated trials", 1)[1].split("\n## ", 1)[0]
    assert "| demo-model | 2 | 66.67% \\[66.7, 66.7\\] | 66.67% |" in section and "baseline:chat" not in section
    assert "### Flip rate by task type" in section and "| Chat | 0.00% |" in section
    svg = (report / "plots" / "passk.svg").read_text(encoding="utf-8")
    assert "pass^2: 66.67" in svg
    assert "plot-passk" in (report / "index.html").read_text(encoding="utf-8")
