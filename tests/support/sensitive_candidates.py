"""Candidates sensitive to one factor only, for the tests of ``wtb ablate`` (docs/variants.md §7).

Each is a ``graph:`` candidate (a Runnable called once per model request) that answers exactly as the
gold does (the first optimal path of the task's gold, docs/audit.md §7.1), except when its one rule
fires on what it is shown, then it answers wrong:

- ``names_sensitive``: wrong when a tool of the request has a neutral name (``tool_<digits>``);
- ``chat_sensitive``: wrong when the task right before the current one got no tool call in the
  conversation it is shown (a chat exchange precedes the task);
- ``long_list_sensitive``: wrong when the request offers more than :data:`LONG_LIST` tools;
- ``implicit_sensitive``: wrong on a task whose gold takes a value its user never states (neither in the
  task's turns nor in the task's own tool results);
- ``oracle``: never wrong.

The session a request belongs to is looked up by the ``wtb_session_id`` run metadata in the dataset
file named by ``$WTB_TEST_ABLATE_DATASET`` (to find the gold and the task texts); the rules read only
the request (messages, tools) and that session's texts.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from wildtoolbench.bench.audit_oracle import _responses
from wildtoolbench.bench.harness import tracker_after
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.common import implicit_values

DATASET_ENV = "WTB_TEST_ABLATE_DATASET"
_NEUTRAL = re.compile(r"^tool_\d+$")
LONG_LIST = 8


@functools.cache
def _sessions(path: str, mtime: float) -> dict[str, dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return {s["id"]: s for s in (json.loads(line) for line in lines if line.strip())}


def session_of(session_id: str) -> dict[str, Any]:
    path = os.environ[DATASET_ENV]
    return _sessions(path, os.path.getmtime(path))[session_id]


def _tool_names(tools: list[Any]) -> list[str]:
    return [(t.get("function") or t).get("name", "") for t in tools or []]


def neutral_names(session: dict[str, Any], task: int, inputs: dict[str, Any]) -> bool:
    return any(_NEUTRAL.match(name) for name in _tool_names(inputs.get("tools") or []))


def chat_before(session: dict[str, Any], task: int, inputs: dict[str, Any]) -> bool:
    if task == 0:
        return False
    texts = session["english_tasks"]
    messages = inputs["messages"]
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    current = max((i for i in humans if messages[i].content == texts[task]), default=None)
    previous = max(
        (i for i in humans if messages[i].content == texts[task - 1] and current and i < current), default=None
    )
    if current is None or previous is None:
        return False
    return not any(isinstance(m, AIMessage) and m.tool_calls for m in messages[previous:current])


def long_list(session: dict[str, Any], task: int, inputs: dict[str, Any]) -> bool:
    return len(inputs.get("tools") or []) > LONG_LIST


def implicit(session: dict[str, Any], task: int, inputs: dict[str, Any]) -> bool:
    return bool(implicit_values(session, fields_for("en"), task))


def never(session: dict[str, Any], task: int, inputs: dict[str, Any]) -> bool:
    return False


def _message(response: dict[str, Any]) -> AIMessage:
    calls = [
        {
            "name": c["function"]["name"],
            "args": json.loads(c["function"]["arguments"]),
            "id": c["id"],
            "type": "tool_call",
        }
        for c in response.get("tool_calls") or []
    ]
    return AIMessage(content=response.get("content") or "", tool_calls=calls)


def _wrong(inputs: dict[str, Any], gold_first: dict[str, Any], step: int) -> AIMessage:
    if gold_first.get("tool_calls") or step > 0:
        return AIMessage(content="Sorry, I cannot help with that.")
    first = next(iter(_tool_names(inputs.get("tools") or [])), "unknown_tool")
    return AIMessage(content="", tool_calls=[{"name": first, "args": {}, "id": "call_wrong_0", "type": "tool_call"}])


def sensitive(rule: Callable[[dict[str, Any], int, dict[str, Any]], bool]) -> RunnableLambda:
    """A gold-answering candidate that answers wrong whenever ``rule(session, task, request)`` is true."""

    def respond(inputs: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        meta = config.get("metadata") or {}
        session = session_of(meta["wtb_session_id"])
        task, step = int(meta["wtb_task_idx"]), int(meta["wtb_step"])
        answer_list = session["english_answer_list"][task]
        responses = _responses(answer_list, tracker_after(answer_list, []).gold_path, task)
        if rule(session, task, inputs):
            return {"messages": [_wrong(inputs, responses[0], step)]}
        if step >= len(responses):
            return {"messages": [AIMessage(content="Done.")]}
        return {"messages": [_message(responses[step])]}

    return RunnableLambda(respond)


names_sensitive = sensitive(neutral_names)
chat_sensitive = sensitive(chat_before)
implicit_sensitive = sensitive(implicit)
long_list_sensitive = sensitive(long_list)
oracle = sensitive(never)
