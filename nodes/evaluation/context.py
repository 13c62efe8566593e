"""Run settings of the evaluation graph (its ``context_schema``).

Each field has a description (shown by LangGraph Studio). Every setting follows one rule
(:mod:`wildtoolbench.models.settings`, docs/settings.md): an explicit value wins, then its ``WTB_*`` environment
variable, then the default; a field left out (``None``) is "not given". Nodes read the resolved
values through ``Runtime[EvaluationContext]``.

The ``model`` field stays a plain spec string (LangGraph Studio and LangGraph Server pass the context
as JSON); :attr:`EvaluationContext.candidate` resolves it once per context object into a
:class:`models.Candidate`, kept on the object, which the run and the nodes share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.schema import check_language
from wildtoolbench.bench.strategy import REFERENCE, ScoringStrategy, scoring_strategy
from wildtoolbench.models import DEFAULT_MODEL, Candidate, ModelSettings, resolve_candidate
from wildtoolbench.models.registry import ConfigurationError
from wildtoolbench.models.server_policy import check_evaluation_context
from wildtoolbench.models.settings import AGENT_STEPS, resolve_settings, setting


@dataclass(kw_only=True)
class EvaluationContext:
    """Settings of one evaluation run; every session of the run shares them."""

    model: str | None = setting(
        DEFAULT_MODEL,
        "WTB_MODEL",
        "Candidate model spec 'provider:name', e.g. 'openai:gpt-4o', 'langchain:anthropic:claude-sonnet-4-5', "
        "'graph:examples/tool_agent.py:graph', 'replay:candidates.jsonl#oracle', 'gguf:/path/model.gguf', "
        "or 'local' (the bundled local model).",
    )
    model_name: str | None = setting(
        "",
        "WTB_MODEL_NAME",
        "Name written into result records and metrics; empty = derived from the model spec (the part after "
        "'provider:', or the candidate of a replay spec).",
    )
    base_url: str | None = setting(
        "",
        "WTB_BASE_URL",
        "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; empty = the provider's default "
        "(OPENAI_BASE_URL for openai:).",
    )
    temperature: float | None = setting(0.0, "WTB_TEMPERATURE", "Sampling temperature of the candidate.", float)
    timeout: float | None = setting(
        120.0,
        "WTB_TIMEOUT",
        "Deadline of one model request in seconds, from the connection to the last byte of the reply (a try "
        "still running then is cancelled and retried as a timeout); a finite number > 0.",
        float,
    )
    max_retries: int | None = setting(
        0,
        "WTB_MAX_RETRIES",
        "Retries inside the model client itself (0: the harness retries, see max_attempts, so that retries "
        "are counted and reported).",
        int,
    )
    max_attempts: int | None = setting(
        5,
        "WTB_MAX_ATTEMPTS",
        "Tries per model request on transient failures (HTTP 429/5xx, timeouts, dropped connections) before "
        "the session is set aside as an infrastructure error.",
        int,
    )
    backoff: float | None = setting(
        1.0,
        "WTB_BACKOFF",
        "First wait in seconds before a retry; doubles each time, plus random jitter, and never less than "
        "the server's Retry-After.",
        float,
    )
    rps: float | None = setting(
        0.0,
        "WTB_RPS",
        "Requests per second to the model endpoint, shared by all sessions in flight (0 = no limit).",
        float,
    )
    max_retry_wait: float | None = setting(
        60.0,
        "WTB_MAX_RETRY_WAIT",
        "Longest wait in seconds before one retry, the server's Retry-After included (a longer ask is cut to "
        "this and reported in summary.json).",
        float,
    )
    max_steps: int | None = setting(
        32,
        "WTB_MAX_STEPS",
        "Model requests allowed in one task (never fewer than the task's gold node count + 1); a task still "
        "going after that many ends as an error with the reason recorded.",
        int,
    )
    scoring: str | None = setting(
        REFERENCE.name,
        "WTB_SCORING",
        "Scoring mode: 'reference' reproduces the published evaluation, quirks included; 'fixed' runs and "
        "scores with the corrections of docs/fixed-mode.md (its own run: results say 'scoring': 'fixed'); "
        "'semantic' runs as fixed and also accepts the equivalent arguments of docs/semantic-mode.md.",
    )
    language: str | None = setting(
        "en",
        "WTB_LANG",
        "Side of the dataset to evaluate: 'en' reads the english_* fields (env info, tools, tasks, gold answer "
        "lists, task types, turn subtypes), 'zh' the unprefixed Chinese ones (docs/dataset.md).",
    )
    agent_steps: str | None = setting(
        "answers",
        "WTB_AGENT_STEPS",
        "How an agent candidate's model requests are counted (docs/evaluation.md §8.9): 'answers' judges the "
        "requests whose reply calls a benchmark tool or reaches the user and counts the others (handoffs, "
        "planning, reports to a supervisor) as the agent's internal requests; 'strict' judges every request.",
    )
    dataset: str | None = setting(
        "",
        "WTB_DATASET",
        "Dataset JSON Lines file; used when the graph input names a session by 'session_id' instead of carrying it.",
    )

    def __post_init__(self) -> None:
        resolve_settings(self)
        scoring_strategy(self.scoring)
        check_language(self.language)
        check_agent_steps(self.agent_steps)
        # on a server, the caller's model, base URL and dataset must be the deployment's (docs/settings.md §8)
        check_evaluation_context(self.model, self.base_url, self.dataset)

    @property
    def strategy(self) -> ScoringStrategy:
        """The run's :class:`~wildtoolbench.bench.strategy.ScoringStrategy`, from :attr:`scoring` (docs/fixed-mode.md §1)."""
        return scoring_strategy(self.scoring)

    @property
    def candidate(self) -> Candidate:
        """The candidate of this run: :attr:`model` resolved once (docs/evaluation.md §3), with the provider
        settings of :func:`model_settings` and :attr:`model_name` as its recorded name.

        Kept on the context and resolved again only if ``model``, ``model_name`` or a provider setting
        changed; copies and pickles of the context leave it behind.

        Raises:
            models.ConfigurationError: a malformed spec or an unknown provider.
        """
        key = (self.model, self.model_name, self.temperature, self.base_url, self.timeout, self.max_retries)
        cached = self.__dict__.get("_candidate")
        if cached is None or cached[0] != key:
            candidate = resolve_candidate(self.model, model_settings(self), name=self.model_name or None)
            self.__dict__["_candidate"] = cached = (key, candidate)
        return cached[1]

    def __getstate__(self) -> dict[str, Any]:
        """The fields only (copies and pickles do not carry the resolved candidate)."""
        return {k: v for k, v in self.__dict__.items() if k != "_candidate"}


def check_agent_steps(value: str | None) -> None:
    """Check the ``agent_steps`` setting (docs/evaluation.md §8.9).

    Raises:
        ConfigurationError: not one of ``answers``, ``strict`` (the message names the setting and the choices).
    """
    if value not in AGENT_STEPS:
        raise ConfigurationError(
            f"agent_steps (WTB_AGENT_STEPS) is {value!r}: choose one of {', '.join(AGENT_STEPS)} (docs/evaluation.md §8.9)"
        )


def model_settings(context: EvaluationContext) -> ModelSettings:
    """The provider settings of ``context``: temperature, base URL (``None`` when empty), timeout, client retries."""
    return ModelSettings(
        temperature=context.temperature,
        base_url=context.base_url or None,
        timeout=context.timeout,
        max_retries=context.max_retries,
    )
