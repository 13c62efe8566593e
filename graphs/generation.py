"""Generation graph (docs/generation.md): User, Planner, Checker, Tool and Agent as nodes; one run = one session.

    START -> user -> planner -> checker --run tools--> tool -> tool_checker --next step--> planner
                                     |--retry--> planner               |--retry--> tool
                                     |--write--> agent                 '--fail--> END
                                     '--fail--> END
    agent --user's turn--> user (answers the question, or opens the next layer's task)
    agent --done--> END;  user -> planner (every user message)

Wiring only, and all of it from the role registry (``wildtoolbench.nodes.generation.registry``, docs/generation.md
§8): every node is a registered role, every edge its ``then``, ``branches`` or ``routes``. The Checker
judges twice per step, so it is registered in two positions: ``checker`` (the planner's decision) and
``tool_checker`` (the simulated results); each has its own retry edge. Role logic lives in
``nodes/``, pure rules in ``bench/generation*.py``.

To add a role, write a node function and register it (``register_role``, one module plus one line);
:func:`compile_graph` inserts the registered roles on their edges and draws their routes (e.g. a
critic's ``send back`` edge to the planner). The default :data:`graph` also has the roles of the
modules named in ``$WTB_ROLES`` and of installed ``wildtoolbench.roles`` entry points, so
``WTB_ROLES=critic.py langgraph dev`` shows an added role in LangGraph Studio. README, "Adding a role".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from wildtoolbench.graphs.sync_nodes import add_sync_counterparts
from wildtoolbench.models.server_policy import carry_errors
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.registry import (
    END,
    Role,
    added_roles,
    load_role_modules,
    plain_edges,
    role_modules_from_env,
    routed,
    validate_role,
    wired_roles,
)
from wildtoolbench.nodes.generation.state import State

RECURSION_LIMIT = 1000

ExtraRole = Role
"""Former name of :class:`wildtoolbench.nodes.generation.registry.Role` (``ExtraRole(name, node, after)``)."""


def build(extra_roles: Sequence[Role] | None = None) -> StateGraph:
    """The uncompiled generation graph (for callers that add a role or a checkpointer; docs/generation.md §8).

    Args:
        extra_roles: roles to insert on the plain edges (``Role(..., after=...)``); default: the roles
            registered with ``wildtoolbench.nodes.generation.registry.register_role``. After each one the session
            goes on to the next node while its ``status`` is ``running``, else to END, unless the role
            routes it elsewhere (``Command(goto=...)`` to one of its ``routes``).

    Raises:
        ValueError: an extra role's ``after`` is not a role with a plain edge, its name is taken, or a
            role's edge or route names no node.
    """
    wired = wired_roles()
    extra = added_roles() if extra_roles is None else tuple(extra_roles)
    edges = plain_edges()
    names = [role.name for role in wired]
    for role in extra:
        if role.wired:
            raise ValueError(f"role {role.name!r}: an extra role needs after=ROLE; choose one of {sorted(edges)}")
        validate_role(role, names)
        names.append(role.name)
    _check_targets(wired, extra, names)

    builder = StateGraph(State, context_schema=Context)
    for role in wired:
        builder.add_node(
            role.name, carry_errors(role.node)
        )  # on a server: errors reach the caller (docs/settings.md §8)
    for role in wired:
        if role.start:
            builder.add_edge(START, role.name)
        if role.router is not None:
            builder.add_conditional_edges(role.name, role.router, dict(role.branches or {}))
        if role.then is None:
            continue
        inserted = [r for r in extra if r.after == role.name]
        builder.add_edge(role.name, inserted[0].name if inserted else role.then)
        for here, following in zip(inserted, [*(r.name for r in inserted[1:]), role.then]):
            node, destinations = routed(here, following)
            builder.add_node(here.name, carry_errors(node), destinations=destinations)
    return add_sync_counterparts(builder)  # invoke / stream as well as ainvoke / astream


def _check_targets(wired: Sequence[Role], extra: Sequence[Role], names: Sequence[str]) -> None:
    known = {*names, END}
    if sum(1 for role in wired if role.start) != 1:
        raise ValueError("exactly one role must be the start (start=True)")
    for role in (*wired, *extra):
        targets = [*(role.branches or {}).values(), *([role.then] if role.then else []), *role.routes]
        unknown = sorted(set(targets) - known)
        if unknown:
            raise ValueError(f"role {role.name!r}: edge or route to unknown node(s) {unknown}")


def compile_graph(extra_roles: Sequence[Role] | None = None, **compile_kwargs: Any) -> CompiledStateGraph:
    """The compiled generation graph with ``extra_roles`` (default: the registered roles) inserted.

    ``compile_kwargs`` go to ``StateGraph.compile`` (e.g. ``checkpointer``); the recursion limit is
    set as for the default :data:`graph`. ``run_batch(..., graph=...)`` takes the result.
    """
    compiled = build(extra_roles).compile(name=compile_kwargs.pop("name", "generation"), **compile_kwargs)
    return compiled.with_config({"recursion_limit": RECURSION_LIMIT})


load_role_modules(role_modules_from_env())
graph = compile_graph()
