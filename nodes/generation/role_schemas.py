"""JSON schemas of the generation roles' structured outputs, for grammar-constrained decoding (docs/generation.md).

A model that can constrain its sampling to a JSON schema (the local llama.cpp server: see
``LocalChatOpenAI.supports_json_schema_grammar``) gets these schemas with the planner, checker and
tool requests, so a small model always produces readable JSON of the right shape. The content is
still the model's own: which tool, which argument values, which verdict. Every output is parsed and
rule-checked exactly as for any other model (``wildtoolbench.nodes.generation.state``,
``wildtoolbench.bench.generation_checks``); the schemas only mirror that structure:

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

from wildtoolbench.bench.rules.decision import MAX_CALLS_PER_STEP
from wildtoolbench.bench.rules.value import date_misplaced, schema_offers
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER

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
    ``properties`` / ``required`` of objects (no other keys: ``additionalProperties`` false) and
    ``items`` of arrays, recursively; everything else
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
            out["additionalProperties"] = False  # the rules reject a key the tool does not define, at any depth
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


class KnownValues:
    """The values a call may take at this point of the session, for the planner's grammar (docs/generation.md §2).

    Args:
        values: every scalar value said so far (:func:`wildtoolbench.bench.generation_values.known_values`).
        by_name: the values the user gave, by parameter name
            (:func:`wildtoolbench.bench.generation_values.given_by_name`).
        unknown: parameter names whose value the current task must get from the user (the value a
            clarification task's request leaves out): only the values the user gave for them in
            this task (``current``) count.
        current: the values the user gave in the current task, by parameter name.
    """

    def __init__(
        self,
        values: Sequence[Any] = (),
        by_name: Mapping[str, Sequence[Any]] | None = None,
        unknown: Sequence[str] = (),
        current: Mapping[str, Sequence[Any]] | None = None,
    ) -> None:
        self.values = list(values)
        self.by_name = {k: list(v) for k, v in (by_name or {}).items()}
        self.unknown = set(unknown)
        self.current = {k: list(v) for k, v in (current or {}).items()}

    def choices(self, name: str, schema: Mapping[str, Any]) -> list[Any] | None:
        """The values parameter ``name`` (grammar-safe ``schema``) may take: ``None`` = leave it as the schema
        says (an enum, a boolean, an object, or a type this does not narrow); ``[]`` = no known value."""
        kind = schema.get("type")
        if "enum" in schema or kind in ("boolean", "object", "null"):
            return None
        if kind == "array":
            return None
        wanted: tuple[type, ...]
        if kind == "string":
            wanted = (str,)
        elif kind == "integer":
            wanted = (int,)
        elif kind == "number":
            wanted = (int, float)
        else:
            return None

        def fits(value: Any) -> bool:
            if isinstance(value, bool) or not isinstance(value, wanted):
                return False
            return not (kind == "integer" and isinstance(value, float))

        if name in self.unknown:
            return list(dict.fromkeys(v for v in self.current.get(name, []) if fits(v)))
        own = [v for v in self.by_name.get(name, []) if fits(v)]
        if own:
            return list(dict.fromkeys(own))
        return list(dict.fromkeys(v for v in self.values if fits(v)))


def _narrow(
    arguments: dict[str, Any],
    known: KnownValues,
    offers: Mapping[str, Sequence[Any]],
    originals: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """``arguments`` with each scalar parameter limited to its known values (and the values its schema
    offers), a date only for a parameter about dates (``originals``: the tool's own parameter schemas;
    :func:`wildtoolbench.bench.rules.value.date_misplaced`); an optional parameter with none left out.
    ``None``: a required one has none."""
    properties = arguments.get("properties")
    if not isinstance(properties, dict):
        return arguments
    originals = originals if isinstance(originals, Mapping) else {}
    required = set(arguments.get("required") or [])
    narrowed: dict[str, Any] = {}
    for name, schema in properties.items():
        choices = known.choices(name, schema)
        if choices is None:
            narrowed[name] = schema
            continue
        choices = [c for c in choices if not date_misplaced(name, originals.get(name), c)]
        choices = list(dict.fromkeys([*choices, *offers.get(name, ())]))
        if choices:
            narrowed[name] = {"enum": choices}
        elif name in required:
            return None
    return {**arguments, "properties": narrowed}


def _call_schema(
    function: Mapping[str, Any],
    earlier: int = 0,
    drop: Sequence[str] = (),
    known: KnownValues | None = None,
) -> dict[str, Any] | None:
    parameters = function.get("parameters")
    arguments = grammar_safe_schema(parameters) if isinstance(parameters, Mapping) else {}
    if drop and isinstance(arguments.get("properties"), dict):
        arguments = {**arguments, "properties": {k: v for k, v in arguments["properties"].items() if k not in drop}}
    if known is not None and isinstance(arguments.get("properties"), dict):
        offers = _offers(parameters)
        narrowed = _narrow(
            arguments, known, offers, parameters.get("properties") if isinstance(parameters, Mapping) else None
        )
        if narrowed is None:
            return None
        arguments = narrowed
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


def _as_number(value: Any, kind: str) -> int | float | None:
    """``value`` as a number of ``kind`` (``"integer"`` or ``"number"``): a description's "60.0" is 60.0;
    ``None`` for text that is no number, or a fraction for an integer."""
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return None
    if kind == "integer":
        return int(value) if isinstance(value, int) or float(value).is_integer() else None
    return value


def _offers(parameters: Any) -> dict[str, list[Any]]:
    """Per top-level parameter, the scalar values its schema offers (``default``, values quoted in its description),
    of the parameter's type (a benchmark alias such as ``"float"`` read as ``"number"``: no text for it)."""
    out: dict[str, list[Any]] = {}
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    for name, schema in properties.items() if isinstance(properties, Mapping) else []:
        values = [v for v in schema_offers(schema) if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        kind = schema.get("type") if isinstance(schema, Mapping) else None
        kind = _TYPE_ALIASES.get(kind, kind) if isinstance(kind, str) else kind  # "float" is a number
        if kind in ("integer", "number"):
            values = [n for n in (_as_number(v, kind) for v in values) if n is not None]
        elif kind == "string":
            values = [v for v in values if isinstance(v, str) and v]
        if values:
            out[str(name)] = list(dict.fromkeys(values))
    return out


def allowed_action_kinds(layer_type: str, nodes: Sequence[Mapping[str, Any]] = ()) -> tuple[str, ...]:
    """What the rule checker can accept as the next step of a task (``wildtoolbench.bench.generation_checks``).

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


def _ask_choice(function: Mapping[str, Any], known: KnownValues | None) -> dict[str, Any] | None:
    """The question about ``function`` (:func:`planner_schema`): ``missing_required_parameters`` its own
    parameters, each once (with ``known``: the required ones nobody gave, when there are any); ``None`` for
    a tool without parameters."""
    parameters = function.get("parameters") if isinstance(function.get("parameters"), Mapping) else {}
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), Mapping) else {}
    names = [str(k) for k in properties]
    if not names:
        return None
    if known is not None:  # ask for what is still unknown: the required values nobody gave
        offers = _offers(parameters)
        required = [r for r in parameters.get("required") or [] if r in properties]
        open_ = [
            str(r)
            for r in required
            if not offers.get(r) and known.choices(str(r), grammar_safe_schema(properties[r])) == []
        ]
        names = open_ or names
    return {
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
                        "maxItems": len(names),  # each once (the rules reject a repeat)
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


def _answer_choice(layer_type: str) -> dict[str, Any]:
    """The answer (:func:`planner_schema`): ``answer_type`` ``chat`` for a chat task, else ``tool``."""
    return {
        "type": "object",
        "properties": {
            "name": {"const": PREPARE_TO_ANSWER},
            "arguments": {
                "type": "object",
                "properties": {"answer_type": {"const": "chat" if layer_type == "CC" else "tool"}},
                "required": ["answer_type"],
                "additionalProperties": False,
            },
            "depends_on": {"type": "array", "maxItems": 0},
        },
        "required": ["name", "arguments", "depends_on"],
        "additionalProperties": False,
    }


def planner_schema(
    tools: Sequence[Mapping[str, Any]],
    layer_type: str,
    nodes: Sequence[Mapping[str, Any]] = (),
    *,
    banned: Sequence[Sequence[str]] = (),
    focus: Sequence[str] = (),
    known: KnownValues | None = None,
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
    focused = [f for f in unique if f["name"] in set(focus)]
    callable_ = unique
    if focused:
        called = {n.get("name") for n in nodes}
        fresh = [f for f in focused if f["name"] not in called]
        # each focus tool is called once: its result is shown, so a second call only repeats it
        callable_ = fresh if fresh or "answer" in kinds or "ask" in kinds else focused
        unique = focused
        if not fresh and "answer" in kinds:  # every focus tool was called: nothing is left to ask or call
            kinds = ("answer",)
    if not unique:
        kinds = ("answer",)
    drops: dict[str, list[str]] = {}
    for pair in banned:
        if len(pair) == 2:
            drops.setdefault(str(pair[0]), []).append(str(pair[1]))
    choices = []
    for f in callable_ if "call" in kinds else []:
        required = (
            set((f.get("parameters") or {}).get("required") or [])
            if isinstance(f.get("parameters"), Mapping)
            else set()
        )
        dropped = drops.get(f["name"], [])
        if "ask" in kinds and required & set(dropped):
            continue  # its required value is unknown: the planner must ask for it
        call = _call_schema(f, len(nodes), [d for d in dropped if d not in required], known)
        if call is not None:
            choices.append(call)
    if "call" in kinds and not choices and "ask" not in kinds and "answer" not in kinds:
        choices = [c for c in (_call_schema(f, len(nodes)) for f in callable_ or unique) if c is not None]
    if "ask" in kinds:
        choices += [c for c in (_ask_choice(function, known) for function in unique) if c is not None]
    if "answer" in kinds:
        choices.append(_answer_choice(layer_type))
    if not choices:  # nothing the rules accept fits the grammar: leave the choice to the rules
        choices = [c for c in (_call_schema(f, len(nodes)) for f in unique) if c is not None]
    return {
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": 100},
            "plan": {"type": "string", "maxLength": 60},
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
    "properties": {"verdict": {"enum": ["accept", "reject"]}, "reason": {"type": "string", "maxLength": 120}},
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
"""Schema of a checker verdict."""


_SCALAR: dict[str, Any] = {
    "anyOf": [{"type": "string", "maxLength": 80}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]
}
_RECORD: dict[str, Any] = {"type": "object", "additionalProperties": _SCALAR}
_RESULT_VALUE: dict[str, Any] = {
    "anyOf": [
        *_SCALAR["anyOf"],
        {"type": "array", "items": {"anyOf": [*_SCALAR["anyOf"], _RECORD]}, "maxItems": 5},
        _RECORD,
    ]
}


def tool_results_schema(count: int) -> dict[str, Any]:
    """Schema of the tool role's output for ``count`` calls: ``{"results": [count objects]}``; each result's
    values are short strings (80 characters), numbers, booleans, ``null``, flat records, or lists of at most
    5 of them (docs/generation.md §2: a small model otherwise repeats a list item to the token cap)."""
    return {
        "type": "object",
        "properties": {
            "results": {
                "type": "array",
                "items": {"type": "object", "additionalProperties": _RESULT_VALUE},
                "minItems": count,
                "maxItems": count,
            },
        },
        "required": ["results"],
    }
