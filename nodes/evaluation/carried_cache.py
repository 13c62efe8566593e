"""The request cache a client carries into a server run of the evaluation graph (docs/trials.md §8.1).

With ``wtb eval --server URL --cache DIR`` the cache lives on the client: before a session-trial the
client sends, in the graph input's ``replies``, the cache entries it holds for that session, trial
and candidate; the candidate node serves a request from them when its key is there
(:class:`CarriedCache`), and every reply it paid for goes back to the client in the run's output
(``paid``), which stores it in ``DIR``. So the cache survives any server: a new or replaced server
starts from the client's entries.

Everything carried in is untrusted input: an entry that is not a well-formed reply is a miss.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from wildtoolbench.models.reply import CandidateReply

KEY = re.compile(r"^[0-9a-f]{64}$")
"""A cache key: 64 lower-case hex digits (``wildtoolbench.models.cache.request_key``)."""


def reply_from_entry(entry: Any) -> CandidateReply | None:
    """The :class:`CandidateReply` held by a cache entry (``{"reply": {"response", "input_tokens",
    "output_tokens", "model", "models"}}``, the layout of ``models/cache.py``), marked ``cached``; ``None`` when
    ``entry`` is not one (a wrong type, a missing field, a negative token count)."""
    try:
        reply = entry["reply"]
        response = reply["response"]
        tokens = int(reply["input_tokens"]), int(reply["output_tokens"])
        model = reply.get("model")
        models = tuple(str(m) for m in (reply.get("models") or ()))
        if not isinstance(response, Mapping) or min(tokens) < 0 or not (model is None or isinstance(model, str)):
            return None
        return CandidateReply(
            response=dict(response),
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            model=model,
            models=models,
            cached=True,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def entry_from_reply(reply: CandidateReply, trial: int, about: Mapping[str, Any] | None) -> dict[str, Any]:
    """The cache entry of ``reply`` as the client stores it (``trial``, what it is ``about``, the reply)."""
    return {
        "trial": trial,
        **dict(about or {}),
        "reply": {
            "response": reply.response,
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "model": reply.model,
            "models": list(reply.models),
        },
    }


class CarriedCache:
    """A request cache in memory, filled from the graph input's ``replies`` (``{key: entry}``); the interface
    the candidate uses of ``wildtoolbench.models.cache.RequestCache`` (``get``, ``put``, ``note_write_error``,
    ``counts``).

    Attributes:
        paid: ``{key: entry}`` of the replies stored by :meth:`put` (paid for in this run: sent back to the client).
        served: ``[[input tokens, output tokens], ...]`` of the replies :meth:`get` served.
    """

    def __init__(self, replies: Mapping[str, Any] | None):
        self._entries = {k: v for k, v in (replies or {}).items() if isinstance(k, str) and KEY.match(k)}
        self.paid: dict[str, dict[str, Any]] = {}
        self.served: list[list[int]] = []
        self._lock = threading.Lock()

    def get(self, key: str) -> CandidateReply | None:
        """The carried reply of ``key`` (recorded in :attr:`served`), else ``None``."""
        reply = reply_from_entry(self._entries.get(key))
        if reply is not None:
            with self._lock:
                self.served.append([reply.input_tokens, reply.output_tokens])
        return reply

    def put(self, key: str, reply: CandidateReply, *, trial: int, about: Mapping[str, Any] | None = None) -> None:
        """Keep ``reply`` to send back (:attr:`paid`)."""
        with self._lock:
            self.paid[key] = entry_from_reply(reply, trial, about)

    def note_write_error(self) -> None:
        """Nothing to count: :meth:`put` never fails."""

    def counts(self) -> dict[str, Any]:
        """``{"hits", "writes"}`` of this run."""
        with self._lock:
            return {"hits": len(self.served), "writes": len(self.paid)}


def merge_paid(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of ``EvaluationState.paid``: the entries of both (``right`` wins a shared key)."""
    return {**(left or {}), **(right or {})}


def add_served(left: list[list[int]] | None, right: list[list[int]] | None) -> list[list[int]]:
    """Reducer of ``EvaluationState.served``: ``right`` appended to ``left``."""
    return [*(left or ()), *(right or ())]
