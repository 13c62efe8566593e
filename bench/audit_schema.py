"""A plain JSON-schema reading of a tool's parameters, for the dataset audit (docs/audit.md §3).

The published argument checker (:mod:`wildtoolbench.bench.args`) has quirks (docs/quirks.md §21-§27): it reports
only the first problem, reads a property without ``type`` as a string, lets ``true`` pass as an
integer and rejects any key of an object without ``properties``. The audit asks a different
question, whether a gold value breaks the schema it is written against, so it reads the schema as
JSON Schema does and reports every problem with the path of the value at fault.

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "float": (int, float),  # the dataset's non-standard name for "number" (docs/dataset.md §5)
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value: ``string``, ``integer``, ``number`` (a float),
    ``boolean``, ``array``, ``object``, ``null`` (docs/audit.md §3)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null" if value is None else type(value).__name__


def _has_type(value: Any, name: Any) -> bool | None:
    """Whether ``value`` is of the JSON type ``name``; ``None`` for a name that constrains nothing."""
    if not isinstance(name, str) or name not in _TYPES:
        return None
    if isinstance(value, bool) and name != "boolean":
        return False  # JSON Schema: true is not a number
    if name == "integer" and isinstance(value, float):
        return value.is_integer()  # JSON Schema: 5.0 is an integer
    return isinstance(value, _TYPES[name])


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: same JSON type (numbers compared as numbers, ``true`` is not ``1``), same members (docs/audit.md §3)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _short(value: Any, limit: int = 40) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _at(path: str) -> str:
    return path or "arguments"


def schema_problems(value: Any, schema: Any, path: str = "", *, root: bool = False) -> list[tuple[str, str]]:
    """Every way ``value`` breaks ``schema`` read as JSON Schema (docs/audit.md §3).

    Args:
        value: a decoded JSON value (a gold call's arguments, or a part of them).
        schema: a JSON-schema mapping; anything else constrains nothing.
        path: where ``value`` sits, e.g. ``city`` or ``items[0].id`` (``""`` for the arguments object).
        root: ``value`` is a call's whole arguments object: a key the tool does not declare is unknown
            unless ``additionalProperties`` allows it, even when the tool declares no properties at all.

    Returns:
        ``(path, message)`` pairs, in the value's order; empty when the value fits. Checked: ``type``
        (a name or a list; ``float`` is ``number``; an unknown name constrains nothing), ``enum`` and
        ``const`` (JSON equality), ``anyOf`` / ``oneOf`` (one branch must fit) and ``allOf``,
        ``minimum`` / ``maximum``, for an object ``required`` and unknown keys (a key outside
        ``properties`` when the schema declares properties, or at the root, and
        ``additionalProperties`` is not ``true`` or a schema), for an array ``items``. Never raises on a
        malformed schema.
    """
    if not isinstance(schema, Mapping):
        return []
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            if not any(not schema_problems(value, branch, path, root=root) for branch in branches):
                return [(_at(path), f"{_short(value)} fits none of the {keyword} branches")]
    problems: list[tuple[str, str]] = []
    all_of = schema.get("allOf")
    for branch in all_of if isinstance(all_of, list) else []:
        problems.extend(schema_problems(value, branch, path, root=root))

    declared = schema.get("type")
    if declared is not None:
        names = declared if isinstance(declared, list) else [declared]
        verdicts = [_has_type(value, name) for name in names]
        if verdicts and None not in verdicts and not any(verdicts):
            expected = " or ".join(str(name) for name in names)
            problems.append((_at(path), f"expected {expected}, got {json_type(value)} {_short(value)}"))
            return problems
    if "enum" in schema and isinstance(schema["enum"], list):
        if not any(json_equal(value, member) for member in schema["enum"]):
            members = ", ".join(_short(member, 20) for member in schema["enum"][:8])
            problems.append((_at(path), f"{_short(value)} is not one of the enum values ({members})"))
    if "const" in schema and not json_equal(value, schema["const"]):
        problems.append((_at(path), f"{_short(value)} is not the const value {_short(schema['const'])}"))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for keyword, broken in (("minimum", lambda v, m: v < m), ("maximum", lambda v, m: v > m)):
            bound = schema.get(keyword)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool) and broken(value, bound):
                problems.append(
                    (
                        _at(path),
                        f"{_short(value)} is {'below' if keyword == 'minimum' else 'above'} the {keyword} {bound}",
                    )
                )

    if isinstance(value, dict):
        problems.extend(_object_problems(value, schema, path, root))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                problems.extend(schema_problems(item, items, f"{path}[{index}]"))
        elif isinstance(items, list):
            for index, (item, item_schema) in enumerate(zip(value, items)):
                problems.extend(schema_problems(item, item_schema, f"{path}[{index}]"))
    return problems


def _object_problems(value: dict, schema: Mapping[str, Any], path: str, root: bool) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for key in required if isinstance(required, list) else []:
        if isinstance(key, str) and key not in value:
            problems.append((_join(path, key), f"required parameter {key!r} is missing"))
    additional = schema.get("additionalProperties")
    closed = additional is False or (additional is None and (root or bool(properties)))
    for key, item in value.items():
        where = _join(path, key)
        if key in properties:
            problems.extend(schema_problems(item, properties[key], where))
        elif isinstance(additional, Mapping):
            problems.extend(schema_problems(item, additional, where))
        elif closed:
            known = ", ".join(sorted(properties)) or "none"
            problems.append((where, f"unknown key {key!r} (the schema declares: {known})"))
    return problems


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def tool_parameters(tools: Sequence[Any], name: str) -> Mapping[str, Any] | None:
    """The ``parameters`` schema of the tool called ``name`` in an OpenAI tool list (the last one of
    that name, as the published checker reads it), ``{}`` for a tool without one, ``None`` when no
    tool has that name (docs/audit.md §3)."""
    found: Mapping[str, Any] | None = None
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and function.get("name") == name:
            parameters = function.get("parameters")
            found = parameters if isinstance(parameters, Mapping) else {}
    return found
