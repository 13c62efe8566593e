"""Tool calls that a model wrote into its text instead of ``tool_calls``: the one parser of the project.

Two users: the local-model provider lifts such calls into real tool calls (the client-side
equivalent of a server's tool-call parser, :func:`parse_text_tool_calls` with the offered tool
names), and the evaluation harness notes them in a step's diagnostics (:func:`text_tool_calls`)
while reference mode still scores the reply as text (docs/evaluation.md §3.3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

_TAG_RE = re.compile(r"</?tool_call>|```(?:json)?")
_WS_RE = re.compile(r"[ \t\n\r]*")


def _member_spans(text: str, start: int) -> dict[str, tuple[int, int]]:
    """``key -> (begin, end)`` of each top-level member value of the JSON object at ``text[start]``.

    ``text[start:]`` must begin with an object that ``json`` decodes (checked by the caller); a
    repeated key keeps its last value, as ``json.loads`` does.
    """
    decoder = json.JSONDecoder()
    spans: dict[str, tuple[int, int]] = {}
    index = _WS_RE.match(text, start + 1).end()
    if text[index] == "}":
        return spans
    while True:
        key, index = decoder.raw_decode(text, index)
        index = _WS_RE.match(text, index).end() + 1  # past ':'
        begin = _WS_RE.match(text, index).end()
        _value, end = decoder.raw_decode(text, begin)
        spans[key] = (begin, end)
        index = _WS_RE.match(text, end).end()
        if text[index] == "}":
            return spans
        index = _WS_RE.match(text, index + 1).end()  # past ','


def parse_text_tool_calls(text: str, tool_names: Sequence[str] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """Extract tool calls that a model wrote as JSON text (Qwen / Hermes style) from ``text``.

    With the model's own chat template the server returns calls as text: each call is a JSON
    object ``{"name": <tool>, "arguments": {...}}``, optionally wrapped in ``<tool_call>`` tags or
    a Markdown code fence (the tags are often dropped as special tokens). An object counts as a
    call only when its ``name`` is one of ``tool_names`` and its arguments (``arguments`` or
    ``parameters``; an object, a JSON string of an object, or absent = ``{}``) form an object.

    This is the client-side counterpart of a server-side tool parser (vLLM's ``hermes`` parser
    does the same for Qwen models). Unlike vLLM, which re-serialises the arguments with
    ``json.dumps``, the raw ``arguments`` string kept here is exactly the text the model wrote for
    the arguments object (or, when the model wrote the arguments as a JSON string, that string's
    value; ``"{}"`` when it wrote none).

    Reference mode still scores such a reply as text (docs/evaluation.md §3.3); only the local-model
    provider lifts the calls, as a server-side tool parser would.

    Args:
        text: the assistant message content.
        tool_names: names of the tools offered in the request; ``None`` accepts any string name
            (used to diagnose replies, never to score them).

    Returns:
        ``(rest, calls)``: the text with the calls, tags and fences removed (stripped), and one
        ``{"name": str, "args": dict, "arguments": str}`` per call, in order (``arguments`` is the
        raw string described above; ``json.loads(arguments) == args``). ``(text, [])`` when none
        is found.
    """
    names = None if tool_names is None else set(tool_names)
    decoder = json.JSONDecoder()
    calls: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        args: Any = None
        raw = "{}"
        name = value.get("name") if isinstance(value, dict) else None
        if isinstance(name, str) and name and (names is None or name in names):
            key = "arguments" if "arguments" in value else "parameters"
            args = value.get(key, {})
            if key in value:
                begin, stop = _member_spans(text, index)[key]
                raw = text[begin:stop]
            if isinstance(args, str):
                raw = args
                try:
                    args = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError:
                    args = None
                if not args and isinstance(args, dict):
                    raw = "{}"
        if isinstance(args, dict):
            calls.append({"name": value["name"], "args": args, "arguments": raw})
            spans.append((index, end))
            index = text.find("{", end)
        else:
            index = text.find("{", index + 1)
    if not calls:
        return text, []
    pieces, last = [], 0
    for begin, end in spans:
        pieces.append(text[last:begin])
        last = end
    pieces.append(text[last:])
    return _TAG_RE.sub("", "".join(pieces)).strip(), calls


_TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def text_tool_calls(content: Any) -> dict[str, Any] | None:
    """A tool call written into the text content instead of ``tool_calls``, or ``None``.

    Recognises the forms :func:`parse_text_tool_calls` reads (a JSON object ``{"name",
    "arguments"|"parameters"}``, optionally in ``<tool_call>`` tags or a code fence), with any tool
    name, plus ``<tool_call>`` blocks whose content cannot be read (name ``"?"``). The note goes into
    a step's diagnostics (docs/evaluation.md §5.5); the reply is still scored as text (§3.3).

    Args:
        content: the response's ``content`` (any type; only a non-empty string can hold a call).

    Returns:
        ``{"format": "tool_call_tag" | "json", "names": [tool names, "?" where unreadable]}``, or
        ``None`` when the text holds no call.
    """
    if not isinstance(content, str) or not content.strip():
        return None
    _rest, calls = parse_text_tool_calls(content)
    names = [call["name"] for call in calls]
    if "<tool_call>" in content:
        blocks = _TOOL_CALL_BLOCK.findall(content)
        unreadable = sum(1 for block in blocks if not parse_text_tool_calls(block)[1])
        return {"format": "tool_call_tag", "names": names + ["?"] * unreadable}
    return {"format": "json", "names": names} if names else None
