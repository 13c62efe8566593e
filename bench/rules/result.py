"""Result rules: simulated tool results that are no data (docs/generation.md §2, §11).

The family's catalog entries and the checks that apply them: the catalog is the one home of the
rules (the checker and the roles call these functions; nothing else defines a rule).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.audit_context import leaves
from wildtoolbench.bench.rules.catalog import SMALL_STANDARD, Problem, Rule
from wildtoolbench.bench.rules.decision import call_key
from wildtoolbench.bench.rules.value import described
from wildtoolbench.bench.terms import PSEUDO_TOOLS

_DOC = "docs/generation.md §2"
_CHECKS = "rules.result.results_errors"

RESULT_RULES = (
    Rule("result.empty", "result", ("tool",), SMALL_STANDARD,
         "an empty result (null, \"\", {} or [])", _CHECKS, _DOC),
    Rule("result.copies_definition", "result", ("tool", "session"), SMALL_STANDARD,
         "a result that pastes its tool's definition or descriptions", "rules.result.copies_definition", _DOC),
    Rule("result.copies_other", "result", ("tool", "session"), SMALL_STANDARD,
         "a result (60+ characters) identical to the result of a different call", _CHECKS, _DOC),
)  # fmt: skip


def results_errors(
    results: Any,
    calls: Sequence[Mapping[str, Any]],
    earlier: Sequence[Mapping[str, Any]] = (),
    functions: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Rule problems of simulated tool results for one step's calls (empty list = passes; docs/generation.md §2).

    Args:
        results: parsed tool output, expected a list with one observation per call.
        calls: the step's call nodes, each ``{"name", "arguments"}``.
        earlier: the session's earlier call nodes with their ``observation``.
        functions: the tool list by name (:func:`tools_by_name`); when given, a result that pastes its
            tool's definition (:func:`copies_definition`) is a problem too.

    Returns:
        Reasons: wrong count, an empty observation (``None``, ``""``, ``{}`` or ``[]``), a result that
        is a copy of the result of a different call (earlier in the session or in this step, at least
        :data:`COPIED_RESULT_CHARS` long: a small model pastes the last result it saw; the same call
        may return the same result), a result that pastes the tool's description.
    """
    if not isinstance(results, list):
        return [Problem("tool output must be a list with one result per call", "structure.result_count")]
    if len(results) != len(calls):
        return [Problem(f"expected {len(calls)} results (one per call), got {len(results)}", "structure.result_count")]
    errors = []
    seen: dict[str, Mapping[str, Any]] = {}
    for node in earlier:
        if node.get("name") not in PSEUDO_TOOLS and node.get("observation") is not None:
            seen.setdefault(json.dumps(node["observation"], sort_keys=True, ensure_ascii=False, default=str), node)
    for i, (result, call) in enumerate(zip(results, calls)):
        if result is None or result == "" or result == {} or result == []:
            errors.append(Problem(f"result {i} for {call.get('name')} is empty", "result.empty", index=i))
            continue
        function = (functions or {}).get(str(call.get("name")))
        if function and copies_definition(result, function):
            errors.append(
                Problem(
                    f"result {i} for {call.get('name')} copies the tool's description: write the data "
                    f"{call.get('name')} returns for these arguments",
                    "result.copies_definition",
                    index=i,
                )
            )
            continue
        text = json.dumps(result, sort_keys=True, ensure_ascii=False, default=str)
        other = seen.get(text) if len(text) >= COPIED_RESULT_CHARS else None
        if other is not None and call_key(other) != call_key(call):
            errors.append(
                Problem(
                    f"result {i} for {call.get('name')} copies the result of {other.get('name')}: write what "
                    f"{call.get('name')} returns for these arguments",
                    "result.copies_other",
                    index=i,
                )
            )
        seen.setdefault(text, call)
    return errors


COPIED_RESULT_CHARS = 60
"""The shortest result (as canonical JSON text) that counts as copied when a different call returned it
too: two calls may both return ``{"success": true}``, not the same 60-character record."""


DEFINITION_CHARS = 20
"""A tool description at least this long, found in a result of that tool, is a pasted definition."""


def copies_definition(result: Any, function: Mapping[str, Any]) -> bool:
    """Whether a simulated result pastes its tool's definition instead of returning data
    (docs/generation.md §2): the tool's description (:data:`DEFINITION_CHARS` characters or more) is
    found in the result's text, or a text value of the result is one of its parameters' descriptions
    word for word (``"title": "Title of the book"``; case and spacing aside), or the result is shaped
    like the definition (the tool's ``name`` and a ``parameters`` key). A small model shown the tool
    list returns it."""
    if isinstance(result, Mapping) and result.get("name") == function.get("name") and "parameters" in result:
        return True  # the definition's shape, its description written anew
    description = " ".join(str(function.get("description") or "").split()).lower().rstrip(".")
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    if len(description) >= DEFINITION_CHARS and description in " ".join(text.split()).lower():
        return True
    parameters = {" ".join(d.split()).rstrip(".") for d in described([{"parameters": function.get("parameters")}])}
    return any(
        isinstance(value, str) and " " in value.strip() and " ".join(value.split()).lower().rstrip(".") in parameters
        for _, value in leaves(result)
    )
