"""WildToolBench on LangGraph: evaluate chat models and LangGraph agents on multi-turn tool use, from Python
or with the ``wtb`` command (docs/guides/scripting.md).

The public API (the names of :data:`__all__`)::

    import wildtoolbench as wtb

    run = wtb.evaluate("openai:gpt-4o-mini", limit=2)    # or an agent factory, a graph, a chat model
    run.task_accuracy, run.tasks, run.to_pandas()
    model = wtb.chat_model("local")                       # the bundled local model, no key

- evaluation: :func:`evaluate`, :func:`aevaluate` -> :class:`EvalRun`;
- the other commands: :func:`generate`, :func:`score`, :func:`report`, :func:`ablate` (-> :class:`AblationRun` of
  :class:`Effect`), and :func:`load_dataset`, :func:`chat_model`;
- the graphs and their settings: ``evaluation_graph`` with :class:`EvaluationContext`, ``generation_graph`` with
  :class:`GenerationContext` (``invoke`` / ``ainvoke`` / ``stream`` / ``astream``);
- the exceptions a call raises where ``wtb`` would exit (docs/cli.md §2): :class:`UsageError`,
  :class:`ConfigurationError`, :class:`BadConfiguration` (exit status 2), :class:`DatasetError`, :class:`BadInput`
  (1), :class:`InfrastructureErrors` (3).

Names load on first use (PEP 562), so ``import wildtoolbench.bench.scoring`` or ``wtb --help`` imports no
LangGraph through this module. Everything else is internal: the ``_api`` package, and the packages of
the layers (docs/architecture.md §1), which scripts may import but whose names may change.

No public name is also the name of a subpackage (the feature packages are nouns: ``evaluation``,
``generation``, ``scoring``, ``reports``, ...), so importing a feature package never replaces a public function.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as type checkers and editors see them; loaded lazily at run time
    from wildtoolbench._api.ablate import AblationRun, Effect, ablate
    from wildtoolbench._api.commands import chat_model, generate, load_dataset, report, score
    from wildtoolbench._api.evaluate import aevaluate, evaluate
    from wildtoolbench._api.run import EvalRun, TaskRow
    from wildtoolbench.bench.schema import DatasetError
    from wildtoolbench.common.exits import BadConfiguration, BadInput, InfrastructureErrors, UsageError
    from wildtoolbench.graphs.evaluation import graph as evaluation_graph
    from wildtoolbench.graphs.generation import graph as generation_graph
    from wildtoolbench.models.registry import ConfigurationError
    from wildtoolbench.nodes.evaluation.context import EvaluationContext
    from wildtoolbench.nodes.generation.context import Context as GenerationContext

_PUBLIC: dict[str, tuple[str, str]] = {
    "evaluate": ("wildtoolbench._api.evaluate", "evaluate"),
    "aevaluate": ("wildtoolbench._api.evaluate", "aevaluate"),
    "EvalRun": ("wildtoolbench._api.run", "EvalRun"),
    "TaskRow": ("wildtoolbench._api.run", "TaskRow"),
    "ablate": ("wildtoolbench._api.ablate", "ablate"),
    "AblationRun": ("wildtoolbench._api.ablate", "AblationRun"),
    "Effect": ("wildtoolbench._api.ablate", "Effect"),
    "generate": ("wildtoolbench._api.commands", "generate"),
    "score": ("wildtoolbench._api.commands", "score"),
    "report": ("wildtoolbench._api.commands", "report"),
    "load_dataset": ("wildtoolbench._api.commands", "load_dataset"),
    "chat_model": ("wildtoolbench._api.commands", "chat_model"),
    "evaluation_graph": ("wildtoolbench.graphs.evaluation", "graph"),
    "generation_graph": ("wildtoolbench.graphs.generation", "graph"),
    "EvaluationContext": ("wildtoolbench.nodes.evaluation.context", "EvaluationContext"),
    "GenerationContext": ("wildtoolbench.nodes.generation.context", "Context"),
    "UsageError": ("wildtoolbench.common.exits", "UsageError"),
    "BadConfiguration": ("wildtoolbench.common.exits", "BadConfiguration"),
    "BadInput": ("wildtoolbench.common.exits", "BadInput"),
    "InfrastructureErrors": ("wildtoolbench.common.exits", "InfrastructureErrors"),
    "ConfigurationError": ("wildtoolbench.models.registry", "ConfigurationError"),
    "DatasetError": ("wildtoolbench.bench.schema", "DatasetError"),
}
"""Each public name and where it is defined: ``(module, attribute)``."""

__all__ = [
    "evaluate",
    "aevaluate",
    "EvalRun",
    "TaskRow",
    "ablate",
    "AblationRun",
    "Effect",
    "generate",
    "score",
    "report",
    "load_dataset",
    "chat_model",
    "evaluation_graph",
    "generation_graph",
    "EvaluationContext",
    "GenerationContext",
    "UsageError",
    "BadConfiguration",
    "BadInput",
    "InfrastructureErrors",
    "ConfigurationError",
    "DatasetError",
]


def _load(name: str) -> Any:
    module, attribute = _PUBLIC[name]
    return getattr(importlib.import_module(module), attribute)


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562).

    Raises:
        AttributeError: ``name`` is neither public nor a subpackage.
    """
    if name in _PUBLIC:
        value = _load(name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'wildtoolbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
