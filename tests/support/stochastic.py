"""``stochastic:CONFIG.json``: a seeded test candidate whose task ``t`` is right with a known chance ``p_t`` in
every trial (docs/trials.md §2; the acceptance tests of issue 26).

In each trial of each task the candidate draws ``u`` from SHA-256 of ``(seed, session, task, trial)``:
``u < p_t`` answers the task as the reference fixtures' ``oracle`` does (its recorded replies, request by
request), otherwise it calls a tool that no session has (``no_such_tool``), which ends the task wrong at
its first step. Trials are independent and reproducible: the same seed gives the same verdicts, another
trial index an independent draw. A task the oracle itself gets wrong stays wrong (``p_t`` is then 0 in
effect; :func:`oracle_correct` tells which).

The config file: ``{"candidates": <candidates.jsonl>, "results": <the oracle's expected_results.jsonl>,
"seed": <int>, "p": <default chance>, "tasks": {"<session id>:<task index>": <chance>, ...}}``; the
expected results give the oracle's request count per task, so request ``step`` of task ``t`` is the
oracle's reply ``offset[t] + step``. Register the provider with :func:`register` (in-process runs only).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from wildtoolbench.models import Provider, register_provider
from wildtoolbench.models.cache import TRIAL_KEY
from wildtoolbench.models.messages import RAW_RESPONSE_KEY, to_langchain
from wildtoolbench.models.providers.replay import SESSION_KEY, load_responses

PREFIX = "stochastic"
WRONG = {
    "content": None,
    "tool_calls": [{"id": "call_wrong", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}],
}


def draw(seed: int, session: str, task: int, trial: int) -> float:
    """The uniform draw in [0, 1) of one task in one trial."""
    digest = hashlib.sha256(f"{seed}:{session}:{task}:{trial}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@functools.lru_cache(maxsize=4)
def oracle_offsets(results: str) -> dict[str, list[int]]:
    """``{session id: [index of the first oracle reply of each task]}`` from the oracle's expected results."""
    offsets: dict[str, list[int]] = {}
    with open(results, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("candidate") != "oracle":
                continue
            start, found = 0, []
            for task in record["result"]:
                found.append(start)
                start += len(task["latency"])
            offsets[record["session_id"]] = found
    return offsets


def oracle_correct(scores: str | Path) -> set[tuple[str, int]]:
    """The tasks the oracle gets right, from the expected scores of the fixtures."""
    right = set()
    with open(scores, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("candidate", record.get("model_name")) != "oracle":
                continue
            for index, task in enumerate(record["results"]):
                if task["label"] == "correct":
                    right.add((record.get("session_id", record.get("id")), index))
    return right


class StochasticChatModel(BaseChatModel):
    """The candidate of the module doc."""

    config: dict[str, Any]

    @property
    def _llm_type(self) -> str:
        return "wtb-stochastic"

    def chance(self, session: str, task: int) -> float:
        """``p_t`` of a task."""
        return float(self.config.get("tasks", {}).get(f"{session}:{task}", self.config.get("p", 0.5)))

    def _reply(self, metadata: dict[str, Any]) -> AIMessage:
        session, task = str(metadata[SESSION_KEY]), int(metadata["wtb_task_idx"])
        step, trial = int(metadata["wtb_step"]), int(metadata.get(TRIAL_KEY) or 1)
        right = draw(int(self.config.get("seed", 0)), session, task, trial) < self.chance(session, task)
        response = WRONG
        if right:
            offsets = oracle_offsets(self.config["results"])[session]
            replies = load_responses(self.config["candidates"], "oracle")[session]
            index = offsets[task] + step
            end = offsets[task + 1] if task + 1 < len(offsets) else len(replies)
            response = replies[index] if index < end else {"content": "done", "tool_calls": None}
        message = to_langchain({"role": "assistant", **response})
        message.additional_kwargs.pop("wtb_openai_message", None)
        message.additional_kwargs[RAW_RESPONSE_KEY] = {
            "content": response.get("content"),
            "tool_calls": response.get("tool_calls"),
            "reasoning_content": None,
        }
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        metadata = (run_manager.metadata if run_manager is not None else None) or {}
        return ChatResult(generations=[ChatGeneration(message=self._reply(metadata))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        metadata = (run_manager.metadata if run_manager is not None else None) or {}
        return ChatResult(generations=[ChatGeneration(message=self._reply(metadata))])

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind()


def _create(name: str, settings: Any) -> StochasticChatModel:
    return StochasticChatModel(config=json.loads(Path(name).read_text(encoding="utf-8")))


def register() -> None:
    """Register ``stochastic:CONFIG.json`` in this process (``models.register_provider``)."""
    register_provider(PREFIX, Provider(create=_create, model_name=lambda name: Path(name).stem))


def write_config(path: Path, reference_dir: Path, *, seed: int, p: float, tasks: dict[str, float] | None = None) -> str:
    """Write a config for the reference fixtures in ``reference_dir``; returns the spec ``stochastic:<path>``."""
    config = {
        "candidates": str(reference_dir / "candidates.jsonl"),
        "results": str(reference_dir / "expected_results.jsonl"),
        "seed": seed,
        "p": p,
        "tasks": tasks or {},
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return f"{PREFIX}:{path}"
