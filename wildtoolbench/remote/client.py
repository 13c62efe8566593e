"""The connection to a LangGraph Server: the SDK client, the API key, one graph run, and its failures.

One session is one run of a deployed graph on a fresh thread (``POST /threads/<id>/runs/wait`` with
``if_not_exists="create"``): the thread and the run carry the session's metadata, so both are found
in the server's UI and in LangSmith; the run is cancelled by the server if the client goes away
(``on_disconnect="cancel"``: a killed ``wtb`` does not leave model requests running), and only its
final checkpoint is stored (``durability="exit"``). A run whose output values the caller wants as they
change (``on_values``: the paid replies of ``wtb eval --cache``, docs/trials.md §8.1) is streamed instead
(``/runs/stream``, ``stream_mode="values"``).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from wildtoolbench.tracing import redact_text

API_KEY_VARIABLES = ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
"""Where the API key of a hosted deployment comes from, first set wins (never written to any output)."""

RECONNECTS = 2
"""Reconnections to a run whose response was cut off (the SDK's backoff: about 1, then 2 s). A server that
restarts or moves the run to another replica is joined again; a server that is gone fails the session
(an infrastructure error) after about 3 s."""

TRANSPORT_RETRIES = 1
"""Immediate retries of a refused connection (the SDK's own default, 5, takes about 8 s per try)."""


def api_key_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The deployment's API key: ``$LANGGRAPH_API_KEY``, else ``$LANGSMITH_API_KEY``, else ``$LANGCHAIN_API_KEY``.

    Args:
        environ: mapping to read (default ``os.environ``).

    Returns:
        The first non-empty value (quotes and blanks stripped), or ``None``.
    """
    env = os.environ if environ is None else environ
    for name in API_KEY_VARIABLES:
        value = (env.get(name) or "").strip().strip("'\"")
        if value:
            return value
    return None


def display_url(url: str) -> str:
    """``url`` as written to outputs and messages: credentials in it (user info, ``?api_key=``) redacted."""
    return redact_text(url.rstrip("/"))


def check_url(url: str) -> str:
    """Validate a ``--server`` URL; returns it without a trailing ``/``.

    Raises:
        models.ConfigurationError: not an ``http://`` or ``https://`` URL with a host.
    """
    from wildtoolbench.models import ConfigurationError

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"--server must be an http:// or https:// URL of a LangGraph Server, got {display_url(url)!r}"
        )
    return url.strip().rstrip("/")


def connect(url: str, *, concurrency: int = 4, api_key: str | None = None, timeout: float = 30.0) -> Any:
    """A ``langgraph_sdk`` client for ``url`` sized for ``concurrency`` runs in flight.

    Args:
        url: the server's base URL (``http://127.0.0.1:2024``, a LangGraph Platform deployment URL).
        concurrency: runs in flight; the connection pool holds that many connections plus a few.
        api_key: sent as ``x-api-key``; default :func:`api_key_from_env`.
        timeout: seconds to connect and to write a request. Reading has no limit: a run may take
            minutes and the server keeps its connection alive while it runs.

    Returns:
        A ``langgraph_sdk.client.LangGraphClient`` (an async context manager; close it with ``aclose()``).

    Raises:
        models.ConfigurationError: a malformed URL (:func:`check_url`).
    """
    import httpx
    import langgraph_sdk
    from langgraph_sdk.client import LangGraphClient

    from wildtoolbench.tracing import project_version

    key = api_key if api_key is not None else api_key_from_env()
    headers = {"User-Agent": f"wildtoolbench/{project_version()} langgraph-sdk-py/{langgraph_sdk.__version__}"}
    if key:
        headers["x-api-key"] = key
    transport = httpx.AsyncHTTPTransport(
        retries=TRANSPORT_RETRIES,
        limits=httpx.Limits(max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8),
    )
    http = httpx.AsyncClient(
        base_url=check_url(url),
        transport=transport,
        timeout=httpx.Timeout(connect=timeout, read=None, write=timeout, pool=None),
        headers=headers,
    )
    return LangGraphClient(http)


@dataclass
class RunReply:
    """What the server said about one run.

    Attributes:
        output: the run's output (the graph's output values), or ``None`` when the run failed.
        error: ``{"error": exception class, "message": text}`` when the run failed on the server
            (the server hides the message of most exception classes: "An internal error occurred").
        thread_id / run_id: where to find the run on the server (``run_id`` when the server said it).
    """

    output: dict[str, Any] | None
    error: dict[str, str] | None
    thread_id: str
    run_id: str | None = None


class ServerFailure(Exception):
    """The server could not be reached or did not answer one run (HTTP error, refused or cut connection).

    Attributes:
        message: one line, credentials redacted, e.g. ``"HTTP 503 from the server: ..."``.
        thread_id / run_id: the run's thread and id, when known.
    """

    def __init__(self, message: str, thread_id: str | None = None, run_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.thread_id = thread_id
        self.run_id = run_id


def describe_failure(exc: BaseException) -> str:
    """One redacted line for an exception of the HTTP layer: ``"HTTP 404 from the server: ..."``, ``"connection refused ..."``."""
    import httpx

    if isinstance(exc, httpx.HTTPStatusError):
        body = ""
        try:
            body = exc.response.text.strip().replace("\n", " ")
        except Exception:  # noqa: BLE001 - a streamed body that was not read
            body = ""
        text = f"HTTP {exc.response.status_code} from the server" + (f": {body[:300]}" if body else "")
    elif isinstance(exc, httpx.ConnectError):
        text = f"cannot connect to the server ({exc or type(exc).__name__})"
    elif isinstance(exc, httpx.TimeoutException):
        text = f"the server did not answer in time ({type(exc).__name__})"
    elif isinstance(exc, httpx.TransportError):
        text = f"the connection to the server broke ({type(exc).__name__}: {exc})"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return redact_text(text)


_LOCATION = re.compile(r"/threads/(?P<thread>[^/]+)/runs/(?P<run>[^/?]+)")


async def wait_for_run(
    client: Any,
    graph_id: str,
    *,
    thread_id: str,
    input: Mapping[str, Any],
    context: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    langsmith_project: str | None = None,
    create_thread: bool = True,
    on_values: Callable[[dict[str, Any]], None] | None = None,
) -> RunReply:
    """Run ``graph_id`` once on thread ``thread_id`` and wait for its end (``POST /threads/<id>/runs/wait``).

    Args:
        client: a client from :func:`connect`.
        graph_id: the deployed graph (``evaluation`` or ``generation``).
        thread_id: a new UUID per run (the thread is created with the run's ``metadata``), or
            with ``create_thread=False`` ``None`` for a threadless run that leaves nothing behind.
        input / context / metadata / config: as in ``client.runs.wait`` (``config`` takes
            ``run_name`` and ``tags``; ``context`` the graph's settings).
        langsmith_project: LangSmith project of the server's traces of this run, when the server traces.
        create_thread: ``False`` for a threadless run (``thread_id`` ignored).
        on_values: when given, the run is streamed (``/runs/stream``, ``stream_mode="values"``) and this is
            called with the graph's output values after every step that changed them, as they happen
            (:func:`stream_run`); the last of them is the run's output. ``None``: one ``/runs/wait`` request.

    Returns:
        A :class:`RunReply`: the output, or the server's error of a failed run.

    Raises:
        ServerFailure: an HTTP error status, a refused connection, a response cut off and not
            recovered by reconnecting (:data:`RECONNECTS`), or a body that is not JSON.
        asyncio.CancelledError: propagates (the server then cancels the run).
    """
    payload: dict[str, Any] = {
        "assistant_id": graph_id,
        "input": dict(input),
        "on_disconnect": "cancel",
        "durability": "exit",
    }
    if context is not None:
        payload["context"] = dict(context)
    if metadata is not None:
        payload["metadata"] = dict(metadata)
    if config is not None:
        payload["config"] = dict(config)
    if langsmith_project:
        payload["langsmith_tracer"] = {"project_name": langsmith_project}
    if create_thread:
        payload["if_not_exists"] = "create"
        path = f"/threads/{thread_id}/runs/wait"
    else:
        payload["on_completion"] = "delete"
        path = "/runs/wait"
    seen: dict[str, str | None] = {"run_id": None}

    def on_response(response: Any) -> None:
        match = _LOCATION.search(response.headers.get("content-location") or response.headers.get("location") or "")
        if match:
            seen["run_id"] = match.group("run")

    try:
        http = client.http
        if on_values is not None:
            body = await stream_run(http, path.replace("/runs/wait", "/runs/stream"), payload, on_response, on_values)
        elif hasattr(http, "request_reconnect"):
            body = await http.request_reconnect(
                path, "POST", json=payload, on_response=on_response, reconnect_limit=RECONNECTS
            )
        else:  # an SDK without it: the same request through the public API (its own reconnect policy)
            body = await client.runs.wait(
                thread_id if create_thread else None,
                graph_id,
                raise_error=False,
                **{k: v for k, v in payload.items() if k not in ("assistant_id", "langsmith_tracer")},
            )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of the HTTP exchange is the server's, for this run
        raise ServerFailure(describe_failure(exc), thread_id if create_thread else None, seen["run_id"]) from exc
    tid = thread_id if create_thread else ""
    if not isinstance(body, dict):
        raise ServerFailure(
            f"the server answered with {type(body).__name__}, not a JSON object", tid or None, seen["run_id"]
        )
    error = body.get("__error__")
    if error is not None:
        if not isinstance(error, dict):
            error = {"error": "error", "message": str(error)}
        return RunReply(
            None, {"error": str(error.get("error")), "message": str(error.get("message"))}, tid, seen["run_id"]
        )
    return RunReply(body, None, tid, seen["run_id"])


async def stream_run(
    http: Any,
    path: str,
    payload: Mapping[str, Any],
    on_response: Callable[[Any], None],
    on_values: Callable[[dict[str, Any]], None],
) -> Any:
    """One streamed run (``POST <path>`` with ``stream_mode="values"``): ``on_values`` gets each ``values``
    event's object as it arrives; returns the last one (the run's output), ``{"__error__": data}`` for an
    ``error`` event (as ``/runs/wait`` answers a failed run), or ``None`` when neither came.

    The SDK's ``http.stream`` reconnects to a stream cut after the server named the run (its ``Location``).

    Raises:
        whatever the HTTP exchange raises (:func:`wait_for_run` makes it a :class:`ServerFailure`).
    """
    body: Any = None
    async for part in http.stream(path, "POST", json={**payload, "stream_mode": ["values"]}, on_response=on_response):
        if part.event == "values" and isinstance(part.data, dict):
            body = part.data
            on_values(part.data)
        elif part.event == "error":
            body = {"__error__": part.data}
    return body


async def find_graph(client: Any, graph_id: str) -> None:
    """Check that the server answers and serves ``graph_id`` (one ``POST /assistants/search``).

    Raises:
        ServerFailure: the server cannot be reached, rejects the request (e.g. HTTP 401/403: a
            missing or wrong API key), or has no assistant of that graph.
    """
    try:
        found = await client.assistants.search(graph_id=graph_id, limit=1)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise ServerFailure(describe_failure(exc)) from exc
    if not found:
        raise ServerFailure(f"the server has no graph {graph_id!r} (deploy this project's langgraph.json)")
