"""The ``local`` extra installs with no compiler and runs a real evaluation (issue 25, part 1).

A fresh venv gets ``pip install -e ".[local]"`` of a copy of this repository, offline from the
wheel folder ``$WTB_WHEELHOUSE`` (``.ci/run`` fills it with ``pip download -d DIR ".[local]"
"setuptools>=77" wheel``), with a PATH holding only the Python interpreter and stand-in ``cc``,
``gcc``, ``c++``, ``g++``, ``clang``, ``clang++``, ``cmake`` and ``ninja`` that record any call and
fail. Then ``wtb eval --limit 1`` evaluates one demo session with the bundled local model, and its
outputs must be well formed (``.ci/check_local_run.py``). Without ``$WTB_WHEELHOUSE`` the test is
skipped (it fails instead under ``WTB_REQUIRE_LOCAL=1``): tests use no network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD_TOOLS = ("cc", "gcc", "c++", "g++", "clang", "clang++", "cmake", "ninja", "make")


def _copy_repository(root: Path) -> None:
    """The repository's files (tracked and new, not ignored) copied to ``root``."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)


def _tools_dir(path: Path, calls: Path) -> Path:
    """A PATH folder with ``python3`` and build tools that only record their call and fail."""
    path.mkdir()
    (path / "python3").symlink_to(sys.executable)
    for tool in BUILD_TOOLS:
        script = path / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\nexit 1\n', encoding="utf-8")
        script.chmod(0o755)
    return path


@pytest.fixture
def wheelhouse() -> Path:
    folder = os.environ.get("WTB_WHEELHOUSE")
    if not folder or not Path(folder).is_dir():
        reason = "WTB_WHEELHOUSE (a folder of the local extra's wheels, made by .ci/run) is not set"
        if os.environ.get("WTB_REQUIRE_LOCAL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return Path(folder)


@pytest.mark.local_model
@pytest.mark.slow
def test_local_extra_installs_without_a_compiler_and_evaluates(wheelhouse: Path, tmp_path: Path) -> None:
    clone, venv, calls = tmp_path / "clone", tmp_path / "venv", tmp_path / "compiler-calls.log"
    _copy_repository(clone)
    tools = _tools_dir(tmp_path / "tools", calls)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_", "PIP_", "VIRTUAL_ENV"))
        and k not in ("PYTHONPATH", "CC", "CXX", "CMAKE_ARGS", "LDSHARED")
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{tools}",
        WTB_CACHE_DIR=str(tmp_path / "cache"),
        LANGSMITH_TRACING="false",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )

    def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            argv, cwd=clone, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        assert result.returncode == 0, f"{argv}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        return result

    run(["python3", "-m", "venv", str(venv)], timeout=300)
    run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--find-links", str(wheelhouse), "-e", ".[local]"],
        timeout=900,
    )
    assert not calls.exists(), f"the install called a build tool:\n{calls.read_text()}"
    out = tmp_path / "eval"
    run(
        [str(venv / "bin" / "wtb"), "eval", "--limit", "1", "--out", str(out), "--no-progress", "--no-trace"],
        timeout=1800,
    )
    checked = run([str(venv / "bin" / "python"), ".ci/check_local_run.py", "eval", str(out), "--sessions", "1"], 60)
    assert "1 result record(s)" in checked.stdout
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert metric["total_info"]["session"]["total_count"] == 1
    assert not calls.exists(), f"a build tool was called:\n{calls.read_text()}"
    # The model is stored once: the installed parts; nothing joined was written to the cache.
    if sys.platform.startswith("linux"):
        assert not list((tmp_path / "cache").rglob("*.gguf"))
