"""The LangSmith client of a ``wtb`` command: on or off per run (``--no-trace``), redacting before upload.

Tracing uses the standard LangSmith variables (``LANGSMITH_TRACING``, ``LANGSMITH_API_KEY``,
``LANGSMITH_ENDPOINT``, ``LANGSMITH_PROJECT``; the older ``LANGCHAIN_*`` names work too).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from wildtoolbench.tracing.redaction import redact, secret_values


def tracing_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for LangSmith tracing (``LANGSMITH_TRACING`` or ``LANGCHAIN_TRACING_V2`` = true)."""
    env = os.environ if environ is None else environ
    for name in ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        if env.get(name, "").strip().lower() == "true":
            return True
    return False


DEFAULT_ENDPOINT = "https://api.smith.langchain.com"
CHECK_TIMEOUT = 1.5
"""Seconds the start-of-run reachability check of the LangSmith endpoint may take at most."""


def langsmith_endpoint(environ: Mapping[str, str] | None = None) -> str:
    """The LangSmith API URL the SDK will use: ``LANGSMITH_ENDPOINT``, else ``LANGCHAIN_ENDPOINT``, else the
    public service's."""
    env = os.environ if environ is None else environ
    for name in ("LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT"):
        value = env.get(name, "").strip()
        if value:
            return value
    return DEFAULT_ENDPOINT


def endpoint_unreachable(url: str, timeout: float = CHECK_TIMEOUT) -> str | None:
    """Why ``url`` cannot be reached now, or ``None`` when a TCP connection to it opens within ``timeout``.

    One connection attempt to the URL's host and port (through the HTTP(S) proxy the environment
    names for it, if any), in a daemon thread that the caller never waits on for more than
    ``timeout`` seconds: a host whose name does not resolve, a closed port, a firewall that drops
    packets all answer within that time. Nothing is sent over the connection.

    Returns:
        ``None`` (reachable), or a short reason such as ``"connection refused"`` / ``"no answer within 1.5 s"``.
    """
    import socket
    import threading
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    if not host:
        return f"not a URL: {url!r}"
    proxy = urllib.request.getproxies().get(parts.scheme or "https")
    if proxy and not urllib.request.proxy_bypass(host):
        proxy_parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if proxy_parts.hostname:
            host, port = proxy_parts.hostname, proxy_parts.port or 80
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(None)
        except OSError as exc:
            outcome.append(exc.strerror.lower() if getattr(exc, "strerror", None) else type(exc).__name__)

    worker = threading.Thread(target=connect, name="wtb-langsmith-check", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        return f"no answer within {timeout:g} s"
    return outcome[0]


# Run fields the anonymizer does not cover: the model's constructor arguments ("serialized", which
# holds base URLs) and "extra" (invocation parameters, runtime, metadata).
_RUN_FIELDS_TO_REDACT = ("serialized", "extra", "events", "error")


def redact_run_ops(runs: Any) -> list[dict[str, Any]]:
    """``process_buffered_run_ops`` hook of the LangSmith client: redact the run fields the anonymizer skips.

    Args:
        runs: the buffered run dicts (``post`` and ``patch`` operations) as the SDK is about to send them.

    Returns:
        The same runs, in the same order and with the same ids, with :func:`redact` applied to
        ``serialized``, ``extra``, ``events`` and ``error``.
    """
    secrets = secret_values()
    out = []
    for run in runs:
        run = dict(run)
        for key in _RUN_FIELDS_TO_REDACT:
            if run.get(key) is not None:
                run[key] = redact(run[key], secrets)
        out.append(run)
    return out


def make_client(client_class: type | None = None, **kwargs: Any) -> Any:
    """Build a ``langsmith.Client`` that redacts secrets before anything is uploaded.

    The client reads ``LANGSMITH_ENDPOINT`` / ``LANGSMITH_API_KEY`` as usual. Two SDK hooks redact:

    - ``anonymizer`` = :func:`redact`, applied by the SDK to every run's inputs, outputs, metadata
      and error string (it takes precedence over ``hide_inputs`` / ``hide_outputs``, which cover less);
    - ``process_buffered_run_ops`` = :func:`redact_run_ops` for what the anonymizer does not see
      (a model's serialized constructor arguments with its base URL, invocation parameters). Runs
      are then sent in buffers of ``run_ops_buffer_size`` (default 50) or every
      ``run_ops_buffer_timeout_ms`` (default 1000), and on ``client.flush()``.

    ``client_class`` (a ``langsmith.Client`` subclass) and extra keyword arguments go to the constructor.
    """
    import langsmith

    kwargs.setdefault("anonymizer", redact)
    kwargs.setdefault("process_buffered_run_ops", redact_run_ops)
    kwargs.setdefault("run_ops_buffer_size", 50)
    kwargs.setdefault("run_ops_buffer_timeout_ms", 1000)
    return (client_class or langsmith.Client)(**kwargs)


@contextlib.contextmanager
def tracing_scope(
    *,
    no_trace: bool = False,
    project: str | None = None,
    tags: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    client: Any = None,
) -> Iterator[Any]:
    """Run a block with LangSmith tracing set up for one ``wtb`` command.

    Args:
        no_trace: ``True`` (``--no-trace``) disables tracing for the block whatever the environment says.
        project: LangSmith project (default: ``LANGSMITH_PROJECT``, else the SDK's ``default``).
        tags: tags added to every run of the block.
        metadata: metadata added to every run of the block.
        client: a ``langsmith.Client`` to use; default :func:`make_client` (redacting).

    Yields:
        The client when tracing is on, else ``None``. On exit the client is flushed so that the
        traces are sent before the process ends.

    When tracing is asked for and no ``client`` is given, the LangSmith endpoint is checked once,
    first (:func:`endpoint_unreachable`, at most :data:`CHECK_TIMEOUT` seconds): an endpoint that
    cannot be reached turns tracing off for the block, with one warning line on stderr, so that
    an offline run is neither slowed down by upload retries nor flooded with their errors.
    """
    from langsmith import run_helpers

    if no_trace or not tracing_requested():
        with run_helpers.tracing_context(enabled=False):
            yield None
        return
    if client is None:
        endpoint = langsmith_endpoint()
        reason = endpoint_unreachable(endpoint)
        if reason is not None:
            sys.stderr.write(
                f"warning: LangSmith tracing is off for this run: {redact(endpoint)} cannot be reached ({reason}); "
                "--no-trace or LANGSMITH_TRACING=false skips this check\n"
            )
            sys.stderr.flush()
            with run_helpers.tracing_context(enabled=False):
                yield None
            return
    client = client or make_client()
    try:
        with run_helpers.tracing_context(
            enabled=True, client=client, project_name=project, tags=tags, metadata=metadata
        ):
            yield client
    finally:
        client.flush()
