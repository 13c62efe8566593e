"""Synchronous counterparts of the graphs' asynchronous nodes, so that ``invoke`` and ``stream`` work as
``ainvoke`` and ``astream`` do (docs/evaluation.md §7, docs/guides/scripting.md).

LangGraph wraps an ``async def`` node in a ``RunnableCallable`` with no synchronous function, and a
synchronous ``graph.invoke(...)`` then stops at the first node with ``TypeError: No synchronous
function provided``. :func:`add_sync_counterparts` gives every such node of a ``StateGraph`` builder
a synchronous function that runs the same coroutine to its end, so both calls run the same code and
return the same record.

Where the coroutine runs:

- no event loop runs in the calling thread (a script, LangGraph's worker threads): on an event loop
  kept for that thread, so that the models a candidate builds once per loop
  (``wildtoolbench.models.candidate``) are built once, not once per node;
- an event loop already runs in the thread (a notebook cell calling ``invoke``): on one helper thread
  with its own loop, in a copy of the caller's context variables (run metadata, usage scopes).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.graph import StateGraph

_local = threading.local()
_helper: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
_helper_lock = threading.Lock()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """The event loop kept for the calling thread (made on first use)."""
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


def _helper_loop() -> asyncio.AbstractEventLoop:
    """The loop of the helper thread (started on first use, a daemon: it ends with the process)."""
    global _helper
    with _helper_lock:
        if _helper is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="wtb-sync-nodes", daemon=True)
            thread.start()
            _helper = (loop, thread)
        return _helper[0]


def run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` to its end from synchronous code and return its result (see the module doc for where).

    Raises:
        Exception: whatever the coroutine raises, unchanged.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_loop().run_until_complete(coroutine)
    loop = _helper_loop()
    context = contextvars.copy_context()
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def start() -> None:
        task = context.run(loop.create_task, coroutine)  # the task runs in (a copy of) the caller's context

        def finish(task: asyncio.Task[Any]) -> None:
            if task.cancelled():
                done.cancel()
            elif task.exception() is not None:
                done.set_exception(task.exception())  # type: ignore[arg-type]
            else:
                done.set_result(task.result())

        task.add_done_callback(finish)

    loop.call_soon_threadsafe(start)
    return done.result()


def synchronous(node: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """A synchronous function with the signature of the ``async def`` ``node`` (LangGraph injects ``config`` and
    ``runtime`` by it) that runs ``node``'s coroutine with :func:`run_coroutine`."""

    @functools.wraps(node)
    def run(*args: Any, **kwargs: Any) -> Any:
        return run_coroutine(node(*args, **kwargs))

    return run


def add_sync_counterparts(builder: StateGraph) -> StateGraph:
    """Give every asynchronous node of ``builder`` (added, not yet compiled) a synchronous function.

    The node keeps its asynchronous function for ``ainvoke`` / ``astream`` and everything LangGraph
    inferred when it was added (input schema, destinations); only LangGraph's wrapper is replaced.

    Returns:
        ``builder`` itself.
    """
    from langgraph._internal._runnable import RunnableCallable  # the wrapper add_node made (langgraph >= 1.0)

    for name, spec in builder.nodes.items():
        runnable: Runnable[Any, Any] | Any = spec.runnable
        if isinstance(runnable, RunnableCallable) and runnable.func is None and runnable.afunc is not None:
            spec.runnable = RunnableCallable(
                synchronous(runnable.afunc),
                runnable.afunc,
                name=runnable.name or name,
                tags=runnable.tags,
                trace=runnable.trace,
                recurse=runnable.recurse,
                **runnable.kwargs,
            )
    return builder
