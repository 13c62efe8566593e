"""``baseline:chat`` and ``baseline:first-tool``: candidates that need no model (docs/evaluation.md §9).

Each is a LangChain chat model that answers without reading the conversation:

- ``baseline:chat`` always replies with the fixed text :data:`CHAT_REPLY` and no tool call;
- ``baseline:first-tool`` always replies with one call to the first tool of the request's tool
  list, with arguments ``{}`` and no text. Its call id is ``call_baseline_<n>``, where ``n`` is the
  number of assistant messages already in the request, so the ids of one conversation differ and
  a re-run sends the same ones. A request without tools gets the text reply of ``baseline:chat``.

Both are deterministic and free: the same dataset gives the same records on every run. Their
scores are floors, the least a real model should beat. The recorded model name is the whole spec
(``baseline:chat``), so a result of a baseline is recognised by its ``baseline:`` prefix.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from wildtoolbench.models.settings import ModelSettings

PREFIX = "baseline"
CHAT = "chat"
FIRST_TOOL = "first-tool"
TARGETS = (CHAT, FIRST_TOOL)
"""The valid targets, ``baseline:<target>``."""
CHAT_REPLY = "I can help with that."
"""The text every ``baseline:chat`` reply holds (and ``baseline:first-tool``'s when there is no tool)."""
CALL_ID_PREFIX = "call_baseline_"


def _check_target(name: str) -> None:
    from wildtoolbench.models.registry import ConfigurationError

    if name not in TARGETS:
        raise ConfigurationError(
            f"unknown baseline {name!r} in model spec '{PREFIX}:{name}'; "
            f"valid: {', '.join(f'{PREFIX}:{target}' for target in TARGETS)}"
        )


def first_tool_name(tools: Sequence[Any] | None) -> str | None:
    """The function name of the first tool of ``tools``, else ``None`` (no tools, or a first tool without a name).

    Args:
        tools: the request's tools, OpenAI function schemas (``{"type": "function", "function":
            {"name", ...}}``) or bare function objects (``{"name", ...}``), as bound by
            :meth:`BaselineChatModel.bind_tools`.
    """
    if not tools:
        return None
    tool = tools[0]
    if not isinstance(tool, dict):
        return None
    function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    name = function.get("name")
    return name if isinstance(name, str) and name else None


def baseline_reply(target: str, messages: Sequence[BaseMessage], tools: Sequence[Any] | None) -> AIMessage:
    """The reply of baseline ``target`` to one request (docs/evaluation.md §9).

    Args:
        target: ``"chat"`` or ``"first-tool"``.
        messages: the request's messages (only the assistant messages are counted, for the call id).
        tools: the request's tools (see :func:`first_tool_name`).

    Returns:
        ``AIMessage(content=CHAT_REPLY)`` for ``chat`` (and for ``first-tool`` without a tool), else an
        ``AIMessage`` with empty content and one tool call ``{"name": <first tool>, "args": {}, "id":
        "call_baseline_<number of assistant messages in messages>"}``.

    Raises:
        ConfigurationError: ``target`` is not a valid baseline.
    """
    _check_target(target)
    name = first_tool_name(tools) if target == FIRST_TOOL else None
    if name is None:
        return AIMessage(content=CHAT_REPLY)
    index = sum(1 for message in messages if isinstance(message, AIMessage))
    call = {"name": name, "args": {}, "id": f"{CALL_ID_PREFIX}{index}", "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


class BaselineChatModel(BaseChatModel):
    """A chat model that answers as baseline :attr:`target` (see the module docstring); no network, no state."""

    target: str
    """``"chat"`` or ``"first-tool"``."""

    @property
    def _llm_type(self) -> str:
        return "wtb-baseline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"target": self.target}

    @property
    def model_name(self) -> str:
        """The recorded model name, ``baseline:<target>``."""
        return f"{PREFIX}:{self.target}"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):  # noqa: D401 - LangChain interface
        """Bind the tools (converted to OpenAI function schemas) so that each request carries them."""
        from langchain_core.utils.function_calling import convert_to_openai_tool

        schemas = [tool if isinstance(tool, dict) else convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=schemas, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = baseline_reply(self.target, messages, kwargs.get("tools"))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = baseline_reply(self.target, messages, kwargs.get("tools"))
        return ChatResult(generations=[ChatGeneration(message=reply)])


# LangChain inspects the signature of ``_generate`` / ``_agenerate`` on every request; a precomputed
# ``__signature__`` makes that immediate (as in wildtoolbench.models.providers.replay).
for _method in (BaselineChatModel._generate, BaselineChatModel._agenerate):
    _method.__signature__ = inspect.signature(_method)  # type: ignore[attr-defined]


def check(name: str, settings: ModelSettings) -> None:
    """Before any session: ``name`` is a valid baseline.

    Raises:
        ConfigurationError: ``name`` is neither ``chat`` nor ``first-tool`` (the message names the spec
            and both valid specs).
    """
    _check_target(name)


def create(name: str, settings: ModelSettings) -> BaselineChatModel:
    """Build baseline ``name`` (``chat`` or ``first-tool``); settings are ignored.

    Raises:
        ConfigurationError: ``name`` is not a valid baseline.
    """
    _check_target(name)
    return BaselineChatModel(target=name)


def model_name(name: str) -> str:
    """The name written into result records for ``baseline:NAME``: the whole spec (``baseline:chat``)."""
    return f"{PREFIX}:{name}"
