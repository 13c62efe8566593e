"""``wtb eval`` defaults: the bundled demo dataset, ``runs/<model>/<dataset stem>``, and the
provider's advertised concurrency (1 for the local llama.cpp server)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import wildtoolbench.runner
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH, bundled_demo_sessions
from wildtoolbench.cli import app
from wildtoolbench.common.concurrency import default_concurrency
from wildtoolbench.evaluation.plan import default_out_dir
from wildtoolbench.nodes.evaluation.context import EvaluationContext


def test_bundled_demo_is_the_package_data_file():
    path = bundled_demo_sessions()
    assert path.samefile(SESSIONS_PATH)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 6


def test_default_out_dir_names_model_and_dataset(monkeypatch):
    monkeypatch.delenv("WTB_MODEL", raising=False)
    monkeypatch.delenv("WTB_MODEL_NAME", raising=False)
    monkeypatch.delenv("WTB_LANG", raising=False)
    data = Path("/data/my_sessions.jsonl")
    tag = hashlib.sha256(b"/data/my_sessions.jsonl").hexdigest()[:8]
    assert default_out_dir(EvaluationContext(), data) == Path(f"runs/local/my_sessions-{tag}")
    assert default_out_dir(EvaluationContext(model="openai:gpt-4o-mini"), data) == Path(
        f"runs/gpt-4o-mini/my_sessions-{tag}"
    )
    assert default_out_dir(EvaluationContext(model="openai:meta/llama 3"), data) == Path(
        f"runs/meta_llama_3/my_sessions-{tag}"
    )
    assert default_out_dir(EvaluationContext(model="replay:/x/c.jsonl#oracle"), data) == Path(
        f"runs/oracle/my_sessions-{tag}"
    )
    # The bundled demo and the official dataset name one file each: no hash.
    assert default_out_dir(EvaluationContext(), bundled_demo_sessions()) == Path("runs/local/demo_sessions")
    assert default_out_dir(EvaluationContext(), Path("/cache/x/Wild-Tool-Bench.jsonl"), name="wildtoolbench") == Path(
        "runs/local/wildtoolbench"
    )
    # A run directory holds one language side.
    assert default_out_dir(EvaluationContext(language="zh"), data) == Path(f"runs/local/my_sessions-{tag}-zh")


def test_default_out_dirs_of_same_named_datasets_differ(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "a" / "sessions.jsonl", tmp_path / "b" / "sessions.jsonl"
    context = EvaluationContext(model="replay:/x/c.jsonl#oracle")
    assert default_out_dir(context, first) != default_out_dir(context, second)
    assert default_out_dir(context, first).parent == default_out_dir(context, second).parent == Path("runs/oracle")
    # The same file, written relative or absolute, keeps its folder (resume works either way).
    assert default_out_dir(context, Path("a/sessions.jsonl")) == default_out_dir(context, first)


def test_default_concurrency_follows_the_provider():
    assert default_concurrency("local") == 1
    assert default_concurrency("gguf:/models/other.gguf") == 1
    assert default_concurrency("openai:gpt-4o-mini") == 4
    assert default_concurrency("replay:/x/c.jsonl#oracle") == 4


def test_eval_without_dataset_and_out_runs_the_demo_into_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app, ["eval", "--model", f"replay:{CANDIDATES_PATH}#demo-model", "--no-progress"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "runs" / "demo-model" / "demo_sessions"
    records = [json.loads(line) for line in (out / "result.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == [f"wild_tool_bench_{i}" for i in range(6)]
    assert {r["model_name"] for r in records} == {"demo-model"}
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    # demo-model's scripted mistakes (tests/unit/bench/test_demo_data.py): 4 wrong actions and 4 wrong arguments.
    assert metric["total_info"]["task"]["correct_count"] == 16 and metric["total_info"]["task"]["total_count"] == 24
    assert "outputs in runs/demo-model/demo_sessions/" in result.output


@pytest.mark.parametrize(("argv", "expected"), [([], 1), (["--concurrency", "3"], 3)])
def test_eval_passes_the_default_or_given_concurrency(tmp_path, monkeypatch, argv, expected):
    seen = {}

    def fake_run_eval(sessions, context, out, **kwargs):
        seen.update(kwargs, out=out, model=context.model)
        raise RuntimeError("stopped by the test")

    monkeypatch.setattr(wildtoolbench.runner, "run_eval", fake_run_eval)
    monkeypatch.setattr("wildtoolbench.evaluation.plan.check_configuration", lambda context: None)  # no GGUF file here
    result = CliRunner().invoke(
        app, ["eval", "--model", "gguf:/nowhere/model.gguf", "--out", str(tmp_path / "o"), "--limit", "1", *argv]
    )
    assert result.exit_code == 1 and "stopped by the test" in result.output
    assert seen["concurrency"] == expected and seen["model"] == "gguf:/nowhere/model.gguf"


def test_resume_refuses_results_of_another_dataset(tmp_path):
    """Session ids repeat across datasets, so a directory remembers which file (and version) its results are for."""
    oracle = f"replay:{CANDIDATES_PATH}#oracle"
    lines = SESSIONS_PATH.read_text(encoding="utf-8").splitlines()
    first, other = tmp_path / "first.jsonl", tmp_path / "other.jsonl"
    first.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    other.write_text("\n".join(lines[3:]) + "\n", encoding="utf-8")
    out = tmp_path / "run"

    def run(dataset, *extra):
        return CliRunner().invoke(
            app,
            [
                "eval",
                "--dataset",
                str(dataset),
                "--model",
                oracle,
                "--out",
                str(out),
                "--no-progress",
                "--no-trace",
                "--limit",
                "1",
                *extra,
            ],
        )

    assert run(first).exit_code == 0
    recorded = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert recorded["dataset"] == str(first.resolve()) and recorded["model_name"] == "oracle"
    assert len(recorded["dataset_sha256"]) == 64
    assert run(first).exit_code == 0  # same file, same content: resumes

    refused = run(other)
    assert refused.exit_code == 1
    assert f"holds results for another dataset, {first.resolve()}" in refused.output
    assert "use --overwrite or another --out directory" in refused.output
    assert [json.loads(line)["id"] for line in (out / "result.jsonl").read_text().splitlines()] == ["wild_tool_bench_0"]

    first.write_text("\n".join(lines[1:4]) + "\n", encoding="utf-8")  # the same path, new content
    edited = run(first)
    assert edited.exit_code == 1 and f"an earlier version of {first.resolve()}" in edited.output

    assert run(other, "--overwrite").exit_code == 0
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["dataset"] == str(other.resolve())
