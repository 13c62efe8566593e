"""Settings and run identity of ``graph:`` and ``langchain:`` candidates (issue 23 item 3, docs/settings.md §7.8,
docs/evaluation.md §8.6).

Every option either applies or is refused (exit 2, nothing written), and ``run.json`` records only the
settings that applied; ``--timeout`` bounds a one-request graph's call as a whole; a resumed run whose
agent changed (its model's sampling settings, or the model a node builds at run time) never reuses
the earlier records.
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from typer.testing import CliRunner

from tests.support.agent_runs import AGENTS, agent_env, jsonl, run_over_server, script
from tests.support.openai_stub import ScriptedServer
from wildtoolbench.cli import app
from wildtoolbench.models.providers import langchain as langchain_provider
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset


def _sessions(reference_dir, count):
    return load_dataset(reference_dir / "sessions.jsonl")[:count]


def _eval(reference_dir, out, *extra):
    args = ["eval", "--dataset", str(reference_dir / "sessions.jsonl"), "--out", str(out), "--no-progress", *extra]
    return CliRunner().invoke(app, args, catch_exceptions=False)


@pytest.mark.parametrize(
    ("option", "value"), [("--temperature", "0.7"), ("--base-url", "http://127.0.0.1:9/v1")], ids=["temp", "url"]
)
@pytest.mark.parametrize("attr", ["langchain_agent", "one_request_graph"])
def test_model_options_are_refused_for_graph_candidates(reference_dir, tmp_path, option, value, attr):
    out = tmp_path / "run"
    result = _eval(reference_dir, out, "--model", f"graph:{AGENTS}:{attr}", option, value)
    assert result.exit_code == 2, result.output
    assert f"error: {option} does not apply to graph:{AGENTS}:{attr}: a graph: candidate brings its own" in (
        result.output
    )
    assert f"drop {option}" in result.output
    assert not out.exists()


def test_temperature_is_refused_for_a_langchain_class_that_takes_none(reference_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(langchain_provider.INTEGRATIONS, "notemp", langchain_provider.INTEGRATIONS.get("notemp"))
    langchain_provider.register_integration("notemp", "tests.support.agent_shapes", "NoTemperatureChat")
    out = tmp_path / "run"
    result = _eval(reference_dir, out, "--model", "langchain:notemp:m1", "--temperature", "0.3", "--no-preflight")
    assert result.exit_code == 2, result.output
    assert "error: --temperature does not apply to langchain:notemp:m1: NoTemperatureChat takes no temperature" in (
        result.output
    )
    assert not out.exists()


def test_run_json_records_only_the_settings_that_applied(reference_dir, tmp_path, monkeypatch):
    """A graph: run records the harness's settings (the timeout) and no temperature or base URL, even when
    WTB_TEMPERATURE is set; an openai: run records both."""
    monkeypatch.setenv("WTB_TEMPERATURE", "0.4")
    sessions = _sessions(reference_dir, 1)
    run_over_server(reference_dir, "oracle", f"graph:{AGENTS}:langchain_agent", tmp_path / "graph", sessions=sessions)
    run_over_server(reference_dir, "oracle", "openai:oracle", tmp_path / "openai", sessions=sessions)
    graph_settings = json.loads((tmp_path / "graph" / "run.json").read_text(encoding="utf-8"))["settings"]
    openai_settings = json.loads((tmp_path / "openai" / "run.json").read_text(encoding="utf-8"))["settings"]
    assert "temperature" not in graph_settings and "base_url" not in graph_settings
    assert graph_settings["timeout"] == openai_settings["timeout"] == 120.0
    assert openai_settings["temperature"] == 0.4 and openai_settings["base_url"].startswith("http://127.0.0.1:")
    summary = json.loads((tmp_path / "graph" / "summary.json").read_text(encoding="utf-8"))
    assert "temperature" not in json.dumps(summary)


def test_a_hung_endpoint_inside_a_one_request_graph_is_an_infrastructure_error(reference_dir, tmp_path):
    """--timeout 2 is the deadline of the graph's whole call: the hung request is retried, then recorded as an
    infrastructure error (nothing scored); a resumed run evaluates the session."""
    spec = f"graph:{AGENTS}:one_request_graph"
    sessions = _sessions(reference_dir, 1)
    faults = {("wild_tool_bench_0", 0): [{"hang": 30}, {"hang": 30}]}
    records, _, _ = run_over_server(
        reference_dir, "oracle", spec, tmp_path, sessions=sessions, faults=faults, timeout=2, max_attempts=2, backoff=0
    )
    assert records == {}
    (error,) = jsonl(tmp_path / "errors.jsonl")
    assert error["attempts"] == 2 and all(e.startswith("timeout") for e in error["errors"]), error
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions, timeout=2)
    assert list(records) == ["wild_tool_bench_0"]
    assert [task["action_name_label"] for task in records["wild_tool_bench_0"]["result"]] == ["correct"] * 4


def _resume_with(reference_dir, spec, out, sessions, model, env=None):
    """Re-run ``spec`` into ``out`` with the agent's model ``model`` (served the ``model`` fixture candidate),
    the records' model name kept (``oracle``), so only the candidate's identity can tell the runs apart."""
    server = ScriptedServer(sessions, script(reference_dir, model))
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        with server, agent_env(server.base_url, model):
            context = EvaluationContext(model=spec, model_name="oracle")
            return asyncio.run(arun_eval(sessions, context, out, progress=False))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_a_graph_whose_node_builds_another_model_never_resumes_old_results(reference_dir, tmp_path):
    """The one-request graph builds its model inside its node (nothing reachable for the identity): the models
    the earlier records saw it call guard the resume; the record of the new model is not written."""
    spec = f"graph:{AGENTS}:one_request_graph"
    sessions = _sessions(reference_dir, 3)
    records, _, _ = run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions[:1])
    assert records["wild_tool_bench_0"]["candidate"]["models"] == ["oracle"]
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["candidate"]["models"] == [] and run["candidate"]["model_specs"] == []
    with pytest.raises(ValueError, match="calling oracle, but it now calls noisy .*use --overwrite"):
        _resume_with(reference_dir, spec, tmp_path, sessions, "noisy")
    assert [r["id"] for r in jsonl(tmp_path / "result.jsonl")] == ["wild_tool_bench_0"]
    # the same model resumes: the other sessions are evaluated, the first kept
    summary = _resume_with(reference_dir, spec, tmp_path, sessions, "oracle")
    assert (summary.evaluated, summary.skipped) == (2, 1)


def test_an_agent_whose_model_settings_changed_is_refused(reference_dir, tmp_path):
    """The same model name with another temperature is another candidate (``model_specs`` of run.json)."""
    spec = f"graph:{AGENTS}:langchain_agent"
    sessions = _sessions(reference_dir, 2)
    run_over_server(reference_dir, "oracle", spec, tmp_path, sessions=sessions[:1])
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["candidate"]["model_specs"] == ["ChatOpenAI model=oracle temperature=0.0"]
    with pytest.raises(ValueError, match="another version of the candidate .*changed: model_specs"):
        _resume_with(reference_dir, spec, tmp_path, sessions, "oracle", env={"WTB_TEST_AGENT_TEMPERATURE": "0.5"})
    assert [r["id"] for r in jsonl(tmp_path / "result.jsonl")] == ["wild_tool_bench_0"]
