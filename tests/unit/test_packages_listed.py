"""Every package folder is in the wheel (docs/architecture.md §4): each folder holding an ``__init__.py`` below a
folder that ``[tool.setuptools.package-dir]`` maps is listed, under its installed name, in ``[tool.setuptools]
packages`` (a folder missing there would be missing from the wheel), and the list names no folder that is not there."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from tests.support.layout import package_dirs

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def _listed(repo: Path) -> set[str]:
    with (repo / "pyproject.toml").open("rb") as handle:
        return set(tomllib.load(handle)["tool"]["setuptools"]["packages"])


def _package_folders(repo: Path) -> set[str]:
    found = set()
    for package, folder in package_dirs(repo).items():
        root = repo / folder
        for init in root.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            relative = init.parent.relative_to(root).parts
            found.add(".".join((package, *relative)))
    return found


def test_every_package_folder_is_listed_and_every_listed_package_exists():
    assert _package_folders(REPO) == _listed(REPO)


def test_a_new_folder_that_is_not_listed_is_found(tmp_path):
    (tmp_path / "wildtoolbench" / "extra").mkdir(parents=True)
    (tmp_path / "wildtoolbench" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "wildtoolbench" / "extra" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackages = ["wildtoolbench"]\n[tool.setuptools.package-dir]\n"wildtoolbench" = "wildtoolbench"\n',
        encoding="utf-8",
    )
    assert _package_folders(tmp_path) - _listed(tmp_path) == {"wildtoolbench.extra"}
