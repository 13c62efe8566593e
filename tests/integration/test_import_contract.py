"""The import contract (pyproject ``[tool.importlinter]``) enforces docs/architecture.md §2: each probe
plants one violation in a copy of the packages and ``lint-imports`` must fail naming it; the tree as
committed must pass.

The copy is laid out as installed (``tests/support/layout.py``: ``wildtoolbench/`` with ``graphs/``,
``nodes/``, ``models/``, ``prompts/`` and ``bench/`` inside it) beside ``pyproject.toml``; ``lint-imports``
runs in it, so grimp finds the copy (the working directory comes first on ``sys.path``), never the
installed project. A probe names the module it plants in by its installed path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.layout import installed_tree

REPO = Path(__file__).resolve().parents[2]


def _lint_imports() -> str:
    beside = Path(sys.executable).with_name("lint-imports")
    found = str(beside) if beside.is_file() else shutil.which("lint-imports")
    assert found, "lint-imports (import-linter, a test dependency) is not installed"
    return found


def _copy(tmp_path: Path) -> Path:
    return installed_tree(tmp_path / "tree", REPO)


def _plant(root: Path, module: str, line: str) -> None:
    """Append ``line`` to ``module`` (a path relative to the copy), which must exist."""
    path = root / module
    assert path.is_file(), path
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}\n")


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    # Wide columns: rich would wrap contract names at 80 columns.
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "400", "NO_COLOR": "1"}
    return subprocess.run(
        [_lint_imports(), "--no-cache", "--no-logo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_committed_tree_keeps_every_contract(tmp_path):
    result = _run(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 6 kept, 0 broken." in result.stdout


# (module to plant in, line to plant, texts the report must contain)
PROBES = {
    "models import prompts": (
        "wildtoolbench/models/settings.py",
        "import wildtoolbench.prompts",
        ["wildtoolbench.models is not allowed to import wildtoolbench.prompts", "wildtoolbench.models.settings -> wildtoolbench.prompts"],
    ),
    "prompts import models": (
        "wildtoolbench/prompts/__init__.py",
        "import wildtoolbench.models",
        ["wildtoolbench.prompts is not allowed to import wildtoolbench.models"],
    ),
    "prompts import the core": (
        "wildtoolbench/prompts/__init__.py",
        "import wildtoolbench.bench.terms",
        ["Prompts are a leaf", "wildtoolbench.prompts is not allowed to import wildtoolbench.bench", "wildtoolbench.prompts -> wildtoolbench.bench.terms"],
    ),
    "nodes import graph wiring": (
        "wildtoolbench/nodes/evaluation/match.py",
        "import wildtoolbench.graphs.evaluation",
        ["wildtoolbench.nodes is not allowed to import wildtoolbench.graphs", "wildtoolbench.nodes.evaluation.match -> wildtoolbench.graphs.evaluation"],
    ),
    "graph state imports nodes": (
        "wildtoolbench/nodes/generation/state.py",
        "import wildtoolbench.nodes.generation.registry",
        ["Graph schemas sit below the steps", "wildtoolbench.nodes.generation.state is not allowed to import wildtoolbench.nodes.generation.registry"],
    ),
    "the application from the models": (
        "wildtoolbench/models/settings.py",
        "import wildtoolbench.runner.store",
        ["wildtoolbench.models is not allowed to import wildtoolbench.runner"],
    ),
    "a lower feature imports a higher one": (
        "wildtoolbench/scoring/run.py",
        "import wildtoolbench.reports.runs",
        ["wildtoolbench.scoring is not allowed to import wildtoolbench.reports"],
    ),
    "core imports a framework": (
        "wildtoolbench/bench/scoring.py",
        "import langgraph",
        ["The core imports no framework", "wildtoolbench.bench.scoring -> langgraph"],
    ),
    "one graph's nodes import the other's": (
        "wildtoolbench/nodes/generation/tool.py",
        "import wildtoolbench.nodes.evaluation.match",
        ["wildtoolbench.nodes.generation is not allowed to import wildtoolbench.nodes.evaluation"],
    ),
    "cycle between two core modules": (
        "wildtoolbench/bench/terms.py",
        "import wildtoolbench.bench.schema",
        ["No cycles are allowed in wildtoolbench.bench.", ".schema", ".terms"],
    ),
    "cycle between the two matching modules": (
        "wildtoolbench/bench/harness/outcome.py",
        "import wildtoolbench.bench.harness.matching",
        ["No cycles are allowed in wildtoolbench.bench.harness.", ".outcome", ".matching"],
    ),
    "cycle between two application modules": (
        "wildtoolbench/runner/selection.py",
        "import wildtoolbench.runner.store",
        ["No cycles are allowed in wildtoolbench.runner.", ".store", ".selection"],
    ),
    "cycle between two application packages": (
        "wildtoolbench/common/files.py",
        "import wildtoolbench.data.official",
        ["No cycles are allowed in wildtoolbench.", ".data", ".common"],
    ),
}


@pytest.mark.parametrize("probe", PROBES)
def test_a_planted_violation_breaks_the_contract(tmp_path, probe):
    module, line, expected = PROBES[probe]
    root = _copy(tmp_path)
    _plant(root, module, line)
    result = _run(root)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts", 1)[-1]
    for text in expected:
        assert text in broken, f"{text!r} missing from:\n{result.stdout}"
