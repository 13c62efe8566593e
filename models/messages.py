"""Lossless conversion between the reference's OpenAI dict messages and LangChain messages.

The evaluation state holds LangChain messages (so Studio and LangSmith show a
normal conversation), while the result record and the request body need the
exact OpenAI dicts the reference sends: raw ``arguments`` strings, ``content:
null``, ``reasoning_content``, generated ids. :func:`to_langchain` keeps the
original dict in ``additional_kwargs[OPENAI_MESSAGE_KEY]`` and
:func:`to_openai` gives it back unchanged.

:func:`response_from_ai` is the one adapter from a chat model's ``AIMessage``
back to the raw response shape ``{"content", "tool_calls", "reasoning_content"}``
that the step matcher and the result record use (docs/evaluation.md §3, §5).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

OPENAI_MESSAGE_KEY = "wtb_openai_message"
"""``additional_kwargs`` key holding the exact OpenAI dict a message was built from."""

RAW_RESPONSE_KEY = "wtb_raw_response"
"""``additional_kwargs`` key where a provider puts the raw ``{"content", "tool_calls", "reasoning_content"}``."""


def parse_tool_calls(raw_calls: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split raw OpenAI tool calls (docs/evaluation.md §5 ``tool_calls``) into LangChain ``tool_calls`` / ``invalid_tool_calls``; never raises.

    Args:
        raw_calls: the ``tool_calls`` list of an assistant message as it arrived
            (any shape: missing ids, ``arguments`` as an object, ``null`` ...).

    Returns:
        ``(valid, invalid)``: a call is valid when its name is a string and its
        arguments are an object or a JSON string of one (empty or ``null``
        arguments count as ``{}``); every other call is an invalid tool call
        whose ``args`` is the raw text (objects JSON-encoded) and ``error`` says
        why. Non-string ids are turned into strings (``None`` stays ``None``).
    """
    valid: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    for call in raw_calls if isinstance(raw_calls, list) else []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            invalid.append(
                {"type": "invalid_tool_call", "name": None, "args": None, "id": None, "error": "malformed tool call"}
            )
            continue
        name, arguments, call_id = function.get("name"), function.get("arguments"), call.get("id")
        call_id = call_id if call_id is None or isinstance(call_id, str) else json.dumps(call_id)
        try:
            args = (
                (json.loads(arguments) if arguments else {})
                if isinstance(arguments, str) or arguments is None
                else arguments
            )
            if not isinstance(name, str):
                raise ValueError("tool name is not a string")
            if not isinstance(args, dict):
                raise ValueError(f"arguments are not a JSON object (got {type(args).__name__})")
            valid.append({"type": "tool_call", "name": name, "args": args, "id": call_id})
        except (ValueError, TypeError) as exc:
            text = (
                arguments
                if isinstance(arguments, str) or arguments is None
                else json.dumps(arguments, ensure_ascii=False)
            )
            invalid.append(
                {
                    "type": "invalid_tool_call",
                    "name": name if isinstance(name, str) else None,
                    "args": text,
                    "id": call_id,
                    "error": str(exc),
                }
            )
    return valid, invalid


_parse_calls = parse_tool_calls


def to_langchain(message: Mapping[str, Any]) -> BaseMessage:
    """Build the LangChain message of an OpenAI dict message; :func:`to_openai` inverts it exactly (docs/evaluation.md §2).

    Args:
        message: ``{"role": "system"|"user"|"assistant"|"tool", "content", ...}``.

    Returns:
        ``SystemMessage`` / ``HumanMessage`` / ``AIMessage`` (tool calls parsed
        leniently: undecodable arguments become ``invalid_tool_calls``) /
        ``ToolMessage``, with the original dict in ``additional_kwargs`` (not
        copied: treat message dicts as immutable once built).

    Raises:
        ValueError: unknown role.
    """
    original = dict(message)
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else ("" if content is None else json.dumps(content, ensure_ascii=False))
    extra: dict[str, Any] = {OPENAI_MESSAGE_KEY: original}
    if role == "system":
        return SystemMessage(content=text, additional_kwargs=extra)
    if role == "user":
        return HumanMessage(content=text, additional_kwargs=extra)
    if role == "assistant":
        valid, invalid = _parse_calls(message.get("tool_calls"))
        if message.get("reasoning_content") is not None:
            extra["reasoning_content"] = message["reasoning_content"]
        return AIMessage(content=text, tool_calls=valid, invalid_tool_calls=invalid, additional_kwargs=extra)
    if role == "tool":
        return ToolMessage(content=text, tool_call_id=str(message.get("tool_call_id")), additional_kwargs=extra)
    raise ValueError(f"unknown message role {role!r}")


def to_openai(message: BaseMessage) -> dict[str, Any]:
    """The OpenAI dict of a LangChain message (a shallow copy of the stored original when there is one; docs/evaluation.md §2).

    Messages not built by :func:`to_langchain` are converted the usual way:
    tool-call arguments JSON-encoded with ``ensure_ascii=False``.
    """
    stored = message.additional_kwargs.get(OPENAI_MESSAGE_KEY)
    if stored is not None:
        return dict(stored)
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, ToolMessage):
        return {"role": "tool", "content": message.content, "tool_call_id": message.tool_call_id}
    if isinstance(message, AIMessage):
        out: dict[str, Any] = {"role": "assistant"}
        if message.additional_kwargs.get("reasoning_content") is not None:
            out["reasoning_content"] = message.additional_kwargs["reasoning_content"]
        out["content"] = message.content
        calls = _openai_calls(message)
        if calls:
            out["tool_calls"] = calls
        return out
    raise ValueError(f"cannot convert message of type {type(message).__name__}")


def openai_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The OpenAI dicts of ``messages`` for reading (docs/evaluation.md §5.3: a step's ``inference_input.messages``).

    Same dicts as :func:`to_openai` gives, but the stored original of a message
    built by :func:`to_langchain` is returned itself, not copied: the caller
    must copy before changing one (``wildtoolbench.bench.harness.step_log`` copies each).
    """
    out = []
    for message in messages:
        stored = message.additional_kwargs.get(OPENAI_MESSAGE_KEY)
        out.append(stored if stored is not None else to_openai(message))
    return out


def _openai_calls(message: AIMessage) -> list[dict[str, Any]]:
    calls = [
        {
            "id": call.get("id"),
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["args"], ensure_ascii=False)},
        }
        for call in message.tool_calls
    ]
    calls += [
        {
            "id": call.get("id"),
            "type": "function",
            "function": {"name": call.get("name"), "arguments": call.get("args")},
        }
        for call in message.invalid_tool_calls
    ]
    return calls


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _reasoning_of(message: AIMessage) -> str | None:
    reasoning = message.additional_kwargs.get("reasoning_content")
    if reasoning is not None:
        return reasoning
    if isinstance(message.content, list):
        texts = [
            str(block.get("reasoning") or block.get("thinking") or "")
            for block in message.content
            if isinstance(block, Mapping) and block.get("type") in ("reasoning", "thinking")
        ]
        if texts:
            return "".join(texts)
    return None


def response_from_ai(message: AIMessage) -> dict[str, Any]:
    """The raw response ``{"content", "tool_calls", "reasoning_content"}`` of a chat model's reply (docs/evaluation.md §5).

    Uses ``additional_kwargs[RAW_RESPONSE_KEY]`` when the provider kept the
    raw message (``openai:`` and ``replay:`` do: raw ``arguments`` strings,
    provider ids, ``content: null``). For any other LangChain chat model the
    shape is rebuilt: text content (``None`` when empty and there are tool
    calls, as OpenAI sends it), tool calls with ``arguments`` JSON-encoded
    (``ensure_ascii=False``; undecodable ones keep their raw string), ``None``
    when there are no calls, and ``reasoning_content`` from
    ``additional_kwargs`` or reasoning content blocks.
    """
    raw = message.additional_kwargs.get(RAW_RESPONSE_KEY)
    if raw is not None:
        return {
            "content": raw.get("content"),
            "tool_calls": copy.deepcopy(raw.get("tool_calls")),
            "reasoning_content": raw.get("reasoning_content"),
        }
    calls = _openai_calls(message)
    text = _text_of(message.content)
    return {
        "content": None if (calls and not text) else text,
        "tool_calls": calls or None,
        "reasoning_content": _reasoning_of(message),
    }


def token_counts(message: AIMessage) -> tuple[int, int]:
    """``(input_tokens, output_tokens)`` from the message's usage metadata; 0 where absent (docs/evaluation.md §5)."""
    usage = message.usage_metadata or {}
    return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
