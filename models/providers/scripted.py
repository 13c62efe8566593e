"""``scripted:PATH``: a chat model that replays role responses from a script file (offline tests, demos).

Script formats (UTF-8):

- JSON object: ``{"<role>": [response, ...], ...}`` — one queue per role, consumed in order by
  every session; optionally ``"sessions": {"<session key>": {"<role>": [...]}}`` for queues of one
  session (used first when the calling session has one).
- JSON array: ``[response, ...]`` — one queue for every caller.
- JSON Lines: one ``{"role"?, "session"?, "content"}`` per line, appended to the matching queue.

A response is a string (sent as is) or any other JSON value (sent as its JSON text, so a planner
decision can be written as an object). The caller's role and session come from the call's metadata
(``wtb_role`` / ``wtb_session``, set by the generation nodes; ``langgraph_node`` as fallback); a spec
``scripted:PATH#role`` fixes the role. A session's own queue comes first, then the shared one. Cursors are per (file, session, role) and live for the process;
:func:`reset` rewinds them. An exhausted queue raises :class:`ScriptExhausted`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from wildtoolbench.models.settings import ModelSettings

_lock = threading.Lock()
_cursors: dict[tuple[str, str, str], int] = {}
_scripts: dict[str, dict[str, Any]] = {}


class ScriptError(ValueError):
    """A script file that cannot be read; the message names the file (and line)."""


class ScriptExhausted(RuntimeError):
    """A role asked for more responses than its script queue holds."""


def reset() -> None:
    """Rewind every script cursor and forget cached scripts."""
    with _lock:
        _cursors.clear()
        _scripts.clear()


def load_script(path: str | Path) -> dict[str, Any]:
    """Parse a script file into ``{"roles": {role: [...]}, "sessions": {key: {role: [...]}}}``.

    The shared queue of a bare JSON array (or JSONL lines without a role) is stored under role ``"*"``.

    Raises:
        ScriptError: unreadable file, bad JSON (with line number for JSONL) or a wrong shape.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read script ({exc.strerror})") from None
    roles: dict[str, list[Any]] = {}
    sessions: dict[str, dict[str, list[Any]]] = {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ScriptError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(item, dict) or "content" not in item:
                raise ScriptError(f"{path}:{number}: a JSONL script line needs field 'content'") from None
            target = sessions.setdefault(str(item["session"]), {}) if item.get("session") is not None else roles
            target.setdefault(str(item.get("role") or "*"), []).append(item["content"])
        return {"roles": roles, "sessions": sessions}
    if isinstance(value, list):
        return {"roles": {"*": value}, "sessions": {}}
    if not isinstance(value, dict):
        raise ScriptError(f"{path}: a script must be a JSON object, a JSON array or JSON Lines")
    for key, item in value.items():
        if key == "sessions":
            if not isinstance(item, dict) or not all(isinstance(v, dict) for v in item.values()):
                raise ScriptError(f"{path}: field 'sessions' must map session keys to {{role: [responses]}}")
            sessions = {str(k): {str(r): list(q) for r, q in v.items()} for k, v in item.items()}
        elif isinstance(item, list):
            roles[key] = list(item)
        else:
            raise ScriptError(f"{path}: field {key!r} must be a list of responses")
    return {"roles": roles, "sessions": sessions}


def _script(path: str) -> dict[str, Any]:
    with _lock:
        if path not in _scripts:
            _scripts[path] = load_script(path)
        return _scripts[path]


def next_response(path: str, role: str, session: str = "") -> Any:
    """The next scripted response for ``role`` in ``session`` (advances the cursor).

    The session's own queue is used first; once it is used up (or absent) the shared queue of the
    role (or ``"*"``) follows.

    Raises:
        ScriptExhausted: every matching queue is used up or none exists.
    """
    script = _script(path)
    used_up: list[str] = []
    for scope, queues in ((session, script["sessions"].get(session)), ("", script["roles"])):
        if not queues:
            continue
        queue_role = role if role in queues else "*" if "*" in queues else None
        if queue_role is None:
            continue
        key = (path, scope, queue_role)
        queue = queues[queue_role]
        with _lock:
            position = _cursors.get(key, 0)
            if position < len(queue):
                _cursors[key] = position + 1
                return queue[position]
        used_up.append(
            f"role {queue_role!r}" + (f" of session {scope!r}" if scope else "") + f" (all {len(queue)} used)"
        )
    if used_up:
        raise ScriptExhausted(f"script {path}: no response left for " + " nor ".join(used_up))
    raise ScriptExhausted(
        f"script {path}: no queue for role {role!r}" + (f" in session {session!r}" if session else "")
    )


class ScriptedChatModel(BaseChatModel):
    """Chat model whose replies come from a script file (see the module docstring)."""

    path: str
    role: str | None = None

    @property
    def _llm_type(self) -> str:
        return "wtb-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """This model bound with ``tools`` (OpenAI function schemas in the request's ``tools``, so the request
        names the tools it offers, as an OpenAI-compatible model's does); the replies stay the script's text.

        Args:
            tools: LangChain tools, functions or OpenAI tool schemas.
            kwargs: ``tool_choice`` / ``parallel_tool_calls`` are kept; anything else is ignored.

        Returns:
            A ``Runnable`` answering as this model does (docs/guides/agents.md, "Models inside an agent").
        """
        from langchain_core.utils.function_calling import convert_to_openai_tool

        kept = {k: v for k, v in kwargs.items() if k in ("tool_choice", "parallel_tool_calls")}
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kept)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        from wildtoolbench.models.providers.replay import agent_step_metadata

        # inside an agent candidate's run the model answers as the candidate would (its role: the harness's node)
        metadata = agent_step_metadata(dict((run_manager.metadata if run_manager is not None else None) or {}))
        role = self.role or metadata.get("wtb_role") or metadata.get("langgraph_node") or "*"
        session = str(metadata.get("wtb_session") or "")
        response = next_response(self.path, role, session)
        content = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=content))])


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: the script file exists.

    Raises:
        ConfigurationError: no such file.
    """
    from wildtoolbench.models.registry import ConfigurationError

    path = name.partition("#")[0]
    if not Path(path).is_file():
        raise ConfigurationError(f"script file not found: {path} (model spec 'scripted:{name}')")


def create(name: str, settings: ModelSettings) -> ScriptedChatModel:
    """Build a scripted model for ``name`` = ``PATH`` or ``PATH#role`` (settings are ignored)."""
    path, _, role = name.partition("#")
    return ScriptedChatModel(path=str(Path(path).resolve()), role=role or None)
