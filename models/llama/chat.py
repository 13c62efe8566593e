"""``LocalChatOpenAI``: langchain-openai's ``ChatOpenAI`` adapted to the local llama.cpp server.

Chat format: the server renders prompts with the chat template stored in the GGUF file. For the
bundled model that is Qwen2.5's own tool format (calls written as ``{"name": ..., "arguments":
{...}}`` JSON text), which the model was trained on; the server returns that text as written (its
pure content parser, :mod:`wildtoolbench.models.llama._child`) and this adapter lifts those calls into real tool
calls with the project's one text tool-call parser (:mod:`wildtoolbench.bench.text_calls`), keeping the model's
own argument text in the record.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from wildtoolbench.bench.text_calls import parse_text_tool_calls
from wildtoolbench.models.messages import RAW_RESPONSE_KEY
from wildtoolbench.models.prefix import current_prefix_key
from wildtoolbench.models.providers.openai import RawChatOpenAI

if TYPE_CHECKING:
    from wildtoolbench.models.llama.server import LocalServer

#: ``additional_kwargs`` key keeping the server's original text of a reply whose tool calls were lifted.
RAW_TEXT_KEY = "wtb_raw_text"
#: ``response_metadata`` key of the server's prompt timings of a reply: ``{"id_slot", "cache_n", "prompt_n"}``
#: (tokens of the prompt reused from the slot's cache, tokens evaluated anew).
SLOT_TIMINGS_KEY = "wtb_slot_timings"

# The slot of the request being built (set around ``super()._agenerate`` / ``_generate``).
_REQUEST_SLOT: ContextVar[int | None] = ContextVar("wtb_llama_request_slot", default=None)


def adapt_payload(payload: dict[str, Any], id_slot: int | None = None) -> dict[str, Any]:
    """Rewrite an OpenAI chat-completions request body for the local llama.cpp server.

    1. An assistant message whose ``content`` is ``None`` (a pure tool call) is sent with ``""``
       (the prompt the chat template renders is the same; older local servers answered HTTP 500).
    2. ``tools`` without ``tool_choice``: ``tool_choice="auto"`` is set explicitly.
    3. ``response_format`` of type ``json_object`` (with or without ``schema``) or ``json_schema``
       becomes the server's ``grammar`` field (:func:`json_schema_grammar`, grammar-constrained
       JSON): the server returns replies as written (its pure content parser, which ignores
       ``response_format``). It is sent in ``extra_body`` (the same JSON body on the wire), and
       ``response_format`` is not sent: with a top-level ``response_format`` langchain-openai
       switches to the client's ``parse()`` helper, which raises on a reply cut off at
       ``max_tokens`` instead of returning it, so a long-winded JSON answer would abort the run
       instead of being rejected and retried. A ``grammar`` already in ``extra_body`` wins.
    4. ``max_completion_tokens`` (what ``ChatOpenAI`` sends) is sent as ``max_tokens``, the
       name every llama.cpp server version reads.
    5. With ``id_slot``, the request is pinned to that server slot (``extra_body`` ``id_slot``,
       ``cache_prompt: true``): the slot's KV cache of the conversation's previous prompt is
       reused (:mod:`wildtoolbench.models.llama.slots`).

    Args:
        payload: the dict built by ``ChatOpenAI._get_request_payload``. Not modified.
        id_slot: the server slot to compute the request in; ``None``: the server picks one.

    Returns:
        A new payload dict with the fixes applied; other keys unchanged.
    """
    out = dict(payload)
    if "messages" in payload:
        out["messages"] = [
            {**m, "content": ""} if m.get("role") == "assistant" and m.get("content") is None else m
            for m in payload["messages"]
        ]
    if payload.get("tools") and not payload.get("tool_choice"):
        out["tool_choice"] = "auto"
    if "max_completion_tokens" in out:
        limit = out.pop("max_completion_tokens")
        out.setdefault("max_tokens", limit)
    response_format = out.pop("response_format", None)
    if isinstance(response_format, dict) and response_format.get("type") in ("json_object", "json_schema"):
        if response_format["type"] == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema")
        else:
            schema = response_format.get("schema")
        extra = dict(out.get("extra_body") or {})
        extra.setdefault("grammar", json_schema_grammar(schema))
        out["extra_body"] = extra
    if id_slot is not None:
        out["extra_body"] = {**(out.get("extra_body") or {}), "id_slot": id_slot, "cache_prompt": True}
    return out


#: LLGuidance options of :func:`json_schema_grammar`: JSON laid out as ``json.dumps`` does, one space
#: after ``,`` and ``:`` and no other whitespace, so a small model cannot pad a reply with blank lines.
COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


def json_schema_grammar(schema: dict[str, Any] | None) -> str:
    """The llama.cpp ``grammar`` that admits only JSON valid against ``schema`` (any object when ``None``).

    An LLGuidance grammar (``%llguidance``; the prebuilt server is built with LLGuidance, which
    reads JSON Schema itself): ``start: %json <schema>``, with :data:`COMPACT_JSON` layout unless
    the schema sets its own ``x-guidance`` options. ``schema`` is not modified.
    """
    spec = dict(schema) if schema else {"type": "object"}
    spec.setdefault("x-guidance", COMPACT_JSON)
    return "%llguidance {}\nstart: %json " + json.dumps(spec, ensure_ascii=False)


def _tool_names(kwargs: dict[str, Any]) -> list[str]:
    names = []
    for spec in kwargs.get("tools") or []:
        function = spec.get("function") if isinstance(spec, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.append(function["name"])
    return names


def lift_text_tool_calls(result: ChatResult, tool_names: Sequence[str]) -> ChatResult:
    """Turn tool calls written as text in ``result``'s messages into real ``AIMessage.tool_calls``.

    Messages that already carry tool calls, or when ``tool_names`` is empty, are left alone. A
    lifted call gets a fresh id ``call_<hex>``, is mirrored in ``additional_kwargs["tool_calls"]``
    in OpenAI form (``arguments`` the raw string of :func:`parse_text_tool_calls`), and the message
    content keeps only the remaining text. When the message carries the provider's raw message
    (``additional_kwargs[RAW_RESPONSE_KEY]``, kept by :class:`RawChatOpenAI`), that is rewritten to
    what a server-side tool parser would have returned: ``content`` the remaining text (``None``
    when empty), ``tool_calls`` the lifted calls with their raw ``arguments`` strings; the server's
    original text stays in ``additional_kwargs[RAW_TEXT_KEY]``. Returns ``result`` (modified in place).
    """
    if not tool_names:
        return result
    for generation in result.generations:
        message = generation.message
        if not isinstance(message, AIMessage) or message.tool_calls or not isinstance(message.content, str):
            continue
        rest, calls = parse_text_tool_calls(message.content, tool_names)
        if not calls:
            continue
        ids = [f"call_{uuid.uuid4().hex[:24]}" for _ in calls]
        tool_calls = [
            {"name": c["name"], "args": c["args"], "id": call_id, "type": "tool_call"} for c, call_id in zip(calls, ids)
        ]
        openai_calls = [
            {"id": call_id, "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c, call_id in zip(calls, ids)
        ]
        additional = dict(message.additional_kwargs)
        additional["tool_calls"] = openai_calls
        additional[RAW_TEXT_KEY] = message.content
        raw = additional.get(RAW_RESPONSE_KEY)
        if isinstance(raw, dict):
            additional[RAW_RESPONSE_KEY] = {
                **raw,
                "content": rest or None,
                "tool_calls": [{**c, "function": dict(c["function"])} for c in openai_calls],
            }
        metadata = {**message.response_metadata, "finish_reason": "tool_calls"}
        new_message = message.model_copy(
            update={
                "content": rest,
                "tool_calls": tool_calls,
                "additional_kwargs": additional,
                "response_metadata": metadata,
            }
        )
        generation.message = new_message
        generation.text = rest
    return result


class LocalChatOpenAI(RawChatOpenAI):
    """``ChatOpenAI`` for the local llama.cpp server; everything else is the stock langchain-openai path.

    It builds on :class:`~wildtoolbench.models.providers.openai.RawChatOpenAI`, so requests carry the exact
    OpenAI dicts of the evaluation history and every reply keeps the provider's raw message for
    the result record (docs/evaluation.md §5). Differences from ``RawChatOpenAI``:

    - request bodies pass through :func:`adapt_payload`;
    - :meth:`bind_tools` passes ``tool_choice="auto"`` unless the caller chose one;
    - tool calls the model wrote as JSON text are lifted into ``AIMessage.tool_calls``
      (:func:`lift_text_tool_calls`), so callers see OpenAI-style tool calls, and the kept raw
      message is rewritten as a server-side tool parser would return it (raw argument strings);
    - streaming is off (``disable_streaming=True``) so every call goes through that lifting;
    - ``supports_json_schema_grammar``: callers may bind a JSON schema as ``response_format``
      (:meth:`with_structured_output`'s default ``json_schema`` method does), which the server
      turns into a grammar;
    - each request goes to its conversation's server slot (:func:`wildtoolbench.models.prefix.continuing`,
      :class:`~wildtoolbench.models.llama.slots.SlotTable`), at most one per slot in flight (the rest wait
      here), and the server's ``cache_n`` / ``prompt_n`` come back in the reply's
      ``response_metadata[SLOT_TIMINGS_KEY]`` (they are also added to ``server.prompt_tokens``).

    ``server`` is the :class:`LocalServer` it talks to; that server lives for the whole process.
    """

    disable_streaming: bool | str = True
    #: The server can constrain sampling to a JSON schema (``response_format={"type": "json_object",
    #: "schema": ...}``, a llama.cpp grammar); the generation roles use it (``wildtoolbench.nodes.generation._common.ask_model``).
    supports_json_schema_grammar: ClassVar[bool] = True
    _server: LocalServer | None = PrivateAttr(default=None)

    @property
    def least_deadline(self) -> float | None:
        """Seconds a request to this model may always take: its client timeout (at least
        ``WTB_LOCAL_MIN_TIMEOUT``, 600 s, for a server model). The harness's per-try deadline
        (``--timeout``) is raised to it (docs/settings.md §7.1): on a slow or shared CPU a long reply
        is not a dead endpoint, and a try cut at the deadline would be retried with the same prompt.
        ``None`` when the model has no server or a non-numeric timeout."""
        timeout = self.request_timeout
        return float(timeout) if self._server is not None and isinstance(timeout, (int, float)) else None

    @property
    def server(self) -> LocalServer | None:
        """The :class:`LocalServer` this model talks to (``None`` when built directly)."""
        return self._server

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):  # type: ignore[override]
        """``ChatOpenAI.bind_tools`` with ``tool_choice`` defaulting to ``"auto"`` when tools are given."""
        if tool_choice is None and tools:
            tool_choice = "auto"
        return super().bind_tools(tools, tool_choice=tool_choice, **kwargs)

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        return adapt_payload(super()._get_request_payload(input_, stop=stop, **kwargs), _REQUEST_SLOT.get())

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        body = response if isinstance(response, dict) else getattr(response, "model_extra", None) or {}
        timings = body.get("timings") if isinstance(body, dict) else None
        if isinstance(timings, dict):
            seen = {
                "id_slot": _REQUEST_SLOT.get(),
                "cache_n": int(timings.get("cache_n") or 0),
                "prompt_n": int(timings.get("prompt_n") or 0),
            }
            if self._server is not None:
                self._server.count_prompt_tokens(seen["cache_n"], seen["prompt_n"])
            for generation in result.generations:
                generation.message.response_metadata[SLOT_TIMINGS_KEY] = seen
        return result

    # The server computes one request per slot at a time. Further requests wait their turn here, on
    # the client side, so that the HTTP timeout measures service time rather than queueing behind
    # other sessions (and a timed-out request is not retried while the server still works on it).

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if self._server is None:
            result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        else:
            with self._server.slots.lease(current_prefix_key()) as slot:
                token = _REQUEST_SLOT.set(slot)
                try:
                    result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
                finally:
                    _REQUEST_SLOT.reset(token)
        return lift_text_tool_calls(result, _tool_names(kwargs))

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if self._server is None:
            result = await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        else:
            async with self._server.slots.alease(current_prefix_key()) as slot:
                token = _REQUEST_SLOT.set(slot)
                try:
                    result = await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
                finally:
                    _REQUEST_SLOT.reset(token)
        return lift_text_tool_calls(result, _tool_names(kwargs))
