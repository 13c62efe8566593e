"""One settings rule for both graphs, and configuration mistakes that fail before the run (issue 10, parts 3-4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.demo_data import CANDIDATES_PATH
from wildtoolbench.cli import app
from wildtoolbench.models.settings import env_value, resolve_settings
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.generation.context import Context

REPO = Path(__file__).resolve().parents[3]
ORACLE = f"replay:{CANDIDATES_PATH}#oracle"


def _clear(monkeypatch, *names):
    for name in names:
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- the rule, both contexts


def test_evaluation_context_explicit_value_wins_even_when_it_equals_the_default(monkeypatch):
    monkeypatch.setenv("WTB_MAX_STEPS", "1")
    monkeypatch.setenv("WTB_TEMPERATURE", "0.7")
    context = EvaluationContext(max_steps=32, temperature=0.0)
    assert (context.max_steps, context.temperature) == (32, 0.0)


def test_evaluation_context_uses_the_variable_when_the_value_is_not_given(monkeypatch):
    monkeypatch.setenv("WTB_MAX_STEPS", "7")
    monkeypatch.setenv("WTB_TEMPERATURE", "0.7")
    monkeypatch.setenv("WTB_MODEL", "openai:gpt-4o-mini")
    context = EvaluationContext()
    assert (context.max_steps, context.temperature, context.model) == (7, 0.7, "openai:gpt-4o-mini")


def test_evaluation_context_defaults_when_neither_is_given(monkeypatch):
    _clear(monkeypatch, "WTB_MAX_STEPS", "WTB_TEMPERATURE", "WTB_MODEL", "WTB_TIMEOUT")
    context = EvaluationContext()
    assert (context.max_steps, context.temperature, context.model, context.timeout) == (32, 0.0, "local", 120.0)


def test_a_variable_that_does_not_convert_names_itself(monkeypatch):
    monkeypatch.setenv("WTB_TIMEOUT", "soon")
    with pytest.raises(ValueError, match=r"WTB_TIMEOUT='soon' is not a valid float"):
        EvaluationContext()
    assert env_value("WTB_NOT_SET_ANYWHERE", int) is None


def test_generation_context_follows_the_same_rule(monkeypatch):
    _clear(monkeypatch, *(f"WTB_{r}_MODEL" for r in ("USER", "PLANNER", "TOOL", "AGENT", "CHECKER", "CRITIC")))
    monkeypatch.setenv("WTB_PLANNER_MODEL", "openai:from-env")
    monkeypatch.setenv("WTB_CRITIC_MODEL", "openai:critic-from-env")
    monkeypatch.setenv("WTB_GEN_TEMPERATURE", "0.2")
    context = Context()
    assert context.model_spec("planner") == "openai:from-env"  # env when the CLI/context is silent
    assert context.model_spec("critic") == "openai:critic-from-env"  # an added role: same rule
    assert context.model_spec("tool") == "local"  # default
    assert context.temperature == 0.2
    explicit = Context(models={"planner": "openai:explicit", "checker": "none"}, temperature=0.7)
    assert explicit.model_spec("planner") == "openai:explicit"  # explicit wins over the variable
    assert explicit.model_spec("checker") == ""  # none = no model (rule checks only)
    assert explicit.temperature == 0.7  # explicit value equal to the default still wins


def test_resolve_settings_leaves_explicit_values_alone():
    context = EvaluationContext(max_steps=5)
    context.max_steps = 9
    resolve_settings(context, environ={"WTB_MAX_STEPS": "1"})
    assert context.max_steps == 9


# --------------------------------------------------------------------------- through the CLI


def test_cli_value_wins_over_the_environment_and_the_run_records_it(tmp_path, monkeypatch):
    monkeypatch.setenv("WTB_MAX_STEPS", "1")
    monkeypatch.setenv("WTB_TEMPERATURE", "0.9")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--model",
            ORACLE,
            "--max-steps",
            "32",
            "--temperature",
            "0",
            "--limit",
            "2",
            "--out",
            str(out),
            "--no-progress",
            "--no-trace",
        ],
    )
    assert result.exit_code == 0, result.output
    settings = json.loads((out / "run.json").read_text(encoding="utf-8"))["settings"]
    assert (settings["max_steps"], settings["temperature"], settings["model"]) == (32, 0.0, ORACLE)
    assert settings["concurrency"] == 4 and settings["tasks"] == 4 and settings["project_version"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"] == settings
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert metric["total_info"]["task"]["correct_count"] == 8


def test_cli_silent_uses_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("WTB_MAX_STEPS", "3")
    monkeypatch.setenv("WTB_TIMEOUT", "77")
    monkeypatch.setenv("WTB_BASE_URL", "https://user:secret-pass@llm.example.com/v1")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["eval", "--model", ORACLE, "--limit", "1", "--out", str(out), "--no-progress", "--no-trace"]
    )
    assert result.exit_code == 0, result.output
    settings = json.loads((out / "run.json").read_text(encoding="utf-8"))["settings"]
    assert (settings["max_steps"], settings["timeout"]) == (3, 77.0)
    assert "secret-pass" not in (out / "run.json").read_text(encoding="utf-8")
    assert settings["base_url"] == "https://[REDACTED]@llm.example.com/v1"


# --------------------------------------------------------------------------- configuration mistakes


def _wtb(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WTB_MODEL", "WTB_BASE_URL"):
        if name not in (env or {}):
            full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("opnai:gpt-4o-mini", "unknown model provider 'opnai'; did you mean 'openai'?"),
        (f"replay:{CANDIDATES_PATH}#demo-modle", "no candidate 'demo-modle'; did you mean 'demo-model'?"),
        ("openai:gpt-4o-mini", "openai:gpt-4o-mini needs an API key for https://api.openai.com/v1: set OPENAI_API_KEY"),
        ("replay:/nowhere/candidates.jsonl#oracle", "replay file not found: /nowhere/candidates.jsonl"),
        ("gpt-4o-mini", "model spec must look like 'provider:name'"),
        (f"replay:{CANDIDATES_PATH}", "replay model spec must look like 'replay:PATH#CANDIDATE'"),
    ],
)
def test_a_configuration_mistake_exits_2_before_any_session_and_writes_nothing(tmp_path, model, message):
    out = tmp_path / "run"
    done = _wtb(tmp_path, "eval", "--model", model, "--out", str(out), "--no-progress", "--no-trace")
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not out.exists()
    assert not (tmp_path / "runs").exists()


def test_after_fixing_the_mistake_every_session_is_evaluated(tmp_path):
    out = tmp_path / "run"
    wrong = _wtb(
        tmp_path,
        "eval",
        "--model",
        f"replay:{CANDIDATES_PATH}#demo-modle",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    )
    assert wrong.returncode == 2 and not out.exists()
    right = _wtb(
        tmp_path,
        "eval",
        "--model",
        f"replay:{CANDIDATES_PATH}#demo-model",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    )
    assert right.returncode == 0, right.stderr
    assert "6 evaluated, 0 already done" in right.stderr.replace("\n", " ")
    assert len((out / "result.jsonl").read_text(encoding="utf-8").splitlines()) == 6


def test_a_remote_endpoint_with_a_key_or_a_local_server_without_one_passes_the_check():
    from wildtoolbench.models import ModelSettings, check_model

    check_model("openai:gpt-4o-mini", ModelSettings(base_url="http://127.0.0.1:8000/v1"))
    check_model("openai:gpt-4o-mini", ModelSettings(api_key="sk-test-key"))


def test_generate_checks_every_role_model_before_any_session(tmp_path):
    tools = tmp_path / "tools.jsonl"
    tools.write_text(
        json.dumps([{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]) + "\n"
    )
    out = tmp_path / "gen"
    done = _wtb(
        tmp_path,
        "generate",
        "--tools",
        str(tools),
        "--layers",
        "1",
        "--out",
        str(out),
        "--model",
        "scripted:/nowhere/roles.json",
        "--no-trace",
    )
    assert done.returncode == 2
    assert "script file not found: /nowhere/roles.json" in done.stderr
    assert not out.exists()
