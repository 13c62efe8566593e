"""LangSmith tracing for ``wtb eval`` / ``wtb generate``: the client, run metadata and secret redaction.

- :mod:`wildtoolbench.tracing.client`: :func:`tracing_scope` turns tracing on or off for one command and installs a
  redacting client (:func:`make_client`).
- :mod:`wildtoolbench.tracing.run_metadata`: the root run of each session (:func:`session_run_config`) and the run's
  resolved settings (:func:`context_settings`).
- :mod:`wildtoolbench.tracing.redaction`: :func:`redact`, :func:`redact_text`, :func:`redact_record`.

Node-level task and step metadata live in :mod:`wildtoolbench.nodes.tracing`.
"""

from wildtoolbench.tracing.client import (
    endpoint_unreachable,
    langsmith_endpoint,
    make_client,
    redact_run_ops,
    tracing_requested,
    tracing_scope,
)
from wildtoolbench.tracing.redaction import (
    REDACTED,
    SECRET_KEYS,
    redact,
    redact_record,
    redact_text,
    secret_values,
)
from wildtoolbench.tracing.run_metadata import (
    context_settings,
    project_version,
    session_metadata,
    session_run_config,
    session_run_name,
)

__all__ = [
    "REDACTED",
    "SECRET_KEYS",
    "context_settings",
    "endpoint_unreachable",
    "langsmith_endpoint",
    "make_client",
    "project_version",
    "redact",
    "redact_record",
    "redact_run_ops",
    "redact_text",
    "secret_values",
    "session_metadata",
    "session_run_config",
    "session_run_name",
    "tracing_requested",
    "tracing_scope",
]
