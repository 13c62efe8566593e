"""The built wheel installs one import name, ``wildtoolbench`` (issue 36, docs/architecture.md §4): its top-level
entries are exactly ``wildtoolbench/`` and the dist-info; every folder with an ``__init__.py`` under the mapped
folders is a package pyproject.toml lists; the package data (prompts en/zh, bench/data, the report's and the
review app's assets, paper_leaderboard.json) is in it.

The wheel is built from a copy of the tracked files with build isolation (``pip wheel --no-deps``: pip fetches
the ``[build-system]`` requirements from the package registry, as any ``pip install git+...`` does).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

from tests.support.layout import REPO, package_dirs

pytestmark = pytest.mark.slow


def _pyproject() -> dict:
    with (REPO / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)


def _package_folders() -> set[str]:
    """Every package under the mapped folders (a folder holding ``__init__.py``), by its installed name."""
    found = set()
    for package, folder in package_dirs().items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder)
            found.add(".".join((package, *relative.parts)) if relative.parts else package)
    # a mapped folder inside `wildtoolbench/` is its own mapping, not a second name
    return found


def test_every_package_folder_is_listed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    assert _package_folders() == listed


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((REPO / name).read_bytes())
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 and "Could not find a version" in done.stderr + done.stdout:
        pytest.skip(f"the build requirements cannot be fetched here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("*.whl")
    return built


def test_wheel_has_one_top_level_name(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    dist_info = [t for t in top if t.endswith(".dist-info")]
    assert len(dist_info) == 1
    assert top - set(dist_info) == {"wildtoolbench"}
    top_level = zipfile.ZipFile(wheel).read(f"{dist_info[0]}/top_level.txt").decode().split()
    assert top_level == ["wildtoolbench"]


def test_wheel_holds_every_package_and_the_package_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in _package_folders():
        assert f"{package.replace('.', '/')}/__init__.py" in names, package
    for package, patterns in _pyproject()["tool"]["setuptools"]["package-data"].items():
        folder = REPO / package_dirs().get(package, package.replace(".", "/"))
        for pattern in patterns:
            expected = [p for p in folder.glob(pattern) if p.is_file() and "__pycache__" not in p.parts]
            assert expected, (package, pattern)
            for path in expected:
                assert f"{package.replace('.', '/')}/{path.relative_to(folder).as_posix()}" in names, path
    for required in (
        "wildtoolbench/prompts/en",
        "wildtoolbench/prompts/zh",
        "wildtoolbench/bench/data/demo_sessions.jsonl",
        "wildtoolbench/bench/data/demo_candidates.jsonl",
        "wildtoolbench/reports/paper_leaderboard.json",
        "wildtoolbench/reports/assets/",
        "wildtoolbench/review/assets/",
    ):
        assert any(name.startswith(required) for name in names), required
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "wtb = wildtoolbench.cli:main" in entry_points
