"""An added role with its own model that vetoes a planner decision and routes it back to the planner
(docs/generation.md §8), run as a user runs it: ``wtb generate --roles FILE --model critic=SPEC`` in a
subprocess, and ``WTB_ROLES=FILE langgraph dev`` (drawn in Studio, run through the server's API).

The role is ``tests/support/veto_role.py``: one module plus one registration line. Its model and the
built-in roles' are ``scripted:`` files (no network but the loopback dev server).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gen_scripts import session_script
from tests.support.session_factory import make_session
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions

REPO = Path(__file__).resolve().parents[2]
VETO_MODULE = REPO / "tests" / "support" / "veto_role.py"
BUILT_IN = ("user", "planner", "checker", "tool", "agent")
REASON = "ask for the city before calling the weather tool"
FEEDBACK = "Your previous output was rejected. Reason: "


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _setup(tmp_path: Path):
    """A one-line tool list, its planned (ST, CC) session, the role scripts (the planner's first decision
    twice: once vetoed, once accepted) and the critic's replies (a veto, then OK)."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    (plan,) = plan_sessions(load_tool_lists(tools), [("ST", "CC")], seed=5, language="en", year=2025)
    script = session_script(plan.as_state())
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"sessions": {plan.key: script}}), encoding="utf-8")
    script = {**script, "planner": [script["planner"][0], *script["planner"]]}
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({"sessions": {plan.key: script}}), encoding="utf-8")
    critic = tmp_path / "critic.json"
    critic.write_text(json.dumps({"critic": [f"VETO: {REASON}"] + ["OK"] * 20}), encoding="utf-8")
    return tools, plan, roles, critic, plain


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_"))}
    return {**env, "PYTHONPATH": str(REPO)}


def _generate(tools: Path, out: Path, *models: str, roles: Path | None = None) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "wildtoolbench.cli", "generate", "--tools", str(tools), "--out", str(out)]
    args += ["--layers", "2", "--paths", "ST,CC", "--seed", "5", "--year", "2025", "--vague-rate", "0"]
    args += ["--no-trace", "--no-progress", *(["--roles", str(roles)] if roles else [])]
    for model in models:
        args += ["--model", model]
    return subprocess.run(args, cwd=out.parent, env=_env(), capture_output=True, text=True, timeout=300)


def _assert_routed_back(transcript: list[dict], calls: list[dict], critic_spec: str) -> None:
    """The critic vetoed the first planner decision, the planner saw the reason and decided again."""
    planner_humans = [c["request"][-1]["content"] for c in calls if c["role"] == "planner"]
    assert FEEDBACK not in planner_humans[0]
    assert f"{FEEDBACK}{REASON}\n" in planner_humans[1]
    critic_calls = [c for c in calls if c["role"] == "critic"]
    assert len(critic_calls) == len(planner_humans) >= 3 and {c["model"] for c in critic_calls} == {critic_spec}
    (veto,) = [e for e in transcript if e["role"] == "critic"]
    decisions = [e for e in transcript if e["role"] == "planner"]
    assert (veto["target"], veto["verdict"], veto["reason"]) == (decisions[0]["id"], "reject", REASON)
    assert [d["attempt"] for d in decisions[:2]] == [1, 2]


@pytest.mark.slow
def test_wtb_generate_runs_a_role_that_routes_a_vetoed_decision_back_to_the_planner(tmp_path):
    tools, plan, roles, critic, plain = _setup(tmp_path)
    out = tmp_path / "out"
    critic_spec = f"scripted:{critic}"
    done = _generate(tools, out, f"scripted:{roles}", f"critic={critic_spec}", roles=VETO_MODULE)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "generated 1 session(s), 0 failed" in done.stdout
    folder = out / "sessions" / plan.key
    raw = json.loads((folder / "raw_transcript.json").read_text(encoding="utf-8"))
    calls = [c for role in ("planner", "critic") for c in _jsonl(folder / "requests" / f"{role}.jsonl")]
    _assert_routed_back(raw, calls, critic_spec)
    lean = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
    vetoed = next(e for e in raw if e["role"] == "planner")["id"]
    assert vetoed not in {e["id"] for e in lean} and not [e for e in lean if e["role"] == "critic"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["context"]["models"]["critic"] == critic_spec
    assert manifest["context"]["models"]["planner"] == f"scripted:{roles}"

    # The final session is the one generated without the critic.
    plain_out = tmp_path / "plain-out"
    again = _generate(tools, plain_out, f"scripted:{plain}")
    assert again.returncode == 0, again.stderr + again.stdout
    assert _jsonl(out / "sessions.jsonl") == _jsonl(plain_out / "sessions.jsonl")
    assert not (plain_out / "sessions" / plan.key / "requests" / "critic.jsonl").exists()


@pytest.mark.slow
def test_langgraph_dev_draws_and_runs_the_role_named_in_wtb_roles(tmp_path):
    if importlib.util.find_spec("langgraph_api") is None:
        message = "langgraph-cli[inmem] is not installed (it is in the test extra)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from langgraph_sdk import get_client

    from tests.support.langgraph_dev import LangGraphDev
    from wildtoolbench.bench.generation import assemble_session, session_problems

    _tools, plan, roles, critic, _plain = _setup(tmp_path)
    critic_spec = f"scripted:{critic}"
    context = {
        "models": {**dict.fromkeys(BUILT_IN, f"scripted:{roles}"), "critic": critic_spec},
        "vague_answer_rate": 0.0,
    }

    async def check(url: str) -> dict:
        client = get_client(url=url)
        (assistant,) = await client.assistants.search(graph_id="generation")
        drawn = await client.assistants.get_graph(assistant["assistant_id"])
        assert "critic" in {node["id"] for node in drawn["nodes"]}
        edges = {(edge["source"], edge["target"]) for edge in drawn["edges"]}
        assert {("planner", "critic"), ("critic", "checker"), ("critic", "planner"), ("critic", "__end__")} <= edges
        return await client.runs.wait(None, "generation", input=plan.as_state(), context=context, raise_error=True)

    deployment = {  # the deployer's settings (docs/settings.md §8): script files in this test's folder only
        "WTB_ROLES": str(VETO_MODULE),
        "WTB_SERVER_MODELS": "scripted:*",
        "WTB_SERVER_FILES": str(tmp_path.resolve()),
    }
    with LangGraphDev(tmp_path / "logs", env=deployment) as server:
        output = asyncio.run(check(server.start()))
    assert output["status"] == "done", output.get("failure_reason")
    _assert_routed_back(output["transcript"], output["calls"], critic_spec)
    assert session_problems(output["tasks"]) == []
    session = assemble_session(
        "wild_tool_bench_0", env_info=output["env_info"], tools=output["tools"], tasks=output["tasks"]
    )
    assert session["english_task_types"] == ["Single-Tool", "Chat"]
