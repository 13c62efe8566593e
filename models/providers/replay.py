"""``replay:PATH#CANDIDATE``: a scripted candidate that replays recorded responses.

``PATH`` is a JSON Lines file in the format of the reference fixtures'
``candidates.jsonl``: one line per (session, candidate)::

    {"session_id": "wild_tool_bench_0", "candidate": "oracle",
     "responses": [{"content", "tool_calls", "reasoning_content"}, ...]}

The responses of one session form one queue that spans the whole session
(task 0 first, then tasks 1-3): request number ``k`` of the session gets
``responses[k]``. The evaluation graph tells the model which session and which
request it is serving through the run metadata (``wtb_session_id``,
``wtb_request_index``; see ``wildtoolbench.nodes.evaluation.candidate``), so one model object serves any
number of concurrent sessions, and re-running a session starts its queue again.
Without that metadata the model keeps its own per-session counter.

For tests of interruption and resume, a delay in seconds can be added before
each reply with ``ModelSettings.extra["delay"]`` or the environment variable
``WTB_REPLAY_DELAY``.
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import functools
import inspect
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from wildtoolbench.models.messages import RAW_RESPONSE_KEY, to_langchain
from wildtoolbench.models.settings import ModelSettings

SESSION_KEY = "wtb_session_id"
REQUEST_INDEX_KEY = "wtb_request_index"


def agent_step_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` as the model would get it as the candidate, when it runs inside an agent candidate's run:
    the request index of the step the model answers (the run's config carries the index of the step that
    started the run: docs/evaluation.md §8.1) and without the agent's own node name (``langgraph_node``,
    which a ``scripted:`` model would take for its role), so a replay or scripted model inside an agent
    answers each step as it does as the candidate. Outside an agent run ``metadata`` is returned as it is."""
    from wildtoolbench.models.agent_tools import current_run

    run = current_run.get()
    if run is None:
        return metadata
    seen = {k: v for k, v in metadata.items() if k != "langgraph_node"}
    index = getattr(run, "request_index", None)
    return seen if index is None else {**seen, REQUEST_INDEX_KEY: index}


DELAY_ENV = "WTB_REPLAY_DELAY"


class ReplayError(RuntimeError):
    """The replay file has no response for a request (unknown session, queue exhausted)."""


def load_responses(path: str | os.PathLike[str], candidate: str) -> dict[str, list[dict[str, Any]]]:
    """Responses of ``candidate`` per session id, from a ``candidates.jsonl``-style file.

    The parsed file is cached while its size and modification time stay the same.

    Raises:
        FileNotFoundError: no such file.
        ValueError: a malformed line (message names file, line and field), a
            duplicate (session, candidate) line, or no line for ``candidate``.
    """
    stat = os.stat(path)
    by_candidate = _parse_file(str(path), stat.st_mtime_ns, stat.st_size)
    script = by_candidate.get(candidate)
    if not script:
        known = ", ".join(sorted(by_candidate)) or "none"
        raise ValueError(f"{path}: no responses for candidate {candidate!r} (candidates in the file: {known})")
    return script


@functools.lru_cache(maxsize=8)
def _parse_file(path: str, mtime_ns: int, size: int) -> dict[str, dict[str, list[dict[str, Any]]]]:
    by_candidate: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{where}: expected a JSON object")
            for key, kind in (("session_id", str), ("candidate", str), ("responses", list)):
                if not isinstance(row.get(key), kind):
                    raise ValueError(f"{where}: field {key!r} missing or not a {kind.__name__}")
            for index, response in enumerate(row["responses"]):
                if not isinstance(response, dict) or not {"content", "tool_calls"} <= response.keys():
                    raise ValueError(
                        f"{where}: field 'responses[{index}]' must be an object with 'content' and 'tool_calls'"
                    )
            script = by_candidate.setdefault(row["candidate"], {})
            if row["session_id"] in script:
                raise ValueError(
                    f"{where}: second line for session {row['session_id']!r} and candidate {row['candidate']!r}"
                )
            script[row["session_id"]] = row["responses"]
    return by_candidate


class ReplayChatModel(BaseChatModel):
    """A chat model that answers with the recorded responses of one candidate (see module doc)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: str
    """The replay file."""
    candidate: str
    """Candidate name (``candidate`` field of the file's lines)."""
    delay: float = 0.0
    """Seconds to wait before each reply (for interruption tests)."""

    _script: dict[str, list[dict[str, Any]]] = PrivateAttr(default_factory=dict)
    _served: dict[str, set[int]] = PrivateAttr(default_factory=lambda: defaultdict(set))
    _counters: dict[str, int] = PrivateAttr(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def model_post_init(self, __context: Any) -> None:
        """Load the candidate's script once, when the model is built (errors as :func:`load_responses`)."""
        self._script = load_responses(self.path, self.candidate)

    @property
    def _llm_type(self) -> str:
        return "wtb-replay"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"path": self.path, "candidate": self.candidate}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):  # noqa: D401 - LangChain interface
        """Accept tools like a tool-calling model (the script does not look at them)."""
        return self.bind(tools=list(tools), **kwargs)

    def sessions(self) -> list[str]:
        """Session ids that have a script."""
        return list(self._script)

    def consumed(self, session_id: str) -> int:
        """How many distinct responses of ``session_id`` have been served."""
        return len(self._served.get(session_id, ()))

    def served_indices(self, session_id: str) -> set[int]:
        """Indices of the responses of ``session_id`` served so far."""
        return set(self._served.get(session_id, ()))

    def _next_response(self, metadata: dict[str, Any]) -> dict[str, Any]:
        metadata = agent_step_metadata(metadata)
        session_id = metadata.get(SESSION_KEY, "")
        responses = self._script.get(session_id)
        if responses is None:
            raise ReplayError(f"{self.path}: no responses for session {session_id!r} of candidate {self.candidate!r}")
        with self._lock:
            if REQUEST_INDEX_KEY in metadata:
                index = int(metadata[REQUEST_INDEX_KEY])
            else:
                index = self._counters[session_id]
                self._counters[session_id] += 1
            if index >= len(responses):
                raise ReplayError(
                    f"{self.path}: candidate {self.candidate!r} has {len(responses)} responses for session "
                    f"{session_id!r}; request {index} has none"
                )
            self._served[session_id].add(index)
        return _copy_response(responses[index])

    def _result(self, response: dict[str, Any]) -> ChatResult:
        message = to_langchain({"role": "assistant", **response})
        assert isinstance(message, AIMessage)
        message.additional_kwargs.pop("wtb_openai_message", None)
        message.additional_kwargs[RAW_RESPONSE_KEY] = {
            "content": response.get("content"),
            "tool_calls": response.get("tool_calls"),
            "reasoning_content": response.get("reasoning_content"),
        }
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay:
            time.sleep(self.delay)
        return self._result(self._next_response(run_manager.metadata if run_manager else {}))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._result(self._next_response(run_manager.metadata if run_manager else {}))


# LangChain looks at the signature of ``_generate`` / ``_agenerate`` on every request (whether they take
# ``run_manager``), with ``inspect.signature``: about 0.1 ms a request. A precomputed ``__signature__``
# (the same signature) is what ``inspect.signature`` returns at once.
for _method in (ReplayChatModel._generate, ReplayChatModel._agenerate):
    _method.__signature__ = inspect.signature(_method)  # type: ignore[attr-defined]


def _copy_response(response: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a scripted response (JSON data): the script is served again on a re-run, and
    what the graph records must not share lists with it. Strings and ``None`` need no copy."""
    return {k: v if v is None or isinstance(v, str) else copy.deepcopy(v) for k, v in response.items()}


def parse_name(name: str) -> tuple[str, str]:
    """Split ``"PATH#CANDIDATE"`` into ``(PATH, CANDIDATE)``.

    Raises:
        wildtoolbench.models.registry.ConfigurationError: no ``#`` or an empty part (a ``ValueError``).
    """
    from wildtoolbench.models.registry import (
        ConfigurationError,  # a ValueError: a bad spec is a configuration mistake (exit 2)
    )

    path, sep, candidate = name.rpartition("#")
    if not sep or not path or not candidate:
        raise ConfigurationError(
            f"replay model spec must look like 'replay:PATH#CANDIDATE', got 'replay:{name}' "
            "(the candidate names which model's replies of the file to replay)"
        )
    return path, candidate


def create(name: str, settings: ModelSettings) -> ReplayChatModel:
    """Build a :class:`ReplayChatModel` from ``"PATH#CANDIDATE"``.

    The delay comes from ``settings.extra["delay"]``, else ``$WTB_REPLAY_DELAY``, else 0.

    Raises:
        ValueError: malformed name or replay file; FileNotFoundError: no such file.
    """
    path, candidate = parse_name(name)
    if not Path(path).is_file():
        raise FileNotFoundError(f"replay file not found: {path}")
    delay = float(settings.extra.get("delay", os.environ.get(DELAY_ENV) or 0.0))
    return ReplayChatModel(path=path, candidate=candidate, delay=delay)


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the replay file exists, parses, and holds ``CANDIDATE``.

    Raises:
        ConfigurationError: malformed spec, missing or malformed file, or unknown candidate (the
            message lists the file's candidates and the closest match).
    """
    from wildtoolbench.models.registry import ConfigurationError

    try:
        path, candidate = parse_name(name)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None
    if not Path(path).is_file():
        raise ConfigurationError(f"replay file not found: {path} (model spec 'replay:{name}')")
    try:
        stat = os.stat(path)
        by_candidate = _parse_file(str(path), stat.st_mtime_ns, stat.st_size)
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"replay file unreadable: {exc}") from None
    if candidate not in by_candidate:
        known = sorted(by_candidate)
        close = difflib.get_close_matches(candidate, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(
            f"{path}: no candidate {candidate!r}{hint}; candidates in the file: {', '.join(known) or 'none'}."
        )


def model_name(name: str) -> str:
    """The name written into result records for ``replay:PATH#CANDIDATE``: the candidate."""
    return parse_name(name)[1]
