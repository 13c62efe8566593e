"""Generation graph (docs/generation.md): User, Planner, Checker, Tool and Agent as nodes; one run = one session.

    START -> user -> planner -> checker --run tools--> tool -> tool_checker --next step--> planner
                                     |--retry--> planner               |--retry--> tool
                                     |--write--> agent                 '--fail--> END
                                     '--fail--> END
    agent --user's turn--> user (answers the question, or opens the next layer's task)
    agent --done--> END;  user -> planner (every user message)

The Checker role judges twice per step, so it appears as two nodes: ``checker`` (the planner's
decision) and ``tool_checker`` (the simulated results); each has its own retry edge. Wiring only:
role logic lives in ``nodes/``, pure rules in ``bench/generation*.py``.

To add a role, write a node function and register it (``nodes.generation.registry.register_role``,
one module plus one line); :func:`compile_graph` inserts the registered roles on their edges.
README, "Adding a role".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs.generation_context import Context
from graphs.generation_state import State
from nodes.generation.agent import route_after_agent
from nodes.generation.checker import route_after_plan_check, route_after_result_check
from nodes.generation.registry import BUILTIN_ROLES, PLAIN_EDGES, Role, added_roles, capturing, validate_role

RECURSION_LIMIT = 1000

ExtraRole = Role
"""Former name of :class:`nodes.generation.registry.Role` (``ExtraRole(name, node, after)``)."""


def _continue_or_end(next_node: str) -> Callable[[State], str]:
    def route(state: State) -> str:
        return next_node if state.status == "running" else END

    route.__name__ = f"route_to_{next_node}"
    return route


def build(extra_roles: Sequence[Role] | None = None) -> StateGraph:
    """The uncompiled generation graph (for callers that add a role or a checkpointer; docs/generation.md).

    Args:
        extra_roles: roles to insert on the plain edges (see :class:`Role`); default: the roles
            registered with ``nodes.generation.registry.register_role``. After each one the session
            goes on to the next node while its ``status`` is ``running``, else to END.

    Raises:
        ValueError: an extra role's ``after`` is not in :data:`PLAIN_EDGES`, or its name is taken.
    """
    extra = added_roles() if extra_roles is None else tuple(extra_roles)
    builder = StateGraph(State, context_schema=Context)
    for role in BUILTIN_ROLES:
        builder.add_node(role.name, role.node)
    builder.add_node("tool_checker", dict((r.name, r.node) for r in BUILTIN_ROLES)["checker"])

    builder.add_edge(START, "user")
    _plain_edges(builder, extra)
    builder.add_conditional_edges(
        "checker", route_after_plan_check, {"run tools": "tool", "write": "agent", "retry": "planner", "fail": END}
    )
    builder.add_conditional_edges(
        "tool_checker", route_after_result_check, {"next step": "planner", "retry": "tool", "fail": END}
    )
    builder.add_conditional_edges("agent", route_after_agent, {"user's turn": "user", "done": END})
    return builder


def _plain_edges(builder: StateGraph, extra_roles: Sequence[Role]) -> None:
    """Wire ``user -> planner``, ``planner -> checker`` and ``tool -> tool_checker``, with the extra roles in between."""
    names: list[str] = []
    for role in extra_roles:
        validate_role(role, names)
        names.append(role.name)
        builder.add_node(role.name, capturing(role.node))
    for source, target in PLAIN_EDGES.items():
        chain = [source, *(role.name for role in extra_roles if role.after == source), target]
        builder.add_edge(chain[0], chain[1])
        for here, following in zip(chain[1:-1], chain[2:]):
            builder.add_conditional_edges(here, _continue_or_end(following), {following: following, END: END})


def compile_graph(extra_roles: Sequence[Role] | None = None, **compile_kwargs: Any) -> CompiledStateGraph:
    """The compiled generation graph with ``extra_roles`` (default: the registered roles) inserted.

    ``compile_kwargs`` go to ``StateGraph.compile`` (e.g. ``checkpointer``); the recursion limit is
    set as for the default :data:`graph`. ``run_batch(..., graph=...)`` takes the result.
    """
    compiled = build(extra_roles).compile(name=compile_kwargs.pop("name", "generation"), **compile_kwargs)
    return compiled.with_config({"recursion_limit": RECURSION_LIMIT})


graph = compile_graph()
