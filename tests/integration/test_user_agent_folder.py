"""A user's own agent folder beside the installed package (issue 36, acceptance 1): files named as in most
LangGraph projects (``prompts.py``, ``models.py``, ``nodes.py``, ``graphs.py``, ``bench.py``, ``state.py``) and a
``wtb/`` package, with an agent factory ``my_agent.py:make_agent`` that imports a name from each.

The same factory runs from the command line (``wtb eval --model graph:my_agent.py:make_agent``, working
directory the folder) and from Python (``wildtoolbench.evaluate(make_agent, ...)``, the function object),
against the loopback server replaying a fixture candidate; both runs' metrics equal the ``openai:`` run of
the same replies, and the records' results are the same.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.agent_runs import comparable, jsonl, script
from tests.support.openai_stub import ScriptedServer
from wildtoolbench.runner import load_dataset

WTB = Path(sys.executable).with_name("wtb")

FILES = {
    "prompts.py": 'SYSTEM_PROMPT = ""  # an empty system prompt: the agent sends the harness\'s messages only\n',
    "models.py": textwrap.dedent(
        """\
        import os

        from langchain_openai import ChatOpenAI


        def make_model():
            return ChatOpenAI(
                model=os.environ["USER_AGENT_MODEL"],
                base_url=os.environ["USER_AGENT_BASE_URL"],
                api_key="test-key",
                temperature=0,
                max_retries=0,
            )
        """
    ),
    "state.py": "from langgraph.graph import MessagesState as AgentState\n",
    "nodes.py": textwrap.dedent(
        """\
        def model_node(model):
            async def call_model(state):
                return {"messages": [await model.ainvoke(state["messages"])]}

            return call_model
        """
    ),
    "graphs.py": textwrap.dedent(
        """\
        from langgraph.graph import END, START, StateGraph
        from langgraph.prebuilt import ToolNode, tools_condition


        def build(state, node, tools):
            builder = StateGraph(state)
            builder.add_node("model", node)
            builder.add_node("tools", ToolNode(tools))
            builder.add_edge(START, "model")
            builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
            builder.add_edge("tools", "model")
            return builder.compile()
        """
    ),
    "bench.py": "NAME = 'my bench'\n",
    "wtb/__init__.py": "VERSION = 'user wtb 0.0'\n",
    "my_agent.py": textwrap.dedent(
        """\
        from bench import NAME
        from graphs import build
        from models import make_model
        from nodes import model_node
        from prompts import SYSTEM_PROMPT
        from state import AgentState
        from wtb import VERSION

        assert NAME and VERSION and SYSTEM_PROMPT == ""


        def make_agent(tools):
            return build(AgentState, model_node(make_model().bind_tools(tools)), tools)
        """
    ),
}


@pytest.fixture
def user_folder(tmp_path):
    folder = tmp_path / "my_project"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _without_name(metric):
    return {key: value for key, value in metric.items() if key != "model_name"}


CANDIDATE = "noisy"


def test_user_folder_agent_from_cli_and_api(reference_dir, user_folder, tmp_path, monkeypatch):
    import wildtoolbench

    dataset = reference_dir / "sessions.jsonl"
    sessions = load_dataset(dataset)
    replies = script(reference_dir, CANDIDATE)
    with ScriptedServer(sessions, replies) as server:
        env = {
            **os.environ,
            "USER_AGENT_MODEL": CANDIDATE,
            "USER_AGENT_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
            "LANGSMITH_TRACING": "false",
        }
        common = ["--dataset", str(dataset), "--no-progress"]
        done = subprocess.run(
            [str(WTB), "eval", "--model", f"openai:{CANDIDATE}", "--base-url", server.base_url,
             "--out", str(tmp_path / "openai"), *common],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        server.use_script(replies)
        done = subprocess.run(
            [str(WTB), "eval", "--model", "graph:my_agent.py:make_agent", "--out", str(tmp_path / "cli"), *common],
            env=env, cwd=user_folder, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

        server.use_script(replies)
        for name in ("USER_AGENT_MODEL", "USER_AGENT_BASE_URL", "OPENAI_API_KEY"):
            monkeypatch.setenv(name, env[name])
        monkeypatch.syspath_prepend(str(user_folder))
        user_modules = ("bench", "graphs", "models", "nodes", "prompts", "state", "wtb", "my_agent")
        for name in user_modules:
            monkeypatch.delitem(sys.modules, name, raising=False)  # the user's modules, not anything else of that name
        try:
            make_agent = importlib.import_module("my_agent").make_agent
            run = wildtoolbench.evaluate(make_agent, dataset, tmp_path / "api", progress=False)
        finally:
            for name in user_modules:
                sys.modules.pop(name, None)  # the user's modules leave with the test

    openai_metric = json.loads((tmp_path / "openai" / "metric.json").read_text())
    cli_metric = json.loads((tmp_path / "cli" / "metric.json").read_text())
    api_metric = json.loads((tmp_path / "api" / "metric.json").read_text())
    assert _without_name(cli_metric) == _without_name(openai_metric)
    assert _without_name(api_metric) == _without_name(openai_metric)
    assert run.metrics == api_metric
    assert cli_metric["model_name"] == api_metric["model_name"] == "my_agent:make_agent"
    assert openai_metric["total_info"]["task"]["correct_count"] < openai_metric["total_info"]["task"]["total_count"]
    expected = {r["id"]: comparable(r) for r in jsonl(tmp_path / "openai" / "result.jsonl")}
    for folder in ("cli", "api"):
        records = {r["id"]: r for r in jsonl(tmp_path / folder / "result.jsonl")}
        assert list(records) == list(expected)
        for session_id, record in records.items():
            assert comparable(record) == expected[session_id], (folder, session_id)
            assert record["candidate"]["kind"] == "agent"
    api_records = jsonl(tmp_path / "api" / "result.jsonl")
    assert api_records[0]["candidate"]["spec"].startswith("graph:object:my_agent:make_agent@")
