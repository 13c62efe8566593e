"""JSON schemas of the generation roles' structured outputs, for grammar-constrained decoding (docs/generation.md).

A model that can constrain its sampling to a JSON schema (the local llama.cpp server: see
``LocalChatOpenAI.supports_json_schema_grammar``) gets these schemas with the planner, checker and
tool requests, so a small model always produces readable JSON of the right shape. The content is
still the model's own: which tool, which argument values, which verdict. Every output is parsed and
rule-checked exactly as for any other model (``graphs.generation_state``,
``bench.generation_checks``); the schemas only mirror that structure:

- planner: ``{"thought", "plan", "actions": [...]}``, each action a call of a listed tool (its
  arguments shaped by the tool's parameter schema), ``ask_user_for_required_parameters`` or
  ``prepare_to_answer``, limited to the kinds the rule checker would accept at this point of the
  task (a single-tool task: one call, then the answer); at most one action per step unless the
  task is multi-tool;
- checker: ``{"verdict": "accept" | "reject", "reason"}``;
- tool: ``{"results": [one object per call]}``.

Pure functions, no model or graph import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.generation_checks import MAX_CALLS_PER_STEP
from bench.terms import ASK_USER, PREPARE_TO_ANSWER

MT_STEP_CALLS = min(3, MAX_CALLS_PER_STEP)
"""Most calls the planner grammar lets one multi-tool step hold (a task needs two or three; a small model
left to six repeats itself up to the token cap)."""

_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
_TYPE_ALIASES = {
    "float": "number",
    "double": "number",
    "int": "integer",
    "bool": "boolean",
    "str": "string",
    "dict": "object",
    "list": "array",
}


def grammar_safe_schema(schema: Any, depth: int = 0) -> dict[str, Any]:
    """A plain JSON schema for one tool parameter that a schema-to-grammar converter accepts.

    Keeps ``type`` (benchmark aliases such as ``"float"`` mapped to ``"number"``; unknown types
    dropped, i.e. any value), ``enum`` (only when every member is a string, number or boolean),
    ``properties`` / ``required`` of objects and ``items`` of arrays, recursively; everything else
    (descriptions, formats, patterns, defaults) is dropped. Below depth 4 any value is allowed.

    Args:
        schema: a tool parameter's schema (any JSON value; non-dicts mean "any value").

    Returns:
        A new dict (``{}`` = any JSON value).
    """
    if not isinstance(schema, Mapping) or depth > 4:
        return {}
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str):
        kind = _TYPE_ALIASES.get(kind.lower(), kind.lower())
        if kind in _JSON_TYPES:
            out["type"] = kind
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, (str, int, float, bool)) for v in enum):
        if out.get("type") in (None, "string") and all(isinstance(v, str) for v in enum):
            out["enum"] = list(dict.fromkeys(enum))
        elif out.get("type") in (None, "number", "integer"):
            out["enum"] = list(dict.fromkeys(enum))
            out.pop("type", None)
    if out.get("type") == "object" or (kind is None and isinstance(schema.get("properties"), Mapping)):
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            out["type"] = "object"
            out["properties"] = {str(k): grammar_safe_schema(v, depth + 1) for k, v in properties.items()}
            required = [r for r in schema.get("required") or [] if isinstance(r, str) and r in properties]
            if required:
                out["required"] = list(dict.fromkeys(required))
    if out.get("type") == "array":
        items = grammar_safe_schema(schema.get("items"), depth + 1)
        if items:
            out["items"] = items
    return out


def _depends_schema(earlier: int) -> dict[str, Any]:
    """``depends_on`` of an action when the task has ``earlier`` accepted nodes: indices 0..earlier-1, or none."""
    if earlier <= 0:
        return {"type": "array", "maxItems": 0}
    return {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": earlier - 1}, "maxItems": earlier}


def _call_schema(function: Mapping[str, Any], earlier: int = 0, drop: Sequence[str] = ()) -> dict[str, Any]:
    parameters = function.get("parameters")
    arguments = grammar_safe_schema(parameters) if isinstance(parameters, Mapping) else {}
    if drop and isinstance(arguments.get("properties"), dict):
        arguments = {**arguments, "properties": {k: v for k, v in arguments["properties"].items() if k not in drop}}
    if arguments.get("type") != "object":
        arguments = {"type": "object"}
    if arguments.get("properties"):
        arguments = {**arguments, "additionalProperties": False}  # only the tool's parameters
    return {
        "type": "object",
        "properties": {
            "name": {"const": function["name"]},
            "arguments": arguments,
            "depends_on": _depends_schema(earlier),
        },
        "required": ["name", "arguments", "depends_on"],
        "additionalProperties": False,
    }


def allowed_action_kinds(layer_type: str, nodes: Sequence[Mapping[str, Any]] = ()) -> tuple[str, ...]:
    """What the rule checker can accept as the next step of a task (``bench.generation_checks``).

    Kinds: ``"call"``, ``"ask"``, ``"answer"``. ``CC``: answer. ``ST``: a call, then the answer.
    ``MT``: calls, the answer once two calls are done. ``CQ``: questions and calls, the answer
    once both a question and a call are done. ``nodes`` are the task's accepted nodes.
    """
    calls = sum(1 for n in nodes if n.get("name") not in (ASK_USER, PREPARE_TO_ANSWER))
    asks = sum(1 for n in nodes if n.get("name") == ASK_USER)
    if layer_type == "CC":
        return ("answer",)
    if layer_type == "ST":
        return ("answer",) if calls >= 1 else ("call",)
    if layer_type == "MT":
        return ("call", "answer") if calls >= 2 else ("call",)
    if layer_type == "CQ":
        return ("call", "ask", "answer") if asks and calls else ("call", "ask")
    return ("call", "ask", "answer")


def planner_schema(
    tools: Sequence[Mapping[str, Any]],
    layer_type: str,
    nodes: Sequence[Mapping[str, Any]] = (),
    *,
    banned: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """Schema of a planner decision for a task of ``layer_type`` over ``tools`` (OpenAI tool specs).

    Each action is one of the kinds :func:`allowed_action_kinds` permits at this point of the task
    (``nodes``: its accepted nodes so far): a call of a listed tool (``name`` const, ``arguments``
    following the tool's parameters, ``depends_on`` indices of the task's earlier nodes, none in a
    task's first step), ``ask_user_for_required_parameters``
    (one choice per tool with parameters: ``tool_name`` that tool, ``missing_required_parameters``
    a non-empty list of its parameter names) or
    ``prepare_to_answer`` (``answer_type`` ``chat`` for a chat task, else ``tool``). ``actions``
    holds 1 item, or up to :data:`MT_STEP_CALLS` for a multi-tool (``MT``) task. The grammar thus
    mirrors the rule checker; which tool, which values, and the words are the model's.

    ``banned`` holds ``[tool, parameter]`` pairs whose values a rejected decision of this step made up
    (docs/generation.md §2): the retry's grammar leaves an optional one out of the tool's arguments,
    and leaves out the call of a tool whose required parameter it is when the task may ask instead
    (``CQ``), so the same made-up value cannot come back.

    Returns:
        A JSON schema dict (``thought``, ``plan`` and ``actions`` required, in that order).
    """
    kinds = allowed_action_kinds(layer_type, nodes)
    functions = [t.get("function", t) for t in tools]
    named = [f for f in functions if isinstance(f, Mapping) and isinstance(f.get("name"), str) and f.get("name")]
    unique = list({f["name"]: f for f in named}.values())
    if not unique:
        kinds = ("answer",)
    drops: dict[str, list[str]] = {}
    for pair in banned:
        if len(pair) == 2:
            drops.setdefault(str(pair[0]), []).append(str(pair[1]))
    choices = []
    for f in unique if "call" in kinds else []:
        required = (
            set((f.get("parameters") or {}).get("required") or [])
            if isinstance(f.get("parameters"), Mapping)
            else set()
        )
        dropped = drops.get(f["name"], [])
        if "ask" in kinds and required & set(dropped):
            continue  # its required value is unknown: the planner must ask for it
        choices.append(_call_schema(f, len(nodes), [d for d in dropped if d not in required]))
    if "call" in kinds and not choices and "ask" not in kinds:
        choices = [_call_schema(f, len(nodes)) for f in unique]
    if "ask" in kinds:
        for function in unique:  # one choice per tool: the parameters asked for are that tool's own
            parameters = function.get("parameters") if isinstance(function.get("parameters"), Mapping) else {}
            properties = parameters.get("properties") if isinstance(parameters.get("properties"), Mapping) else {}
            names = [str(k) for k in properties]
            if not names:
                continue
            choices.append(
                {
                    "type": "object",
                    "properties": {
                        "name": {"const": ASK_USER},
                        "arguments": {
                            "type": "object",
                            "properties": {
                                "tool_name": {"const": function["name"]},
                                "missing_required_parameters": {
                                    "type": "array",
                                    "items": {"enum": names},
                                    "minItems": 1,
                                },
                            },
                            "required": ["tool_name", "missing_required_parameters"],
                            "additionalProperties": False,
                        },
                        "depends_on": {"type": "array", "maxItems": 0},
                    },
                    "required": ["name", "arguments", "depends_on"],
                    "additionalProperties": False,
                }
            )
    if "answer" in kinds:
        choices.append(
            {
                "type": "object",
                "properties": {
                    "name": {"const": PREPARE_TO_ANSWER},
                    "arguments": {
                        "type": "object",
                        "properties": {"answer_type": {"const": "chat" if layer_type == "CC" else "tool"}},
                        "required": ["answer_type"],
                    },
                    "depends_on": {"type": "array", "maxItems": 0},
                },
                "required": ["name", "arguments", "depends_on"],
                "additionalProperties": False,
            }
        )
    return {
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": 160},
            "plan": {"type": "string", "maxLength": 120},
            "actions": {
                "type": "array",
                "items": {"anyOf": choices},
                "minItems": 1,
                "maxItems": MT_STEP_CALLS if layer_type == "MT" and "call" in kinds else 1,
            },
        },
        "required": ["thought", "plan", "actions"],
        "additionalProperties": False,
    }


CHECKER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"enum": ["accept", "reject"]}, "reason": {"type": "string", "maxLength": 200}},
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
"""Schema of a checker verdict."""


def tool_results_schema(count: int) -> dict[str, Any]:
    """Schema of the tool role's output for ``count`` calls: ``{"results": [count objects]}``."""
    return {
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": {"type": "object"}, "minItems": count, "maxItems": count},
        },
        "required": ["results"],
    }
