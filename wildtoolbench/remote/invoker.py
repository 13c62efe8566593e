"""What ``wtb eval --server`` and ``wtb generate --server`` share (docs/guides/server.md): one session is one run of a
graph deployed on a LangGraph Server, started on a new thread and waited for.

:class:`RemoteGraphInvoker` holds the connection side (client, URL, graph id, batch id, LangSmith project)
and :meth:`RemoteGraphInvoker.run_graph`, the run-and-wait of one session with its trace metadata;
:class:`wildtoolbench.remote.evaluation.RemoteEvaluation` and
:class:`wildtoolbench.remote.generation.RemoteGeneration` add what a run's reply means for their graph.
:func:`run_batch_on_server` opens the client, builds the invoker and hands it to the local batch runner,
which stays the single writer of the outputs.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from wildtoolbench.remote.client import RunReply, connect, display_url, wait_for_run
from wildtoolbench.tracing import tracing_requested

# A model request the provider refused for its content (HTTP 400/413/422, never retried): the session's
# own failure, scored or kept on resume, never an infrastructure failure (docs/evaluation.md §5).
REJECTED_REQUEST = re.compile(r"^model request failed \(not retried\): http (400|413|422)\b")

T = TypeVar("T")


def langsmith_project(no_trace: bool = False) -> str | None:
    """The LangSmith project to ask the server to trace into: ``$LANGSMITH_PROJECT`` (or ``$LANGCHAIN_PROJECT``)
    when the client asks for tracing and ``--no-trace`` is not given, else ``None`` (the server's own project)."""
    if no_trace or not tracing_requested():
        return None
    return os.environ.get("LANGSMITH_PROJECT") or os.environ.get("LANGCHAIN_PROJECT") or None


class RemoteGraphInvoker:
    """The part of a session invoker that talks to the server: one run of ``graph_id`` per session.

    Each run goes to a new thread whose metadata, like the run's, is the session's trace metadata plus
    ``wtb_batch_id`` (the same for every session of one command); the run's name and tags are the local
    trace's. Subclasses set :attr:`GRAPH_ID` and define ``__call__``.

    Args:
        client: a client from :func:`wildtoolbench.remote.client.connect`.
        url: the server's URL (for messages and error lines; credentials redacted).
        graph_id: the deployed graph; default the subclass's :attr:`GRAPH_ID`.
        batch_id: ``wtb_batch_id`` metadata; default a new UUID.
        project: LangSmith project for the server's traces (:func:`langsmith_project`).
        threads: ``True``: each run on a new thread that stays on the server (found by its metadata);
            ``False`` (``wtb eval --no-server-threads``): a threadless run, whose temporary thread the server
            deletes when it ends (docs/guides/server.md), so an in-memory server keeps nothing per session.
    """

    GRAPH_ID = ""

    def __init__(
        self,
        client: Any,
        url: str,
        *,
        graph_id: str | None = None,
        batch_id: str | None = None,
        project: str | None = None,
        threads: bool = True,
    ):
        self.client = client
        self.url = display_url(url)
        self.graph_id = graph_id or self.GRAPH_ID
        self.batch_id = batch_id or uuid.uuid4().hex
        self.project = project
        self.threads = threads

    async def run_graph(
        self,
        payload: Mapping[str, Any],
        context: Mapping[str, Any],
        config: Mapping[str, Any],
        *,
        on_values: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunReply:
        """Start one run of the graph on a new thread (threadless with ``threads=False``) and wait for its end
        (:func:`wildtoolbench.remote.client.wait_for_run`).

        Args:
            payload: the graph's input.
            context: the graph's context, resolved on the client.
            config: the session's trace configuration (``metadata``, ``run_name``, ``tags``, as
                :func:`wildtoolbench.tracing.session_run_config` or ``run_config`` of the generation runner make it).
            on_values: stream the run and call this with its output values as they change (the paid replies
                of ``wtb eval --cache``, docs/trials.md §8.1); ``None``: wait for the run's end in one request.

        Returns:
            The run's :class:`~wildtoolbench.remote.client.RunReply` (its output, or the error it ended with).

        Raises:
            wildtoolbench.remote.client.ServerFailure: the server unreachable, an HTTP error, a run that did
                not end (the caller turns it into an infrastructure failure).
        """
        return await wait_for_run(
            self.client,
            self.graph_id,
            thread_id=str(uuid.uuid4()),
            input=dict(payload),
            context=dict(context),
            metadata={**config["metadata"], "wtb_batch_id": self.batch_id},
            config={"run_name": config["run_name"], "tags": config["tags"]},
            langsmith_project=self.project,
            on_values=on_values,
            create_thread=self.threads,
        )


async def run_batch_on_server(
    invoker: type[RemoteGraphInvoker],
    batch: Callable[..., Awaitable[T]],
    *args: Any,
    server: str,
    concurrency: int = 4,
    no_trace: bool = False,
    settings: Mapping[str, Any] | None = None,
    threads: bool = True,
    **kwargs: Any,
) -> T:
    """Run a local batch (``batch(*args, concurrency=, settings=, invoke=, **kwargs)``) with every session sent to
    the LangGraph Server at ``server`` through one client and one ``invoker``.

    Args:
        invoker: the invoker class (:class:`~wildtoolbench.remote.evaluation.RemoteEvaluation`,
            :class:`~wildtoolbench.remote.generation.RemoteGeneration`).
        batch: the batch runner (:func:`wildtoolbench.runner.arun_eval`,
            :func:`wildtoolbench.runner.generation.run_batch`).
        server: the server's base URL (API key from the environment, :func:`wildtoolbench.remote.client.connect`).
        concurrency: runs in flight on the server.
        no_trace: do not ask the server to trace into the client's ``$LANGSMITH_PROJECT``.
        settings: recorded by the batch with ``"server"`` (the URL, redacted).
        threads: ``False``: threadless runs (``--no-server-threads``, :class:`RemoteGraphInvoker`).

    Returns:
        What ``batch`` returns.

    Raises:
        What ``batch`` raises; models.ConfigurationError for a malformed URL.
    """
    recorded = {**dict(settings or {}), "server": display_url(server)}
    async with connect(server, concurrency=concurrency) as client:
        invoke = invoker(client, server, project=langsmith_project(no_trace), threads=threads)
        return await batch(*args, concurrency=concurrency, settings=recorded, invoke=invoke, **kwargs)


__all__ = ["REJECTED_REQUEST", "RemoteGraphInvoker", "langsmith_project", "run_batch_on_server"]
