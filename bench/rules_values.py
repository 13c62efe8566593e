"""The ``standard`` profile's value rule (docs/generation.md §11.2, docs/audit.md §5.3).

Under ``standard`` an argument value is a finding only when nothing in the conversation says or derives
it (:class:`wildtoolbench.bench.rules.derived.DerivedContext`) and it is either a placeholder
(``value.placeholder``: ``example``, ``string``, ``<username>``) or an identifier, number or date
(``value.invented``). A free-text value that is not said literally (a search phrase built from the
user's words) is the Checker model's to judge, as in the paper's design.

Pure module: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from wildtoolbench.bench.generation_quality import placeholder_problem

_DATE_OR_TIME = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T]\d{1,2}:\d{2}(:\d{2})?)?|^\d{1,2}:\d{2}(:\d{2})?$")
_IDENTIFIER = re.compile(
    r"^\S*\d\S*$"  # a token holding a digit: ORD-1042, user42, 5f3a9c
    r"|^[A-Za-z0-9]+(_[A-Za-z0-9]+)+$"  # snake_case
    r"|^[a-z]+[A-Z][A-Za-z0-9]*$"  # camelCase
    r"|^[^\s@]+@[^\s@]+\.\w+$|^https?://\S+$"  # e-mail or web address
)


def invented_kind(value: Any) -> str:
    """What a value is when it is not free text: ``"number"``, ``"date"`` (or a time) or ``"identifier"`` (a
    token with a digit, a snake_case or camelCase name, an e-mail or web address); ``""`` for free text,
    booleans and ``null``. A code of letters only (``AAPL``, ``JFK``) is free text here: naming it from a
    company or a city is world knowledge the Checker model judges."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        return "number"
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if _DATE_OR_TIME.match(text):
        return "date"
    if _IDENTIFIER.match(text):
        return "identifier"
    return ""


_FAKE = frozenset({"example", "sample", "string", "placeholder", "foo", "bar", "baz", "xxx", "test", "lorem ipsum",
                   "your name", "my name", "some word", "a word", "john doe", "user@example.com"})  # fmt: skip
_FAKE_SHAPE = re.compile(r"^<[^<>]+>$|^\{[^{}]+\}$|^\[[^\[\]]+\]$|^(your|my)[ _-]|_here$|^(placeholder|example|sample)[ _]")


def _standard_placeholder(value: str, descriptions: Sequence[str]) -> bool:
    """A value no model means (``standard``): a made-up word (``example``, ``string``, ``foo``), a slot
    (``<username>``, ``{city}``, ``your_api_key``) or a copy of a description. A plain word that may be a
    real choice (``none``, ``name``, ``unknown``) is left to the Checker model."""
    text = value.strip().strip(".").lower()
    if text in _FAKE or _FAKE_SHAPE.search(text):
        return True
    return bool(placeholder_problem(value, descriptions)) and placeholder_problem(value, descriptions).rule == (
        "value.copies_description"
    )


_WORLD_NUMBERS = re.compile(r"lat|lon|lng|coord|altitude|elevation", re.IGNORECASE)
"""Parameters whose numbers come from world knowledge (a city's coordinates), not from the conversation."""


def standard_value_rule(value: Any, known: bool, descriptions: Sequence[str] = (), path: str = "") -> str:
    """The rule id a value breaks under ``standard`` (``""`` = none; module doc).

    Args:
        value: one scalar argument value.
        known: whether the conversation says or derives it (``DerivedContext.knows``).
        descriptions: the tool's descriptions, lower-cased (a value copied from one is a placeholder).
        path: the value's place in the arguments (``location.lat``): a coordinate is world knowledge, and
            the numbers 0 and 1 (a first page, no offset) are no invention.
    """
    if known:
        return ""
    if isinstance(value, str) and _standard_placeholder(value, descriptions):
        return "value.placeholder"
    kind = invented_kind(value)
    if kind == "number" and (value in (0, 1) or _WORLD_NUMBERS.search(path.rsplit(".", 1)[-1])):
        return ""
    return "value.invented" if kind else ""
