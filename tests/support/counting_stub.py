"""A :class:`tests.support.openai_stub.ScriptedServer` whose replies report the prompt tokens of the request
actually received, counted with ``wildtoolbench.models.tokens``' approximation (docs/trials.md §9): what a dry run's estimate
is measured against.

It is also idempotent: a request whose messages and tools it has answered before gets the same reply again
(counted in :attr:`CountingServer.repeats`) instead of the session's next one, as a real model answers a
re-sent request; so a run killed with a request in flight can be resumed against it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.support.openai_stub import ScriptedServer
from wildtoolbench.models.tokens import approximate_tokens, token_counter


class CountingServer(ScriptedServer):
    """Replies whose ``usage.prompt_tokens`` are ``wildtoolbench.models.tokens`` counts of the request body (messages and
    tools) and whose ``completion_tokens`` count the reply; :attr:`prompt_tokens` sums what it received."""

    prompt_tokens = 0

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.answered: dict[str, tuple[str, int]] = {}
        self.repeats: list[tuple[str, int]] = []

    @staticmethod
    def _body_key(body: Mapping[str, Any]) -> str:
        return json.dumps([body.get("messages"), body.get("tools")], sort_keys=True)

    def plan(self, body: Mapping[str, Any]) -> tuple[str, Any]:
        """A request answered before gets its reply again; any other is planned as the scripted server does."""
        with self._lock:
            seen = self.answered.get(self._body_key(body))
            if seen is not None:
                self.repeats.append(seen)
        if seen is not None:
            return "reply", (200, self.completion(*seen, body))
        return super().plan(body)

    def completion(self, session_id: str, index: int, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.answered.setdefault(self._body_key(body), (session_id, index))
        reply = super().completion(session_id, index, body)
        counter = token_counter("approximate", "")
        tools = [tool for tool in body.get("tools") or []]
        prompt = counter.prompt(body.get("messages") or [], tools)
        message = reply["choices"][0]["message"]
        text = str(message.get("content") or "") + "".join(
            str(c.get("function", {}).get("name", "")) + str(c.get("function", {}).get("arguments", ""))
            for c in message.get("tool_calls") or []
        )
        completion = approximate_tokens(text)
        reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        with self._lock:
            self.prompt_tokens += prompt
        return reply
