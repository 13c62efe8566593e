"""What a run will cost before it runs: model requests, prompt and reply tokens, USD (docs/trials.md §9).

``wtb eval --dry-run`` (and the first line of every real run) rebuilds the requests a candidate that
follows the gold path would send: for task ``t`` of a session, the first request is the prompt of
docs/evaluation.md §2 (:func:`wildtoolbench.bench.harness.build_prompt`) and every later one adds the gold step before
it (:func:`wildtoolbench.bench.harness.gold_history`), one request per assistant message of the gold path. That is
the **low** end: no candidate finishes a task in fewer requests. The **high** end is the step limit
(``--max-steps``, raised to the task's gold node count + 1, :func:`wildtoolbench.bench.harness.effective_step_limit`)
in every task, each extra request counted at the size of the task's largest gold-path prompt (the
messages an off-path candidate adds are not known before the run, so the high end of the tokens is
an estimate, not a bound).

Pure: token counting is a function the caller passes (``wildtoolbench.models.tokens`` picks the model's tokenizer);
no I/O, no framework.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wildtoolbench.bench.harness import InferenceError, build_prompt, effective_step_limit, gold_history
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.strategy import ScoringStrategy

MessageCounter = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]], int]
"""``count(messages, tools) -> prompt tokens`` of one request (OpenAI dict messages, function schemas)."""

ReplyCounter = Callable[[Mapping[str, Any]], int]
"""``count(assistant message) -> reply tokens``."""


@dataclass
class TaskRequests:
    """The requests of one task along its gold path (docs/trials.md §9).

    Attributes:
        prompts: prompt tokens of each gold-path request, in order.
        replies: reply tokens of each gold-path reply (the gold assistant messages).
        limit: the task's step limit (most requests a candidate may send in it), ``None`` without one.
    """

    prompts: list[int] = field(default_factory=list)
    replies: list[int] = field(default_factory=list)
    limit: int | None = None


def task_requests(
    session: Mapping[str, Any],
    count_prompt: MessageCounter,
    count_reply: ReplyCounter,
    *,
    language: str = "en",
    scoring: ScoringStrategy | str | None = None,
    max_steps: int | None = 32,
) -> list[TaskRequests]:
    """The gold-path requests of every task of ``session`` with their token counts (docs/trials.md §9).

    Args:
        session: a dataset line (docs/dataset.md).
        count_prompt: prompt tokens of one request (``wildtoolbench.models.tokens.TokenCounter.prompt``).
        count_reply: tokens of one assistant message.
        language: the side that runs.
        scoring: the run's :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (the history replay
            differs with the inference fixes, docs/fixed-mode.md §4).
        max_steps: ``--max-steps`` (``None``: no limit).

    Returns:
        One :class:`TaskRequests` per task; a task whose prompt cannot be built (quirk 11 ends the session
        with an inference error) and every later one have no request.
    """
    side = fields_for(language)
    tools = session[side.tools]
    tasks = session[side.tasks]
    answers = session[side.answer_list]
    found: list[TaskRequests] = []
    for index, (task, answer_list) in enumerate(zip(tasks, answers)):
        try:
            prompt = build_prompt(session, index, scoring=scoring, language=language)
            steps = gold_history(task, answer_list, _FixedIds(), scoring=scoring)
        except InferenceError:
            found.extend(TaskRequests() for _ in range(len(tasks) - index))
            break
        made = TaskRequests(limit=effective_step_limit(max_steps, len(answer_list)))
        messages = list(prompt)
        for message in steps[1:]:  # steps[0] is the task's user message, already the prompt's last
            if message.get("role") == "assistant":
                made.prompts.append(count_prompt(messages, tools))
                made.replies.append(count_reply(message))
            messages.append(message)
        found.append(made)
    return found


class _FixedIds:
    """Stands in for the history's random generator: every generated id has the same length as a real one."""

    def choice(self, alphabet: str) -> str:
        return alphabet[0]


@dataclass
class Estimate:
    """The estimate of a run (docs/trials.md §9); every range is ``(low, high)``.

    Attributes:
        sessions: sessions selected.
        session_trials: session evaluations (sessions x trials; a range under ``--until-decided``).
        requests: model requests.
        prompt_tokens / reply_tokens: tokens sent and received.
        cost_usd: at the given prices, ``None`` without prices.
        tokenizer: how the tokens were counted (``wildtoolbench.models.tokens``).
    """

    sessions: int
    session_trials: tuple[int, int]
    requests: tuple[int, int]
    prompt_tokens: tuple[int, int]
    reply_tokens: tuple[int, int]
    cost_usd: tuple[float, float] | None
    tokenizer: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (ranges as ``[low, high]``)."""
        return {
            "sessions": self.sessions,
            "session_trials": list(self.session_trials),
            "requests": list(self.requests),
            "prompt_tokens": list(self.prompt_tokens),
            "reply_tokens": list(self.reply_tokens),
            "cost_usd": None if self.cost_usd is None else list(self.cost_usd),
            "tokenizer": self.tokenizer,
        }


def estimate_run(
    sessions: Iterable[Mapping[str, Any]],
    count_prompt: MessageCounter,
    count_reply: ReplyCounter,
    *,
    tokenizer: str,
    trials: tuple[int, int] = (1, 1),
    language: str = "en",
    scoring: ScoringStrategy | str | None = None,
    max_steps: int | None = 32,
    prices: tuple[float, float] | None = None,
) -> Estimate:
    """Requests, tokens and cost of evaluating ``sessions`` ``trials`` times each (docs/trials.md §9).

    Args:
        sessions: the selected dataset lines.
        count_prompt, count_reply: token counters (:func:`task_requests`).
        tokenizer: the counters' name, reported as is.
        trials: ``(fewest, most)`` trials per session (``(K, K)`` for ``--trials K``; ``(2, max)`` under
            ``--until-decided``, whose rule runs every session at least twice).
        language, scoring, max_steps: as the run's.
        prices: USD per million ``(prompt, reply)`` tokens, or ``None``.

    Returns:
        An :class:`Estimate`: the low ends follow the gold path with the fewest trials, the high ends the
        step limit with the most.
    """
    low_requests = high_requests = low_prompt = high_prompt = low_reply = high_reply = 0
    count = 0
    for session in sessions:
        count += 1
        for task in task_requests(
            session, count_prompt, count_reply, language=language, scoring=scoring, max_steps=max_steps
        ):
            if not task.prompts:
                continue
            limit = task.limit if task.limit is not None else len(task.prompts)
            extra = max(0, limit - len(task.prompts))
            low_requests += len(task.prompts)
            high_requests += len(task.prompts) + extra
            low_prompt += sum(task.prompts)
            high_prompt += sum(task.prompts) + extra * max(task.prompts)
            low_reply += sum(task.replies)
            high_reply += sum(task.replies) + extra * max(task.replies)
    few, most = trials
    cost = None
    if prices is not None:
        cost = (
            round((few * low_prompt * prices[0] + few * low_reply * prices[1]) / 1e6, 6),
            round((most * high_prompt * prices[0] + most * high_reply * prices[1]) / 1e6, 6),
        )
    return Estimate(
        sessions=count,
        session_trials=(count * few, count * most),
        requests=(few * low_requests, most * high_requests),
        prompt_tokens=(few * low_prompt, most * high_prompt),
        reply_tokens=(few * low_reply, most * high_reply),
        cost_usd=cost,
        tokenizer=tokenizer,
    )


def reply_text(message: Mapping[str, Any]) -> str:
    """The text of an assistant message that its tokens are counted on: content, then each tool call's name and
    arguments (docs/trials.md §9)."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments")
        parts.append(str(function.get("name") or ""))
        parts.append(arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False))
    return "".join(parts)
