"""The role registry of the generation graph: every role, built-in or added (docs/generation.md §8).

A role is a node function plus its place in the graph, whether it judges other roles' output,
whether it calls a model of its own (and which one by default) and where it may send the session
(:class:`Role`, kept in ``wildtoolbench.nodes.generation.role_table``). The five built-in roles and the checker's second position (``tool_checker``) are
registered below with :func:`register_role`, exactly as an added role is; ``wildtoolbench.graphs.generation``
wires the graph from this registry. Adding a role is one module plus one line::

    # critic.py
    from wildtoolbench.nodes.generation.registry import Role, ask_role_model, register_role, send_back

    async def critic(state, runtime):
        text, _record = await ask_role_model("critic", state, runtime, "Answer VETO: <why> or OK.", str(state.pending))
        if text.startswith("VETO"):
            return send_back(state, runtime, role="critic", reason=text)  # Command(goto="planner")
        return {}

    register_role(Role("critic", critic, after="planner", calls_model=True, judges=True, routes=("planner",)))

``wtb generate --roles critic.py --model critic=openai:gpt-4o-mini`` (or ``models={"critic": ...}`` in
the graph context, or ``WTB_ROLES=critic.py langgraph dev``) then runs it on the ``planner -> checker``
edge. Requests a role makes through :func:`ask_role_model` are captured in the session outputs like
the built-in roles' (``calls`` in the state, ``requests/<role>.jsonl`` on disk), whether or not the
node returns them itself.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from langgraph.graph import END
from langgraph.types import Command

from wildtoolbench.models.settings import env_value
from wildtoolbench.nodes.generation._common import CAPTURED_CALLS, ROLE_REQUEST_LISTENER, ask_model, entry_id
from wildtoolbench.nodes.generation.agent import agent, route_after_agent
from wildtoolbench.nodes.generation.checker import checker, route_after_plan_check, route_after_result_check
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.planner import planner
from wildtoolbench.nodes.generation.retry import rejected_try
from wildtoolbench.nodes.generation.role_table import (
    Role,
    added_roles,
    default_model,
    default_model_roles,
    find_role,
    judging_roles,
    model_defaults,
    model_roles,
    plain_edges,
    register_role,
    registered_roles,
    role_model,
    role_model_spec,
    unregister_role,
    validate_role,
    wired_roles,
)
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.tool import tool
from wildtoolbench.nodes.generation.user import user

__all__ = [
    "END",
    "ROLE_ENTRY_POINT_GROUP",
    "ROLES_ENV",
    "ROLE_REQUEST_LISTENER",
    "Role",
    "added_roles",
    "ask_role_model",
    "capturing",
    "default_model",
    "default_model_roles",
    "find_role",
    "judging_roles",
    "load_role_modules",
    "model_defaults",
    "model_roles",
    "plain_edges",
    "register_role",
    "registered_roles",
    "role_model",
    "role_model_spec",
    "role_modules_from_env",
    "routed",
    "send_back",
    "unregister_role",
    "validate_role",
    "wired_roles",
]

ROLE_ENTRY_POINT_GROUP = "wildtoolbench.roles"
"""Entry-point group of installed packages that add roles (each entry point loads a :class:`Role`)."""

ROLES_ENV = "WTB_ROLES"
"""Environment variable naming role modules to load (comma-separated dotted names or ``.py`` files):
read wherever the generation graph is imported (``langgraph dev``, ``wtb generate``, Python)."""

ask_role_model = ask_model
"""Send one request to a role's model and capture it: ``await ask_role_model(role, state, runtime,
system, human, json_schema=None) -> (reply_text, call_record)`` (see ``wildtoolbench.nodes.generation._common.ask_model``)."""


def send_back(state: State, runtime: Any, *, role: str, reason: str, to: str = "planner") -> Command:
    """Reject the output waiting in ``state.pending`` and send the session back to ``to`` (docs/generation.md §8).

    The planner (or the tool) then sees ``reason`` in its next prompt as the feedback line, as after a
    checker rejection; the try counts against the same ``max_retries``.

    Args:
        state: the session.
        runtime: the graph runtime holding :class:`Context` (for ``max_retries``).
        role: the rejecting role's name (the transcript entry's ``role``; register it with ``judges=True``
            so the streamlined transcript drops the verdict and the rejected output).
        reason: why, in words the planner can act on.
        to: the node to send the session to (one of the role's ``routes``).

    Returns:
        ``Command(goto=to, update=...)`` with a verdict entry ``{"id", "role", "task", "target", "checked",
        "verdict": "reject", "reason", "source": "role"}``, ``pending = None``, ``attempts + 1`` and
        ``feedback = reason``; after ``max_retries`` tries ``Command(goto=END)`` with the session failed.
    """
    context = runtime.context if runtime is not None and getattr(runtime, "context", None) is not None else Context()
    pending = state.pending or {}
    kind = pending.get("kind", "")
    task_index = len(state.tasks) - 1
    entry = {
        "id": entry_id(state),
        "role": role,
        "task": task_index,
        "target": pending.get("id"),
        "checked": kind,
        "verdict": "reject",
        "reason": reason,
        "source": "role",
    }
    what = {"decision": "planner decision", "results": "tool results"}.get(kind, "output")
    escaped = reason.replace("{", "{{").replace("}", "}}")
    failure = f"{what} sent back {{attempts}} times by {role} (task {task_index}): {escaped}"
    update: dict[str, Any] = {"transcript": [entry], "pending": None, "checked": kind}
    update.update(rejected_try(state, context, feedback=reason, failure=failure))
    return Command(goto=END if update.get("status") == "failed" else to, update=update)


def capturing(node: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an added role's node so that every request it makes through :func:`ask_role_model` lands in
    the state's ``calls`` (the captured request/response pairs), even when the node does not return it.
    The wrapper returns what the node returns (a dict, or a ``Command`` with the calls in its update)."""

    @functools.wraps(node)
    async def wrapper(state: Any, runtime: Any = None) -> Any:
        sink: list[dict[str, Any]] = []
        token = CAPTURED_CALLS.set(sink)
        try:
            update = node(state, runtime) if len(inspect.signature(node).parameters) > 1 else node(state)
            if inspect.isawaitable(update):
                update = await update
        finally:
            CAPTURED_CALLS.reset(token)
        command = update if isinstance(update, Command) else None
        values = dict((command.update if command is not None else update) or {})
        returned = list(values.get("calls") or [])
        values["calls"] = returned + [record for record in sink if not any(record is r for r in returned)]
        if command is None:
            return values
        return dataclasses.replace(command, update=values)

    return wrapper


def routed(role: Role, following: str) -> tuple[Callable[..., Any], dict[str, str]]:
    """The node an added role runs as, and its destinations (for ``StateGraph.add_node(destinations=...)``).

    The node is :func:`capturing` ``role.node``, always answering a ``Command``: the node's own when it
    returns one (its ``goto`` must be in ``role.routes`` or the end), else the update with ``goto``
    ``following`` while the session is running, the end otherwise.

    Args:
        role: an added role.
        following: the node after it on its edge.

    Returns:
        ``(node, destinations)``; destinations map each node to its edge label in the drawing.

    Raises:
        ValueError (when the node runs): it routed to a node that is not one of its ``routes``.
    """
    inner = capturing(role.node)
    allowed = {following, END, *role.routes}

    async def node(state: Any, runtime: Any = None) -> Command:
        answer = await inner(state, runtime)
        if not isinstance(answer, Command):
            status = answer.get("status", state.status)
            return Command(update=answer, goto=following if status == "running" else END)
        targets = answer.goto if isinstance(answer.goto, (list, tuple)) else [answer.goto]
        for target in targets:
            name = getattr(target, "node", target)
            if name not in allowed:
                raise ValueError(f"role {role.name!r} routed to {name!r}; its routes: {sorted(allowed - {END})}")
        return answer

    node.__name__ = role.name
    destinations = {**{route: "send back" for route in role.routes}, following: "next", END: "end"}
    return node, destinations


def role_modules_from_env() -> list[str]:
    """The role modules named by ``$WTB_ROLES`` (comma-separated; empty when unset)."""
    return [spec.strip() for spec in (env_value(ROLES_ENV) or "").split(",") if spec.strip()]


def load_role_modules(specs: Sequence[str]) -> list[str]:
    """Import the modules that register roles: dotted names (``my_pkg.roles``) or ``.py`` files.

    A file already loaded is not run again. Installed packages' ``wildtoolbench.roles`` entry points
    are loaded too (each loads a :class:`Role`, which is registered). Returns the names of the added
    roles registered afterwards.

    Raises:
        ValueError: a file that does not exist, a module that cannot be imported, or an entry point
            that does not load a :class:`Role`.
    """
    for spec in specs:
        try:
            if spec.endswith(".py"):
                path = Path(spec).resolve()
                if not path.is_file():
                    raise ValueError(f"role module not found: {spec}")
                name = f"wtb_roles_{path.stem}_{abs(hash(str(path))) % 10**8}"
                if name in sys.modules:
                    continue
                module_spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
                sys.modules[name] = module
                try:
                    module_spec.loader.exec_module(module)  # type: ignore[union-attr]
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
            else:
                importlib.import_module(spec)
        except ImportError as exc:
            raise ValueError(f"cannot import role module {spec!r}: {exc}") from None
    for entry_point in metadata.entry_points(group=ROLE_ENTRY_POINT_GROUP):
        loaded = entry_point.load()
        if not isinstance(loaded, Role):
            raise ValueError(f"entry point {entry_point.name!r} of {ROLE_ENTRY_POINT_GROUP} is not a Role: {loaded!r}")
        register_role(loaded)
    return [role.name for role in added_roles()]


# The built-in roles, registered as any role is. The checker judges twice per step, so it has two
# positions: ``checker`` (planner decisions) and ``tool_checker`` (simulated results, with the
# checker's model: it calls no model of its own).
register_role(Role("user", user, calls_model=True, then="planner", start=True))
register_role(Role("planner", planner, calls_model=True, then="checker"))
register_role(
    Role(
        "checker",
        checker,
        calls_model=True,
        judges=True,
        router=route_after_plan_check,
        branches={"run tools": "tool", "write": "agent", "retry": "planner", "fail": END},
    )
)
register_role(Role("tool", tool, calls_model=True, then="tool_checker"))
register_role(
    Role("agent", agent, calls_model=True, router=route_after_agent, branches={"user's turn": "user", "done": END})
)
register_role(
    Role(
        "tool_checker",
        checker,
        judges=True,
        router=route_after_result_check,
        branches={"next step": "planner", "retry": "tool", "fail": END},
    )
)
