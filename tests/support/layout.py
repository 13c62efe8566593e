"""The installed layout of the repository, without installing it (docs/architecture.md §4).

The repository keeps ``graphs/``, ``nodes/``, ``models/``, ``prompts/`` and ``bench/`` at its top;
installed, each is a subpackage of ``wildtoolbench`` (``[tool.setuptools.package-dir]`` in
``pyproject.toml``). import-linter reads a package's modules from its one folder, so the import
contract is checked on a copy laid out as the wheel lays it out: :func:`installed_tree`.
``python tests/support/layout.py DEST`` writes that copy (``.ci/lint-imports`` uses it).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[2]


def package_dirs(repo: Path = REPO) -> dict[str, str]:
    """``pyproject.toml``'s ``[tool.setuptools.package-dir]``: package name -> folder of the repository."""
    with (repo / "pyproject.toml").open("rb") as handle:
        return dict(tomllib.load(handle)["tool"]["setuptools"]["package-dir"])


def installed_tree(dest: Path, repo: Path = REPO) -> Path:
    """Copy the packages of ``repo`` into ``dest`` as installed (``dest/wildtoolbench/graphs/...``) and
    ``pyproject.toml`` beside them; returns ``dest``. ``__pycache__`` folders are left out."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package, folder in sorted(package_dirs(repo).items(), key=lambda item: item[0].count(".")):
        target = dest.joinpath(*package.split("."))
        shutil.copytree(repo / folder, target, ignore=ignore, dirs_exist_ok=True)
    shutil.copy2(repo / "pyproject.toml", dest / "pyproject.toml")
    return dest


if __name__ == "__main__":
    installed_tree(Path(sys.argv[1]))
