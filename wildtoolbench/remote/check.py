"""Before the first session of a ``--server`` run: the client-side checks of the model specs, then the server's.

The server runs the models, so it is the server's environment that has to hold the API keys, the
packages and the files. The checks, in order (a failure is a configuration error: exit status 2,
nothing written):

1. each spec is well formed and its provider known (the client derives the records' model name);
   a ``replay:``, ``scripted:`` or ``graph:PATH.py:ATTR`` spec names an absolute path (a relative one would be resolved in the
   server's working directory, not the user's); when that file exists on the client too, it is checked
   as in a local run (e.g. the replay candidate is in it);
2. the server answers and serves the graph (``POST /assistants/search``; a missing or wrong API key
   shows here as HTTP 401/403);
3. the server can open every such file: one threadless run of the ``evaluation``
   graph per file with ``{"session_id": <an id no file holds>}`` and the file as the context's
   ``dataset``. The graph's first node opens the file to look the id up, so the run fails either with
   ``ValueError`` (the server read the file: it has no such session) or with ``OSError`` /
   ``FileNotFoundError`` (it could not open it). No model is built or called, nothing is stored. A
   server whose deployment does not accept the file (server mode, docs/settings.md §8) answers
   ``PolicyError`` without opening it;
4. for ``wtb eval``, the server accepts the run's context: one threadless run with the context every
   session will carry and the same unknown ``session_id``. The server checks the context first (its
   model spec and base URL against ``WTB_SERVER_MODELS`` / ``WTB_SERVER_BASE_URLS``) and refuses it
   with ``PolicyError``; an accepted context fails on the unknown id (``ValueError``) before any model
   is built. For ``wtb generate``, the same question of the ``generation`` graph: one threadless run
   with the run's context and an input whose ``status`` is already ``failed``, which every role
   passes through without building or calling a model; a refused context answers ``PolicyError``
   before any node, an accepted one ends at once.

Problems only a model request can reveal (a key the provider rejects, a base URL the server cannot
reach) stay what they are locally: infrastructure errors of the sessions (exit status 3).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wildtoolbench.remote.client import ServerFailure, connect, display_url, find_graph, wait_for_run

PROBED_FILE_PROVIDERS = ("replay", "scripted", "graph")
"""Providers whose spec names a file that the server reads (``graph:`` only with a ``PATH.py`` target)."""

PROBE_GRAPH = "evaluation"
"""The graph that opens a file for the probe (its ``session_id`` input with a ``dataset`` context)."""

_READABLE = ("ValueError", "JSONDecodeError", "UnicodeDecodeError")
"""Error classes of a probe run that show the server opened the file (it holds no probe session)."""

REFUSED = "PolicyError"
"""Error class of a run whose context the server's deployment refuses (``wildtoolbench.models.server_policy.PolicyError``)."""


def spec_file(spec: str) -> str | None:
    """The file a ``replay:PATH#CANDIDATE``, ``scripted:PATH[#role]`` or ``graph:PATH.py:ATTR`` spec names, else ``None``
    (also for ``graph:package.module:ATTR``, which the server imports from its own packages)."""
    provider, sep, name = spec.partition(":")
    provider = provider.strip()
    if not sep or provider not in PROBED_FILE_PROVIDERS:
        return None
    if provider == "graph":
        from wildtoolbench.models.providers.graph import is_file_target, parse_name

        try:
            target, _ = parse_name(name)
        except ValueError:
            return None  # malformed: resolve_candidate reports it
        return target if is_file_target(target) else None
    if provider == "replay":
        path = name.rpartition("#")[0] or name
    else:
        path = name.partition("#")[0]
    return path or None


def check_specs_for_server(specs: Iterable[str], settings: Any = None) -> list[str]:
    """Client-side part of the check (step 1 of the module doc); returns the files the server must read.

    Args:
        specs: model specs of the run (``""`` entries, roles without a model, are skipped).
        settings: ``models.ModelSettings`` for the local check of a file that exists on the client.

    Returns:
        The distinct file paths named by ``replay:``, ``scripted:`` and ``graph:PATH.py`` specs, in order.

    Raises:
        models.ConfigurationError: a malformed spec, an unknown provider, a relative file path, or a
            local copy of the file that fails the provider's own check.
    """
    from wildtoolbench.models import ConfigurationError, resolve_candidate

    files: list[str] = []
    for spec in specs:
        if not spec:
            continue
        candidate = resolve_candidate(spec, settings)  # malformed spec / unknown provider
        path = spec_file(spec)
        if path is None:
            continue
        if not Path(path).is_absolute():
            raise ConfigurationError(
                f"with --server, the file of model spec {spec!r} must be an absolute path: the server opens it, "
                "and a relative path would be looked up in the server's working directory"
            )
        if Path(path).is_file():
            candidate.check()
        if path not in files:
            files.append(path)
    return files


async def probe_file(client: Any, path: str) -> None:
    """Ask the server to open ``path`` (step 3 of the module doc).

    Raises:
        models.ConfigurationError: the server could not open the file, or answered unexpectedly.
        ServerFailure: the server could not be reached.
    """
    from wildtoolbench.models import ConfigurationError

    probe_id = f"wtb-server-probe-{uuid.uuid4().hex}"
    reply = await wait_for_run(
        client,
        PROBE_GRAPH,
        thread_id="",
        input={"session_id": probe_id},
        context={"dataset": path},
        metadata={"wtb_probe_file": path},
        config={"run_name": "wtb server probe", "tags": ["wildtoolbench", "wtb-server-probe"]},
        create_thread=False,
    )
    error = reply.error or {}
    if error.get("error") in _READABLE:
        return
    if error.get("error") == REFUSED:
        raise ConfigurationError(f"the server refuses {path}: {error.get('message')}")
    if reply.error is None:
        raise ConfigurationError(f"the server's probe of {path} returned a session; it should have found none")
    raise ConfigurationError(
        f"the server cannot open {path} ({error.get('error')}: {error.get('message')}); with --server the server "
        "reads replay and script files itself: put the file at that absolute path on the server's machine "
        "(or in its image), then run the command again"
    )


async def probe_context(client: Any, context: Mapping[str, Any]) -> None:
    """Ask the server whether it accepts ``context`` for the ``evaluation`` graph (step 4 of the module doc).

    Raises:
        models.ConfigurationError: the server refuses the context (the message is the server's, naming
            the field and the server variable that would allow it), or answered unexpectedly.
        ServerFailure: the server could not be reached.
    """
    from wildtoolbench.models import ConfigurationError

    reply = await wait_for_run(
        client,
        PROBE_GRAPH,
        thread_id="",
        input={"session_id": f"wtb-server-probe-{uuid.uuid4().hex}"},
        context={k: v for k, v in context.items() if k != "dataset"},
        metadata={"wtb_probe_context": True},
        config={"run_name": "wtb server probe", "tags": ["wildtoolbench", "wtb-server-probe"]},
        create_thread=False,
    )
    error = reply.error or {}
    if error.get("error") in _READABLE:
        return
    if error.get("error") == REFUSED:
        raise ConfigurationError(str(error.get("message")))
    if reply.error is None:
        raise ConfigurationError("the server's context probe returned a session; it should have found none")
    raise ConfigurationError(
        f"the server cannot run the evaluation graph with this context ({error.get('error')}: {error.get('message')})"
    )


GENERATION_PROBE_INPUT = {"session_id": "wtb-server-probe", "status": "failed", "failure_reason": "wtb server probe"}
"""Input of the generation graph's context probe: a session that has already failed, so no role calls a model."""


async def probe_generation_context(client: Any, context: Mapping[str, Any]) -> None:
    """Ask the server whether it accepts ``context`` for the ``generation`` graph (step 4 of the module doc).

    Raises:
        models.ConfigurationError: the server refuses the context (the server's message, naming the
            field and the server variable that would allow it) or cannot run the graph with it.
        ServerFailure: the server could not be reached.
    """
    from wildtoolbench.models import ConfigurationError

    reply = await wait_for_run(
        client,
        "generation",
        thread_id="",
        input=dict(GENERATION_PROBE_INPUT),
        context=dict(context),
        metadata={"wtb_probe_context": True},
        config={"run_name": "wtb server probe", "tags": ["wildtoolbench", "wtb-server-probe"]},
        create_thread=False,
    )
    error = reply.error
    if error is None:
        return
    if error.get("error") == REFUSED:
        raise ConfigurationError(str(error.get("message")))
    raise ConfigurationError(
        f"the server cannot run the generation graph with this context ({error.get('error')}: {error.get('message')})"
    )


async def acheck_server(
    url: str,
    graph_id: str,
    files: Iterable[str],
    *,
    api_key: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> None:
    """Steps 2 to 4 of the module doc against the server at ``url``.

    Args:
        url: the server's base URL.
        graph_id: the graph the run will use (``evaluation`` or ``generation``).
        files: files the server must open (from :func:`check_specs_for_server`).
        api_key: as in :func:`wildtoolbench.remote.client.connect`.
        context: the context payload every session will carry (step 4; of the ``evaluation`` or the
            ``generation`` graph, as ``graph_id``), or ``None``.

    Raises:
        models.ConfigurationError: the server cannot be reached, rejects the client, lacks the
            graph (or the ``evaluation`` graph needed for a file probe), cannot open a file, or
            refuses the context.
    """
    from wildtoolbench.models import ConfigurationError

    files = list(files)
    async with connect(url, concurrency=1, api_key=api_key) as client:
        try:
            await find_graph(client, graph_id)
            if files and graph_id != PROBE_GRAPH:
                await find_graph(client, PROBE_GRAPH)
            for path in files:
                await probe_file(client, path)
            if context is not None and graph_id == PROBE_GRAPH:
                await probe_context(client, context)
            elif context is not None and graph_id == "generation":
                await probe_generation_context(client, context)
        except ServerFailure as exc:
            raise ConfigurationError(f"LangGraph server {display_url(url)}: {exc}") from None


def check_server(url: str, graph_id: str, specs: Iterable[str], settings: Any = None, *, context: Any = None) -> None:
    """Every check of the module doc, before the first session of a ``--server`` run (runs its own event loop).

    Args:
        url: the server's base URL.
        graph_id: ``evaluation`` or ``generation``.
        specs: the run's model specs.
        settings: ``models.ModelSettings`` for local copies of files.
        context: the run's ``EvaluationContext`` (``wtb eval``) or generation ``Context`` (``wtb generate``):
            the server is asked whether it accepts the context the sessions will carry (step 4).

    Raises:
        models.ConfigurationError: a malformed URL; see :func:`check_specs_for_server` and :func:`acheck_server`.
    """
    from wildtoolbench.remote.client import check_url

    check_url(url)
    files = check_specs_for_server(specs, settings)
    payload = None
    if context is not None and graph_id == "generation":
        from wildtoolbench.remote.generation import generation_context_payload

        payload = generation_context_payload(context)
    elif context is not None:
        from wildtoolbench.remote.evaluation import context_payload

        payload = context_payload(context)
    asyncio.run(acheck_server(url, graph_id, files, context=payload))
