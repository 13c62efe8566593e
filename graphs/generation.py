"""Generation graph (SPEC 5): User, Planner, Checker, Tool and Agent as nodes; one run = one session.

    START -> user -> planner -> checker --run tools--> tool -> tool_checker --next step--> planner
                                     |--retry--> planner               |--retry--> tool
                                     |--write--> agent                 '--fail--> END
                                     '--fail--> END
    agent --user's turn--> user (answers the question, or opens the next layer's task)
    agent --done--> END;  user -> planner (every user message)

The Checker role judges twice per step, so it appears as two nodes: ``checker`` (the planner's
decision) and ``tool_checker`` (the simulated results); each has its own retry edge. Wiring only:
role logic lives in ``nodes/``, pure rules in ``bench/generation*.py``. To add a role, write a node
module and re-point one edge (README, "Generating sessions").
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.generation_state import Context, State
from nodes.agent import agent, route_after_agent
from nodes.checker import checker, route_after_plan_check, route_after_result_check
from nodes.planner import planner
from nodes.tool import tool
from nodes.user import user

RECURSION_LIMIT = 1000


def build() -> StateGraph:
    """The uncompiled generation graph (for callers that add a role or a checkpointer; SPEC 5)."""
    builder = StateGraph(State, context_schema=Context)
    builder.add_node("user", user)
    builder.add_node("planner", planner)
    builder.add_node("checker", checker)
    builder.add_node("tool", tool)
    builder.add_node("tool_checker", checker)
    builder.add_node("agent", agent)

    builder.add_edge(START, "user")
    builder.add_edge("user", "planner")
    builder.add_edge("planner", "checker")
    builder.add_conditional_edges(
        "checker", route_after_plan_check, {"run tools": "tool", "write": "agent", "retry": "planner", "fail": END}
    )
    builder.add_edge("tool", "tool_checker")
    builder.add_conditional_edges(
        "tool_checker", route_after_result_check, {"next step": "planner", "retry": "tool", "fail": END}
    )
    builder.add_conditional_edges("agent", route_after_agent, {"user's turn": "user", "done": END})
    return builder


graph = build().compile(name="generation").with_config({"recursion_limit": RECURSION_LIMIT})
