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

To add a role, write a node function and insert it on one of the plain edges with
:class:`ExtraRole` (``build(extra_roles=...)`` / :func:`compile_graph`); README, "Adding a role".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Sequence

from langgraph.graph import END, START, StateGraph

from graphs.generation_context import Context
from graphs.generation_state import State
from nodes.generation.agent import agent, route_after_agent
from nodes.generation.checker import checker, route_after_plan_check, route_after_result_check
from nodes.generation.planner import planner
from nodes.generation.tool import tool
from nodes.generation.user import user

RECURSION_LIMIT = 1000

PLAIN_EDGES = {"user": "planner", "planner": "checker", "tool": "tool_checker"}
"""The edges a new role can be inserted on: role -> the node that follows it unconditionally."""


@dataclass(frozen=True)
class ExtraRole:
    """A role node added to the generation graph, inserted on one plain edge.

    Attributes:
        name: node name (unique; not one of the built-in node names).
        node: ``node(state: State, runtime: Runtime[Context]) -> dict`` (sync or async), like the
            built-in roles: it returns a state update. To end the session it returns
            ``{"status": "failed", "failure_reason": "..."}``: the session is then recorded as failed
            with that reason (``failures.jsonl``).
        after: the role it follows: ``"user"`` (sees every user message before the planner),
            ``"planner"`` (every planner decision, before the checker) or ``"tool"`` (every simulated
            result, before the result check). Several roles after the same one run in list order.
    """

    name: str
    node: Callable[..., Any]
    after: Literal["user", "planner", "tool"]


def _continue_or_end(next_node: str) -> Callable[[State], str]:
    def route(state: State) -> str:
        return next_node if state.status == "running" else END

    route.__name__ = f"route_to_{next_node}"
    return route


def build(extra_roles: Sequence[ExtraRole] = ()) -> StateGraph:
    """The uncompiled generation graph (for callers that add a role or a checkpointer; docs/generation.md).

    Args:
        extra_roles: roles to insert (see :class:`ExtraRole`); after each one the session goes on to
            the next node while its ``status`` is ``running``, else to END.

    Raises:
        ValueError: an extra role's ``after`` is not in :data:`PLAIN_EDGES`, or its name is taken.
    """
    builder = StateGraph(State, context_schema=Context)
    builder.add_node("user", user)
    builder.add_node("planner", planner)
    builder.add_node("checker", checker)
    builder.add_node("tool", tool)
    builder.add_node("tool_checker", checker)
    builder.add_node("agent", agent)

    builder.add_edge(START, "user")
    _plain_edges(builder, extra_roles)
    builder.add_conditional_edges(
        "checker", route_after_plan_check, {"run tools": "tool", "write": "agent", "retry": "planner", "fail": END}
    )
    builder.add_conditional_edges(
        "tool_checker", route_after_result_check, {"next step": "planner", "retry": "tool", "fail": END}
    )
    builder.add_conditional_edges("agent", route_after_agent, {"user's turn": "user", "done": END})
    return builder


def _plain_edges(builder: StateGraph, extra_roles: Sequence[ExtraRole]) -> None:
    """Wire ``user -> planner``, ``planner -> checker`` and ``tool -> tool_checker``, with the extra roles in between."""
    for role in extra_roles:
        if role.after not in PLAIN_EDGES:
            raise ValueError(f"extra role {role.name!r}: after={role.after!r}; choose one of {sorted(PLAIN_EDGES)}")
        if role.name in builder.nodes:
            raise ValueError(f"extra role {role.name!r}: a node of that name already exists")
        builder.add_node(role.name, role.node)
    for source, target in PLAIN_EDGES.items():
        chain = [source, *(role.name for role in extra_roles if role.after == source), target]
        builder.add_edge(chain[0], chain[1])
        for here, following in zip(chain[1:-1], chain[2:]):
            builder.add_conditional_edges(here, _continue_or_end(following), {following: following, END: END})


def compile_graph(extra_roles: Sequence[ExtraRole] = (), **compile_kwargs: Any) -> Any:
    """The compiled generation graph with ``extra_roles`` inserted (``run_batch(..., graph=...)`` takes it).

    ``compile_kwargs`` go to ``StateGraph.compile`` (e.g. ``checkpointer``); the recursion limit is
    set as for the default :data:`graph`.
    """
    compiled = build(extra_roles).compile(name=compile_kwargs.pop("name", "generation"), **compile_kwargs)
    return compiled.with_config({"recursion_limit": RECURSION_LIMIT})


graph = compile_graph()
