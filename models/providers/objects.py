"""In-process candidates: a Python object (an agent factory, a compiled graph, a Runnable, a chat model) named
by a generated ``graph:`` spec (docs/evaluation.md §8.10), so that ``wildtoolbench.evaluate(make_agent)`` runs it exactly as
``wtb eval --model graph:my_agent.py:make_agent`` runs the same function from its file
(docs/evaluation.md §8, docs/guides/scripting.md).

:func:`register_object` keeps the object in a registry of this process and returns its spec,
``graph:object:<label>@<digest>``:

- ``label`` names the object: ``<module>:<qualified name>`` for a function or class (``my_agent:make_agent``,
  the name ``graph:my_agent.py:make_agent`` records), the model name for a chat model, the graph's name for a
  compiled graph, the class name for another Runnable; it is the ``model_name`` the results record;
- ``digest`` (12 hex digits) is a SHA-256 of what the object's results depend on: the source of a function
  or class (its code when the source cannot be read), the drawing of a graph and the specs of the chat models
  it holds, a chat model's class, name and sampling fields. The spec is the same in every process for the
  same code, so a run folder made by one script resumes in the next; an edited agent gets another spec,
  and the folder refuses to mix them (docs/evaluation.md §8.6).

The graph provider (:mod:`wildtoolbench.models.providers.graph`) keeps the objects and finds one by its spec
before it looks for a file or module. Only this process holds it: a worker process (``--workers`` above 1) or a
LangGraph Server (``--server``) cannot, and a spec of an object that was never registered here fails with
a message saying so.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

from wildtoolbench.models.providers.graph import OBJECT_PREFIX
from wildtoolbench.models.registry import ConfigurationError


def is_object_spec(spec: str) -> bool:
    """Whether the model ``spec`` names an in-process object (``graph:object:...``)."""
    return spec.startswith("graph:" + OBJECT_PREFIX)


def object_label(value: Any) -> str:
    """The name an object's results record (see the module doc), e.g. ``my_agent:make_agent``."""
    from langchain_core.language_models import BaseChatModel
    from langgraph.pregel import Pregel

    if isinstance(value, BaseChatModel):
        for attr in ("model_name", "model"):
            name = getattr(value, attr, None)
            if isinstance(name, str) and name:
                return name
        return type(value).__name__
    if isinstance(value, Pregel):
        return str(value.name or type(value).__name__)
    qualname = getattr(value, "__qualname__", None)
    if isinstance(qualname, str) and (inspect.isfunction(value) or inspect.isclass(value) or inspect.ismethod(value)):
        module = str(getattr(value, "__module__", "") or "").rpartition(".")[2]
        return f"{module}:{qualname}" if module else qualname
    return type(value).__name__


def _code_text(value: Any) -> str:
    """The source of a function or class, else its code object's bytes and constants."""
    target = getattr(value, "__func__", value)
    try:
        return inspect.getsource(target)
    except (OSError, TypeError):
        code = getattr(target, "__code__", None)
        if code is not None:
            return f"{code.co_code.hex()}|{code.co_consts!r}|{code.co_names!r}"
        return f"{type(value).__module__}.{type(value).__qualname__}"


def object_digest(value: Any) -> str:
    """12 hex digits of a SHA-256 of what the results of ``value`` depend on (see the module doc)."""
    from langchain_core.language_models import BaseChatModel
    from langgraph.pregel import Pregel

    from wildtoolbench.models.providers.graph import chat_model_specs

    if isinstance(value, (BaseChatModel, Pregel)):
        parts = [f"{type(value).__module__}.{type(value).__qualname__}", *chat_model_specs(value)]
        if isinstance(value, Pregel):
            try:
                parts.append(value.get_graph().draw_mermaid())
            except Exception:  # noqa: BLE001 - a graph that cannot be drawn is named by its models only
                pass
    elif inspect.isfunction(value) or inspect.isclass(value) or inspect.ismethod(value):
        parts = [_code_text(value)]
    else:
        parts = [
            f"{type(value).__module__}.{type(value).__qualname__}",
            _code_text(type(value)),
            *chat_model_specs(value),
        ]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def register_object(value: Any) -> str:
    """Keep ``value`` in this process's registry and return its model spec, ``graph:object:<label>@<digest>``.

    Registering an object whose spec is already taken replaces the earlier object (the same code
    under the same name: a notebook cell run again).

    Raises:
        ConfigurationError: ``value`` is a string (a spec is passed as it is, not registered) or ``None``.
    """
    from wildtoolbench.models.providers.graph import keep_object

    if value is None or isinstance(value, (str, bytes)):
        raise ConfigurationError(f"an in-process candidate must be a Python object, got {value!r}")
    name = f"{OBJECT_PREFIX}{object_label(value)}@{object_digest(value)}"
    keep_object(name, value)
    return "graph:" + name
