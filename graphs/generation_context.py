"""Run settings of the generation graph (its ``context_schema``): the model of each role, base URLs,
temperature and retry limits.

Every setting follows one rule (:mod:`models.settings`, docs/settings.md): an explicit value wins,
then its ``WTB_*`` environment variable, then the default. Role models use one mapping for every
role, built-in or added (docs/generation.md): ``models={"planner": "openai:gpt-4o", "critic": ...}``
(``--model ROLE=SPEC`` on ``wtb generate``); a role missing from it uses ``WTB_<ROLE>_MODEL``, else
:data:`models.DEFAULT_MODEL`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from models import DEFAULT_MODEL
from models.settings import env_value, resolve_settings, setting

ROLES = ("user", "planner", "checker", "tool", "agent")
"""The built-in roles. Added roles are registered in ``nodes.generation.registry``."""

NO_MODEL = "none"
"""Model spec meaning "this role calls no model" (the checker then applies rule checks only)."""


def role_env(role: str) -> str:
    """Environment variable of ``role``'s model spec: ``WTB_<ROLE>_MODEL`` (e.g. ``WTB_PLANNER_MODEL``)."""
    return f"WTB_{role.upper()}_MODEL"


@dataclass(kw_only=True)
class Context:
    """Run settings of the generation graph; one value per run."""

    models: dict[str, str] | None = dataclasses.field(
        default=None,
        metadata={
            "description": "Model spec per role, e.g. {'planner': 'openai:gpt-4o', 'checker': 'none'}. A role not "
            "named here uses $WTB_<ROLE>_MODEL, else 'local'. 'user' may hold several comma-separated specs "
            "(each session uses one). 'none' = the role calls no model (the checker then runs rule checks only)."
        },
    )
    base_urls: dict[str, str] | None = dataclasses.field(
        default=None,
        metadata={"description": "OpenAI-compatible base URL per role; a role not named here uses base_url."},
    )
    base_url: str | None = setting(None, "WTB_BASE_URL", "OpenAI-compatible base URL for every role without its own.")
    temperature: float | None = setting(0.7, "WTB_GEN_TEMPERATURE", "Sampling temperature of every role.", float)
    max_retries: int | None = setting(
        3, "WTB_GEN_MAX_RETRIES", "Tries of a planner decision or tool result before the session fails.", int
    )
    max_steps: int | None = setting(
        8, "WTB_GEN_MAX_STEPS", "Most planner steps in one task before the session fails.", int
    )
    request_timeout: float | None = setting(
        120.0, "WTB_TIMEOUT", "Per-request timeout of every role model, in seconds.", float
    )
    max_attempts: int | None = setting(
        5, "WTB_MAX_ATTEMPTS", "Tries per role-model request on HTTP 429/5xx, timeouts and dropped connections.", int
    )
    backoff: float | None = setting(
        1.0,
        "WTB_BACKOFF",
        "First retry wait in seconds (doubles per retry, plus jitter; Retry-After wins if longer).",
        float,
    )
    rps: float | None = setting(
        0.0, "WTB_RPS", "Requests per second to each role endpoint, shared by all sessions (0 = no limit).", float
    )
    vague_answer_rate: float | None = setting(
        0.25, "WTB_VAGUE_RATE", "Share of tasks whose first user answer to a question is vague.", float
    )

    def __post_init__(self) -> None:
        resolve_settings(self)
        self.models = {role: str(spec) for role, spec in (self.models or {}).items()}
        self.base_urls = {role: str(url) for role, url in (self.base_urls or {}).items() if url}

    def role_model(self, role: str) -> str:
        """The model spec text of ``role``: ``models[role]``, else ``$WTB_<ROLE>_MODEL``, else the default.

        For ``user`` this may be several comma-separated specs; ``"none"`` means no model.
        """
        explicit = (self.models or {}).get(role)
        if explicit is not None:
            return explicit.strip() or (DEFAULT_MODEL if role == "user" else NO_MODEL)
        return env_value(role_env(role)) or DEFAULT_MODEL

    @property
    def user_models(self) -> list[str]:
        """The user role's model specs (each session uses one, by its plan's ``user_model_index``)."""
        return [spec.strip() for spec in self.role_model("user").split(",") if spec.strip()] or [DEFAULT_MODEL]

    def model_spec(self, role: str, user_model_index: int = 0) -> str:
        """Model spec of ``role`` for one session; ``""`` when the role calls no model (``"none"``).

        The user role picks ``user_models[user_model_index % len]``.
        """
        if role == "user":
            return self.user_models[user_model_index % len(self.user_models)]
        spec = self.role_model(role)
        return "" if spec.lower() == NO_MODEL else spec

    def role_base_url(self, role: str) -> str | None:
        """Base URL of ``role``: its own (``base_urls``), else the shared ``base_url``."""
        return (self.base_urls or {}).get(role) or self.base_url

    def resolved(self, roles: tuple[str, ...] = ROLES) -> dict[str, Any]:
        """The settings this run uses, for ``manifest.json``: every field, with ``models`` and ``base_urls``
        resolved for each of ``roles`` (the built-in roles plus any added ones)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["models"] = {role: self.role_model(role) for role in roles}
        values["base_urls"] = {role: self.role_base_url(role) for role in roles}
        return values
