"""``graph:PATH.py:ATTR`` and ``graph:package.module:ATTR``: a LangGraph graph (or any Runnable) as the candidate.

The target is found the way ``langgraph.json`` finds a graph:

- ``PATH.py:ATTR``: the Python file is loaded as a module of its own (relative to the working
  directory; a path with ``/`` or ending in ``.py`` counts as a file), with its folder first on
  ``sys.path`` as ``python PATH.py`` would put it (so ``from prompts import ...`` finds the file's own
  ``prompts.py``), then ``ATTR`` is read from it;
- ``package.module:ATTR``: the module is imported (installed, or importable from the working
  directory), then ``ATTR`` is read.

``ATTR`` (dotted attributes allowed) may be a compiled graph, an uncompiled ``StateGraph`` (compiled
here), any LangChain ``Runnable``, or a factory returning one of these: a callable taking no argument
or one ``RunnableConfig``, or an *agent factory*: a callable with a parameter named ``tools``, called
for each task with the task's tools as LangChain tools whose execution the harness owns
(:mod:`wildtoolbench.models.agent_loop`, docs/evaluation.md §8). Asynchronous factories and context-manager factories
are not supported.
A chat model is accepted too and then runs like a chat-model candidate (tools bound).

The loaded candidate is cached per spec for the life of the process: the module runs once, the
factory is called once. The evaluation graph calls it once per model request with
``{"messages": [...], "tools": [...]}`` (see :mod:`wildtoolbench.models.graph_contract` for the contract).

A module may say which model its agent uses with a module-level string ``CANDIDATE_MODEL`` (for
example the spec it resolved); the result records and traces show it (``candidate.model``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from wildtoolbench.models.registry import ConfigurationError
from wildtoolbench.models.settings import ModelSettings

DECLARED_MODEL_ATTR = "CANDIDATE_MODEL"
"""Module-level string a candidate module may set to name the model its agent uses."""

KINDS = ("chat_model", "graph", "runnable", "agent")

FACTORY_TOOLS_PARAMETER = "tools"
"""Name of the parameter that makes a factory an agent factory (called with the task's tools, wildtoolbench.models.agent_loop)."""


@dataclass(frozen=True)
class AgentFactory:
    """A factory that builds the agent around the task's tools: ``def make_agent(tools): ...``.

    Attributes:
        function: the factory as the module defines it.
        spec: ``graph:TARGET`` (named in errors).
    """

    function: Any
    spec: str

    def build(self, tools: list[Any]) -> Any:
        """The agent for ``tools`` (LangChain tools): the factory's graph, compiled if it is a ``StateGraph``.

        Raises:
            ConfigurationError: the factory failed, or returned no graph / Runnable.
        """
        try:
            made = self.function(**{FACTORY_TOOLS_PARAMETER: tools})
        except Exception as exc:  # noqa: BLE001 - the user's factory failed
            raise ConfigurationError(f"{self.spec}: the agent factory failed: {failure_text(exc)}") from exc
        if inspect.isawaitable(made):
            if inspect.iscoroutine(made):
                made.close()
            raise ConfigurationError(f"{self.spec}: asynchronous agent factories are not supported")
        return _materialise(made, self.spec, from_factory=True)

    def probe(self) -> Any:
        """The agent built around one stand-in tool (``wtb_probe``), as :func:`check` and the resume identity see it.

        Raises:
            ConfigurationError: see :meth:`build`.
        """
        from langchain_core.tools import StructuredTool

        def wtb_probe() -> str:
            """A stand-in for the task's tools while the factory is checked."""
            return ""

        return self.build([StructuredTool.from_function(wtb_probe)])


def _takes_tools(value: Any) -> bool:
    try:
        parameters = inspect.signature(value).parameters
    except (TypeError, ValueError):
        return False
    return FACTORY_TOOLS_PARAMETER in parameters and parameters[FACTORY_TOOLS_PARAMETER].kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


@dataclass(frozen=True)
class LoadedCandidate:
    """A candidate loaded from a ``graph:`` spec.

    Attributes:
        runnable: the compiled graph, Runnable or chat model to call.
        kind: ``"graph"`` (a LangGraph graph), ``"runnable"`` (another Runnable) or ``"chat_model"``.
        target: ``PATH.py:ATTR`` or ``module:ATTR`` as written in the spec.
        module: the module the attribute came from.
    """

    runnable: Any
    kind: str
    target: str
    module: ModuleType

    @property
    def declared_model(self) -> str | None:
        """The module's ``CANDIDATE_MODEL`` when it is a non-empty string (read at each call: a factory may set it)."""
        value = getattr(self.module, DECLARED_MODEL_ATTR, None)
        return value if isinstance(value, str) and value else None


_cache: dict[str, LoadedCandidate] = {}
_lock = threading.RLock()

OBJECT_PREFIX = "object:"
"""How the part of a spec after ``graph:`` starts for an in-process object (``graph:object:<label>@<digest>``,
:mod:`wildtoolbench.models.providers.objects`)."""

_objects: dict[str, Any] = {}
_object_cache: dict[str, tuple[Any, LoadedCandidate]] = {}


def keep_object(name: str, value: Any) -> None:
    """Keep the in-process object ``value`` under ``name`` (``object:<label>@<digest>``) for :func:`load`;
    a later object under the same name replaces it."""
    with _lock:
        _objects[name] = value


def _load_object(name: str) -> LoadedCandidate:
    """The candidate of the object kept under ``name``, loaded once per object.

    Raises:
        ConfigurationError: no object of this process has that name (it lives only in the process that
            passed it), or see :func:`_materialise`.
    """
    value = _objects.get(name, _objects)
    if value is _objects:
        raise ConfigurationError(
            f"graph:{name} names a Python object passed to wildtoolbench.evaluate() in another process; an object "
            "lives only in the process that passed it (not in --workers processes or on a --server): pass the "
            "object again, or name its file (graph:PATH.py:ATTR)"
        )
    kept = _object_cache.get(name)
    if kept is not None and kept[0] is value:
        return kept[1]
    runnable = _materialise(value, f"graph:{name}")
    module = sys.modules.get(str(getattr(value, "__module__", "") or "")) or ModuleType(name)
    loaded = LoadedCandidate(runnable=runnable, kind=kind_of(runnable), target=name, module=module)
    _object_cache[name] = (value, loaded)
    return loaded


def parse_name(name: str) -> tuple[str, str]:
    """Split ``"PATH.py:ATTR"`` / ``"package.module:ATTR"`` into ``(target, attribute)``.

    Raises:
        ConfigurationError: no ``:`` or an empty part, or an attribute that is not a (dotted) name.
    """
    target, sep, attr = name.rpartition(":")
    if not sep or not target or not attr or not all(part.isidentifier() for part in attr.split(".")):
        raise ConfigurationError(
            f"graph model spec must look like 'graph:PATH.py:ATTR' or 'graph:package.module:ATTR', got 'graph:{name}'"
        )
    return target, attr


def is_file_target(target: str) -> bool:
    """True when ``target`` names a Python file (ends in ``.py`` or contains a path separator)."""
    return target.endswith(".py") or "/" in target or os.sep in target


def _file_module(target: str, name: str) -> ModuleType:
    path = Path(target).expanduser()
    if not path.is_file():
        raise ConfigurationError(
            f"graph file not found: {target} (model spec 'graph:{name}', working directory {os.getcwd()})"
        )
    resolved = path.resolve()
    stem = re.sub(r"\W", "_", resolved.stem)
    module_name = f"wtb_candidate_{stem}_{hashlib.sha1(str(resolved).encode()).hexdigest()[:10]}"
    module = sys.modules.get(module_name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"graph file {target} cannot be loaded as Python (model spec 'graph:{name}')")
    module = importlib.util.module_from_spec(spec)
    folder = str(resolved.parent)
    if folder not in sys.path:  # as `python FILE.py` does: the file's own modules (prompts.py ...) import by name
        sys.path.insert(0, folder)
    sys.modules[module_name] = module  # dataclasses, pydantic and typing look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        if not isinstance(exc, Exception):
            raise
        raise ConfigurationError(f"graph file {target} failed to load: {failure_text(exc)}") from exc
    return module


def failure_text(exc: BaseException) -> str:
    """``"ExcType: message"`` of a failure of the user's code; for a module that is not installed, with the
    command that most often installs it (the module's name with ``-`` for ``_``: ``langgraph_supervisor`` ->
    ``pip install langgraph-supervisor``)."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        text += (
            f" (install the package that provides it in this environment, usually: pip install {top.replace('_', '-')})"
        )
    return text


def _package_module(target: str, name: str) -> ModuleType:
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not (target == missing or target.startswith(missing + ".")):
            raise ConfigurationError(f"graph module {target} failed to load: {failure_text(exc)}") from exc
        if os.getcwd() not in sys.path and "" not in sys.path:  # the `wtb` script does not put "." on the path
            sys.path.append(os.getcwd())
            return _package_module(target, name)
        raise ConfigurationError(
            f"graph module {target} not found (model spec 'graph:{name}'): install its package or run from the "
            "directory that holds it; for a file, write its path (graph:path/to/file.py:ATTR)"
        ) from None
    except Exception as exc:  # noqa: BLE001 - any failure of the user's module is a configuration error
        raise ConfigurationError(f"graph module {target} failed to load: {failure_text(exc)}") from exc


def _attribute(module: ModuleType, attr: str, target: str) -> Any:
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            offered = sorted(n for n, v in vars(module).items() if not n.startswith("_") and _graph_like(v))
            hint = f"; it has {', '.join(offered)}" if offered else ""
            raise ConfigurationError(f"{target} has no attribute {attr!r}{hint}")
        value = getattr(value, part)
    return value


def _graph_like(value: Any) -> bool:
    from langchain_core.runnables import Runnable
    from langgraph.graph import StateGraph

    return isinstance(value, (Runnable, StateGraph))


def _materialise(value: Any, spec: str, *, from_factory: bool = False) -> Any:
    """The Runnable behind ``value``: itself, a compiled ``StateGraph``, or what a factory returns."""
    from langchain_core.runnables import Runnable
    from langgraph.graph import StateGraph

    if isinstance(value, StateGraph):
        return value.compile()
    if isinstance(value, Runnable):
        return value
    if from_factory or not callable(value):
        what = "the factory returned" if from_factory else "the attribute is"
        raise ConfigurationError(
            f"{spec}: {what} {type(value).__name__}, not a compiled graph, a StateGraph, a Runnable or a factory of one"
        )
    if inspect.iscoroutinefunction(value) or inspect.isasyncgenfunction(value):
        raise ConfigurationError(
            f"{spec}: asynchronous graph factories are not supported; export the graph or a sync factory"
        )
    if _takes_tools(value):
        return AgentFactory(value, spec)
    required = [
        p
        for p in inspect.signature(value).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if len(required) > 1:
        raise ConfigurationError(
            f"{spec}: a graph factory takes no argument or one RunnableConfig, not {len(required)}"
        )
    try:
        made = value(_factory_config(spec)) if required else value()
    except Exception as exc:  # noqa: BLE001 - the user's factory failed
        raise ConfigurationError(f"{spec}: the graph factory failed: {type(exc).__name__}: {exc}") from exc
    if inspect.isawaitable(made):
        if inspect.iscoroutine(made):
            made.close()
        raise ConfigurationError(
            f"{spec}: asynchronous graph factories are not supported; export the graph or a sync factory"
        )
    if hasattr(made, "__enter__") or hasattr(made, "__aenter__"):
        raise ConfigurationError(f"{spec}: context-manager graph factories are not supported; return the graph itself")
    return _materialise(made, spec, from_factory=True)


def _factory_config(spec: str) -> dict[str, Any]:
    return {"configurable": {}, "metadata": {"candidate_spec": spec}}


def chat_models_in(root: Any, limit: int = 5000) -> list[str]:
    """The model names of every LangChain chat model reachable from ``root`` (a graph, Runnable, factory...).

    Follows graph nodes, bindings, sequences, the attributes of Runnables and the closures of
    functions (where ``create_agent`` and ``create_react_agent`` keep their model), at most ``limit``
    objects; a model built inside a node at run time is not found. Used for the resume identity.
    """
    return sorted({_model_label(model) for model in _reachable_chat_models(root, limit)})


SPEC_FIELDS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "reasoning_effort", "candidate")
"""Sampling fields of a chat model that :func:`chat_model_specs` records beside its class and name (and the
``candidate`` a ``replay:`` model answers as: ``#demo-model`` and ``#oracle`` are two models of one class)."""


def chat_model_specs(root: Any, limit: int = 5000) -> list[str]:
    """The resolved spec of every chat model reachable from ``root`` (:func:`chat_models_in`): its class, its
    model name and the sampling fields of :data:`SPEC_FIELDS` it sets, e.g. ``"ChatOpenAI model=gpt-4o-mini
    temperature=0.0"``, sorted. Endpoints and keys are left out (a run resumes against a restarted
    server). Used for the resume identity (docs/evaluation.md §8.6)."""
    specs = set()
    for model in _reachable_chat_models(root, limit):
        parts = [type(model).__name__, f"model={_model_label(model)}"]
        for name in SPEC_FIELDS:
            value = getattr(model, name, None)
            if value is not None and isinstance(value, (str, int, float, bool)):
                parts.append(f"{name}={value}")
        specs.add(" ".join(parts))
    return sorted(specs)


def _model_label(model: Any) -> str:
    return str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)


def _reachable_chat_models(root: Any, limit: int) -> list[Any]:
    """Every LangChain chat model reachable from ``root`` (see :func:`chat_models_in`), each once."""
    from langchain_core.language_models import BaseChatModel

    found: list[Any] = []
    seen: set[int] = set()
    queue: list[Any] = [root]
    while queue and len(seen) < limit:
        item = queue.pop()
        if id(item) in seen or item is None or isinstance(item, (str, bytes, int, float, bool, type, ModuleType)):
            continue
        seen.add(id(item))
        if isinstance(item, BaseChatModel):
            found.append(item)
            continue
        if isinstance(item, dict):
            queue.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            queue.extend(item)
        elif inspect.isfunction(item) or inspect.ismethod(item):
            function = getattr(item, "__func__", item)
            queue.extend(cell.cell_contents for cell in (function.__closure__ or ()) if _cell_set(cell))
            queue.extend(function.__defaults__ or ())
        elif hasattr(item, "__dict__") and type(item).__module__.split(".")[0] in _FOLLOWED:
            queue.extend(vars(item).values())
            queue.extend(getattr(item, "__pydantic_private__", None) or {})
    return found


_FOLLOWED = {"langgraph", "langchain", "langchain_core", "functools"}


def _cell_set(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def kind_of(runnable: Any) -> str:
    """``"chat_model"`` (a LangChain chat model), ``"graph"`` (a LangGraph graph), ``"agent"`` (an agent factory,
    :class:`AgentFactory`) or ``"runnable"`` (anything else)."""
    from langchain_core.language_models import BaseChatModel
    from langgraph.pregel import Pregel

    if isinstance(runnable, AgentFactory):
        return "agent"
    if isinstance(runnable, BaseChatModel):
        return "chat_model"
    if isinstance(runnable, Pregel):
        return "graph"
    return "runnable"


def load(name: str) -> LoadedCandidate:
    """Load (once per spec) the candidate named by ``name`` = ``PATH.py:ATTR`` or ``module:ATTR``, or the in-process
    object kept under ``object:<label>@<digest>`` (:func:`keep_object`).

    Raises:
        ConfigurationError: malformed spec, missing file or module, a module that fails to import,
            a missing attribute, or an attribute that is neither a graph, a Runnable nor a factory of one.
    """
    with _lock:
        if name.startswith(OBJECT_PREFIX):
            return _load_object(name)
        loaded = _cache.get(name)
        if loaded is not None:
            return loaded
        target, attr = parse_name(name)
        module = _file_module(target, name) if is_file_target(target) else _package_module(target, name)
        runnable = _materialise(_attribute(module, attr, target), f"graph:{name}")
        loaded = _cache[name] = LoadedCandidate(runnable=runnable, kind=kind_of(runnable), target=name, module=module)
        return loaded


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the file or module exists and loads, and its attribute is a graph, a Runnable or a factory of one.

    An agent factory is called once with one stand-in tool (``wtb_probe``), so that a factory that
    cannot build an agent at all (a missing key, a bad argument) stops the run before any session.
    A model the module declares as ``CANDIDATE_MODEL`` that is a model spec of this project
    (``openai:gpt-4o``, ``replay:PATH#NAME``; not another ``graph:``) gets that model's own check
    (its provider's check, as ``models.check_model`` runs it: its file, its key, its package), so a model configured inside the graph
    that cannot work stops the run too (docs/evaluation.md §8.7); a declared name that is no such
    spec is left to the graph.

    Raises:
        ConfigurationError: see :func:`load`; the agent factory failed or returned no graph; the
            declared model cannot work (the message names the module and its ``CANDIDATE_MODEL``).
    """
    loaded = load(name)
    if isinstance(loaded.runnable, AgentFactory):
        loaded.runnable.probe()
    declared = loaded.declared_model
    if declared is None or declared.startswith("graph:"):
        return
    from wildtoolbench.models.registry import get_provider, known_providers

    prefix, _, target = declared.partition(":")
    if not target or prefix not in known_providers():
        return
    try:
        provider = get_provider(prefix)
        if (
            provider.check is not None
        ):  # what models.check_model does, without a cycle through wildtoolbench.models.candidate
            provider.check(target, ModelSettings())
    except ConfigurationError as exc:
        raise ConfigurationError(f"graph:{name}: its {DECLARED_MODEL_ATTR} {declared!r} cannot work: {exc}") from None


GRAPH_OWN_MODELS = (
    "a graph: candidate brings its own model(s) and the harness builds none; configure it in the graph "
    "(examples/tool_agent.py reads $WTB_AGENT_TEMPERATURE and $WTB_AGENT_BASE_URL)"
)
"""Why ``--temperature`` and ``--base-url`` do not apply to a ``graph:`` candidate."""


def unapplied_settings(name: str, settings: ModelSettings) -> dict[str, str]:
    """``{"temperature": why, "base_url": why}``: the harness builds no model for a ``graph:`` candidate, so
    neither setting reaches it (docs/settings.md §7.8); ``--timeout`` does, as the deadline of each call."""
    return {"temperature": GRAPH_OWN_MODELS, "base_url": GRAPH_OWN_MODELS}


def create(name: str, settings: ModelSettings) -> Any:
    """The loaded candidate's Runnable (a compiled graph, another Runnable, or a chat model); ``settings`` are not
    used (:func:`unapplied_settings`).

    The graph brings its own model(s); configure them in the graph (the example agent in
    ``examples/`` takes its model spec from an environment variable).

    Raises:
        ConfigurationError: see :func:`load`.
    """
    return load(name).runnable


def model_name(name: str) -> str:
    """The name written into result records: ``<file stem or module>:<attr>`` (``tool_agent:graph``); for an
    in-process object its label (``object:my_agent:make_agent@1a2b...`` -> ``my_agent:make_agent``)."""
    if name.startswith(OBJECT_PREFIX):
        return name[len(OBJECT_PREFIX) :].rpartition("@")[0] or name
    try:
        target, attr = parse_name(name)
    except ConfigurationError:
        return name
    return f"{Path(target).stem if is_file_target(target) else target}:{attr}"
