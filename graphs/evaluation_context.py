"""Run settings of the evaluation graph (its ``context_schema``).

Each field has a description (shown by LangGraph Studio) and falls back to an
environment variable when left at its default, as in the LangGraph templates.
Nodes read it through ``Runtime[EvaluationContext]``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

from bench.terms import check_scoring_mode
from models import DEFAULT_MODEL


@dataclass(kw_only=True)
class EvaluationContext:
    """Settings of one evaluation run; every session of the run shares them."""

    model: str = field(
        default=DEFAULT_MODEL,
        metadata={
            "description": "Candidate model spec 'provider:name', e.g. 'openai:gpt-4o', "
            "'replay:candidates.jsonl#oracle', 'gguf:/path/model.gguf', or 'local' (the bundled local "
            "model, the default). Env: WTB_MODEL.",
            "env": "WTB_MODEL",
        },
    )
    model_name: str = field(
        default="",
        metadata={
            "description": "Name written into result records and metrics; empty = derived from the model spec "
            "(the part after 'provider:', or the candidate of a replay spec). Env: WTB_MODEL_NAME.",
            "env": "WTB_MODEL_NAME",
        },
    )
    base_url: str = field(
        default="",
        metadata={
            "description": "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; empty = the provider's "
            "default (OPENAI_BASE_URL for openai:). Env: WTB_BASE_URL.",
            "env": "WTB_BASE_URL",
        },
    )
    temperature: float = field(
        default=0.0,
        metadata={"description": "Sampling temperature of the candidate. Env: WTB_TEMPERATURE.", "env": "WTB_TEMPERATURE"},
    )
    timeout: float = field(
        default=120.0,
        metadata={"description": "Per-request timeout in seconds. Env: WTB_TIMEOUT.", "env": "WTB_TIMEOUT"},
    )
    max_retries: int = field(
        default=0,
        metadata={
            "description": "Retries inside the model client itself (default 0: the harness retries, see "
            "max_attempts, so that retries are counted and reported). Env: WTB_MAX_RETRIES.",
            "env": "WTB_MAX_RETRIES",
        },
    )
    max_attempts: int = field(
        default=5,
        metadata={
            "description": "Tries per model request on transient failures (HTTP 429/5xx, timeouts, dropped "
            "connections) before the session is set aside as an infrastructure error. Env: WTB_MAX_ATTEMPTS.",
            "env": "WTB_MAX_ATTEMPTS",
        },
    )
    backoff: float = field(
        default=1.0,
        metadata={
            "description": "First wait in seconds before a retry; doubles each time, plus random jitter, and never "
            "less than the server's Retry-After. Env: WTB_BACKOFF.",
            "env": "WTB_BACKOFF",
        },
    )
    rps: float = field(
        default=0.0,
        metadata={
            "description": "Requests per second to the model endpoint, shared by all sessions in flight "
            "(0 = no limit). Env: WTB_RPS.",
            "env": "WTB_RPS",
        },
    )
    max_steps: int = field(
        default=32,
        metadata={
            "description": "Model requests allowed in one task; a task still going after that many ends as an "
            "error with the reason recorded. Env: WTB_MAX_STEPS.",
            "env": "WTB_MAX_STEPS",
        },
    )
    scoring: str = field(
        default="reference",
        metadata={
            "description": "Scoring mode: 'reference' reproduces the published evaluation, quirks included; "
            "'fixed' runs and scores with the corrections of docs/fixed-mode.md (its own run: results say "
            "'scoring': 'fixed'). Env: WTB_SCORING.",
            "env": "WTB_SCORING",
        },
    )
    dataset: str = field(
        default="",
        metadata={
            "description": "Dataset JSON Lines file; used when the graph input names a session by 'session_id' "
            "instead of carrying it. Env: WTB_DATASET.",
            "env": "WTB_DATASET",
        },
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            env = f.metadata.get("env")
            if not env or getattr(self, f.name) != f.default:
                continue
            raw = os.environ.get(env)
            if raw is None or raw == "":
                continue
            setattr(self, f.name, _convert(raw, f.type, env))
        check_scoring_mode(self.scoring)


def _convert(raw: str, kind: Any, env: str) -> Any:
    kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
    try:
        if kind == "float":
            return float(raw)
        if kind == "int":
            return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {env}={raw!r} is not a valid {kind}") from None
    return raw
