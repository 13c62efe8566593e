"""State, context (settings) and structured role outputs of the generation graph (SPEC 5).

- :class:`Context` is the graph's ``context_schema``: the model of each role, base URLs, temperature
  and retry limits; every field has a description (shown in LangGraph Studio) and an environment
  variable fallback.
- :class:`State` is one session being generated: its plan (tools, env, layer types) and progress
  (tasks with their nodes, the output waiting for the checker, transcripts, captured model calls).
- :class:`PlannerDecision`, :class:`CheckerVerdict` and :class:`ToolResults` are what the planner,
  checker and tool roles must answer with; ``parse`` reads them from free model text (JSON inside
  code fences or prose is fine) and reports malformed output as an error string, never an exception.
"""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bench.generation_checks import extract_json
from nodes.providers import DEFAULT_MODEL

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


@dataclass(kw_only=True)
class State:
    """One session being generated.

    Plan (input): ``session_id``, ``language``, ``tools``, ``env_info``, ``layer_types``,
    ``mt_variants``, ``strategies``, ``seed``, ``user_model_index``.

    Progress: ``tasks`` (one dict per started task: ``layer_type``, ``variant``, ``strategy``,
    ``user_message``, ``nodes`` - each node ``{"name", "arguments", "depends_on", "step",
    "observation"[, "user_input"]}``), ``pending`` (the output waiting for the checker),
    ``attempts`` and ``feedback`` (retries of that output), ``checked`` / ``verdict`` (last check),
    ``awaiting`` (what the agent writes next), ``status`` and ``failure_reason``.

    Records (appended): ``transcript`` (every role message, checker verdicts and rejected attempts
    included) and ``calls`` (captured request/response pairs of every role).
    """

    session_id: str = "session"
    language: Literal["en", "zh"] = "en"
    tools: list[dict[str, Any]] = field(default_factory=list)
    env_info: str = ""
    layer_types: list[str] = field(default_factory=lambda: ["ST"])
    mt_variants: list[str] = field(default_factory=list)
    strategies: list[str] = field(default_factory=list)
    seed: int = 0
    user_model_index: int = 0

    tasks: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    attempts: int = 0
    feedback: str = ""
    checked: Literal["", "decision", "results"] = ""
    verdict: Literal["", "accept", "reject"] = ""
    awaiting: Literal["", "question", "reply", "answer"] = ""
    status: Literal["running", "done", "failed"] = "running"
    failure_reason: str = ""

    transcript: Annotated[list[dict[str, Any]], operator.add] = field(default_factory=list)
    calls: Annotated[list[dict[str, Any]], operator.add] = field(default_factory=list)


class _Parsed(BaseModel):
    model_config = ConfigDict(extra="ignore")

    @classmethod
    def parse(cls, text: str):
        """Read an instance from model text. Returns ``(instance, None)`` or ``(None, reason)``."""
        try:
            value = extract_json(text)
        except ValueError as exc:
            return None, f"output is not valid JSON: {exc}"
        value = cls._coerce(value)
        try:
            return cls.model_validate(value), None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "output"
            return None, f"malformed output at {where}: {first.get('msg')}"

    @classmethod
    def _coerce(cls, value: Any) -> Any:
        return value


class PlannedAction(BaseModel):
    """One action of a planner step: a tool call, ``ask_user_for_required_parameters`` or ``prepare_to_answer``."""

    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[int] = Field(default_factory=list, description="indices of earlier actions of the task")

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments_object(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value

    @field_validator("depends_on", mode="before")
    @classmethod
    def _deps(cls, value: Any) -> Any:
        return [] if value is None else value


class PlannerDecision(_Parsed):
    """The planner's structured decision for one step (SPEC 5): thought, plan, actions."""

    thought: str = ""
    plan: str = ""
    actions: list[PlannedAction] = Field(min_length=1)

    @field_validator("thought", "plan", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value if isinstance(value, str) else str(value)

    @classmethod
    def _coerce(cls, value: Any) -> Any:
        if isinstance(value, list):  # a bare action list
            return {"actions": value}
        if isinstance(value, dict) and "actions" not in value and "name" in value:  # a single bare action
            return {"actions": [value]}
        return value


class CheckerVerdict(_Parsed):
    """The checker model's judgment: ``accept`` or ``reject`` with a reason."""

    verdict: Literal["accept", "reject"]
    reason: str = ""

    @classmethod
    def _coerce(cls, value: Any) -> Any:
        if isinstance(value, dict):
            verdict = value.get("verdict", value.get("decision"))
            if isinstance(verdict, bool):
                verdict = "accept" if verdict else "reject"
            if isinstance(verdict, str):
                word = verdict.strip().lower()
                verdict = "accept" if word in ("accept", "accepted", "approve", "pass", "yes", "ok") else (
                    "reject" if word in ("reject", "rejected", "fail", "no", "deny") else word
                )
            value = {**value, "verdict": verdict}
            if not isinstance(value.get("reason", ""), str):
                value["reason"] = str(value["reason"])
        return value


class ToolResults(_Parsed):
    """The tool role's output: one result (any JSON value) per call of the step."""

    results: list[Any]

    @classmethod
    def _coerce(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"results": value}
        if isinstance(value, dict) and "results" not in value and isinstance(value.get("observations"), list):
            return {"results": value["observations"]}
        return value
