"""The one secret redaction of the project: API keys, ``Authorization`` headers, credentials in URLs.

Everything that leaves a process goes through it (docs/settings.md §8): every output file of a run
(``result.jsonl`` and ``errors.jsonl`` through :func:`redact_record`, ``summary.json``, ``run.json`` and
``manifest.json`` through :func:`redact`), the terminal and the logs of a command
(:func:`redacting_stream`), LangSmith traces (the client's anonymizer) and the errors a graph run on a
LangGraph Server sends back to its caller (:mod:`wildtoolbench.models.server_policy`). It removes the values of secret
environment variables (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ...), header values
(``Authorization``, ``api-key``, ``x-api-key``, cookies), bearer tokens and well-known key shapes
(``sk-...``, ``lsv2_...``), user information in URLs (``https://user:pass@host``) and query
parameters named like credentials (``api_key=``, ``key=``, ``token=``, ``sig=`` ...), also inside
JSON that was itself quoted into a string (an error body echoed into an exception message).

:func:`redact` walks any JSON-like value, :func:`redact_text` handles one string and
:func:`redact_record` a result record (only its string leaves that can hold a secret). It lives in
the models layer, below the graphs, so that a graph run on a server redacts what it sends back;
``wildtoolbench.tracing`` re-exports it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[REDACTED]"


# Keys whose string values are secrets wherever they appear (compared lower-cased, "-" -> "_").
SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "openai_api_key",
        "langsmith_api_key",
        "langchain_api_key",
        "deepseek_api_key",
        "anthropic_api_key",
        "x_api_key",
        "authorization",
        "proxy_authorization",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
        "auth_token",
        "bearer_token",
        "session_token",
        "id_token",
        "private_key",
        "cookie",
        "set_cookie",
        "x_goog_api_key",
        "x_auth_token",
        "x_access_token",
        "ocp_apim_subscription_key",
    }
)


# Environment variables whose values are secrets: "*_API_KEY", "*_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD" ...
_SECRET_ENV = re.compile(r"(API_?KEY|_KEY|_TOKEN|_SECRET|PASSWORD|_PASSWD|_PASS|_CREDENTIALS?)$", re.IGNORECASE)


_MIN_SECRET_LEN = 6  # shorter values ("x", "EMPTY") are placeholders and would mangle ordinary text


_Q = r"(?:\\{0,3}[\"'])"
"""A quote, possibly escaped (an error body quoted into a string, once or twice)."""

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:pass@host  ->  scheme://[REDACTED]@host
    (re.compile(r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s@\"'<>\\]+@"), r"\g<keep>" + REDACTED + "@"),
    # ?api_key=...&token=...&X-Amz-Signature=...  (query parameters whose name says credential)
    (
        re.compile(
            r"(?P<keep>[?&;](?:[A-Za-z0-9_.\-]*(?:key|token|secret|passw(?:or)?d|sig|signature|auth|credential)"
            r"[A-Za-z0-9_.\-]*|code)=)[^&#\s\"'<>\\]+",
            re.IGNORECASE,
        ),
        r"\g<keep>" + REDACTED,
    ),
    # Authorization: Bearer xxx / 'x-api-key': 'xxx' / api_key="xxx" / "api-key": "xxx" in reprs, JSON and logs
    (
        re.compile(
            r"(?P<keep>\b(?:proxy-)?authorization|\b(?:x-)?(?:goog-)?api[_-]?key|\bx-(?:auth|access)-token"
            r"|\b(?:set-)?cookie|\bocp-apim-subscription-key|\b(?:client|api)[_-]secret)"
            r"(?P<sep>" + _Q + r"?\s*[:=]\s*" + _Q + r"?)"
            r"(?P<scheme>(?:bearer|basic|token|digest)\s+)?[^\s\"',;}&#\\]+",
            re.IGNORECASE,
        ),
        r"\g<keep>\g<sep>\g<scheme>" + REDACTED,
    ),
    (re.compile(r"(?P<keep>\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE), r"\g<keep>" + REDACTED),
    # well-known key shapes: OpenAI / DeepSeek / Anthropic "sk-...", LangSmith "lsv2_...", Hugging Face,
    # Google, GitHub, Slack, AWS access key ids
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"\blsv2_[A-Za-z0-9_]{8,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking environment variables (``*_API_KEY``, ``*_TOKEN``, ...), longest first.

    Args:
        environ: mapping to read (default ``os.environ``).

    Returns:
        Distinct values at least 6 characters long, longest first (so a secret that contains
        another is replaced whole).
    """
    env = os.environ if environ is None else environ
    values = {v for k, v in env.items() if _SECRET_ENV.search(k) and v and len(v) >= _MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


# Cheap pre-check: a string that matches none of these cannot match any pattern in _PATTERNS.
_TRIGGER = re.compile(
    r"@|[?&;][A-Za-z0-9_.\-]+=|authorization|api[_-]?key|bearer|cookie|token|secret|subscription|sk-|lsv2_|hf_|AIza"
    r"|gh[pousr]_|xox|AKIA|ASIA",
    re.IGNORECASE,
)


def redact_text(text: str, secrets: list[str] | None = None) -> str:
    """Replace credentials inside ``text`` with ``[REDACTED]``.

    Removes, in order: the exact values in ``secrets`` (default :func:`secret_values`), user
    information in URLs, credential query parameters (``api_key=``, ``token=``, ...),
    ``Authorization`` / ``x-api-key`` header values, bearer tokens and well-known key shapes
    (``sk-...``, ``lsv2_...``).

    Args:
        text: any string.
        secrets: exact secret strings to remove; ``None`` reads them from the environment.

    Returns:
        The text with every match replaced; unchanged text is returned as is.
    """
    return _redact_text_cached(text, tuple(secret_values() if secrets is None else secrets))


@functools.lru_cache(maxsize=65536)
def _redact_text_cached(text: str, secrets: tuple[str, ...]) -> str:
    # Traced graph state repeats the same strings (tools, messages) in every node run: cache.
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    if not _TRIGGER.search(text):
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _is_secret_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower().replace("-", "_") in SECRET_KEYS


def redact(value: Any, secrets: list[str] | None = None) -> Any:
    """Return a copy of ``value`` (JSON-like data) with every credential replaced by ``[REDACTED]``.

    Dict entries whose key names a secret (``api_key``, ``authorization``, ``x-api-key``,
    ``password``, ...; see :data:`SECRET_KEYS`) lose their value; every string is passed through
    :func:`redact_text`. Lists, tuples and dicts are walked recursively; other values are kept.
    This is the ``anonymizer`` of the LangSmith client built by :func:`make_client`.

    Args:
        value: dicts / lists / strings / scalars (as the LangSmith SDK hands over run data).
        secrets: exact secret strings; ``None`` reads them once from the environment.

    Returns:
        The redacted copy (same shape).
    """
    if secrets is None:
        secrets = secret_values()
    if isinstance(value, str):
        return _redact_text_cached(value, tuple(secrets)) if len(value) >= 6 else value
    if isinstance(value, dict):
        return {
            k: (REDACTED if _is_secret_key(k) and isinstance(v, str) and v else redact(v, secrets))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v, secrets) for v in value)
    return value


_ERROR_KEYS = frozenset({"error_reason", "error", "errors", "error_detail", "failure_reason", "reason"})


def redact_record(record: Any, secrets: list[str] | None = None) -> Any:
    """Redact a result record (docs/evaluation.md §5) or session before it is written to a result file.

    Benchmark content (tool arguments, observations, replies) must stay byte-identical to what
    the model produced, so only two things are touched: the exact secret values of the environment
    (anywhere), and every credential pattern of :func:`redact_text` inside error strings (the
    session-level ``"Error during inference: ..."`` result and the steps' ``error_reason``), which
    is where an HTTP client's message could carry a URL or header. A string counts as an error
    string when the nearest dict key above it (through lists) is one of ``error``, ``errors``,
    ``error_reason``, ``error_detail``, ``failure_reason``, ``reason``, or is ``result`` and the
    string starts with ``Error``.

    The walk copies only what changes: without secrets in the environment, a record whose error
    strings hold no credential is returned as it is, and an unchanged dict or list inside a changed
    record is shared with ``record`` (hand over a record you no longer change).

    Args:
        record: a JSON-like value, typically one line of ``result.jsonl``.
        secrets: exact secret strings; ``None`` reads them from the environment.

    Returns:
        The redacted record: ``record`` itself when nothing was redacted, else a copy of every
        dict and list on the way to a redacted string.
    """
    found = tuple(secret_values() if secrets is None else secrets)

    def text(value: str, key: Any) -> str:
        if key in _ERROR_KEYS or (key == "result" and value.startswith("Error")):
            out = _redact_text_cached(value, found)
            return value if out == value else out
        for secret in found:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def leaf(value: Any, key: Any) -> Any:
        if isinstance(value, str):
            return text(value, key)
        if isinstance(value, dict):
            return mapping(value)
        if isinstance(value, list):
            return sequence(value, key)
        return value

    def mapping(value: dict[Any, Any]) -> dict[Any, Any]:
        changed: dict[Any, Any] | None = None
        for k, v in value.items():
            if isinstance(v, str):
                if not found and k not in _ERROR_KEYS and k != "result":
                    continue  # without secrets only error strings can change
                new = text(v, k)
            elif isinstance(v, (dict, list)):
                new = leaf(v, k)
            else:
                continue
            if new is not v:
                if changed is None:
                    changed = dict(value)
                changed[k] = new
        return value if changed is None else changed

    def sequence(value: list[Any], key: Any) -> list[Any]:
        strings = bool(found) or key in _ERROR_KEYS or key == "result"
        changed: list[Any] | None = None
        for i, v in enumerate(value):
            if isinstance(v, str):
                if not strings:
                    continue
                new = text(v, key)
            elif isinstance(v, (dict, list)):
                new = leaf(v, key)
            else:
                continue
            if new is not v:
                if changed is None:
                    changed = list(value)
                changed[i] = new
        return value if changed is None else changed

    return leaf(record, None)
