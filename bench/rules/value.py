"""Value rules: argument values and user details that nothing in the conversation supports (docs/generation.md §2, §11).

The family's catalog entries and the checks that apply them: the catalog is the one home of the
rules (the checker and the roles call these functions; nothing else defines a rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.audit_context import CallContext, as_text, leaves
from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, STANDARD, Problem, Rule
from wildtoolbench.bench.rules.derived import DerivedContext
from wildtoolbench.bench.terms import ASK_USER, PSEUDO_TOOLS

_DOC = "docs/generation.md §2"
_QDOC = "docs/generation.md §10"

VALUE_RULES = (
    Rule("value.not_in_context", "value", ("planner", "session"), SMALL,
         "an argument value said nowhere in the conversation (literal matching, docs/audit.md §5.2)",
         "rules.value.context_errors", _DOC),
    Rule("value.invented", "value", ("planner", "session"), STANDARD,
         "an id, number or date that nothing in the conversation says or derives (docs/audit.md §5.2)",
         "rules.value.context_errors", _DOC),
    Rule("value.date_misplaced", "value", ("planner", "session"), SMALL_STANDARD,
         "a date given to a parameter about no date or time", "rules.value.date_misplaced", _DOC),
    Rule("value.shared", "value", ("planner", "session"), SMALL,
         "one text value given to two parameters of a call", "rules.value.shared_value_errors", _DOC),
    Rule("value.placeholder", "value", ("user", "session"), SMALL_STANDARD,
         "a placeholder value (example, string, <city>, your_api_key)", "rules.value.placeholder_problem",
         _QDOC, hints={"user": "placeholder"}),
    Rule("value.copies_description", "value", ("user",), SMALL_STANDARD,
         "a value that copies a tool's or parameter's description", "rules.value.placeholder_problem",
         _QDOC, hints={"user": "placeholder"}),
    Rule("value.empty", "value", ("user", "session"), SMALL_STANDARD,
         "an empty text value", "nodes.generation.user.message_problems", _QDOC, hints={"user": "placeholder"}),
    Rule("value.unstated", "value", ("user",), SMALL,
         "a user message that does not state the details it was written for",
         "nodes.generation.user.message_problems", _QDOC, hints={"user": "values"}),
    Rule("value.gives_missing", "value", ("user",), SMALL_STANDARD,
         "a clarification task's message that gives the value the assistant must ask for",
         "nodes.generation.user.message_problems", "docs/generation.md §4.3", hints={"user": "missing"}),
    Rule("value.concrete", "value", ("session",), SMALL,
         "a tool task's first message that names no concrete value and is not followed by a question",
         "rules.value.is_concrete", _QDOC),
)  # fmt: skip


def shared_value_bans(decision: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """``[tool, parameter]`` pairs to leave out of the planner's next try after one value was given to
    several parameters of a call (:func:`wildtoolbench.bench.rules.value.shared_value_errors`; docs/generation.md §2).

    Of each group of parameters sharing a value, the optional ones go (all but the first when none is
    required); a group of required parameters only is left to the rules (nothing to drop).

    Returns:
        The pairs, in action order, without repeats.
    """
    bans: list[list[str]] = []
    for action in decision.get("actions") or []:
        name = action.get("name") if isinstance(action, Mapping) else None
        arguments = action.get("arguments") if isinstance(action, Mapping) else None
        if name not in tools or not isinstance(arguments, Mapping):
            continue
        required = set((tools[name].get("parameters") or {}).get("required") or [])
        for keys in shared_value_groups(arguments):
            optional = [k for k in keys if k not in required]
            drop = optional if len(optional) < len(keys) else optional[1:]
            bans += [[name, k] for k in drop if [name, k] not in bans]
    return bans


def context_errors(
    decision: Mapping[str, Any],
    *,
    tools: Mapping[str, Mapping[str, Any]],
    texts: Sequence[str],
    today: Any = None,
    can_ask: bool = False,
    profile: str = "small",
) -> list[Problem]:
    """Argument values of a decision's calls that nobody said (docs/generation.md §2): every scalar
    value must appear in ``texts`` (what the conversation holds so far: the environment string, the
    user's messages and answers, the assistant's words, earlier calls and results) by the matching
    rules of docs/audit.md §5.2, or be a value the tool's schema offers (``enum``, ``default``).

    Args:
        decision: the planner decision.
        tools: function name -> spec.
        texts: the conversation's texts.
        today: the environment's date (``wildtoolbench.bench.audit_context.env_date``), for relative dates.
        can_ask: the task may ask the user (the reason then says to ask for a missing value).

    Returns:
        One reason per unknown value, e.g. ``"action 0 (getWordDefinitions): word = \\"example\\" appears
        nowhere in the conversation; use the value the user gave"``; an optional parameter's reason
        says to leave it out.
    """
    errors: list[str] = []
    for i, action in enumerate(decision.get("actions") or []):
        name = action.get("name") if isinstance(action, Mapping) else None
        if name in PSEUDO_TOOLS or name not in tools or not isinstance(action.get("arguments"), dict):
            continue
        properties = (tools[name].get("parameters") or {}).get("properties") or {}
        for key, value in action["arguments"].items():
            schema = properties.get(key) if isinstance(properties, Mapping) else None
            if date_misplaced(key, schema, value):
                errors.append(
                    Problem(
                        f"action {i} ({name}): {key} = {value} is a date, but {key} is no date; use the value the "
                        "user gave",
                        "value.date_misplaced",
                        value=value,
                    )
                )
    found = unknown_values(decision, tools=tools, texts=texts, today=today, profile=profile)
    for i, name, path, value, required, rule in found:
        top = path.split(".", 1)[0].split("[", 1)[0]
        if not required:
            fix = f"leave out the optional parameter {top} or use a value the user gave"
        elif can_ask:
            fix = f"ask the user for {top} with {ASK_USER}"
        else:
            fix = "use the value the user gave"
        what = {
            "value.not_in_context": "appears nowhere in the conversation",
            "value.placeholder": "is a placeholder, not a value from the conversation",
            "value.invented": "is an id, number or date that nothing in the conversation says or implies",
        }[rule]
        errors.append(Problem(f"action {i} ({name}): {path} = {as_text(value)[:60]} {what}; {fix}", rule, value=value, path=path))
    return errors


def unknown_values(
    decision: Mapping[str, Any],
    *,
    tools: Mapping[str, Mapping[str, Any]],
    texts: Sequence[str],
    today: Any = None,
    profile: str = "small",
) -> list[tuple[int, str, str, Any, bool, str]]:
    """The argument values of a decision's calls that break the value rule of ``profile`` (the rule of
    :func:`context_errors`; docs/generation.md §11.2): under ``small`` every value nobody said
    (``value.not_in_context``), under ``standard`` a placeholder or an id, number or date that the
    conversation neither says nor derives (:func:`standard_value_rule`), under ``off`` none.

    Returns:
        ``(action index, tool name, path, value, required, rule id)`` per such scalar value; ``required``
        says whether its top-level parameter is a required one.
    """
    out: list[tuple[int, str, str, Any, bool, str]] = []
    if profile not in ("small", "standard"):
        return out
    for i, action in enumerate(decision.get("actions") or []):
        name = action.get("name") if isinstance(action, Mapping) else None
        if name in PSEUDO_TOOLS or name not in tools or not isinstance(action.get("arguments"), dict):
            continue
        parameters = tools[name].get("parameters") or {}
        required = set(parameters.get("required") or []) if isinstance(parameters, Mapping) else set()
        if profile == "standard":
            context: CallContext = DerivedContext(texts, today=today, allowed=schema_offers(parameters))
            descriptions = described([tools[name]])
        else:
            context = CallContext(texts, today=today, allowed=schema_offers(parameters))
        for path, value in leaves(action["arguments"]):
            top = path.split(".", 1)[0].split("[", 1)[0]
            if profile == "standard":
                rule = standard_value_rule(value, context.knows(value), descriptions, path)
                if rule:
                    out.append((i, str(name), path, value, top in required, rule))
            elif (isinstance(value, str) and not value.strip()) or not context.knows(value):
                out.append((i, str(name), path, value, top in required, "value.not_in_context"))
    return out


_CONCRETE = re.compile(r"\d|\"[^\"]+\"|'[^'\s][^']*'|“[^”]+”|「[^」]+」|《[^》]+》|(?<=[\w,;:] )[A-Z][a-z][\w.-]*")


_PLACEHOLDERS = {
    "example", "sample", "string", "value", "placeholder", "text", "word", "name", "test", "foo", "bar",
    "xxx", "n/a", "none", "null", "unknown", "your name", "my name", "some word", "a word",
}  # fmt: skip


_PLACEHOLDER_SHAPE = re.compile(
    r"^(your|my|some)[ _-]|[{}<>\[\]]|^[a-z0-9]+(_[a-z0-9]+){2,}$|\b(placeholder|example|sample)_|_(here|value|file)$"
)
"""Shapes of a made-up value: ``your_api_key``, ``<city>``, ``{name}``, ``base64_encoded_sample_file``."""


def described(functions: Iterable[Mapping[str, Any]]) -> list[str]:
    """The descriptions of ``functions`` and of their parameters, lower-cased (for :func:`placeholder_problem`)."""
    out = []
    for function in functions:
        out.append(str(function.get("description") or "").lower())
        properties = (function.get("parameters") or {}).get("properties") or {}
        for schema in properties.values() if isinstance(properties, Mapping) else []:
            if isinstance(schema, Mapping) and schema.get("description"):
                out.append(str(schema["description"]).lower())
    return [d for d in out if d]


def placeholder_problem(value: Any, descriptions: Sequence[str] = ()) -> str:
    """Why ``value`` is no real value (``""`` = it is one; docs/generation.md §10): a placeholder word
    (``"example"``, ``"string"``, ...) or a copy of a description (a phrase of several words, 12
    characters or more, found in one of ``descriptions``, lower-cased)."""
    if not isinstance(value, str):
        return ""
    text = value.strip().strip(".").lower()
    if text in _PLACEHOLDERS or _PLACEHOLDER_SHAPE.search(text):
        return Problem("is a placeholder, not a real value: choose a real one", "value.placeholder")
    whole = {d.strip().rstrip(".") for d in descriptions}
    if (" " in text and len(text) >= 12 and any(text in d for d in descriptions)) or (len(text) >= 4 and text in whole):
        return Problem(
            "copies the description, not a real value: choose a real one (a real word, city, name or date)",
            "value.copies_description",
        )
    return ""


def is_concrete(text: str, values: Iterable[Any] = ()) -> bool:
    """Whether a request names something concrete: one of ``values`` (the task's gold argument values,
    matched as in docs/audit.md §5.2), else a number, a quoted name or a capitalised word inside a
    sentence (docs/generation.md §10)."""
    context = CallContext([text])
    if any(not isinstance(v, bool) and v not in (None, "") and context.knows(v) for v in values):
        return True
    return bool(_CONCRETE.search(text or ""))


_DATE_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?")


_DATE_NAME = re.compile(
    r"date|time|day|year|month|week|since|until|from|to$|^to|start|end|when|period|deadline|birth|"
    r"check_?in|check_?out|expir|schedule|created|updated|modified",
    re.IGNORECASE,
)


_DATE_TEXT = re.compile(r"\bdate|\btime|\bday|yyyy|\bwhen\b|日期|时间|日|年", re.IGNORECASE)


_NUMBER_OR_DATE = re.compile(r"^[\d\s.,:/+-]*$")


def shared_value_errors(arguments: Any) -> list[str]:
    """One text value given to two or more parameters of one call (``searchProducts(query="apple",
    upc="apple")``, ``getWordDefinition(word="algorithm", partOfSpeech="algorithm")``): a small
    model copies the one value it has into every slot (docs/generation.md §2).

    Args:
        arguments: a call's arguments; only its top-level text values of three characters or more
            that are not numbers or dates count (a one-day range may give one date twice), compared
            case-insensitively.

    Returns:
        One reason per shared value, e.g. ``"gives 'apple' to query and upc: each parameter takes its
        own value (leave out an optional one nobody gave)"``.
    """
    return [
        Problem(
            f"gives {arguments[keys[0]]!r} to {' and '.join(keys)}: each parameter takes its own value "
            "(leave out an optional one nobody gave)",
            "value.shared",
            parameters=keys,
        )
        for keys in shared_value_groups(arguments)
    ]


def shared_value_groups(arguments: Any) -> list[list[str]]:
    """The groups of top-level parameters of a call that hold one text value (the rule of
    :func:`shared_value_errors`), each in argument order; ``[]`` for none."""
    if not isinstance(arguments, Mapping):
        return []
    by_value: dict[str, list[str]] = {}
    for key, value in arguments.items():
        if isinstance(value, str) and len(value.strip()) >= 3 and not _NUMBER_OR_DATE.match(value):
            by_value.setdefault(value.strip().casefold(), []).append(str(key))
    return [keys for keys in by_value.values() if len(keys) > 1]


def date_misplaced(name: str, schema: Any, value: Any) -> bool:
    """Whether ``value`` is a date (``YYYY-MM-DD``, maybe with a time) given to a parameter that is about
    no date or time: neither its name (``date``, ``startTime``, ``since``, ``checkin``...) nor its
    ``format`` or description (``date``, ``time``, ``YYYY``, 日期...) says so (``upc = "2024-10-22"``;
    docs/generation.md §10)."""
    if not isinstance(value, str) or not _DATE_VALUE.match(value.strip()):
        return False
    schema = schema if isinstance(schema, Mapping) else {}
    described_as = f"{schema.get('format') or ''} {schema.get('description') or ''}"
    if _TIME_ONLY.search(described_as) and not _WITH_DATE.search(described_as):
        return True  # "Start time, HH:MM (24-hour)": a time of day, never a date
    return not (_DATE_NAME.search(name or "") or _DATE_TEXT.search(described_as))


_TIME_ONLY = re.compile(r"\bHH:MM\b|\btime of (the )?day\b", re.IGNORECASE)


_WITH_DATE = re.compile(r"yyyy|\bdate|日期", re.IGNORECASE)


def leaf_schema(properties: Any, path: str) -> tuple[str, Any]:
    """The parameter name and schema of one argument leaf (``path`` as ``wildtoolbench.bench.audit_context.leaves``
    gives it: ``schedule.start_time``, ``stops[0].city``) within a tool's ``properties``.

    Returns:
        ``(name of the innermost key, its schema or None)``; the schema is ``None`` where the path
        leaves what the tool describes.
    """
    schema: Any = {"properties": properties}
    name = ""
    for part in re.split(r"\.|(?=\[)", path):
        if not part:
            continue
        if part.startswith("["):
            schema = schema.get("items") if isinstance(schema, Mapping) else None
            continue
        name = part
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        schema = props.get(part) if isinstance(props, Mapping) else None
    return name, schema


_OFFERED = re.compile(
    r"['\"“‘]([^'\"”’]{1,40})['\"”’]"
    r"|(?:default(?: value)?(?: is|:)?|e\.g\.,?|such as|for example,?|like)\s+([\w.+-]{1,30}(?:(?:,? or|,? and|,|/) ?[\w.+-]{1,30}){0,8})",
    re.IGNORECASE,
)


_TEMPLATE_BEFORE = re.compile(
    r"\b(format|formatted as|pattern)(\s+(is|of|should be|must be|like))?\s*:?\s*$|格式(为|是|如)?\s*[:：]?\s*$",
    re.IGNORECASE,
)
"""Just before a quoted text: the text is a template (``in the format 'City, State'``), not an offered value."""


_NOT_OPTIONS = frozenset({"is", "are", "was", "a", "an", "the", "to", "of", "or", "and", "be", "empty", "none", "null"})


def described_options(description: Any) -> list[str]:
    """Values a parameter's description offers: quoted ones (``'JSON'``) and those after "default",
    "e.g.", "such as", "for example", "like" (``such as en, zh or fr`` gives ``en``, ``zh``, ``fr``).
    A quoted text right after "format" or "pattern" is a template (``in the format 'City, State'``) and
    is left out."""
    out: list[str] = []
    text = description if isinstance(description, str) else ""
    for match in _OFFERED.finditer(text):
        quoted, listed = match.groups()
        if quoted and _TEMPLATE_BEFORE.search(text[max(0, match.start() - 24) : match.start()]):
            continue  # "in the format 'City, State'": the shape of a value, not a value
        if quoted:
            out.append(quoted.strip())
        for item in re.split(r",? or |,? and |,|/", listed or ""):
            item = item.strip().rstrip(".")  # "such as CSV, JSON, or XML." ends a sentence
            if item and item.lower() not in _NOT_OPTIONS:  # "default is 'email'": not "is"
                out.append(item)
    return out


def schema_offers(parameters: Any) -> list[Any]:
    """Values a tool's parameter schema offers itself: every ``enum`` member and ``default`` inside it,
    and the values the parameters' descriptions offer (:func:`described_options`)."""
    out: list[Any] = []
    if isinstance(parameters, Mapping):
        if isinstance(parameters.get("enum"), list):
            out += [v for v in parameters["enum"] if not isinstance(v, (dict, list))]
        if "default" in parameters and not isinstance(parameters["default"], (dict, list)):
            out.append(parameters["default"])
        if isinstance(parameters.get("type"), str) and isinstance(parameters.get("description"), str):
            out += described_options(parameters["description"])
        for value in parameters.values():
            if isinstance(value, (Mapping, list)):
                out += schema_offers(value)
    elif isinstance(parameters, list):
        for item in parameters:
            out += schema_offers(item)
    return out


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
