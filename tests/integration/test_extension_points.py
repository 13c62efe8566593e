"""Extension points (issue 11): an added role with its own model, a provider from an entry point, the wheel's contents."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.gen_scripts import session_script
from tests.support.session_factory import make_session
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions
from wildtoolbench.cli import app
from wildtoolbench.graphs.generation import compile_graph
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.registry import added_roles, model_roles, unregister_role
from wildtoolbench.runner.generation import generate_session

REPO = Path(__file__).resolve().parents[2]
CRITIC_MODULE = REPO / "tests" / "support" / "critic_role.py"
ROLES = ("user", "planner", "tool", "agent", "checker")


@pytest.fixture(autouse=True)
def _clean_registry():
    scripted.reset()
    yield
    unregister_role("critic")
    scripted.reset()


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _setup(tmp_path: Path) -> tuple[Path, Path, Path, int]:
    """A one-line tool list, the scripted role file of its planned session, and a critic script."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    (plan,) = plan_sessions(load_tool_lists(tools), [("ST", "CC")], seed=5, language="en", year=2025)
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({"sessions": {plan.key: session_script(plan.as_state())}}), encoding="utf-8")
    critic = tmp_path / "critic.json"
    critic.write_text(json.dumps({"critic": [f"opinion {i}" for i in range(20)]}), encoding="utf-8")
    return tools, roles, critic, plan


def test_an_added_role_runs_with_its_model_from_the_cli_and_its_requests_are_captured(tmp_path):
    tools, roles, critic, plan = _setup(tmp_path)
    out = tmp_path / "out"
    args = [
        "generate",
        "--tools",
        str(tools),
        "--layers",
        "2",
        "--paths",
        "ST,CC",
        "--seed",
        "5",
        "--year",
        "2025",
        "--out",
        str(out),
        "--vague-rate",
        "0",
        "--no-trace",
        "--no-progress",
        "--roles",
        str(CRITIC_MODULE),
        "--model",
        f"scripted:{roles}",
        "--model",
        f"critic=scripted:{critic}",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "generated 1 session(s), 0 failed" in result.output
    folder = out / "sessions" / plan.key
    critic_calls = _jsonl(folder / "requests" / "critic.jsonl")
    planner_calls = _jsonl(folder / "requests" / "planner.jsonl")
    assert len(critic_calls) == len(planner_calls) >= 2  # the critic sits after every planner decision
    assert {c["model"] for c in critic_calls} == {f"scripted:{critic}"}
    assert [c["response"] for c in critic_calls] == [f"opinion {i}" for i in range(len(critic_calls))]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["context"]["models"]["critic"] == f"scripted:{critic}"
    assert manifest["context"]["models"]["planner"] == f"scripted:{roles}"


def test_an_added_role_takes_its_model_from_the_context(tmp_path):
    tools, roles, critic, plan = _setup(tmp_path)
    from tests.support import critic_role  # noqa: F401  (its registration line runs on import)

    if "critic" not in [r.name for r in added_roles()]:  # imported earlier in this process: register again
        import importlib

        importlib.reload(critic_role)
    assert "critic" in model_roles()
    models = {**dict.fromkeys(ROLES, f"scripted:{roles}"), "critic": f"scripted:{critic}"}
    outcome = asyncio.run(generate_session(plan, Context(models=models, vague_answer_rate=0.0), graph=compile_graph()))
    assert outcome.status == "done", outcome.reason
    calls = [c for c in outcome.state["calls"] if c["role"] == "critic"]
    assert calls and {c["model"] for c in calls} == {f"scripted:{critic}"}


def test_an_unknown_role_in_model_is_a_configuration_error(tmp_path):
    tools, roles, _critic, _plan = _setup(tmp_path)
    result = CliRunner().invoke(
        app,
        [
            "generate",
            "--tools",
            str(tools),
            "--layers",
            "2",
            "--out",
            str(tmp_path / "o"),
            "--model",
            "critic=scripted:x",
        ],
    )
    assert result.exit_code == 2
    assert "--model names unknown role(s) critic" in result.output
    assert not (tmp_path / "o").exists()


PROVIDER_MODULE = '''
"""A provider package seen only through its entry point (wildtoolbench.providers)."""
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class EchoModel(BaseChatModel):
    name_seen: str = ""

    @property
    def _llm_type(self):
        return "echo-test"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        text = f"echo {self.name_seen}: {messages[-1].content}"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def create(name, settings):
    return EchoModel(name_seen=name)
'''


def _install_entry_point_package(root: Path) -> None:
    (root / "wtb_echo_provider.py").write_text(PROVIDER_MODULE, encoding="utf-8")
    info = root / "wtb_echo_provider-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wtb-echo-provider\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[wildtoolbench.providers]\necho = wtb_echo_provider\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def test_a_provider_exposed_only_through_an_entry_point_is_usable_as_model_name(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install_entry_point_package(site)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    env.pop("WTB_MODEL", None)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "wildtoolbench.cli",
        "eval",
        "--model",
        "echo:x",
        "--limit",
        "1",
        "--out",
        str(out),
        "--no-progress",
        "--no-trace",
    ]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (record,) = _jsonl(out / "result.jsonl")
    assert record["model_name"] == "x"
    first = record["result"][0]["inference_log"]["step_0"]["inference_output"]
    assert first["content"].startswith("echo x: ")
    # Without the package on the path the prefix is unknown: a configuration error, nothing written.
    env["PYTHONPATH"] = str(REPO)
    missing = subprocess.run(
        [*cmd[:-4], "--out", str(tmp_path / "none"), "--no-progress", "--no-trace"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2
    assert "unknown model provider 'echo'" in missing.stderr
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_the_wheel_holds_no_test_server_stub_or_benchmark(tmp_path):
    source = tmp_path / "src"  # a copy of the tracked files: no build/ folder of an earlier build leaks in
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((REPO / name).read_bytes())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"wildtoolbench"}  # one import name (docs/architecture.md §4): nothing else in site-packages
    forbidden = ("openai_stub", "langsmith_stub", "paths_reference", "perf.py", "MaterialisedPathTracker")
    assert not [n for n in names if any(f in n for f in forbidden)]
    assert "wildtoolbench/bench/paths.py" in names and "wildtoolbench/cli/eval.py" in names
    assert "wildtoolbench/prompts/en/planner.md" in names and "wildtoolbench/graphs/evaluation.py" in names
    paths_module = zipfile.ZipFile(wheel).read("wildtoolbench/bench/paths.py").decode("utf-8")
    assert "def enumerate_paths" not in paths_module and "class MaterialisedPathTracker" not in paths_module


def test_the_demo_files_ship_with_the_package():
    assert SESSIONS_PATH.is_file() and CANDIDATES_PATH.is_file()
