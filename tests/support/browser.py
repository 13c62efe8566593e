"""Headless Chromium for the browser tests: Debian's ``chromium`` driven by Playwright (never a downloaded
browser). Absent, the tests skip with the reason, or fail when ``WTB_REQUIRE_BROWSER=1`` (as in CI)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("WTB_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def unavailable(reason: str) -> None:
    """Skip the test for ``reason``; fail it instead when ``WTB_REQUIRE_BROWSER=1``."""
    if os.environ.get("WTB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required (WTB_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless Chromium (a Playwright ``Browser``), closed at the end."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install playwright; the browser itself comes from apt: chromium)")
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        unavailable(f"no chromium at {CHROMIUM} (apt-get install -y chromium, or set WTB_CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()
