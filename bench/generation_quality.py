"""Does a generated session read as a real user talking to an assistant? A rule-based quality check (docs/generation.md §10).

Five checks on a session in the dataset schema (docs/dataset.md; the ``english_*`` fields hold the
generated text in the session's language):

- **role voice**: no user turn (a task's message or an answer to a question) sounds like the
  assistant ("Thank you for providing ...", "As an AI ...", "Please provide ...", "How can I help
  you?"), is a meta-question about the assistant or its tools ("What can the AI assistant do?"),
  copies the environment line, or its message copies six words in a row of an earlier reply of the
  assistant (:func:`echo_problem`);
- **values in context**: every scalar argument value of every gold call appears in what was said
  before the call (the environment string, the user's messages and answers, the assistant's
  questions and replies, earlier tool results and calls), by the matching rules of
  ``wildtoolbench.bench.audit_context`` (docs/audit.md §5.2); a value the tool's schema offers (``enum``,
  ``default``) counts as known. The tool's own description does not: a value copied from it
  (``word="example"``) was not asked for. A date goes only to a parameter about dates
  (:func:`date_misplaced`), and no call gives one text value to two parameters
  (:func:`shared_value_errors`);
- **concrete requests**: the first message of every tool task whose calls take values names at
  least one of the task's gold argument values, or holds a concrete detail (a number, a quoted name,
  a proper name), unless the assistant asked for the values;
- **calls**: no task repeats a call, no result copies the result of a different call;
- **assistant**: no final reply copies eight words in a row of the user's request or answers or of an
  earlier reply or says one sentence twice, and no question or reply pastes the environment line
  (:func:`assistant_problems`).

The same rules are applied as the session is generated (``nodes/generation/user.py``, ``agent.py``,
``wildtoolbench.bench.generation_checks``), so a rejected output is written again with a fix.

Pure module: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.audit_context import CallContext, as_text, leaves
from wildtoolbench.bench.rules import Problem
from wildtoolbench.bench.rules import voice as voice_rules
from wildtoolbench.bench.terms import PSEUDO_TOOLS

_PATTERNS = {
    "en": [(re.compile(p, re.IGNORECASE), rule) for rule, p in voice_rules.PATTERNS_EN],
    "zh": [(re.compile(p, re.IGNORECASE), rule) for rule, p in (*voice_rules.PATTERNS_ZH, *voice_rules.PATTERNS_EN)],
}
_META = {
    "en": [(re.compile(p, re.IGNORECASE), rule) for rule, p in voice_rules.META_EN],
    "zh": [(re.compile(p, re.IGNORECASE), rule) for rule, p in (*voice_rules.META_ZH, *voice_rules.META_EN)],
}
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


QUALITY_CHECKS = ("voice", "values", "concrete", "calls", "assistant")
"""The checks of the quality check (``wildtoolbench.bench.rules_session.session_quality``), in report order."""


def voice_problems(text: str, language: str = "en", *, opening: bool = False, env_info: str = "") -> list[str]:
    """Why a user turn does not sound like the user (empty list = it does; docs/generation.md §10).

    Args:
        text: one user message or answer.
        language: ``en`` or ``zh`` (the Chinese side also applies the English phrases).
        opening: the message opens a task: a meta-question about the assistant or its tools is a
            problem too (an answer to a question may mention them).
        env_info: the environment line: a turn that holds its date and time (``2024-01-19 12:02``)
            pasted it; a person does not recite the clock.

    Returns:
        One reason per phrase found, quoting it: ``'"Thank you for providing" thanks the user for
        information, as the assistant does'``.
    """
    found = []
    patterns = _PATTERNS.get(language, _PATTERNS["en"]) + (_META.get(language, _META["en"]) if opening else [])
    for pattern, rule in patterns:
        match = pattern.search(text or "")
        if match:
            found.append(Problem(f'"{match.group(0)}" {voice_rules.WHY[rule]}', rule, text=match.group(0)))
    stamp = _ENV_TIME.search(env_info or "")
    if stamp and stamp.group(0)[:16] in (text or ""):
        found.append(
            Problem(
                f'"{stamp.group(0)}" copies the environment line instead of asking for something',
                "voice.env_line",
                text=stamp.group(0),
            )
        )
    found += _language_problems(text, language)
    return found


def is_concrete(text: str, values: Iterable[Any] = ()) -> bool:
    """Whether a request names something concrete: one of ``values`` (the task's gold argument values,
    matched as in docs/audit.md §5.2), else a number, a quoted name or a capitalised word inside a
    sentence (docs/generation.md §10)."""
    context = CallContext([text])
    if any(not isinstance(v, bool) and v not in (None, "") and context.knows(v) for v in values):
        return True
    return bool(_CONCRETE.search(text or ""))


_CHINESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff][\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e]*")
"""A run of CJK characters (with the full-width punctuation around them): out of place in an English
session's text. A lone full-width mark ("？") is a typing slip, not Chinese."""
_ENV_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?")
"""The environment line's date and time (``2024-06-25 08:37:00``): pasted, not said."""


def _language_problems(text: str, language: str) -> list[str]:
    """Chinese in an English session's text, quoted (empty list = none)."""
    chinese = _CHINESE.search(text or "") if language == "en" else None
    if not chinese:
        return []
    return [Problem(f'"{chinese.group(0)}" switches to Chinese in an English session', "text.language", text=chinese.group(0))]


_TOKEN = re.compile(
    r"(?:https?://|www\.)[^\s<>\"'()\[\]{}]*[^\s<>\"'()\[\]{}.,;:!?]|[\u3400-\u9fff]|[^\W\u3400-\u9fff_]+"
)
"""A word: a web address whole (naming the page the assistant gave is one word, not a run of six), a
Chinese character, or a run of letters and digits."""
_CJK = re.compile(r"[\u3400-\u9fff]")


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text or "")]


def echo_problem(text: str, earlier: Iterable[str], *, words: int = 6) -> str:
    """The first run of ``text`` copied from one of ``earlier`` (``""`` = none; docs/generation.md §10): ``words``
    consecutive words in common (case and punctuation ignored; a Chinese character counts as half a word,
    so Chinese text needs twice as many). A user who pastes the assistant's reply back, or an assistant
    whose "answer" restates the request, is not talking.

    Args:
        text: the new turn.
        earlier: the other speaker's texts it must not copy.
        words: the shortest copied run that counts (6 for a user turn, 8 for an assistant reply).

    Returns:
        The copied run as words joined by spaces (CJK characters joined directly), or ``""``.
    """
    tokens = _tokens(text)
    size = words * 2 if len(_CJK.findall(text or "")) > len(tokens) / 2 else words
    if len(tokens) < size:
        return ""
    grams: set[tuple[str, ...]] = set()
    for other in earlier:
        other_tokens = _tokens(other)
        grams.update(tuple(other_tokens[i : i + size]) for i in range(len(other_tokens) - size + 1))
    for i in range(len(tokens) - size + 1):
        gram = tuple(tokens[i : i + size])
        if gram in grams:
            joiner = "" if _CJK.match(gram[0]) else " "
            return joiner.join(gram)
    return ""


_DATE_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?")
_DATE_NAME = re.compile(
    r"date|time|day|year|month|week|since|until|from|to$|^to|start|end|when|period|deadline|birth|"
    r"check_?in|check_?out|expir|schedule|created|updated|modified",
    re.IGNORECASE,
)
_DATE_TEXT = re.compile(r"\bdate|\btime|\bday|yyyy|\bwhen\b|日期|时间|日|年", re.IGNORECASE)


_TEMPLATE = re.compile(r"\{\s*[A-Za-z_]\w*\s*\}")
"""A template slot left in a text (``{teamId}``): a placeholder, not a value (a JSON object has quotes)."""
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(_[A-Za-z0-9]+){2,}")
"""A reply that is one snake_case token (``ahmed_khan_age_25_30``): a name, not a sentence."""
_SENTENCE_END = re.compile(r"[.!?;。！？；\n]+")


def repeated_sentence(text: str, *, words: int = 4) -> str:
    """The first sentence a text says twice (``"The dataset ID is 18406. The dataset ID is 18406."``),
    compared by its words (case and punctuation aside); ``""`` when none is (docs/generation.md §10).

    Args:
        text: a question or reply of the assistant.
        words: a sentence counts from this many words (a Chinese character is a word), so a repeated
            short line ("Yes.") does not.

    Returns:
        The repeated sentence as first written (without its end mark), or ``""``.
    """
    seen: dict[tuple[str, ...], str] = {}
    for sentence in _SENTENCE_END.split(text or ""):
        tokens = tuple(_tokens(sentence))
        if len(tokens) < words:
            continue
        if tokens in seen:
            return seen[tokens]
        seen[tokens] = sentence.strip()
    return ""


PROMPT_LABELS = {"en": ("what the results say",), "zh": ("结果的要点",)}
"""Labels of the assistant's own request (the ``result_points`` fragment): a text holding one copies
its request instead of answering (lower-cased; the Chinese side checks the English labels too)."""


def assistant_problems(
    text: str,
    *,
    user_texts: Sequence[str] = (),
    replies: Sequence[tuple[str, str]] = (),
    results: str = "",
    use_results: bool = False,
    env_info: str = "",
    language: str = "en",
) -> list[str]:
    """Why a text of the assistant does not read as an assistant's reply (empty list = it does;
    docs/generation.md §10).

    Args:
        text: the question or reply.
        user_texts: the user's request and answers of this task: a run of eight words copied from them,
            or the whole text being one of them word for word, is a restated request.
        replies: the assistant's earlier replies, each with the text of its task's tool results: a run
            of eight words copied from one (or the whole text being one word for word) counts when it
            carries a fact of that earlier task (a word of its results) that this task's ``results``
            do not hold; two tasks with the same results may well be answered alike.
        results: the text of this task's tool results.
        use_results: the text is a reply built on tool results (``answer_type`` ``tool``): it must hold a
            word of three letters or more (or a Chinese character) of ``results`` (a refusal or a generic
            line does not).
        env_info: the environment line: its date and time must not be pasted (unless a tool result or the
            user states that very date and time: a result's ``timestamp`` may equal it).
        language: ``en`` or ``zh``; an English session's text holds no Chinese.

    A text that holds a label of its own request (:data:`PROMPT_LABELS`), ends with a colon ("... is
    as follows:"), says one sentence twice (:func:`repeated_sentence`) or holds a template slot
    (``{teamId}``) is a problem too, and so is a reply on results that is one snake_case token.

    Returns:
        One reason per problem, quoting the copied words.
    """
    found = []
    copied = echo_problem(text, user_texts, words=8)
    whole = _tokens(text)
    if not copied and whole and any(whole == _tokens(said) for said in user_texts):
        copied = " ".join(whole)  # a short request given back word for word ("Have a wonderful day!")
    if copied:
        found.append(Problem(f'repeats "{copied}" of the user\'s request instead of answering it', "reply.echo_request"))
    now = set(_tokens(results))
    for reply, facts in replies:
        again = echo_problem(text, [reply], words=8)
        if not again and whole and whole == _tokens(reply):
            again = " ".join(whole)  # a short reply given again word for word ("teamId: 99924")
        if again and set(again.split()) & (set(_tokens(facts)) - now):
            found.append(Problem(f'repeats "{again}" of an earlier reply', "reply.echo_earlier"))
            break
    template = _TEMPLATE.search(text or "")
    if template:
        found.append(
            Problem(f'"{template.group(0)}" is a placeholder in braces instead of a real value', "reply.template_slot")
        )
    if use_results and _IDENTIFIER.fullmatch((text or "").strip()):
        found.append(Problem("is an identifier, not a sentence: it says nothing in words", "reply.identifier_only"))
    twice = repeated_sentence(text)
    if twice:
        found.append(Problem(f'repeats its own sentence "{twice}"', "reply.repeats_sentence"))
    lowered = (text or "").lower()
    for label in dict.fromkeys((*PROMPT_LABELS.get(language, ()), *PROMPT_LABELS["en"])):
        short = label.split(" ", 1)[-1] if " " in label else label  # "the results say:" too
        if label in lowered or re.search(re.escape(short) + r"\s*[:：]", lowered):
            found.append(Problem(f'"{label}" copies a label of its request instead of answering', "reply.prompt_label"))
    if (text or "").rstrip().endswith((":", "：")):
        found.append(Problem("ends with a colon, before it says anything", "reply.ends_colon"))
    if use_results and now and not any((len(t) >= 3 or _CJK.match(t)) and t in now for t in _tokens(text)):
        found.append(Problem("states nothing of the tool results it answers with", "reply.no_result_facts"))
    stamp = _ENV_TIME.search(env_info or "")
    said = (results, *user_texts)
    if stamp and stamp.group(0) in (text or "") and not any(stamp.group(0) in t for t in said):
        found.append(Problem(f'"{stamp.group(0)}" copies the environment line', "reply.env_line"))
    return found + _language_problems(text, language)


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


def results_text(nodes: Iterable[Mapping[str, Any]]) -> str:
    """The tool results of a task's nodes as one text (dataset nodes with ``action`` or graph nodes with
    ``name``; the pseudo tools' texts left out), for :func:`assistant_problems`."""
    out = []
    for node in nodes:
        action = node.get("action") if isinstance(node.get("action"), Mapping) else node
        if action.get("name") not in PSEUDO_TOOLS and node.get("observation") is not None:
            out.append(as_text(node["observation"]))
    return " ".join(out)


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
