"""State and structured role outputs of the generation graph (docs/generation.md); its settings, the
``context_schema``, are :class:`wildtoolbench.nodes.generation.context.Context`.

- :class:`State` is one session being generated: its plan (tools, env, layer types) and progress
  (tasks with their nodes, the output waiting for the checker, transcripts, captured model calls).
- :class:`PlannerDecision`, :class:`CheckerVerdict` and :class:`ToolResults` are what the planner,
  checker and tool roles must answer with; ``parse`` reads them from free model text (JSON inside
  code fences or prose is fine) and reports malformed output as an error string, never an exception.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wildtoolbench.bench.generation_checks import extract_json


@dataclass(kw_only=True)
class State:
    """One session being generated.

    Plan (input): ``session_id``, ``language``, ``tools``, ``env_info``, ``layer_types``,
    ``mt_variants``, ``strategies``, ``seed``, ``user_model_index``.

    Progress: ``tasks`` (one dict per started task: ``layer_type``, ``variant``, ``strategy``,
    ``user_message``, ``nodes`` - each node ``{"name", "arguments", "depends_on", "step",
    "observation"[, "user_input"]}``), ``pending`` (the output waiting for the checker),
    ``attempts`` and ``feedback`` (retries of that output), ``checked`` / ``verdict`` (last check),
    ``awaiting`` (what the agent writes next), ``status``, ``failure_reason`` and ``failure_rules`` (the
    rule ids of the rejection that failed the session, docs/generation.md §11); ``rejected`` (the
    canonical actions of the decisions rejected at the current step, which the rules refuse to see
    again), ``banned`` (``[tool, parameter]`` pairs whose values nobody said at the current step: the
    planner's grammar leaves those parameters out, or the tool when the parameter is required and the
    task may ask) and ``model_vetoed`` (the checker model rejected an output of the current step already:
    it judges each step once, the rules decide the retries; docs/generation.md §2).

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
    failure_rules: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    banned: list[list[str]] = field(default_factory=list)
    model_vetoed: bool = False

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
    """The planner's structured decision for one step (docs/generation.md): thought, plan, actions."""

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
                verdict = (
                    "accept"
                    if word in ("accept", "accepted", "approve", "pass", "yes", "ok")
                    else ("reject" if word in ("reject", "rejected", "fail", "no", "deny") else word)
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
