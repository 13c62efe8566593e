"""Reading the generation roles' output (docs/generation.md §2): the JSON in a model's text, its plain text,
the tool list by name.

The rule checks that judge the output live in the rule catalog (``wildtoolbench.bench.rules``: the
decision, value and result families); this module only reads.

Pure module: no LangGraph import, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def extract_json(text: str) -> Any:
    """The first JSON value found in a model's text output.

    Tries, in order: the whole text; each fenced code block (```json ... ```); the first position
    where a ``{`` or ``[`` starts a decodable JSON value. ``<think>...</think>`` blocks are ignored.

    Args:
        text: raw model output (may hold prose around the JSON).

    Returns:
        The decoded value (object, array, ...).

    Raises:
        ValueError: no JSON value could be decoded (message says so, with a short excerpt).
    """
    if not isinstance(text, str):
        raise ValueError(f"expected text, got {type(text).__name__}")
    body = _THINK.sub("", text).strip()
    decoder = json.JSONDecoder()
    candidates = [body] + [match.group(2).strip() for match in _FENCE.finditer(body)]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    for start, char in enumerate(body):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(body, start)
            except json.JSONDecodeError:
                continue
            return value
    excerpt = body[:80].replace("\n", " ")
    raise ValueError(f"no JSON value found in the output (starts with {excerpt!r})")


def plain_text(text: str) -> str:
    """A free-text role output cleaned for use as a message: think blocks, one code fence and
    wrapping quotes removed, and a ``{"message": ...}``-style JSON object unwrapped. May return ``""``."""
    body = _THINK.sub("", text or "").strip()
    fence = _FENCE.fullmatch(body)
    if fence:
        body = fence.group(2).strip()
    if body.startswith("{") and body.endswith("}"):
        try:
            value = json.loads(body)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            for key in ("message", "content", "reply", "question", "text", "answer"):
                if isinstance(value.get(key), str):
                    body = value[key].strip()
                    break
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "\"'":
        body = body[1:-1].strip()
    return body


def tools_by_name(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Map function name -> function spec (``{"name", "description", "parameters"}``) for an
    OpenAI-style tool list (entries ``{"type": "function", "function": {...}}`` or bare functions)."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str):
            out[name] = dict(function)
    return out
