"""The import contract (pyproject ``[tool.importlinter]``) enforces docs/architecture.md §2: each probe
plants one violation in a copy of the packages and ``lint-imports`` must fail naming it; the tree as
committed must pass.

The copy holds the six packages and ``pyproject.toml`` only; ``lint-imports`` runs in it, so grimp finds
the copy (the working directory comes first on ``sys.path``), never the installed project.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("wtb", "graphs", "nodes", "models", "prompts", "bench")


def _lint_imports() -> str:
    beside = Path(sys.executable).with_name("lint-imports")
    found = str(beside) if beside.is_file() else shutil.which("lint-imports")
    assert found, "lint-imports (import-linter, a test dependency) is not installed"
    return found


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for package in PACKAGES:
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


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
    assert "Contracts: 5 kept, 0 broken." in result.stdout


# (module to plant in, line to plant, texts the report must contain)
PROBES = {
    "models import prompts": (
        "models/settings.py",
        "import prompts",
        ["models is not allowed to import prompts", "models.settings -> prompts"],
    ),
    "prompts import models": (
        "prompts/__init__.py",
        "import models",
        ["prompts is not allowed to import models"],
    ),
    "prompts import the core": (
        "prompts/__init__.py",
        "import bench.terms",
        ["Prompts are a leaf", "prompts is not allowed to import bench", "prompts -> bench.terms"],
    ),
    "nodes import graph wiring": (
        "nodes/evaluation/match.py",
        "import graphs.evaluation",
        ["nodes is not allowed to import graphs.evaluation", "nodes.evaluation.match -> graphs.evaluation"],
    ),
    "graph state imports nodes": (
        "graphs/generation_state.py",
        "import nodes.generation.registry",
        ["graphs.generation_state is not allowed to import nodes"],
    ),
    "core imports a framework": (
        "bench/scoring.py",
        "import langgraph",
        ["The core imports no framework", "bench.scoring -> langgraph"],
    ),
    "one graph's nodes import the other's": (
        "nodes/generation/tool.py",
        "import nodes.evaluation.match",
        ["nodes.generation is not allowed to import nodes.evaluation"],
    ),
    "cycle between two core modules": (
        "bench/terms.py",
        "import bench.schema",
        ["No cycles are allowed in bench.", ".schema", ".terms"],
    ),
    "cycle between the two matching modules": (
        "bench/harness/outcome.py",
        "import bench.harness.matching",
        ["No cycles are allowed in bench.harness.", ".outcome", ".matching"],
    ),
    "cycle between two application modules": (
        "wtb/runner/selection.py",
        "import wtb.runner.store",
        ["No cycles are allowed in wtb.runner.", ".store", ".selection"],
    ),
    "cycle between two application packages": (
        "wtb/tracing/redaction.py",
        "import wtb.runner.store",
        ["No cycles are allowed in wtb.", ".runner", ".tracing"],
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
