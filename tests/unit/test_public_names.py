"""Every public name is defined once (issue 22): no two modules of our packages define the same public
top-level function, class or constant, so that a name says which thing it is wherever it is imported
(docs/architecture.md §1). Importing a name from the module that defines it is not a definition.

A public name is a top-level ``def``, ``async def``, ``class`` or assignment to a name that does not
start with ``_``; a ``TypeVar`` is a typing device, not a name of the API, and is not counted.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {
    "wildtoolbench": "wildtoolbench",
    "graphs": "wildtoolbench.graphs",
    "nodes": "wildtoolbench.nodes",
    "models": "wildtoolbench.models",
    "prompts": "wildtoolbench.prompts",
    "bench": "wildtoolbench.bench",
}
"""Each folder of the repository and the module prefix it is installed under (pyproject.toml package-dir)."""

ALLOWED: dict[str, tuple[str, ...]] = {
    # The model-provider interface (docs/providers.md): each provider module answers the same calls.
    "check": ("wildtoolbench.models.",),
    "create": ("wildtoolbench.models.",),
    "model_name": ("wildtoolbench.models.",),
    "parse_name": ("wildtoolbench.models.",),
    "unapplied_settings": ("wildtoolbench.models.",),
    # `python -m` / console-script entry points, each of its own program.
    "main": ("wildtoolbench.cli", "wildtoolbench.runner.", "wildtoolbench.models.", "wildtoolbench.bench."),
    # Each graph module exposes the same two names: `graph` (langgraph.json's entry) and its recursion limit.
    "graph": ("wildtoolbench.graphs.evaluation", "wildtoolbench.graphs.generation", "wildtoolbench.graphs.variants"),
    "RECURSION_LIMIT": ("wildtoolbench.graphs.evaluation", "wildtoolbench.graphs.generation"),
    # Each server-run module names the graph it runs on a LangGraph Server (`graph_id` defaults to it).
    "GRAPH_ID": ("wildtoolbench.remote.evaluation", "wildtoolbench.remote.generation"),
    # The Python API (wildtoolbench/__init__.py, docs/guides/scripting.md) names each command's call as the
    # command names it; the application's function of that command keeps its name too.
    "evaluate": ("wildtoolbench._api.evaluate", "wildtoolbench.evaluation.command"),
    "generate": ("wildtoolbench._api.commands", "wildtoolbench.generation.command"),
    "score": ("wildtoolbench._api.commands", "wildtoolbench.cli.score"),
    "report": ("wildtoolbench._api.commands", "wildtoolbench.reports.command"),
    "load_dataset": ("wildtoolbench._api.commands", "wildtoolbench.runner.selection"),
}
"""Names that several modules define by design, with the modules (or module prefixes) allowed to."""


def _is_type_var(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Call) and (getattr(value.func, "id", None) or getattr(value.func, "attr", None)) in (
        "TypeVar",
        "ParamSpec",
    )


def public_names(source: str) -> list[str]:
    """The public top-level names ``source`` defines (module doc), in order."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and not _is_type_var(node.value):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and not _is_type_var(node.value):
            if isinstance(node.target, ast.Name):
                names.append(node.target.id)
    return [name for name in names if not name.startswith("_")]


def definitions(root: Path, packages: dict[str, str] | tuple[str, ...]) -> dict[str, list[str]]:
    """Public name -> the dotted modules that define it, for every module of ``packages`` under ``root``."""
    found: dict[str, list[str]] = defaultdict(list)
    prefixes = packages if isinstance(packages, dict) else {p: p for p in packages}
    for package, prefix in prefixes.items():
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root / package).with_suffix("").parts
            module = ".".join((prefix, *parts)).removesuffix(".__init__")
            for name in dict.fromkeys(public_names(path.read_text(encoding="utf-8"))):
                found[name].append(module)
    return found


def _allowed(name: str, module: str) -> bool:
    return any(module == ok or (ok.endswith(".") and module.startswith(ok)) for ok in ALLOWED.get(name, ()))


def duplicates(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """The names defined in more than one module, less the modules :data:`ALLOWED` lets define them."""
    problems = {}
    for name, modules in found.items():
        if len(modules) > 1:
            extra = [m for m in modules if not _allowed(name, m)]
            if extra and (len(extra) > 1 or len(modules) > len(extra)):
                problems[name] = modules
    return problems


def test_every_public_name_is_defined_once():
    assert duplicates(definitions(REPO, PACKAGES)) == {}


def test_the_allow_list_is_not_stale():
    found = definitions(REPO, PACKAGES)
    for name in ALLOWED:
        assert len(found.get(name, [])) > 1, f"{name} is defined once now: remove it from ALLOWED"


def test_the_rule_finds_a_second_definition(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("RUN_FILE = 'run.json'\n", encoding="utf-8")
    (tmp_path / "pkg" / "a.py").write_text(
        "from typing import TypeVar\nT = TypeVar('T')\n_private = 1\nclass Outcome: ...\ndef check(): ...\n",
        encoding="utf-8",
    )
    (tmp_path / "pkg" / "b.py").write_text(
        "from pkg import RUN_FILE\nT = TypeVar('T')\nOutcome: type = object\nasync def check(): ...\n",
        encoding="utf-8",
    )
    found = definitions(tmp_path, ("pkg",))
    assert found["RUN_FILE"] == ["pkg"]  # imported in b, defined once
    assert "T" not in found and "_private" not in found
    assert duplicates(found) == {"Outcome": ["pkg.a", "pkg.b"], "check": ["pkg.a", "pkg.b"]}
