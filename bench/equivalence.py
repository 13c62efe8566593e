"""Semantic scoring: the equivalence rules of the argument checker, as data (docs/semantic-mode.md §2).

Semantic mode is fixed mode with one change: where the fixed checker finds an argument error, the
prediction is compared once more under the rules of :data:`EQUIVALENCE_RULES`. Each rule has a stable id, a docs
section and examples of what it accepts and what it still rejects. A rule never judges a whole call: it
rewrites one top-level parameter of the prediction to the gold value it is equivalent to (or drops an
extra optional parameter, or adds an omitted one at its default), and the fixed checker then checks the
rewritten prediction. The call is correct only if that check passes; the ids of the rules that rewrote
something are returned beside the verdict (a check returns ids, never prose).

Pure module: no I/O, no LangGraph.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.terms import CORRECT


@dataclass(frozen=True)
class EquivalenceRule:
    """One equivalence rule (docs/semantic-mode.md §2).

    Attributes:
        id: the stable id written into scored tasks (``"equivalences"``) and flip lists.
        title: one line saying what the rule accepts.
        section: the docs section that explains it (``docs/semantic-mode.md §2.N``).
        accepted: ``(prediction, gold)`` examples the rule accepts.
        rejected: ``(prediction, gold)`` near misses it leaves wrong.
        arguable: reported on its own, apart from the other rules (the stated-value rule).
    """

    id: str
    title: str
    section: str
    accepted: tuple[str, ...]
    rejected: tuple[str, ...]
    arguable: bool = False


NUMBER_FORM = "number-form"
BOOLEAN_STRING = "boolean-string"
DATE_SPELLING = "date-spelling"
ENUM_CASE = "enum-case"
EXTRA_DEFAULT = "extra-default"
OMITTED_DEFAULT = "omitted-default"
EXTRA_STATED = "extra-stated"

EQUIVALENCE_RULES: dict[str, EquivalenceRule] = {
    rule.id: rule
    for rule in (
        EquivalenceRule(
            NUMBER_FORM,
            "a number given as a string, or as an int where the gold has a float (or the reverse), where the "
            "schema says number or integer",
            "docs/semantic-mode.md §2.1",
            ('"15" for 15', '"10.0" for 10', "100.0 for 100"),
            ('"1,000" for 1000', '"15" for 16', '"95.0" for "95" (schema: string)'),
        ),
        EquivalenceRule(
            BOOLEAN_STRING,
            'a boolean given as the string "true" or "false" where the schema says boolean',
            "docs/semantic-mode.md §2.2",
            ('"true" for true', '"false" for false'),
            ("1 for true", "0 for false", '"yes" for true'),
        ),
        EquivalenceRule(
            DATE_SPELLING,
            "the same calendar date in another ISO-like spelling, where the parameter is a date",
            "docs/semantic-mode.md §2.3",
            ('"2024-7-13" for "2024-07-13"', '"2024/07/13" for "2024-07-13"', '"2024-07-13T00:00:00" for "2024-07-13"'),
            ('"2024-07-14" for "2024-07-13"', '"2024-07-13T09:00:00" for "2024-07-13"', '"13/07/2024" for "2024-07-13"'),
        ),
        EquivalenceRule(
            ENUM_CASE,
            "another letter case or surrounding whitespace of a value the schema enumerates",
            "docs/semantic-mode.md §2.4",
            ('"Celsius" for "celsius" (enum: celsius, fahrenheit)', '" json " for "JSON" (enum: JSON, XML)'),
            ('"kelvin" for "celsius" (not in the enum)', '"cel" for "celsius"'),
        ),
        EquivalenceRule(
            EXTRA_DEFAULT,
            "an extra optional parameter whose value is null or equals its default (the schema's default, or "
            "the one its description states)",
            "docs/semantic-mode.md §2.5",
            ('{"format": "JSON"} extra, description "the default is \'JSON\'"', '{"limit": null} extra'),
            ('{"format": "XML"} extra, default JSON', "an extra required parameter"),
        ),
        EquivalenceRule(
            OMITTED_DEFAULT,
            "an optional parameter the gold gives at its default and the answer leaves out",
            "docs/semantic-mode.md §2.6",
            ('no "unit" where the gold has "celsius", description "defaults to celsius"',),
            ('no "unit" where the gold has "fahrenheit", default celsius',),
        ),
        EquivalenceRule(
            EXTRA_STATED,
            "an extra optional parameter whose value the conversation states (user turns, assistant replies, "
            "earlier results, the environment line; not a tool description; a number inside a date or time "
            "is not that number)",
            "docs/semantic-mode.md §2.7",
            ('{"city": "Seattle"} extra, the user said "in Seattle"', '{"days": 3} extra, the user said "3 days"'),
            ('{"days": 7} extra, nobody said 7', '{"day": 13} extra, only "2024-07-13" was said'),
            arguable=True,
        ),
    )
}
"""The equivalence rules by id, in the order they are tried and documented (docs/semantic-mode.md §2)."""


# --------------------------------------------------------------------------- value rules

_NUMBER_TEXT = re.compile(r"^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$")
_DATE_TEXT = re.compile(
    r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})"
    r"(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_WORDS = re.compile(r"date|yyyy|日期", re.IGNORECASE)
_DEFAULT_PHRASE = re.compile(
    r"(?:\bdefaults?\b(?:\s+value)?(?:\s+(?:is|to|of|as|being))?\s*[:=]?\s*|默认(?:值)?(?:为|是)?\s*)"
    r"[\"'“‘`]?([^\s\"'”’`,;，。；)）]+)",
    re.IGNORECASE,
)
_CJK = re.compile("[\u4e00-\u9fff]")
_DATES_AND_TIMES = re.compile(
    r"\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?|\d{1,2}月\d{1,2}日"
)
_STANDALONE_NUMBER = re.compile(r"(?<![\d,.])[+-]?\d+(?:\.\d+)?(?![\d,.]*\d)")


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type", "string")  # a property without a type is a string (docs/arguments.md)
    return {t for t in (declared if isinstance(declared, list) else [declared]) if isinstance(t, str)}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_form(predicted: Any, gold: Any, schema: Mapping[str, Any]) -> bool:
    types = _types(schema)
    if not types & {"number", "integer"} or "string" in types or not _is_number(gold):
        return False
    if isinstance(predicted, str):
        text = predicted.strip()
        return bool(_NUMBER_TEXT.match(text)) and float(text) == gold
    return _is_number(predicted) and predicted == gold


def _boolean_string(predicted: Any, gold: Any, schema: Mapping[str, Any]) -> bool:
    return "boolean" in _types(schema) and isinstance(gold, bool) and predicted == ("true" if gold else "false")


def _calendar(text: str) -> tuple[datetime.date, tuple[int, int, int]] | None:
    match = _DATE_TEXT.match(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = match.groups()
    try:
        date = datetime.date(int(year), int(month), int(day))
    except ValueError:
        return None
    return date, (int(hour or 0), int(minute or 0), int(second or 0))


def is_date_parameter(name: str, schema: Mapping[str, Any], gold: Any) -> bool:
    """Whether a parameter holds a date: its name, description or ``format`` says so, or its gold value is an
    ISO date ``YYYY-MM-DD`` (docs/semantic-mode.md §2.3)."""
    description = schema.get("description")
    return bool(
        _DATE_WORDS.search(name)
        or (isinstance(description, str) and _DATE_WORDS.search(description))
        or schema.get("format") in ("date", "date-time")
        or (isinstance(gold, str) and _ISO_DATE.match(gold))
    )


def _date_spelling(name: str, predicted: Any, gold: Any, schema: Mapping[str, Any]) -> bool:
    if not (isinstance(predicted, str) and isinstance(gold, str)) or not is_date_parameter(name, schema, gold):
        return False
    mine, theirs = _calendar(predicted), _calendar(gold)
    return mine is not None and mine == theirs


def _enum_case(predicted: Any, gold: Any, schema: Mapping[str, Any]) -> bool:
    enum = schema.get("enum")
    return (
        isinstance(enum, list)
        and isinstance(gold, str)
        and gold in enum
        and isinstance(predicted, str)
        and predicted.strip().casefold() == gold.casefold()
    )


def stated_default(schema: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(True, value)`` for a parameter's default, the schema's ``default`` or the one its description states
    ("default 0", "defaults to false", "the default is 'JSON'", "默认为 10"); ``(False, None)`` when it has none
    (docs/semantic-mode.md §2.5)."""
    if "default" in schema:
        return True, schema["default"]
    description = schema.get("description")
    match = _DEFAULT_PHRASE.search(description) if isinstance(description, str) else None
    if match is None:
        return False, None
    token = match.group(1).rstrip(".")
    try:
        return True, json.loads(token)
    except ValueError:
        return True, token


def _equals_default(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool) and value == default
    if _is_number(value) and _is_number(default):
        return value == default
    if isinstance(value, str) and isinstance(default, str):
        return value.strip().casefold() == default.strip().casefold()
    return value == default


def conversation_numbers(conversation: str) -> list[float]:
    """The numbers the conversation states, a number inside a date or time left out, and one written with
    thousands separators too (docs/semantic-mode.md §2.7)."""
    text = _DATES_AND_TIMES.sub(" ", conversation)
    return [float(found) for found in _STANDALONE_NUMBER.findall(text)]


def is_stated(value: Any, conversation: str) -> bool:
    """Whether the conversation states ``value`` (docs/semantic-mode.md §2.7): a string as a whole word
    (case aside; inside any text when it holds a CJK character), a number as a number of its own (not in a
    date or time), a list or object when every leaf is stated. Booleans and ``null`` never are."""
    if isinstance(value, str):
        needle = value.strip().casefold()
        if not needle:
            return False
        haystack = conversation.casefold()
        if _CJK.search(needle):
            return needle in haystack
        return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None
    if _is_number(value):
        return float(value) in conversation_numbers(conversation)
    if isinstance(value, list):
        return bool(value) and all(is_stated(item, conversation) for item in value)
    if isinstance(value, dict):
        return bool(value) and all(is_stated(item, conversation) for item in value.values())
    return False


# --------------------------------------------------------------------------- whole calls


def _same_value(name: str, predicted: Any, gold: Any, schema: Mapping[str, Any]) -> str | None:
    """The id of the rule under which ``predicted`` stands for ``gold``, or ``None``."""
    if _number_form(predicted, gold, schema):
        return NUMBER_FORM
    if _boolean_string(predicted, gold, schema):
        return BOOLEAN_STRING
    if _date_spelling(name, predicted, gold, schema):
        return DATE_SPELLING
    if _enum_case(predicted, gold, schema):
        return ENUM_CASE
    return None


def _extra_rule(value: Any, schema: Mapping[str, Any], conversation: str) -> str | None:
    """The id of the rule that lets an extra optional parameter with ``value`` go, or ``None``."""
    found, default = stated_default(schema)
    if value is None or (found and _equals_default(value, default)):
        return EXTRA_DEFAULT
    if is_stated(value, conversation):
        return EXTRA_STATED
    return None


def equivalent_prediction(
    predicted: Mapping[str, Any], gold: Mapping[str, Any], schema: Mapping[str, Any], conversation: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """The prediction with every top-level parameter a rule accepts rewritten to the gold, and the rule ids
    used, in rule order (docs/semantic-mode.md §2).

    Args:
        predicted: the decoded predicted arguments object.
        gold: the decoded gold arguments object.
        schema: the tool's ``parameters`` schema.
        conversation: the text the model had seen (docs/semantic-mode.md §2.7), for the stated-value rule.

    Returns:
        ``(rewritten prediction, ids)``; a parameter whose value already matches is left alone, so ``ids`` is
        empty when no rule was needed.
    """
    from wildtoolbench.bench.args import match_error, schema_error

    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    optional = {key for key in properties if key not in required}
    out: dict[str, Any] = {}
    used: set[str] = set()
    for key, value in predicted.items():
        spec = properties.get(key) if isinstance(properties.get(key), Mapping) else {}
        if key in gold:
            differs = match_error(value, gold[key]) is not None or schema_error(value, spec, root=False, corrected=True)
            rule = _same_value(key, value, gold[key], spec) if differs else None
            out[key] = gold[key] if rule else value
        else:
            rule = _extra_rule(value, spec, conversation) if key in optional else None
            if not rule:
                out[key] = value
        if rule:
            used.add(rule)
    for key, value in gold.items():
        if key not in predicted and key in optional:
            found, default = stated_default(properties[key] if isinstance(properties[key], Mapping) else {})
            if found and _equals_default(value, default):
                out[key] = value
                used.add(OMITTED_DEFAULT)
    return out, [rule for rule in EQUIVALENCE_RULES if rule in used]


def semantic_check(
    tools: Sequence[Mapping[str, Any]], name: str, predicted: Any, gold: Any, conversation: str = ""
) -> tuple[str, list[str]]:
    """Check one call's arguments in semantic mode (docs/semantic-mode.md §1-§2).

    Args:
        tools, name, predicted, gold: as :func:`wildtoolbench.bench.args.check_arguments` (JSON text or decoded).
        conversation: the text of the request's messages (docs/semantic-mode.md §2.7).

    Returns:
        ``(verdict, rule ids)``: the fixed checker's verdict and ``[]`` when it is ``"correct"`` or no rule
        makes the call correct; ``("correct", ids)`` when the prediction rewritten by
        :func:`equivalent_prediction` passes the fixed checker.

    Raises:
        UnknownToolError: ``name`` is not in ``tools``.
    """
    from wildtoolbench.bench.args import _decoded, check_arguments, parameters_schema
    from wildtoolbench.bench.strategy import FIXED

    verdict = check_arguments(tools, name, predicted, gold, scoring=FIXED)
    if verdict == CORRECT:
        return verdict, []
    (ok_p, mine), (ok_g, theirs) = _decoded(predicted), _decoded(gold)
    if not (ok_p and ok_g and isinstance(mine, dict) and isinstance(theirs, dict)):
        return verdict, []
    rewritten, used = equivalent_prediction(mine, theirs, parameters_schema(tools, name), conversation)
    if used and check_arguments(tools, name, rewritten, theirs, scoring=FIXED) == CORRECT:
        return CORRECT, used
    return verdict, []


def conversation_text(messages: Any) -> str:
    """The text a request's messages state: every message's string ``content`` (system line, user turns,
    assistant replies, tool results), one per line; tool calls and tool descriptions are not part of it
    (docs/semantic-mode.md §2.7)."""
    if not isinstance(messages, list):
        return ""
    parts = [m.get("content") for m in messages if isinstance(m, Mapping)]
    return "\n".join(part for part in parts if isinstance(part, str))
