"""The ``standard`` profile's value rule (docs/generation.md §11.2, docs/audit.md §5.3).

Under ``standard`` an argument value is a finding only when nothing in the conversation says or derives
it (:class:`wildtoolbench.bench.rules.derived.DerivedContext`) and it is either a placeholder
(``value.placeholder``: ``example``, ``string``, ``<username>``) or an identifier, code, number or date
(``value.invented``). A free-text value that is not said literally (a search phrase built from the
user's words) is the Checker model's to judge, as in the paper's design.

Pure module: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_DATE_OR_TIME = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T]\d{1,2}:\d{2}(:\d{2})?)?|^\d{1,2}:\d{2}(:\d{2})?$")
_CODE = re.compile(r"^[A-Z]{2,5}$")
_IDENTIFIER = re.compile(r"^[A-Za-z0-9]+([_.:#@-][A-Za-z0-9]+)+$|^[a-z]+[A-Z][A-Za-z0-9]*$|^\S*\d\S*$")


def invented_kind(value: Any) -> str:
    """What a value is when it is not free text: ``"number"``, ``"date"``, ``"code"`` (``JP``, ``USD``) or
    ``"identifier"`` (a token with a digit, ``user_42``, ``orderId``, an e-mail or web address); ``""``
    for free text and for booleans and ``null``."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        return "number"
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if _DATE_OR_TIME.match(text):
        return "date"
    if _CODE.match(text):
        return "code"
    if _IDENTIFIER.match(text):
        return "identifier"
    return ""


def standard_value_rule(value: Any, known: bool, descriptions: Sequence[str] = ()) -> str:
    """The rule id a value breaks under ``standard`` (``""`` = none; module doc).

    Args:
        value: one scalar argument value.
        known: whether the conversation says or derives it (``DerivedContext.knows``).
        descriptions: the tool's descriptions, lower-cased (a value copied from one is a placeholder).
    """
    from wildtoolbench.bench.generation_quality import placeholder_problem

    if known:
        return ""
    if isinstance(value, str) and placeholder_problem(value, descriptions):
        return "value.placeholder"
    return "value.invented" if invented_kind(value) else ""
