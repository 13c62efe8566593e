"""The guides' "Adding a role" and "Adding a provider" run as written (issue 11; docs/guides/).

The Python blocks are taken from the README verbatim. The role example runs with scripted models
in place of the API models of its command line (no network here); everything else is as written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gen_scripts import session_script
from tests.support.session_factory import make_session
from tests.support.user_docs import user_docs_text
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.generation.registry import unregister_role

REPO = Path(__file__).resolve().parents[2]


def _section(title: str) -> str:
    """The section ``title`` (a ``##`` or ``###`` heading) of the README or a guide, up to the next heading."""
    text = user_docs_text()
    heading = re.search(rf"^#{{2,3}} {re.escape(title)}\n", text, flags=re.M)
    start = heading.end()
    end = re.search(r"^#{1,3} ", text[start:], flags=re.M)
    return text[heading.start() : start + end.start()] if end else text[heading.start() :]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


@pytest.fixture(autouse=True)
def _clean():
    scripted.reset()
    yield
    unregister_role("critic")
    scripted.reset()


def test_readme_adding_a_role(tmp_path):
    section = _section("Adding a role")
    (module,) = _blocks(section, "python")
    (command,) = _blocks(section, "bash")
    (tmp_path / "critic.py").write_text(module, encoding="utf-8")
    argv = command.replace("\\\n", " ").split()
    assert argv[:2] == ["wtb", "generate"] and "--roles" in argv and "critic.py" in argv
    # The command as written, with a local tool list and scripted models for the API models.
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    plans = plan_sessions(load_tool_lists(tools), select_type_paths(2, None, 2, 0), seed=0)
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    critic = tmp_path / "critic-replies.json"
    critic.write_text(json.dumps({"critic": ["OK"] * 40}), encoding="utf-8")
    argv = [a.replace("wildtoolbench-en", str(tools)) for a in argv]
    argv = [f"scripted:{roles}" if a == "openai:gpt-4o-mini" else a for a in argv]
    argv = [f"critic=scripted:{critic}" if a == "critic=openai:gpt-4o" else a for a in argv]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *argv[1:], "--seed", "0", "--vague-rate", "0", "--no-trace"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "generated 2 session(s), 0 failed" in done.stdout
    out = tmp_path / "runs" / "critic"
    for plan in plans:
        calls = (out / "sessions" / plan.key / "requests" / "critic.jsonl").read_text(encoding="utf-8").splitlines()
        planner = (out / "sessions" / plan.key / "requests" / "planner.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(calls) == len(planner) > 0
        assert json.loads(calls[0])["model"] == f"scripted:{critic}"
    assert (
        json.loads((out / "manifest.json").read_text(encoding="utf-8"))["context"]["models"]["critic"]
        == f"scripted:{critic}"
    )


def test_readme_adding_a_provider(tmp_path):
    section = _section("Adding a provider")
    (module,) = _blocks(section, "python")
    (entry_point,) = _blocks(section, "toml")
    name, target = re.search(r'^(\w+) = "([\w.]+)"$', entry_point, flags=re.M).groups()
    site = tmp_path / "site"
    site.mkdir()
    (site / f"{target}.py").write_text(module, encoding="utf-8")
    info = site / "my_provider-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-provider\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[wildtoolbench.providers]\n{name} = {target}\n", encoding="utf-8")
    command = re.search(r"`(wtb eval --model [^`]+)`", section).group(1).split()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *command[1:], "--out", str(out), "--no-progress", "--no-trace"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in (out / "result.jsonl").read_text(encoding="utf-8").splitlines()]
    assert record["model_name"] == "hello"
    assert record["result"][0]["inference_log"]["step_0"]["inference_output"]["content"] == "hello"
    # The provider's own check runs before any session.
    empty = subprocess.run(
        [
            sys.executable,
            "-m",
            "wildtoolbench.cli",
            "eval",
            "--model",
            f"{name}: ",
            "--out",
            str(tmp_path / "x"),
            "--no-progress",
            "--no-trace",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert empty.returncode == 2 and not (tmp_path / "x").exists()
