"""Run settings of the generation graph (its ``context_schema``): the model of each role, base URLs,
temperature and retry limits. Every field has a description (shown in LangGraph Studio) and an
environment-variable fallback."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable

from models import DEFAULT_MODEL

ROLES = ("user", "planner", "checker", "tool", "agent")


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def _env_field(variable: str, default: str, description: str, convert: Callable[[str], Any] = str) -> Any:
    """A :class:`Context` dataclass field read when the context is built: ``convert($variable)`` when the
    variable is set and non-empty, else ``convert(default)``; ``description`` goes to the field's metadata.
    A value ``convert`` rejects raises its error (e.g. ``ValueError``) at that point."""
    return field(default_factory=lambda: convert(_env(variable, default)), metadata={"description": description})


@dataclass(kw_only=True)
class Context:
    """Run settings of the generation graph (its ``context_schema``); one value per run."""

    user_models: list[str] = field(
        default_factory=lambda: [m for m in _env("WTB_USER_MODEL", DEFAULT_MODEL).split(",") if m],
        metadata={"description": "Model specs of the User role ('provider:name'); each session uses one of them."},
    )
    planner_model: str = _env_field("WTB_PLANNER_MODEL", DEFAULT_MODEL, "Model spec of the Planner role.")
    tool_model: str = _env_field(
        "WTB_TOOL_MODEL", DEFAULT_MODEL, "Model spec of the Tool role (simulates tool results)."
    )
    agent_model: str = _env_field(
        "WTB_AGENT_MODEL", DEFAULT_MODEL, "Model spec of the Agent role (questions and final replies)."
    )
    checker_model: str = _env_field(
        "WTB_CHECKER_MODEL", DEFAULT_MODEL, "Model spec of the Checker role; empty = rule checks only."
    )
    base_url: str | None = field(
        default_factory=lambda: os.environ.get("WTB_BASE_URL"),
        metadata={"description": "OpenAI-compatible base URL for every role without its own."},
    )
    user_base_url: str | None = field(default=None, metadata={"description": "Base URL of the User model."})
    planner_base_url: str | None = field(default=None, metadata={"description": "Base URL of the Planner model."})
    tool_base_url: str | None = field(default=None, metadata={"description": "Base URL of the Tool model."})
    agent_base_url: str | None = field(default=None, metadata={"description": "Base URL of the Agent model."})
    checker_base_url: str | None = field(default=None, metadata={"description": "Base URL of the Checker model."})
    temperature: float = _env_field("WTB_GEN_TEMPERATURE", "0.7", "Sampling temperature of every role.", convert=float)
    max_retries: int = field(
        default=3, metadata={"description": "Tries of a planner decision or tool result before the session fails."}
    )
    max_steps: int = field(default=8, metadata={"description": "Most planner steps in one task before the session fails."})
    request_timeout: float = _env_field(
        "WTB_TIMEOUT", "120", "Per-request timeout of every role model, in seconds.", convert=float
    )
    max_attempts: int = _env_field(
        "WTB_MAX_ATTEMPTS",
        "5",
        "Tries per role-model request on HTTP 429/5xx, timeouts and dropped connections.",
        convert=int,
    )
    backoff: float = _env_field(
        "WTB_BACKOFF",
        "1.0",
        "First retry wait in seconds (doubles per retry, plus jitter; Retry-After wins if longer).",
        convert=float,
    )
    rps: float = _env_field(
        "WTB_RPS",
        "0",
        "Requests per second to each role endpoint, shared by all sessions (0 = no limit).",
        convert=float,
    )
    vague_answer_rate: float = field(
        default=0.25, metadata={"description": "Share of tasks whose first user answer to a question is vague."}
    )

    def model_spec(self, role: str, user_model_index: int = 0) -> str:
        """Model spec of ``role`` (the user role picks ``user_models[index % len]``)."""
        if role == "user":
            return self.user_models[user_model_index % len(self.user_models)]
        return getattr(self, f"{role}_model")

    def role_base_url(self, role: str) -> str | None:
        """Base URL of ``role``: its own, else the shared ``base_url``."""
        return getattr(self, f"{role}_base_url") or self.base_url


CONTEXT_FIELDS = tuple(f.name for f in fields(Context))


