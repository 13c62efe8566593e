"""Argument checker: one predicted tool call against one gold call (docs/arguments.md).

Reference mode, including the quirks 21-27 of
``fixtures/reference/README.md``. :func:`check_arguments` returns the literal
``"correct"`` or one of the exact message strings the published evaluation
produced, so scores stay comparable with the paper's leaderboard.

Two stages; the first failure wins:

1. **schema**: the predicted arguments string is parsed as JSON and validated
   against the tool's ``parameters`` (:func:`schema_error`).
2. **match**: the gold arguments string is parsed and compared with the
   prediction value by value (:func:`match_error`).

Pure functions over plain data: no LangGraph, no I/O (jieba keeps its
dictionary cache in the system temporary directory, never in the repository).
"""

from __future__ import annotations

import copy
import json
import logging
import re
import tempfile
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from rouge import Rouge

from wildtoolbench.bench.strategy import ScoringStrategy, scoring_strategy
from wildtoolbench.bench.terms import CORRECT

__all__ = [
    "CORRECT",
    "UnknownToolError",
    "check_arguments",
    "float_to_number",
    "match_error",
    "parameters_schema",
    "schema_error",
]

ERROR_JSON = "error: args invalid json format"

SCHEMA_MISSING = "error_schema: required args missing"
SCHEMA_UNDEFINED = "error_schema: args not defined"
SCHEMA_TYPE = "error_schema: args type inconsistent"
SCHEMA_ENUM = "error_schema: args value not in enum"
SCHEMA_NESTED_MISSING = "error_schema: required nested args missing"
SCHEMA_NESTED_UNDEFINED = "error_schema: nested args not defined"
SCHEMA_NESTED_TYPE = "error_schema: nested args type inconsistent"
SCHEMA_NESTED_ENUM = "error_schema: nested args value not in enum"

MATCH_KEYS = "error_match: args keys mismatch"
MATCH_ARRAY_LENGTH = "error_match: array length mismatch"
MATCH_TYPE = "error_match: value type inconsistent"
MATCH_VALUE = "error_match: value mismatch"
MATCH_STRING = "error_match: string similarity too low"
MATCH_ROUGE_FAILED = "error_match: rouge calculation failed"
COMPARISON_FAILED = "error: comparison failed - "

#: Gold strings shorter than this are also held to the edit-similarity floor.
SHORT_STRING_LENGTH = 10
EDIT_SIMILARITY_FLOOR = 0.8
ROUGE_L_FLOOR = 0.7

# JSON-schema type name -> accepted Python types. ``bool`` is a subclass of
# ``int``, so a boolean passes "integer" and "number" (quirk 23); "float" accepts
# a Python float only. A name outside this table constrains nothing.
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "float": (float,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}

# The reference treats only the basic CJK Unified Ideographs block as Chinese.
_CJK = re.compile("[\u4e00-\u9fa5]")

_ROUGE = Rouge()


class UnknownToolError(KeyError):
    """The call names a tool that the tool list does not define.

    The reference checker crashes with a bare ``KeyError`` here; we raise this
    subclass (still a ``KeyError``) with a message naming the tool, because the
    gold answer naming an undeclared tool is a dataset error, not a model error.
    """

    def __init__(self, name: str, known: Sequence[str]):
        self.name = name
        self.known = list(known)
        super().__init__(f"tool {name!r} is not in the tool list (known: {', '.join(self.known) or 'none'})")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


# --------------------------------------------------------------------------- tools


def float_to_number(tools: Any, *, scoring: ScoringStrategy | str | None = None) -> Any:
    """Deep copy of a tool list with every JSON-schema ``"type": "float"`` made ``"number"`` (docs/evaluation.md §2).

    Args:
        tools: OpenAI tool list (or any JSON-like structure). Not modified.
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` (or its name; default
            reference); with fix 7 (fixed, semantic) a ``"float"`` inside a type list
            (``["float", "null"]``) becomes ``"number"`` too (docs/fixed-mode.md §8).

    Returns:
        A deep copy in which every mapping entry ``"type": "float"``, at any
        depth, reads ``"type": "number"``. This is the structural equivalent of
        the reference's textual replacement of ``"type": "float"`` in the
        JSON-encoded list; a ``type`` list such as ``["float", "null"]`` is left
        alone, as the textual replacement leaves it (reference mode).
    """
    fixed = 7 in scoring_strategy(scoring).scoring_fixes

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: (
                    "number"
                    if key == "type" and value == "float"
                    else [("number" if item == "float" else item) for item in value]
                    if fixed and key == "type" and isinstance(value, list)
                    else rewrite(value)
                )
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return copy.deepcopy(node)

    return rewrite(tools)


def parameters_schema(tools: Sequence[Mapping[str, Any]], name: str) -> dict[str, Any]:
    """The root object schema the checker validates a call to ``name`` against (docs/arguments.md).

    Args:
        tools: OpenAI tool list ``[{"type": "function", "function": {"name",
            "description", "parameters"}}]``. Entries without a function name are
            ignored; with duplicate names the last entry wins.
        name: the called tool's name.

    Returns:
        ``{"type": "object", "required": [...], "properties": {...}}`` built from
        the tool's ``parameters``. Like the reference, only ``required`` and
        ``properties`` are kept: a root-level ``additionalProperties`` is ignored,
        so an undeclared top-level key is always an error.

    Raises:
        UnknownToolError: no tool in ``tools`` has that name.
    """
    found: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not function.get("name"):
            continue
        parameters = function.get("parameters")
        found[function["name"]] = parameters if isinstance(parameters, Mapping) else {}
    if name not in found:
        raise UnknownToolError(name, found)
    parameters = found[name]
    properties = parameters.get("properties")
    return {
        "type": "object",
        "required": list(parameters.get("required") or []),
        "properties": dict(properties) if isinstance(properties, Mapping) else {},
    }


# --------------------------------------------------------------------------- schema stage


def _allowed_types(schema: Mapping[str, Any]) -> tuple[type, ...] | None:
    """Python types a value may have under ``schema``; ``None`` means unconstrained."""
    if "type" not in schema:
        return _PYTHON_TYPES["string"]  # a property without a type is a string (quirk 23)
    declared = schema["type"]
    names = declared if isinstance(declared, list) else [declared]
    allowed: list[type] = []
    for type_name in names:
        known = _PYTHON_TYPES.get(type_name) if isinstance(type_name, str) else None
        if known is None:
            return None  # an unknown type name constrains nothing
        allowed.extend(known)
    return tuple(allowed) or None


def _in_enum(value: Any, enum: Any) -> bool:
    members = enum if isinstance(enum, (list, tuple)) else [enum]
    return value in members  # Python ==, so True == 1 == 1.0 (quirk 23)


def schema_error(value: Any, schema: Any, *, root: bool = True, corrected: bool = False) -> str | None:
    """First schema violation of a decoded argument value, or ``None`` (docs/arguments.md stage 1).

    Args:
        value: decoded JSON value (dict / list / str / int / float / bool / None).
        schema: JSON-schema mapping (for the root, :func:`parameters_schema`).
            A non-mapping schema constrains nothing.
        root: ``True`` for the whole arguments object. Anything reached through a
            top-level parameter is checked with ``root=False`` and reports the
            ``nested`` message variants (quirk 22).
        corrected: fix 7 (docs/fixed-mode.md §8; the fixed and semantic strategies): an object
            schema whose ``properties`` is absent or empty accepts any key, as JSON Schema does,
            unless ``additionalProperties`` is ``false``; ``additionalProperties`` given as a
            schema allows extra keys and checks their values against it; malformed keywords are
            ignored instead of misread or crashed on (an ``anyOf`` that is not a list, a
            ``required`` that is not a list, of which only string entries count). Same messages.

    Returns:
        ``None`` when valid, else one ``error_schema: ...`` message. Checks in
        order: ``anyOf`` (first passing branch wins, else the first branch's
        error); type (a type list is a union); ``enum``; for a dict value (whatever the declared
        type): required keys, then each key in the value's own order is either declared
        in ``properties`` (recurse), allowed by ``additionalProperties: true``
        (not checked further), or undefined; for a list value with ``items``:
        each item in order. Without ``corrected`` an object schema without ``properties``
        therefore rejects every key (quirk 24).
    """
    if not isinstance(schema, Mapping):
        return None
    if "anyOf" in schema and (not corrected or isinstance(schema["anyOf"], list)):
        first_error: str | None = None
        for branch in schema["anyOf"] or []:
            error = schema_error(value, branch, root=root, corrected=corrected)
            if error is None:
                return None
            first_error = first_error or error
        return first_error

    allowed = _allowed_types(schema)
    if allowed is not None and not isinstance(value, allowed):
        return SCHEMA_TYPE if root else SCHEMA_NESTED_TYPE
    if "enum" in schema and not _in_enum(value, schema["enum"]):
        return SCHEMA_ENUM if root else SCHEMA_NESTED_ENUM

    if isinstance(value, dict):
        return _object_error(value, schema, root, corrected)
    if isinstance(value, list) and "items" in schema:
        for item in value:
            error = schema_error(item, schema["items"], root=False, corrected=corrected)
            if error is not None:
                return error
    return None


def _object_error(value: dict, schema: Mapping[str, Any], root: bool, corrected: bool) -> str | None:
    """The required / declared-key checks of :func:`schema_error` for an object value."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    required = schema.get("required")
    if corrected:
        required = [key for key in required if isinstance(key, str)] if isinstance(required, list) else []
    if any(key not in value for key in required or []):
        return SCHEMA_MISSING if root else SCHEMA_NESTED_MISSING
    additional = schema.get("additionalProperties")
    open_object = corrected and (isinstance(additional, Mapping) or (not properties and additional is not False))
    for key, item in value.items():
        if key in properties:
            error = schema_error(item, properties[key], root=False, corrected=corrected)
        elif corrected and isinstance(additional, Mapping) and additional:
            error = schema_error(item, additional, root=False, corrected=corrected)
        elif additional is True or open_object:
            continue
        else:
            return SCHEMA_UNDEFINED if root else SCHEMA_NESTED_UNDEFINED
        if error is not None:
            return error
    return None


# --------------------------------------------------------------------------- match stage


def _at(path: str) -> str:
    return f" at '{path}'" if path else ""


def _normalise(text: str) -> str:
    return "".join(text.split()).lower()


def _segment(text: str) -> str:
    """Space-joined jieba segmentation (dictionary loaded quietly on first use)."""
    import jieba

    if jieba.dt.tmp_dir is None:
        jieba.dt.tmp_dir = tempfile.gettempdir()  # cache file never lands in the repo
    jieba.setLogLevel(logging.WARNING)
    return " ".join(jieba.cut(text))


def _string_error(predicted: str, gold: str, path: str) -> str | None:
    if predicted == gold or _normalise(predicted) == _normalise(gold):
        return None
    if len(gold) < SHORT_STRING_LENGTH:
        ratio = SequenceMatcher(None, predicted, gold).ratio()
        if ratio < EDIT_SIMILARITY_FLOOR:
            return f"{MATCH_STRING}{_at(path)} (edit score: {ratio:.2f})"
    # Every string still unresolved (short ones too) must reach the ROUGE-L floor.
    if _CJK.search(predicted) or _CJK.search(gold):
        hypothesis, reference = _segment(predicted), _segment(gold)
    else:
        hypothesis, reference = predicted, gold
    try:
        score = _ROUGE.get_scores(hypothesis, reference)[0]["rouge-l"]["f"]
    except Exception:  # e.g. an empty or "."-only hypothesis
        return f"{MATCH_ROUGE_FAILED}{_at(path)}"
    if score < ROUGE_L_FLOOR:
        return f"{MATCH_STRING}{_at(path)} (rouge score: {score:.2f})"
    return None


def _key_list(keys: set[str]) -> str:
    # The reference prints list(set) whose order follows the hash seed (quirk 27);
    # sorted order is our deterministic stand-in and agrees for a single key.
    return repr(sorted(keys, key=str))


def match_error(predicted: Any, gold: Any, path: str = "") -> str | None:
    """First difference between a predicted and a gold argument value, or ``None`` (docs/arguments.md stage 2).

    Args:
        predicted: decoded predicted value.
        gold: decoded gold value.
        path: location of this value, ``""`` for the whole arguments object;
            nested locations read ``a.b[2].c``.

    Returns:
        ``None`` when they match, else an ``error_match: ...`` message ending in
        `` at '<path>'`` (omitted at the root). Rules: the Python types must be
        identical (``5`` vs ``5.0``, ``True`` vs ``1`` differ); dicts need equal
        key sets (``missing:`` = gold-only keys, ``extra:`` = predicted-only keys)
        and are then compared in gold key order; lists need equal length and are
        compared by position; strings pass when equal or equal after removing
        all whitespace and lowercasing, else a gold string shorter than 10
        characters needs a ``difflib`` ratio of at least 0.8 and then every
        string needs a ROUGE-L F of at least 0.7 (hypothesis = predicted,
        reference = gold; jieba-segmented when either has a CJK character);
        other scalars must be ``==``.

    Raises:
        Whatever jieba raises on segmentation (ROUGE failures become a message).
    """
    where = _at(path)
    if type(predicted) is not type(gold):
        return f"{MATCH_TYPE}{where}"
    if isinstance(gold, dict):
        missing = set(gold) - set(predicted)
        extra = set(predicted) - set(gold)
        if missing or extra:
            detail = []
            if missing:
                detail.append(f"missing: {_key_list(missing)}")
            if extra:
                detail.append(f"extra: {_key_list(extra)}")
            return f"{MATCH_KEYS}{where} ({', '.join(detail)})"
        for key, gold_item in gold.items():
            error = match_error(predicted[key], gold_item, f"{path}.{key}" if path else key)
            if error is not None:
                return error
        return None
    if isinstance(gold, list):
        if len(predicted) != len(gold):
            return f"{MATCH_ARRAY_LENGTH}{where}"
        for index, (predicted_item, gold_item) in enumerate(zip(predicted, gold)):
            error = match_error(predicted_item, gold_item, f"{path}[{index}]")
            if error is not None:
                return error
        return None
    if isinstance(gold, str):
        return _string_error(predicted, gold, path)
    if predicted != gold:
        return f"{MATCH_VALUE}{where}"
    return None


# --------------------------------------------------------------------------- entry point


def check_arguments(
    tools: Sequence[Mapping[str, Any]],
    name: str,
    predicted_arguments: Any,
    gold_arguments: Any,
    *,
    scoring: ScoringStrategy | str | None = None,
) -> str:
    """Check one predicted tool call's arguments against the gold call (docs/arguments.md, quirks 21-27).

    Args:
        tools: OpenAI tool list, used exactly as given. Apply
            :func:`float_to_number` first when the rules ask for it (docs/arguments.md) (scoring does;
            ``args_cases.jsonl`` does not, so there ``"float"`` accepts floats only).
        name: the called tool's name (predicted and gold names already agree).
        predicted_arguments: the model's raw arguments string (JSON text).
        gold_arguments: the gold arguments as JSON text.
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default
            reference: the published checker's rules, quirks included). With fix 7 (fixed, semantic;
            docs/fixed-mode.md §8) the schema stage is :func:`schema_error` with ``corrected=True``,
            and either arguments value may be given already decoded (an object, not JSON text).

    Returns:
        ``"correct"`` or the reference's exact message, for example
        ``"error: args invalid json format"``,
        ``"error_schema: nested args type inconsistent"`` or
        ``"error_match: string similarity too low at 'legs[0].from' (edit score: 0.00)"``.
        Order, as in the reference: parse the prediction, validate it against
        the schema, parse the gold, compare. So a schema error in the
        prediction wins over a malformed gold string. An unexpected exception
        while comparing (e.g. recursion depth) becomes
        ``"error: comparison failed - <exception text>"``, as in the reference.

    Raises:
        UnknownToolError: ``name`` is not defined in ``tools`` (the reference
            crashes with ``KeyError`` here; no fixture covers it).
        TypeError: an arguments value is not ``str``/``bytes`` (reference mode only).
    """
    corrected = 7 in scoring_strategy(scoring).scoring_fixes
    decode = _decoded if corrected else _json_text
    root_schema = parameters_schema(tools, name)
    ok, predicted = decode(predicted_arguments)
    if not ok:
        return ERROR_JSON
    error = schema_error(predicted, root_schema, root=True, corrected=corrected)
    if error is not None:
        return error
    ok, gold = decode(gold_arguments)
    if not ok:
        return ERROR_JSON
    try:
        error = match_error(predicted, gold)
    except Exception as exc:  # reference: any comparison crash is reported, not raised
        return f"{COMPARISON_FAILED}{exc}"
    return CORRECT if error is None else error


def _json_text(arguments: Any) -> tuple[bool, Any]:
    """``(ok, value)`` of JSON text as the reference parses it (TypeError for a value that is not text)."""
    try:
        return True, json.loads(arguments)
    except json.JSONDecodeError:
        return False, None


def _decoded(arguments: Any) -> tuple[bool, Any]:
    """``(ok, value)``: JSON text parsed, an already decoded value taken as it is (fix 7, docs/fixed-mode.md §8)."""
    if isinstance(arguments, (bytes, bytearray)):
        try:
            arguments = arguments.decode("utf-8")
        except UnicodeDecodeError:
            return False, None
    if isinstance(arguments, str):
        try:
            return True, json.loads(arguments)
        except json.JSONDecodeError:
            return False, None
    if arguments is None:
        return False, None
    return True, arguments
