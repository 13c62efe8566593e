"""The role registry of the generation graph: built-in roles and roles added by users (docs/generation.md).

A role is a node function plus where it sits and whether it calls a model (:class:`Role`). Adding
one is one module plus one line::

    # critic.py
    from nodes.generation.registry import Role, ask_role_model, register_role

    async def critic(state, runtime):
        text, _record = await ask_role_model("critic", state, runtime, "You review plans.", str(state.pending))
        return {}

    register_role(Role("critic", critic, after="planner", calls_model=True))

``wtb generate --roles critic.py --model critic=openai:gpt-4o-mini`` (or ``models={"critic": ...}`` in
the graph context) then runs it on the ``planner -> checker`` edge. Requests a role makes through
:func:`ask_role_model` are captured in the session outputs like the built-in roles' (``calls`` in
the state, ``requests/<role>.jsonl`` on disk), whether or not the node returns them itself.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from graphs.generation_context import ROLES
from nodes.generation._common import CAPTURED_CALLS, ask_model
from nodes.generation.agent import agent
from nodes.generation.checker import checker
from nodes.generation.planner import planner
from nodes.generation.tool import tool
from nodes.generation.user import user

PLAIN_EDGES: dict[str, str] = {"user": "planner", "planner": "checker", "tool": "tool_checker"}
"""The edges an added role can sit on: role -> the node that follows it unconditionally."""

ENTRY_POINT_GROUP = "wildtoolbench.roles"
"""Entry-point group of installed packages that add roles (each entry point loads a :class:`Role`)."""

ask_role_model = ask_model
"""Send one request to a role's model and capture it: ``await ask_role_model(role, state, runtime,
system, human, json_schema=None) -> (reply_text, call_record)`` (see ``nodes.generation._common.ask_model``)."""


@dataclass(frozen=True)
class Role:
    """One role of the generation graph.

    Attributes:
        name: node name, unique (an added role may not reuse a built-in name or ``tool_checker``).
        node: ``node(state: State, runtime: Runtime[Context]) -> dict`` (sync or async) returning a
            state update; to end the session it returns ``{"status": "failed", "failure_reason": "..."}``
            (the session is then recorded as failed with that reason in ``failures.jsonl``).
        after: for an added role, the role it follows: ``"user"`` (every user message, before the
            planner), ``"planner"`` (every planner decision, before the checker) or ``"tool"`` (every
            simulated result, before the result check); several roles after one run in registration
            order. ``None`` for the built-in roles, which the graph wires itself.
        calls_model: the role sends requests to a model of its own, configured like the built-in
            roles' (``models[name]``, ``--model NAME=SPEC``, ``$WTB_<NAME>_MODEL``).
    """

    name: str
    node: Callable[..., Any]
    after: Literal["user", "planner", "tool"] | None = None
    calls_model: bool = False


BUILTIN_ROLES: tuple[Role, ...] = (
    Role("user", user, calls_model=True),
    Role("planner", planner, calls_model=True),
    Role("checker", checker, calls_model=True),
    Role("tool", tool, calls_model=True),
    Role("agent", agent, calls_model=True),
)
assert tuple(role.name for role in BUILTIN_ROLES) == tuple(sorted(ROLES, key=ROLES.index))

_added: dict[str, Role] = {}


def validate_role(role: Role, taken: Sequence[str] = ()) -> None:
    """Check that ``role`` can be added to the graph.

    Raises:
        ValueError: the name is a built-in node name or in ``taken``, or ``after`` is not one of
            :data:`PLAIN_EDGES`.
    """
    reserved = {r.name for r in BUILTIN_ROLES} | {"tool_checker"}
    if not role.name or role.name in reserved or role.name in taken:
        raise ValueError(f"role {role.name!r}: a node of that name already exists")
    if role.after not in PLAIN_EDGES:
        raise ValueError(f"role {role.name!r}: after={role.after!r}; choose one of {sorted(PLAIN_EDGES)}")


def register_role(role: Role) -> Role:
    """Add ``role`` to the graph built by ``graphs.generation`` from now on; re-registering a name
    replaces it. Returns ``role``.

    Raises:
        ValueError: see :func:`validate_role`.
    """
    validate_role(role)
    _added[role.name] = role
    return role


def unregister_role(name: str) -> None:
    """Remove an added role (no error when it is not registered)."""
    _added.pop(name, None)


def added_roles() -> tuple[Role, ...]:
    """The added roles, in registration order."""
    return tuple(_added.values())


def model_roles(extra: Sequence[Role] = ()) -> tuple[str, ...]:
    """Names of the roles that call a model: the built-in ones, the registered ones, then ``extra``."""
    names: list[str] = []
    for role in (*BUILTIN_ROLES, *added_roles(), *extra):
        if role.calls_model and role.name not in names:
            names.append(role.name)
    return tuple(names)


def load_role_modules(specs: Sequence[str]) -> list[str]:
    """Import the modules that register roles: dotted names (``my_pkg.roles``) or ``.py`` files.

    Installed packages' ``wildtoolbench.roles`` entry points are loaded too (each loads a :class:`Role`,
    which is registered). Returns the names of the roles registered afterwards.

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
                module_spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
                sys.modules[name] = module
                module_spec.loader.exec_module(module)  # type: ignore[union-attr]
            else:
                importlib.import_module(spec)
        except ImportError as exc:
            raise ValueError(f"cannot import role module {spec!r}: {exc}") from None
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = entry_point.load()
        if not isinstance(loaded, Role):
            raise ValueError(f"entry point {entry_point.name!r} of {ENTRY_POINT_GROUP} is not a Role: {loaded!r}")
        register_role(loaded)
    return [role.name for role in added_roles()]


def capturing(node: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an added role's node so that every request it makes through :func:`ask_role_model` lands in
    the state's ``calls`` (the captured request/response pairs), even when the node does not return it."""

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
        update = dict(update or {})
        returned = list(update.get("calls") or [])
        update["calls"] = returned + [record for record in sink if not any(record is r for r in returned)]
        return update

    return wrapper
