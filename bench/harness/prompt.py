"""The prompt of task ``t``: system date, gold history of the earlier tasks, the user message (docs/evaluation.md §2)."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.harness.errors import InferenceError
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.paths_fixed import tracker_for
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER

HISTORY_ID_PREFIX = "toolu_bdrk_"
"""Prefix of the generated tool-call ids in the gold history (24 random alphanumerics follow)."""

_ID_ALPHABET = string.ascii_letters + string.digits


def system_message(env_info: str) -> dict[str, str]:
    """The system message of every request: ``"Current Date: " + env_info`` (quirk 1; docs/evaluation.md §2)."""
    return {"role": "system", "content": f"Current Date: {env_info}"}


def history_tool_call_id(rng: random.Random) -> str:
    """A fresh history tool-call id: ``toolu_bdrk_`` + 24 alphanumerics drawn from ``rng`` (docs/evaluation.md §2)."""
    return HISTORY_ID_PREFIX + "".join(rng.choice(_ID_ALPHABET) for _ in range(24))


def _is_pseudo(name: str) -> bool:
    return name in (ASK_USER, PREPARE_TO_ANSWER)


def gold_history(
    task: str,
    answer_list: Sequence[Mapping[str, Any]],
    rng: random.Random,
    *,
    tracker: PathTracker | None = None,
    scoring: ScoringStrategy | str | None = None,
) -> list[dict[str, Any]]:
    """Messages that replay one earlier task along its gold path (docs/evaluation.md §2 step 2, quirk 2).

    Args:
        task: the task's user message.
        answer_list: the task's gold nodes.
        rng: source of the generated ``toolu_bdrk_`` ids.
        tracker: a fresh tracker of ``answer_list`` (built when omitted); its
            ``gold_path`` (the first optimal path) is replayed.
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default
            reference). With the inference fixes (fixed, semantic) the fixed-mode gold path
            (``FixedPathTracker``, never a mixed step) is replayed and a string observation is sent
            as it is, as in the live task (docs/fixed-mode.md §4, §5).

    Returns:
        ``[user, ...]``: for a step of real calls one assistant message
        (``content ""``, calls in node-index order, arguments JSON-encoded) and
        one tool message per call whose content is ``json.dumps(observation)``
        (strings gain quotes); for an ask node assistant(question) +
        user(user_input); for the ``prepare_to_answer`` node assistant(reply).

    Raises:
        InferenceError: a gold step that holds a pseudo-tool node together with
            any other node (quirk 11), e.g. an ask node plus a call or two ask nodes.
    """
    strategy = scoring_strategy(scoring)
    tracker = tracker or tracker_for(answer_list, strategy)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for step in tracker.gold_path:
        calls: list[dict[str, Any]] = []
        observations: list[Any] = []
        for index in step:
            node = answer_list[index]
            name = node["action"]["name"]
            if _is_pseudo(name):
                if len(step) != 1:
                    raise InferenceError(
                        "",
                        f"gold path step {list(step)} mixes {name} with other nodes; the reference "
                        "history replay fails on it (quirk 11)",
                    )
                messages.append({"role": "assistant", "content": node["observation"]})
                if name == ASK_USER:
                    messages.append({"role": "user", "content": node["user_input"]})
                continue
            calls.append(
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": json.dumps(node["action"]["arguments"], ensure_ascii=False),
                    },
                    "id": history_tool_call_id(rng),
                }
            )
            observations.append(node["observation"])
        if calls:
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            for call, observation in zip(calls, observations):
                if strategy.inference_fixes and isinstance(observation, str):
                    content = observation  # fixed mode: encoded as in the live task (docs/fixed-mode.md §5)
                else:
                    content = json.dumps(observation, ensure_ascii=False)
                messages.append({"role": "tool", "content": content, "tool_call_id": call["id"]})
    return messages


def build_prompt(
    session: Mapping[str, Any],
    task_idx: int,
    rng: random.Random | None = None,
    *,
    scoring: ScoringStrategy | str | None = None,
    language: str = "en",
) -> list[dict[str, Any]]:
    """The messages of the first request of task ``task_idx`` (docs/evaluation.md §2).

    Args:
        session: a dataset line (``english_env_info``, ``english_tasks``, ``english_answer_list``;
            for ``zh`` the unprefixed ``env_info``, ``tasks``, ``answer_list``).
        task_idx: 0-based task index.
        rng: source of history ids; default a generator seeded with
            ``(session id, task_idx)`` so a re-run gives the same ids.
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default
            reference; :func:`gold_history`, docs/fixed-mode.md §4, §5); with the inference fixes
            nothing raises ``InferenceError``.
        language: the side to read (:func:`wildtoolbench.bench.schema.fields_for`, docs/dataset.md §2.2).

    Returns:
        ``[system, *history of tasks 0..task_idx-1, user(task)]`` as OpenAI dict messages.

    Raises:
        InferenceError: an earlier task's gold path cannot be replayed (quirk 11).
    """
    if rng is None:
        rng = random.Random(f"{session.get('id')}:{task_idx}")
    side = fields_for(language)
    tasks = session[side.tasks]
    answer_lists = session[side.answer_list]
    messages = [system_message(session[side.env_info])]
    for k in range(task_idx):
        messages.extend(gold_history(tasks[k], answer_lists[k], rng, scoring=scoring))
    messages.append({"role": "user", "content": tasks[task_idx]})
    return messages
