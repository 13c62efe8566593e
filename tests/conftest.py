"""Shared test fixtures and the layout's markers.

The tests mirror the packages: ``tests/unit/<package>/`` for the pure layers (``bench``, ``models``,
``nodes``, ``graphs``, ``wtb``), ``tests/integration/`` for subprocesses, servers and whole runs,
helpers in ``tests/support/``. Every test gets the marker of its folder, ``unit`` or ``integration``,
so ``python -m pytest -q -m unit`` is the fast subset (README "Development").

Tests that read ``../shared`` (reference fixtures, real tool lists) use the
``shared_dir`` fixture: they skip with a reason when it is absent, and fail
instead when ``WTB_REQUIRE_SHARED=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("WTB_SHARED_DIR", REPO_ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """Path of ``../shared``; skips (or fails under WTB_REQUIRE_SHARED=1) when missing."""
    if not (SHARED_DIR / "fixtures" / "reference").is_dir():
        message = f"../shared not found at {SHARED_DIR} (set WTB_SHARED_DIR to point at it)"
        if os.environ.get("WTB_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return SHARED_DIR


@pytest.fixture(scope="session")
def reference_dir(shared_dir: Path) -> Path:
    """``../shared/fixtures/reference``."""
    return shared_dir / "fixtures" / "reference"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test ``unit`` or ``integration`` by the folder it lives in (``-m unit``: the fast subset)."""
    for item in items:
        parts = Path(str(item.fspath)).relative_to(REPO_ROOT).parts
        if parts[:2] == ("tests", "integration"):
            item.add_marker(pytest.mark.integration)
        elif parts[:2] == ("tests", "unit"):
            item.add_marker(pytest.mark.unit)
