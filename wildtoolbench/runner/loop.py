"""The event loop of a run (docs/evaluation.md §7.1): uvloop's where it is installed, else asyncio's."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run the coroutine ``main`` to completion on a new event loop and return its result (as ``asyncio.run``).

    The loop is uvloop's (libuv; about a tenth less CPU per model request in ``python -m benchmarks.perf``)
    where the ``uvloop`` package is installed (Linux, macOS), else asyncio's default loop. Either way
    Ctrl-C cancels ``main`` and raises ``KeyboardInterrupt``, and the loop is closed at the end.

    Raises:
        Whatever ``main`` raises.
    """
    try:
        import uvloop
    except ImportError:  # Windows, PyPy: the default loop
        return asyncio.run(main)
    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main)
    return uvloop.run(main)  # pragma: no cover - Python 3.10
