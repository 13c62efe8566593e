"""The role registry of the generation graph: every role, built-in or added (docs/generation.md §8).

A role is a node function plus its place in the graph, whether it judges other roles' output,
whether it calls a model of its own (and which one by default) and where it may send the session
(:class:`Role`). The five built-in roles and the checker's second position (``tool_checker``) are
registered below with :func:`register_role`, exactly as an added role is; ``graphs.generation``
wires the graph from this registry. Adding a role is one module plus one line::

    # critic.py
    from nodes.generation.registry import Role, ask_role_model, register_role, send_back

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from langgraph.graph import END
from langgraph.types import Command

from graphs.generation_context import NO_MODEL, Context
from graphs.generation_state import State
from models.registry import DEFAULT_MODEL
from models.settings import env_value
from nodes.generation._common import CAPTURED_CALLS, ROLE_REQUEST_LISTENER, ask_model, entry_id
from nodes.generation.agent import agent, route_after_agent
from nodes.generation.checker import checker, route_after_plan_check, route_after_result_check
from nodes.generation.planner import planner
from nodes.generation.tool import tool
from nodes.generation.user import user

__all__ = [
    "END",
    "ENTRY_POINT_GROUP",
    "ROLES_ENV",
    "ROLE_REQUEST_LISTENER",
    "Role",
    "added_roles",
    "ask_role_model",
    "capturing",
    "default_model",
    "default_model_roles",
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

ENTRY_POINT_GROUP = "wildtoolbench.roles"
"""Entry-point group of installed packages that add roles (each entry point loads a :class:`Role`)."""

ROLES_ENV = "WTB_ROLES"
"""Environment variable naming role modules to load (comma-separated dotted names or ``.py`` files):
read wherever the generation graph is imported (``langgraph dev``, ``wtb generate``, Python)."""

ask_role_model = ask_model
"""Send one request to a role's model and capture it: ``await ask_role_model(role, state, runtime,
system, human, json_schema=None) -> (reply_text, call_record)`` (see ``nodes.generation._common.ask_model``)."""


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
    """Add ``role`` to the registry, so that the graph built by ``graphs.generation`` from now on has it;
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
    attempts = state.attempts + 1
    update: dict[str, Any] = {
        "transcript": [entry],
        "pending": None,
        "checked": kind,
        "verdict": "reject",
        "attempts": attempts,
        "feedback": reason,
    }
    if attempts >= context.max_retries:
        what = {"decision": "planner decision", "results": "tool results"}.get(kind, "output")
        update.update(
            status="failed",
            failure_reason=f"{what} sent back {attempts} times by {role} (task {task_index}): {reason}",
        )
        return Command(goto=END, update=update)
    return Command(goto=to, update=update)


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
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = entry_point.load()
        if not isinstance(loaded, Role):
            raise ValueError(f"entry point {entry_point.name!r} of {ENTRY_POINT_GROUP} is not a Role: {loaded!r}")
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
