"""Run settings: the one rule every setting follows (docs/settings.md §1) and the connection and sampling
settings that every provider receives (:class:`ModelSettings`).

The rule: an explicit value wins, then a ``WTB_*`` environment variable, then the default. "Not given"
is ``None``, never "equal to the default". Both graph contexts (``nodes/evaluation/context.py``,
``nodes/generation/context.py``) declare their fields with :func:`setting` and call
:func:`resolve_settings` in ``__post_init__``; the CLI passes ``None`` for every option the user did not
give, and so do ``langgraph dev`` and the Python API when a field is left out. :func:`resolved_settings`
gives the values a run used, for ``run.json``. The rule sits in the models layer, below the contexts
and beside the providers, which may read their own variables with :func:`env_value`
(docs/architecture.md §3.1).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelSettings:
    """Connection and sampling settings shared by every provider.

    Attributes:
        temperature: sampling temperature (default 0, as for benchmark runs).
        base_url: OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``;
            ``None`` lets the provider use its own default / ``OPENAI_BASE_URL``.
        api_key: secret key; ``None`` lets the provider read its environment variable.
        timeout: per-request timeout in seconds.
        max_retries: transport retries done inside the client.
        extra: provider-specific keyword arguments.
    """

    temperature: float = 0.0
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 2
    extra: dict[str, Any] = field(default_factory=dict)


def _as_bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {raw!r}")


CONVERTERS: dict[type, Callable[[str], Any]] = {str: str, int: int, float: float, bool: _as_bool}


def setting(default: Any, env: str | None, description: str, kind: type = str) -> Any:
    """A dataclass field following the settings rule (explicit value, then ``$env``, then ``default``).

    Args:
        default: the value used when neither an explicit value nor the variable is given.
        env: name of the environment variable (``None``: no variable).
        description: what the setting does (LangGraph Studio shows it); the variable and the default
            are appended.
        kind: ``str``, ``int``, ``float`` or ``bool``: how the variable's text is converted.

    Returns:
        A ``dataclasses.field`` with default ``None`` and the rule in its metadata (keys that pydantic,
        which LangGraph uses for the context's JSON schema, does not read as field arguments).
    """
    suffix = f" Env: {env}." if env else ""
    text = f"{description}{suffix} Default: {default!r}."
    return dataclasses.field(
        default=None,
        metadata={"description": text, "env": env, "setting_default": default, "setting_kind": kind, "setting": True},
    )


def env_value(variable: str, kind: type = str, environ: Mapping[str, str] | None = None) -> Any:
    """The value of ``$variable`` converted to ``kind``, or ``None`` when unset or empty.

    Raises:
        ValueError: the text does not convert (the message names the variable and its value).
    """
    raw = (os.environ if environ is None else environ).get(variable)
    if raw is None or raw.strip() == "":
        return None
    try:
        return CONVERTERS[kind](raw.strip() if kind is not str else raw)
    except (ValueError, KeyError):
        raise ValueError(f"environment variable {variable}={raw!r} is not a valid {kind.__name__}") from None


def resolve_settings(obj: Any, environ: Mapping[str, str] | None = None) -> None:
    """Fill every :func:`setting` field of the dataclass instance ``obj`` that is ``None``.

    Each such field becomes ``$env`` (converted) when that variable is set and non-empty, else its
    default. Explicit values (anything not ``None``) are kept as given.

    Raises:
        ValueError: an environment variable's text does not convert to the field's kind.
    """
    for f in dataclasses.fields(obj):
        meta = f.metadata
        if not meta.get("setting") or getattr(obj, f.name) is not None:
            continue
        value = env_value(meta["env"], meta["setting_kind"], environ) if meta["env"] else None
        setattr(obj, f.name, meta["setting_default"] if value is None else value)


def resolved_settings(obj: Any, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{field: value}`` of a dataclass instance (after :func:`resolve_settings`), in field order.

    Secrets are not redacted here: callers that write the result (``run.json``) redact it.
    """
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.name not in exclude}


AGENT_STEPS = ("answers", "strict")
"""Readings of an agent candidate's model requests (``agent_steps``, docs/evaluation.md §8.9): ``answers``
judges the requests whose reply calls a benchmark tool or reaches the user, ``strict`` every request."""
