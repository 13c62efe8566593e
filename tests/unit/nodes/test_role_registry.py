"""The role registry (docs/generation.md §8): built-in roles registered like added ones, the graph wired from
the registry, role defaults, and routes (a role sending a planner decision back with a reason)."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import pytest
from langgraph.graph import END
from langgraph.types import Command

from tests.support.gen_scripts import session_script
from tests.support.session_factory import make_session
from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, streamline
from wildtoolbench.graphs.generation import compile_graph
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.registry import (
    Role,
    default_model_roles,
    find_role,
    judging_roles,
    model_defaults,
    model_roles,
    plain_edges,
    register_role,
    registered_roles,
    role_model_spec,
    send_back,
    unregister_role,
)
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.runner.generation import generate_session

BUILT_IN = ("user", "planner", "checker", "tool", "agent")
FEEDBACK = "Your previous output was rejected. Reason: "


@pytest.fixture(autouse=True)
def _clean():
    scripted.reset()
    yield
    for name in ("critic", "quiet", "wanderer"):
        unregister_role(name)
    scripted.reset()


def _plan(tmp_path: Path):
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    (plan,) = plan_sessions(load_tool_lists(tools), [("ST", "CC")], seed=5, language="en", year=2025)
    return plan


def _context(roles_file: Path, **models: str) -> Context:
    return Context(
        models={**dict.fromkeys(BUILT_IN, f"scripted:{roles_file}"), **models}, vague_answer_rate=0.0, max_retries=3
    )


def _veto_role() -> Role:
    from tests.support import veto_role

    importlib.reload(veto_role)  # its registration line runs again (a test before may have removed it)
    return find_role("critic")


def test_the_built_in_roles_are_registered_entries_like_any_role():
    roles = {role.name: role for role in registered_roles()}
    assert tuple(roles)[:6] == (*BUILT_IN, "tool_checker")
    assert all(isinstance(role, Role) and role.wired for role in roles.values())
    assert model_roles() == BUILT_IN  # tool_checker judges with the checker's model, it has none of its own
    assert judging_roles() == ("checker", "tool_checker")
    assert default_model_roles() == BUILT_IN
    assert model_defaults() == dict.fromkeys(BUILT_IN, "local")
    assert plain_edges() == {"user": "planner", "planner": "checker", "tool": "tool_checker"}
    assert [name for name, role in roles.items() if role.start] == ["user"]
    assert dict(roles["checker"].branches) == {"run tools": "tool", "write": "agent", "retry": "planner", "fail": END}
    assert roles["tool_checker"].node is roles["checker"].node


def test_the_graph_is_wired_from_the_registry():
    drawn = compile_graph([]).get_graph()
    edges = {(e.source, e.target) for e in drawn.edges}
    expected = {("__start__", "user")}
    for role in registered_roles():
        if role.then:
            expected.add((role.name, role.then))
        expected |= {(role.name, target) for target in (role.branches or {}).values()}
    assert edges == expected
    assert set(drawn.nodes) == {"__start__", "__end__", *(role.name for role in registered_roles())}


def test_a_built_in_role_is_replaced_through_register_role(tmp_path):
    plan = _plan(tmp_path)
    roles_file = tmp_path / "roles.json"
    roles_file.write_text(json.dumps({"sessions": {plan.key: session_script(plan.as_state())}}), encoding="utf-8")
    original = find_role("planner")
    seen: list[int] = []

    async def counting_planner(state, runtime):
        seen.append(len(state.tasks))
        return await original.node(state, runtime)

    register_role(Role("planner", counting_planner, calls_model=True, then="checker"))
    try:
        outcome = asyncio.run(generate_session(plan, _context(roles_file), compile_graph([])))
    finally:
        register_role(original)
    assert outcome.status == "done", outcome.reason
    planner_entries = [e for e in outcome.state["transcript"] if e["role"] == "planner"]
    assert len(seen) == len(planner_entries) >= 2


def test_registration_errors_name_the_role():
    async def node(state, runtime):
        return {}

    with pytest.raises(ValueError, match="role 'checker': a node of that name already exists"):
        register_role(Role("checker", node, after="user"))
    with pytest.raises(ValueError, match="role 'critic': after='agent'; choose one of"):
        register_role(Role("critic", node, after="agent"))
    with pytest.raises(ValueError, match="role 'floating': give after=ROLE, or wire it"):
        register_role(Role("floating", node))
    register_role(Role("wanderer", node, after="user", routes=("nowhere",)))
    with pytest.raises(ValueError, match=r"role 'wanderer': edge or route to unknown node\(s\) \['nowhere'\]"):
        compile_graph()


def test_a_role_whose_default_is_none_calls_no_model_until_given_one(monkeypatch):
    async def node(state, runtime):
        return {}

    monkeypatch.delenv("WTB_QUIET_MODEL", raising=False)
    register_role(Role("quiet", node, after="tool", calls_model=True, default_model="none"))
    assert "quiet" in model_roles() and "quiet" not in default_model_roles()
    assert role_model_spec(Context(), "quiet") == ""
    assert role_model_spec(Context(models={"quiet": "scripted:/x.json"}), "quiet") == "scripted:/x.json"
    monkeypatch.setenv("WTB_QUIET_MODEL", "openai:gpt-4o-mini")
    assert role_model_spec(Context(), "quiet") == "openai:gpt-4o-mini"
    assert Context(models={"quiet": "none"}).resolved(model_defaults())["models"]["quiet"] == "none"


def test_send_back_rejects_the_pending_decision_with_the_reason():
    pending = {"kind": "decision", "id": "e0003", "step": 0, "decision": {"actions": []}, "error": None}
    state = State(tasks=[{"nodes": []}], pending=pending, transcript=[{}] * 4, attempts=0)
    command = send_back(state, None, role="critic", reason="the plan skips the date")
    assert isinstance(command, Command) and command.goto == "planner"
    assert command.update == {
        "transcript": [
            {
                "id": "e0004",
                "role": "critic",
                "task": 0,
                "target": "e0003",
                "checked": "decision",
                "verdict": "reject",
                "reason": "the plan skips the date",
                "source": "role",
            }
        ],
        "pending": None,
        "checked": "decision",
        "verdict": "reject",
        "attempts": 1,
        "feedback": "the plan skips the date",
    }
    last = send_back(State(tasks=[{"nodes": []}], pending=pending, attempts=2), None, role="critic", reason="no")
    assert last.goto == END
    assert last.update["status"] == "failed"
    assert last.update["failure_reason"] == "planner decision sent back 3 times by critic (task 0): no"


def _veto_files(tmp_path: Path, plan, critic_replies: list[str], extra_planner: int) -> tuple[Path, Path]:
    script = session_script(plan.as_state())
    script["planner"] = [script["planner"][0]] * extra_planner + script["planner"]
    roles_file = tmp_path / "roles.json"
    roles_file.write_text(json.dumps({"sessions": {plan.key: script}}), encoding="utf-8")
    critic_file = tmp_path / "critic.json"
    critic_file.write_text(json.dumps({"critic": critic_replies}), encoding="utf-8")
    return roles_file, critic_file


def test_a_vetoed_decision_goes_back_to_the_planner_which_sees_the_reason(tmp_path):
    plan = _plan(tmp_path)
    critic = _veto_role()
    drawn = compile_graph([critic]).get_graph()
    edges = {(e.source, e.target) for e in drawn.edges}
    assert {("planner", "critic"), ("critic", "checker"), ("critic", "planner"), ("critic", "__end__")} <= edges
    assert ("planner", "checker") not in edges

    reason = "ask for the city before calling the weather tool"
    roles_file, critic_file = _veto_files(tmp_path, plan, [f"VETO: {reason}"] + ["OK"] * 20, extra_planner=1)
    context = _context(roles_file, critic=f"scripted:{critic_file}")
    outcome = asyncio.run(generate_session(plan, context, compile_graph([critic])))
    assert outcome.status == "done", outcome.reason

    calls = outcome.state["calls"]
    planner_humans = [c["request"][-1]["content"] for c in calls if c["role"] == "planner"]
    assert FEEDBACK not in planner_humans[0]
    assert f"{FEEDBACK}{reason}\n" in planner_humans[1]
    assert all(FEEDBACK not in human for human in planner_humans[2:])  # the checker's accept cleared it
    critic_calls = [c for c in calls if c["role"] == "critic"]
    assert len(critic_calls) == len(planner_humans) and {c["model"] for c in critic_calls} == {
        f"scripted:{critic_file}"
    }

    raw = outcome.state["transcript"]
    (veto,) = [e for e in raw if e["role"] == "critic"]
    first_decision = next(e for e in raw if e["role"] == "planner")
    assert (veto["target"], veto["verdict"], veto["reason"]) == (first_decision["id"], "reject", reason)
    second_decision = [e for e in raw if e["role"] == "planner"][1]
    assert second_decision["attempt"] == 2
    lean = streamline(raw, judging_roles())
    assert not [e for e in lean if e["role"] in ("critic", "checker")]
    assert first_decision["id"] not in {e["id"] for e in lean} and second_decision["id"] in {e["id"] for e in lean}

    # The veto changed nothing else: the same session as without the critic.
    scripted.reset()
    plain_file = tmp_path / "plain.json"
    plain_file.write_text(json.dumps({"sessions": {plan.key: session_script(plan.as_state())}}), encoding="utf-8")
    plain = asyncio.run(generate_session(plan, _context(plain_file), compile_graph([])))
    assert plain.status == "done" and outcome.session == plain.session


def test_a_decision_vetoed_max_retries_times_fails_the_session(tmp_path):
    plan = _plan(tmp_path)
    critic = _veto_role()
    roles_file, critic_file = _veto_files(tmp_path, plan, ["VETO: never good enough"] * 5, extra_planner=3)
    outcome = asyncio.run(
        generate_session(plan, _context(roles_file, critic=f"scripted:{critic_file}"), compile_graph([critic]))
    )
    assert (outcome.status, outcome.reason) == (
        "failed",
        "planner decision sent back 3 times by critic (task 0): never good enough",
    )
    assert [e["role"] for e in outcome.state["transcript"]].count("critic") == 3
    assert not [e for e in outcome.state["transcript"] if e["role"] == "checker"]


def test_a_role_routing_to_a_node_it_did_not_declare_is_an_error(tmp_path):
    plan = _plan(tmp_path)
    roles_file = tmp_path / "roles.json"
    roles_file.write_text(json.dumps({"sessions": {plan.key: session_script(plan.as_state())}}), encoding="utf-8")

    def wanderer(state, runtime):
        return Command(goto="agent")

    graph = compile_graph([Role("wanderer", wanderer, after="planner", routes=("planner",))])
    outcome = asyncio.run(generate_session(plan, _context(roles_file), graph))
    assert outcome.status == "failed"
    assert "role 'wanderer' routed to 'agent'; its routes: ['checker', 'planner']" in outcome.reason
