"""The role table of the generation graph: :class:`Role` and the registered roles (docs/generation.md §8).

The storage behind ``wildtoolbench.nodes.generation.registry`` (import from there: it re-exports all of this and
registers the built-in roles). It imports no role module, so the role modules' shared plumbing
(``wildtoolbench.nodes.generation._common``) can look up a role's default model here without an import cycle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.models.registry import DEFAULT_MODEL
from wildtoolbench.nodes.generation.context import NO_MODEL, Context


@dataclass(frozen=True)
class Role:
    """One role of the generation graph (docs/generation.md §8).

    Attributes:
        name: node name, unique in the graph.
        node: ``node(state: State, runtime: Runtime[Context])`` (sync or async) returning a state update
            (a dict), or, for a role with ``routes``, a ``langgraph.types.Command`` sending the session to
            one of them (:func:`send_back` builds the usual one). To end the session it returns
            ``{"status": "failed", "failure_reason": "..."}`` (recorded in ``failures.jsonl``).
        after: where an added role sits: after ``"user"`` (every user message, before the planner),
            ``"planner"`` (every planner decision, before the checker) or ``"tool"`` (every simulated
            result, before the result check): any role with a plain ``then`` edge. Several roles after
            one run in registration order; after each the session goes on while ``status`` is
            ``running``, else to the end.
        calls_model: the role sends requests to a model of its own, configured like every role's
            (``models[name]``, ``--model NAME=SPEC``, ``$WTB_<NAME>_MODEL``, else ``default_model``).
        judges: the role writes verdict entries (``{"target", "verdict", "reason"}``) into the
            transcript; the streamlined transcript drops them and the entries they rejected.
        default_model: the model spec the role uses when nothing configures one; ``"none"`` = no
            model unless one is given (a bare ``--model SPEC`` then leaves the role alone).
        routes: nodes the role may send the session to by returning ``Command(goto=...)`` (drawn in
            LangGraph Studio); the end of the graph is always allowed.
        then: for a role wired in place (the built-ins), the node that always follows it.
        router, branches: for a role wired in place, the conditional edges after it:
            ``router(state) -> label`` and ``branches[label] -> node`` (or ``END``).
        start: the node the graph starts at (exactly one role, the user).
    """

    name: str
    node: Callable[..., Any]
    after: str | None = None
    calls_model: bool = False
    judges: bool = False
    default_model: str = DEFAULT_MODEL
    routes: tuple[str, ...] = ()
    then: str | None = None
    router: Callable[[Any], str] | None = None
    branches: Mapping[str, str] | None = dataclasses.field(default=None, hash=False)
    start: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "routes", tuple(self.routes))

    @property
    def wired(self) -> bool:
        """The role is wired in place (``then`` or ``router``) rather than inserted ``after`` another."""
        return self.after is None


_roles: dict[str, Role] = {}


def registered_roles() -> tuple[Role, ...]:
    """Every registered role, in registration order (the built-in ones first)."""
    return tuple(_roles.values())


def find_role(name: str) -> Role | None:
    """The registered role called ``name``, else ``None``."""
    return _roles.get(name)


def wired_roles() -> tuple[Role, ...]:
    """The roles wired in place (``then`` / ``router``): the built-in ones, unless replaced."""
    return tuple(role for role in _roles.values() if role.wired)


def added_roles() -> tuple[Role, ...]:
    """The roles inserted ``after`` another, in registration order."""
    return tuple(role for role in _roles.values() if not role.wired)


def plain_edges() -> dict[str, str]:
    """The edges an added role can sit on: role -> the node that follows it unconditionally."""
    return {role.name: role.then for role in wired_roles() if role.then}


def validate_role(role: Role, taken: Sequence[str] = ()) -> None:
    """Check that ``role`` can be registered (docs/generation.md §8).

    Args:
        role: the role.
        taken: further names it may not use (the roles listed before it in one ``compile_graph`` call).

    Raises:
        ValueError: no name; a name in ``taken``, or registered for a role of the other kind (wired
            in place / inserted after another; a wired role may be replaced by a wired one, an added
            role by an added one); an added role whose ``after`` is no role with a plain edge; a
            wired role without ``then`` or ``router`` (or a ``router`` without ``branches``).
    """
    existing = _roles.get(role.name)
    if not role.name or role.name in taken or (existing is not None and existing.wired != role.wired):
        raise ValueError(f"role {role.name!r}: a node of that name already exists")
    if not role.wired:
        edges = plain_edges()
        if role.after not in edges:
            raise ValueError(f"role {role.name!r}: after={role.after!r}; choose one of {sorted(edges)}")
        return
    if (role.then is None) == (role.router is None) or (role.router is not None and not role.branches):
        raise ValueError(f"role {role.name!r}: give after=ROLE, or wire it with then=NODE or router= and branches=")


def register_role(role: Role) -> Role:
    """Add ``role`` to the registry, so that the graph built by ``wildtoolbench.graphs.generation`` from now on has it;
    re-registering a name replaces that role. Returns ``role``.

    Raises:
        ValueError: see :func:`validate_role`.
    """
    validate_role(role)
    _roles[role.name] = role
    return role


def unregister_role(name: str) -> None:
    """Remove an added role (no error when it is not registered; the wired roles stay)."""
    role = _roles.get(name)
    if role is not None and not role.wired:
        del _roles[name]


def model_roles(extra: Sequence[Role] = ()) -> tuple[str, ...]:
    """Names of the roles that call a model: the registered ones, then ``extra``."""
    names: list[str] = []
    for role in (*_roles.values(), *extra):
        if role.calls_model and role.name not in names:
            names.append(role.name)
    return tuple(names)


def default_model_roles() -> tuple[str, ...]:
    """The roles a bare ``--model SPEC`` sets: those that call a model and whose default is not ``none``."""
    return tuple(name for name in model_roles() if _roles[name].default_model.strip().lower() != NO_MODEL)


def judging_roles() -> tuple[str, ...]:
    """Transcript roles of the registered roles that judge (``checker``, ``tool_checker``, added judges)."""
    return tuple(role.name for role in _roles.values() if role.judges)


def default_model(role: str) -> str:
    """The default model spec of ``role``: its registered ``default_model``, else :data:`models.DEFAULT_MODEL`."""
    registered = _roles.get(role)
    return registered.default_model if registered is not None else DEFAULT_MODEL


def model_defaults() -> dict[str, str]:
    """``{role: default model spec}`` of every role that calls a model (for ``Context.resolved``)."""
    return {name: _roles[name].default_model for name in model_roles()}


def role_model(context: Context, role: str) -> str:
    """``role``'s model spec text in ``context``, the role's default applied (``Context.role_model``)."""
    return context.role_model(role, default_model(role))


def role_model_spec(context: Context, role: str, user_model_index: int = 0) -> str:
    """``role``'s model spec for one session, the role's default applied; ``""`` = no model (``Context.model_spec``)."""
    return context.model_spec(role, user_model_index, default=default_model(role))
