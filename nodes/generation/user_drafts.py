"""User role, the generator's own drafts (docs/generation.md §4.3): the goal text a message is written
from, the fallback messages and answers used when every try of the user model was rejected, and the
values the user model chooses for details nothing in the conversation gives (:func:`choose_values`).

Split out of ``user.py``; the role's node is :func:`wildtoolbench.nodes.generation.user.user`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from string import Template
from typing import Any

from langgraph.runtime import Runtime

from wildtoolbench.bench.audit_context import as_text, has_cjk
from wildtoolbench.bench.generation_checks import extract_json, tools_by_name
from wildtoolbench.bench.generation_values import (
    fallback_value,
    name_words,
    request_phrase,
)
from wildtoolbench.bench.rules import Problem
from wildtoolbench.bench.rules.value import described, placeholder_problem
from wildtoolbench.nodes.generation._common import (
    ask_model,
    dumps,
    entry_id,
    labels,
    role_has_grammar,
)
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.retry import rule_verdict
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.text_patterns import stated
from wildtoolbench.nodes.generation.user_details import detail_names, detail_schema, planned_details, task_kind
from wildtoolbench.prompts import fragments, render


def _values_text(
    state: State,
    functions: Sequence[dict[str, Any]],
    plans: Sequence[dict[str, Any]],
    missing: str,
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """``city = Paris, date = 2024-05-08, query = (a real one you choose)`` for the prompt; a value said
    before is marked as one to refer back to."""
    items = []
    for index, function in enumerate(functions):
        plan = plans[index] if index < len(plans) else {}
        for name in detail_names(function, missing):
            items.append(value_item(state, name, plan.get(name), said=(index, name) in implicit))
    return ", ".join(dict.fromkeys(items)) or "-"


def value_item(state: State, name: str, value: Any, *, said: bool = False) -> str:
    """One value as the prompt lists it: ``city = Paris``, ``query = (a real one you choose)``, or marked as
    said before."""
    names = fragments(state.language)["labels"]
    if value is None:
        return f"{name} = {names['you_choose']}"
    mark = f" {names['said_before']}" if said else ""
    return f"{name} = {' / '.join(stated(value)) or dumps(value)}{mark}"


def goal_text(
    state: State,
    functions: Sequence[dict[str, Any]],
    missing: str,
    layer: int = 0,
    planned: Sequence[dict[str, Any]] | None = None,
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """The prompt's description of what the user wants: the focus functions' descriptions (not their
    names) and the values the message must give (``planned``, else the parameters' names), or the chat
    goal (docs/generation.md §4.3)."""
    goals = fragments(state.language)["goals"]
    if not functions:
        return Template(goals["chat"]).substitute(kind=task_kind(state, layer))
    description = "; ".join(str(f.get("description") or "").strip().rstrip(".") for f in functions)
    if planned is None:
        planned, implicit = planned_details(state, functions, missing, layer)
    return Template(goals["one" if len(functions) == 1 else "many"]).substitute(
        description=description, parameters=_values_text(state, functions, planned, missing, implicit)
    )


def _param_words(name: str, schema: Any, language: str) -> str:
    """How a request names a parameter: its name's words (``teamId`` -> ``team ID``); on the Chinese side the
    first clause of its description when it has one."""
    if language == "zh" and isinstance(schema, dict) and has_cjk(str(schema.get("description") or "")):
        return re.split(r"[，,。；;（(]", str(schema["description"]).strip(), maxsplit=1)[0] or name
    upper = {"id": "ID", "url": "URL", "ip": "IP", "api": "API", "isbn": "ISBN", "iata": "IATA"}
    return " ".join(upper.get(w, w) for w in name_words(name)) or name


def _listed(value: Any, language: str) -> str:
    """A value as a draft writes it: a list's items joined ("malware, trojan"; 、 on the Chinese side)."""
    if isinstance(value, dict):
        joiner = "，" if language == "zh" else ", "
        return joiner.join(f"{k} {_listed(v, language)}" for k, v in value.items() if stated(v)) or dumps(value)
    return ("、" if language == "zh" else ", ").join(stated(value)) or dumps(value)


def draft_request(
    state: State,
    functions: Sequence[dict[str, Any]],
    plans: Sequence[dict[str, Any]],
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> str:
    """A plain draft of the user's request (docs/generation.md §4.3): what each focus tool does, as a request
    (:func:`wildtoolbench.bench.generation_values.request_phrase`), then each planned value but the implicit ones
    ("The city is Paris."). The user model rewrites it in its own words; the draft itself is sent only when
    every try of the model was rejected (:func:`draft_message`)."""
    draft = fragments(state.language)["draft"]
    phrases = [request_phrase(str(f.get("description") or f.get("name") or ""), state.language) for f in functions]
    text = Template(draft["ask"]).substitute(
        task=Template(draft["and"]).substitute(first=phrases[0], second=phrases[1]) if len(phrases) > 1 else phrases[0]
    )
    values = []
    for index, function in enumerate(functions):
        properties = (function.get("parameters") or {}).get("properties") or {}
        plan = plans[index] if index < len(plans) else {}
        for name, value in plan.items():
            if value is None or (index, name) in implicit:
                continue
            values.append(
                Template(draft["value"]).substitute(
                    name=_param_words(name, properties.get(name), state.language),
                    value=_listed(value, state.language),
                )
            )
    return (
        " ".join([text, *dict.fromkeys(values)]) if state.language != "zh" else "".join([text, *dict.fromkeys(values)])
    )


def draft_message(
    state: State,
    functions: Sequence[dict[str, Any]],
    plans: Sequence[dict[str, Any]],
    implicit: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
    missing: str = "",
) -> tuple[str, Any]:
    """The draft sent as the user's message when every try of the model was rejected
    (docs/generation.md §4.3): :func:`draft_request` with the ``details`` the message grammar asks for
    (one object per focus function, ``request_1``, ... for several); ``("", None)`` when a value the
    message must state is not planned yet (the session then fails)."""
    parts = []
    for index, function in enumerate(functions):
        plan = plans[index] if index < len(plans) else {}
        names = detail_names(function, missing)
        if any(plan.get(name) is None for name in names):
            return "", None
        parts.append({name: plan[name] for name in names})
    details: Any = parts[0] if len(parts) == 1 else {f"request_{i + 1}": part for i, part in enumerate(parts)}
    return draft_request(state, functions, plans, implicit), details


def answer_draft(state: State, ask: dict[str, Any], asked: dict[str, Any]) -> str:
    """The draft of a clear answer (docs/generation.md §4.4): each asked value as "The team ID is 99924."."""
    function = tools_by_name(state.tools).get((ask.get("arguments") or {}).get("tool_name"), {})
    properties = (function.get("parameters") or {}).get("properties") or {}
    draft = fragments(state.language)["draft"]
    parts = [
        Template(draft["value"]).substitute(
            name=_param_words(name, properties.get(name), state.language),
            value=_listed(value, state.language),
        )
        for name, value in asked.items()
        if value is not None
    ]
    return ("" if state.language == "zh" else " ").join(parts)


def chat_draft(state: State, layer: int) -> str:
    """The draft of a casual-chat message (docs/generation.md §4.3): one of the language's chat drafts, drawn
    from the session's seed and ``layer``; each starts with one of the chat openers."""
    drafts = fragments(state.language)["chat_drafts"]
    return random.Random(f"chat:{state.seed}:{layer}").choice(drafts)


def values_schema(unknown: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """JSON schema of the user model's choice of the values no rule chooses (docs/generation.md §4.4): one short
    value per parameter name, typed as its schema says."""
    properties = {}
    for name, schema in unknown:
        shape = detail_schema(schema)
        if shape.get("type") == "string" and "enum" not in shape:
            shape["maxLength"] = 40
        properties[name] = shape
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def mend_object(
    value: dict[str, Any],
    schema: Any,
    descriptions: Sequence[str],
    *,
    rng: random.Random,
    language: str,
    where: str,
) -> tuple[dict[str, Any], list[str]]:
    """``value`` (an object the values request chose) with every text leaf that is empty, a placeholder
    or a copy of a description replaced by :func:`wildtoolbench.bench.generation_values.fallback_value` for its key
    (``{"fieldName": "value"}``: "value" is a placeholder; docs/generation.md §4.4).

    Returns:
        ``(mended copy, reasons)``: one reason per replaced leaf, e.g. ``"data.fieldName = value is a
        placeholder, not a real value: choose a real one"``; no reasons when nothing was replaced.
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    out: dict[str, Any] = {}
    reasons: list[str] = []
    for key, leaf in value.items():
        path = f"{where}.{key}"
        sub = properties.get(key) if isinstance(properties.get(key), dict) else {"type": "string"}
        if isinstance(leaf, dict):
            out[key], inner = mend_object(leaf, sub, descriptions, rng=rng, language=language, where=path)
            reasons += inner
            continue
        why = ""
        if isinstance(leaf, str):
            why = "is empty" if not leaf.strip() else placeholder_problem(leaf, descriptions)
        if why:
            reasons.append(
                Problem(f"{path} is empty", "value.empty")
                if not leaf.strip()
                else why.prefixed(f"{path} = {as_text(leaf)[:40]} ")
            )
            stand_in = fallback_value(str(key), sub, rng=rng, language=language)
            out[key] = leaf if stand_in is None else stand_in
        else:
            out[key] = leaf
    return out, reasons


async def choose_values(
    state: State,
    runtime: Runtime[Context],
    functions: Sequence[dict[str, Any]],
    plans: list[dict[str, Any]],
    layer: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Fill the values of ``plans`` that no rule chose (``None``) with the user model's choice (docs/generation.md §4.4).

    Only for a user model with grammar support (a model without one chooses them in its message's
    details, as before). One request (grammar-constrained to :func:`values_schema`) names one value per such parameter; a
    value that is empty, a placeholder or a copy of a description is replaced by
    :func:`wildtoolbench.bench.generation_values.fallback_value` (recorded as a rule rejection of that choice).

    Returns:
        ``(plans, transcript entries, call records)``; ``plans`` filled where a value was found.
    """
    unknown: dict[str, Any] = {}
    for index, function in enumerate(functions):
        properties = (function.get("parameters") or {}).get("properties") or {}
        for name, value in plans[index].items():
            if value is None:
                unknown.setdefault(name, properties.get(name))
    if not unknown or not role_has_grammar("user", state, runtime):
        return plans, [], []  # a model without a grammar chooses them in its message's details
    names = labels(state)
    system = render("user_values.md", state.language)
    wanted = "\n".join(
        f"- {name}: {str((schema or {}).get('description') or '').strip() or '-'}" for name, schema in unknown.items()
    )
    human = (
        f"{names['what_for']}: "
        + "; ".join(request_phrase(str(f.get("description") or ""), state.language) for f in functions)
        + f"\n{names['values_wanted']}:\n{wanted}"
    )
    raw, record = await ask_model(
        "user", state, runtime, system, human, json_schema=values_schema(list(unknown.items())), max_tokens=120
    )
    try:
        chosen = extract_json(raw)
    except ValueError:
        chosen = None
    chosen = chosen if isinstance(chosen, dict) else {}
    entry = {
        "id": entry_id(state),
        "role": "user",
        "task": layer,
        "kind": "values",
        "attempt": 1,
        "content": raw,
        "details": chosen,
    }
    entries = [entry]
    descriptions = described(functions)
    rng = random.Random(f"stand-in:{state.seed}:{layer}")
    problems, filled = [], {}
    for name, schema in unknown.items():
        value = chosen.get(name)
        why = ""
        if value is None or (isinstance(value, str) and not value.strip()):
            why = Problem(f"{name} is empty", "value.empty")
        elif isinstance(value, dict):
            value, mended = mend_object(value, schema, descriptions, rng=rng, language=state.language, where=name)
            problems.extend(mended)  # the object stands, with a stand-in for each placeholder inside it
        else:
            why = next(
                (
                    p.prefixed(f"{name} = {as_text(v)[:40]} ")
                    for v in ([value] if not isinstance(value, list) else value)
                    for p in [placeholder_problem(v, descriptions)]
                    if p
                ),
                "",
            )
        if why:
            problems.append(why)
            value = fallback_value(name, schema, rng=rng, language=state.language)
        filled[name] = value
    if problems:
        entries.append(rule_verdict(state, entries, layer, entry["id"], problems, " (a stand-in value is used)"))
    out = [{n: (filled.get(n) if v is None else v) for n, v in plan.items()} for plan in plans]
    return out, entries, [record]
