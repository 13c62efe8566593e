"""The command line parses, the application acts (docs/cli.md §6): every function of ``wildtoolbench/cli/`` has at
most one function-local import, of the application layer (``wildtoolbench.cli``), and the CLI modules import
at their top only what ``--help`` may load (docs/cli.md §1)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "wildtoolbench" / "cli"

APPLICATION = tuple(
    f"wildtoolbench.{feature}."
    for feature in (
        "evaluation", "generation", "scoring", "comparison", "reports", "audit", "review", "data", "remote", "variants",
        "ablation",
    )
)
"""The application layer a command body calls into: the feature packages (docs/architecture.md §1)."""

NOT_CONVERTED: set[str] = set()
"""CLI modules that still run their command's logic themselves (none now); a test below fails once one complies."""

TOP_LEVEL = {"typer", "wildtoolbench.cli", "wildtoolbench.common.exits", "wildtoolbench.common.inputs", "wildtoolbench.models.registry"}
"""Modules (and their sub-modules) a CLI module may import at its top besides the standard library
(``wildtoolbench.models.registry``: ``DEFAULT_MODEL`` for ``wtb generate --help``; light, checked by
``tests/integration/test_cli_startup.py``)."""


def _modules() -> list[Path]:
    return sorted(CLI.glob("*.py"))


def _local_imports(path: Path) -> dict[str, list[ast.Import | ast.ImportFrom]]:
    """Function name -> the import statements inside it (nested functions count for the outer one)."""
    found: dict[str, list] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in found:
            imports = [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
            found[node.name] = imports
            for inner in ast.walk(node):  # count a nested function once, with its outer one
                if inner is not node and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(inner.name, [])
    return found


def _names(statement: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(statement, ast.ImportFrom):
        return [statement.module or ""]
    return [alias.name for alias in statement.names]


def _violations(path: Path) -> list[str]:
    problems = []
    for function, imports in _local_imports(path).items():
        if len(imports) > 1:
            problems.append(f"{path.name}:{function}: {len(imports)} function-local imports")
        for statement in imports:
            for name in _names(statement):
                if not name.startswith(APPLICATION) or name.startswith("wildtoolbench.cli"):
                    problems.append(f"{path.name}:{function}: imports {name} (not the application layer)")
    return problems


def _top_level_violations(path: Path) -> list[str]:
    problems = []
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)) and not (
            isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        ):
            for name in _names(statement):
                root = name.split(".")[0]
                allowed = root in sys.stdlib_module_names or any(
                    name == ok or name.startswith(ok + ".") for ok in TOP_LEVEL
                )
                if not allowed:
                    problems.append(f"{path.name}: imports {name} at the top")
    return problems


def test_cli_functions_make_one_lazy_import_of_the_application_layer():
    checked = [p for p in _modules() if p.name not in NOT_CONVERTED]
    assert {p.name for p in checked} >= {"__init__.py", "eval.py", "score.py", "report.py", "data.py", "generate.py"}
    assert [problem for path in checked for problem in _violations(path)] == []


def test_the_command_bodies_import_the_application_layer():
    """Each command calls into a feature package: the rule above is not met by importing nothing."""
    commands = {
        "eval.py": "eval_command",
        "score.py": "score",
        "report.py": "report_command",
        "data.py": "pull",
        "generate.py": "generate_command",
    }
    for module, function in commands.items():
        imports = _local_imports(CLI / module)[function]
        assert [_names(s) for s in imports] and all(
            n.startswith(APPLICATION) for s in imports for n in _names(s)
        ), module


def test_cli_modules_import_only_light_modules_at_the_top():
    checked = [p for p in _modules() if p.name not in NOT_CONVERTED]
    assert [problem for path in checked for problem in _top_level_violations(path)] == []


def test_the_list_of_modules_not_converted_is_not_stale():
    for name in NOT_CONVERTED:
        assert _violations(CLI / name), f"{name} follows the rule now: remove it from NOT_CONVERTED"


def test_the_rule_catches_a_second_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def command():\n    from wildtoolbench.scoring.command import score_results\n    import json\n    score_results()\n",
        encoding="utf-8",
    )
    assert _violations(sample) == [
        "sample.py:command: 2 function-local imports",
        "sample.py:command: imports json (not the application layer)",
    ]
    sample.write_text("import rich\nfrom wildtoolbench.evaluation.command import evaluate\n", encoding="utf-8")
    assert _top_level_violations(sample) == [
        "sample.py: imports rich at the top",
        "sample.py: imports wildtoolbench.evaluation.command at the top",
    ]
