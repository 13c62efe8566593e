"""Run settings of the generation graph (its ``context_schema``): the model of each role, base URLs,
temperature and retry limits.

Every setting follows one rule (:mod:`wildtoolbench.models.settings`, docs/settings.md): an explicit value wins,
then its ``WTB_*`` environment variable, then the default. Role models use one mapping for every
role, built-in or added (docs/generation.md §8): ``models={"planner": "openai:gpt-4o", "critic": ...}``
(``--model ROLE=SPEC`` on ``wtb generate``); a role missing from it uses ``WTB_<ROLE>_MODEL``, else
the role's default model. The roles themselves (names, defaults) live in the role registry
(``wildtoolbench.nodes.generation.registry``), which sits above this module: the context holds the mapping, and
the layers that know the registry pass each role's default and check the role names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.models import DEFAULT_MODEL
from wildtoolbench.models.server_policy import NO_MODEL, check_generation_context
from wildtoolbench.models.settings import env_value, resolve_settings, setting


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
            "named here uses $WTB_<ROLE>_MODEL, else its default ('local' for the built-in roles). 'user' may hold several comma-separated specs "
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
        120.0,
        "WTB_TIMEOUT",
        "Deadline of one role-model request in seconds, from the connection to the last byte of the reply.",
        float,
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
    max_retry_wait: float | None = setting(
        60.0,
        "WTB_MAX_RETRY_WAIT",
        "Longest wait in seconds before one retry, the server's Retry-After included.",
        float,
    )
    vague_answer_rate: float | None = setting(
        0.25, "WTB_VAGUE_RATE", "Share of tasks whose first user answer to a question is vague.", float
    )
    rules: str | None = setting(
        "",
        "WTB_GEN_RULES",
        "Rule profile (docs/generation.md §11.2): small, standard or off; empty = small when every role that writes "
        "runs the bundled local model, else standard.",
    )

    def __post_init__(self) -> None:
        resolve_settings(self)
        self.models = {role: str(spec) for role, spec in (self.models or {}).items()}
        self.base_urls = {role: str(url) for role, url in (self.base_urls or {}).items() if url}
        # on a server, the caller's role models and base URLs must be the deployment's (docs/settings.md §8)
        check_generation_context(self.models, self.base_url, self.base_urls)

    def rule_profile(self, specs: Sequence[str]) -> str:
        """The rule profile in force (docs/generation.md §11.2): ``rules`` when set, else ``small`` when every
        one of ``specs`` (the writing roles' model specs; ``""`` = no model) is the bundled local model, else
        ``standard``.

        Raises:
            ValueError: ``rules`` is no known profile."""
        if self.rules:
            if self.rules not in ("small", "standard", "off"):
                raise ValueError(f"unknown rule profile {self.rules!r}: use small, standard or off")
            return self.rules
        local = all(not spec or spec.split(":", 1)[0] == DEFAULT_MODEL for spec in specs)
        return "small" if local else "standard"

    def role_model(self, role: str, default: str = DEFAULT_MODEL) -> str:
        """The model spec text of ``role``: ``models[role]``, else ``$WTB_<ROLE>_MODEL``, else ``default``
        (the role's registered default model; docs/generation.md §8).

        For ``user`` this may be several comma-separated specs; ``"none"`` means no model.
        """
        explicit = (self.models or {}).get(role)
        if explicit is not None:
            return explicit.strip() or (default if role == "user" else NO_MODEL)
        return env_value(role_env(role)) or default

    def explicit_model(self, role: str) -> bool:
        """Whether ``role``'s model was given (``models[role]`` or ``$WTB_<ROLE>_MODEL``) rather than left
        to the role's registered default."""
        return role in (self.models or {}) or bool(env_value(role_env(role)))

    def checker_model_judges(self, spec: str) -> bool:
        """Whether the Checker's model (``spec``, ``""`` = none) judges, besides the rules (docs/generation.md §2):
        not when it is the bundled small model by default (its verdicts were measured to be noise); a
        checker model given explicitly, ``--model checker=local`` included, always judges."""
        return bool(spec) and (self.explicit_model("checker") or spec != DEFAULT_MODEL)

    @property
    def user_models(self) -> list[str]:
        """The user role's model specs (each session uses one, by its plan's ``user_model_index``)."""
        return self.user_specs(DEFAULT_MODEL)

    def user_specs(self, default: str = DEFAULT_MODEL) -> list[str]:
        """The user role's model specs with ``default`` as the role's default model (``[default]`` when empty)."""
        return [spec.strip() for spec in self.role_model("user", default).split(",") if spec.strip()] or [default]

    def model_spec(self, role: str, user_model_index: int = 0, default: str = DEFAULT_MODEL) -> str:
        """Model spec of ``role`` for one session; ``""`` when the role calls no model (``"none"``).

        ``default`` is the role's default model. The user role picks ``user_models[user_model_index % len]``.
        """
        if role == "user":
            specs = self.user_specs(default)
            return specs[user_model_index % len(specs)]
        spec = self.role_model(role, default)
        return "" if spec.lower() == NO_MODEL else spec

    def role_base_url(self, role: str) -> str | None:
        """Base URL of ``role``: its own (``base_urls``), else the shared ``base_url``."""
        return (self.base_urls or {}).get(role) or self.base_url

    def resolved(self, roles: Mapping[str, str] | Sequence[str]) -> dict[str, Any]:
        """The settings this run uses, for ``manifest.json``: every field, with ``models`` and ``base_urls``
        resolved for each of ``roles`` (``{role: default model}``, as
        ``wildtoolbench.nodes.generation.registry.model_defaults()`` gives; a plain list of names means the default
        :data:`models.DEFAULT_MODEL` for each)."""
        defaults = dict(roles) if isinstance(roles, Mapping) else dict.fromkeys(roles, DEFAULT_MODEL)
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["models"] = {role: self.role_model(role, default) for role, default in defaults.items()}
        values["base_urls"] = {role: self.role_base_url(role) for role in defaults}
        return values
