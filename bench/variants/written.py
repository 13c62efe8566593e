"""The model-written forms of ``explicit`` and ``transitions +k`` (docs/variants.md §3.6): the checks a
model's text passes before it enters a variant, and the variants built from checked text. Pure
functions; the model calls are the nodes' (``wildtoolbench.nodes.variants``).

A model writes the ``--lang`` side only; the other side keeps the mechanical form (the clause of
§3.1, the donor exchange of §3.2), so one variant set still serves both languages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.common import (
    clone,
    implicit_values,
    leaf_values,
    make_variant,
    real_nodes,
    seeded,
    sides,
    value_text,
)
from wildtoolbench.bench.variants.paraphrase import _QUOTED, _TOKEN, entities, kept_terms
from wildtoolbench.bench.variants.turns import CHAT_TYPE, FILLER_SUBTYPE, explicit_clause, insert_tasks

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_ASCII_WORD = re.compile(r"^[\x00-\x7f]+$")
_FUNCTION_NAME = re.compile(r"[_.]|[a-z][A-Z]")
"""A tool name that is not a plain word (``get_weather``, ``listDevices``): naming it in chat names the tool."""


META_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "here's",
        "here is",
        "this message",
        "this question",
        "rewritten",
        "the assistant",
        "as an ai",
        "i'm sorry, but",
        "i am sorry, but",
        "can't assist",
        "cannot assist",
        "```",
    ),
    "zh": ("```", "以下是", "这条消息", "这个问题", "改写", "助手", "作为ai", "抱歉，我无法", "无法协助"),
}
"""Phrases of a model that talks about its task or refuses it instead of writing the text asked for
(``explicit_meta``, ``exchange_meta``; docs/variants.md §3.6). Matched case-insensitively, ASCII ones
as whole words (:func:`mentions`); a phrase the original message holds does not count."""


def meta_phrase(text: str, language: str, original: str = "") -> str | None:
    """The first :data:`META_PHRASES` entry of ``language`` that ``text`` holds and ``original`` does not, else ``None``."""
    for phrase in META_PHRASES[language]:
        if mentions(text, phrase) and not mentions(original, phrase):
            return phrase
    return None


def message_of(text: str, language: str) -> str:
    """The message a model wrote, without the wrapping small models add (docs/variants.md §3.6): leading
    paragraphs that end with a colon (``Sure, here's a question:``), trailing paragraphs that hold a
    :func:`meta_phrase` (``This question can be answered ...``), and quotes around what remains. Text
    without such wrapping comes back stripped; the checks then read the result."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    while len(paragraphs) > 1 and paragraphs[0].rstrip().endswith((":", "：")):
        paragraphs.pop(0)
    while len(paragraphs) > 1 and meta_phrase(paragraphs[-1], language) is not None:
        paragraphs.pop()
    body = "\n\n".join(paragraphs).strip()
    for opening, closing in (('"', '"'), ("“", "”"), ("「", "」")):
        if body.startswith(opening) and (body.endswith(closing) or closing not in body[1:]):
            body = body[1:-1] if body.endswith(closing) else body[1:]
            break
    return body.strip()


def mentions(text: str, value: str) -> bool:
    """Does ``text`` hold ``value``, case-insensitively? An ASCII value must stand as a whole token (``1``
    is not found in ``12``); any other value (Chinese) is searched as a substring."""
    needle = value.casefold().strip()
    if not needle:
        return False
    haystack = text.casefold()
    if _ASCII_WORD.match(needle):
        return re.search(rf"(?<![0-9a-z]){re.escape(needle)}(?![0-9a-z])", haystack) is not None
    return needle in haystack


_NUMBER = re.compile(r"(?<![0-9A-Za-z.\-])\d+(?:\.\d+)?(?![0-9])")
_PARAMETER_WORDS = re.compile(r"[A-Za-z]+")


def names_value(text: str, parameter: str, value: Any) -> bool:
    """Does a rewrite ``text`` name the context value ``value`` of ``parameter`` (docs/variants.md §3.6)? A
    number: a number of the text equal to it (``180`` names ``180.0``); a boolean: its JSON text, or every
    word of the parameter's name (``green_only`` -> ``green`` and ``only``); anything else: its text,
    case-insensitively."""
    folded = text.casefold()
    if isinstance(value, bool):
        words = [w.casefold() for w in _PARAMETER_WORDS.findall(parameter.rpartition(".")[2])]
        return value_text(value) in folded or bool(words) and all(w in folded for w in words)
    if isinstance(value, (int, float)):
        return holds_value(text, value)
    return value_text(value).casefold() in folded


def _context_part(entity: str, values: Sequence[Any]) -> bool:
    """Is ``entity`` (of a rewrite) one of the context ``values`` or part of one: a value's text, a token of
    it, a number equal to a numeric value, a word that holds a value of 3 characters or more (``Tuesday``
    holds ``tue``), or 4 characters or more of one (``03-21`` of ``2025-03-21``)?"""
    folded = entity.casefold()
    for value in values:
        text = value_text(value).casefold()
        if folded == text or folded in {t.casefold() for t in _TOKEN.findall(text)}:
            return True
        if isinstance(value, (int, float)) and not isinstance(value, bool) and holds_value(entity, value):
            return True
        if (len(text) >= 3 and text in folded) or (len(folded) >= 4 and folded in text):
            return True
    return False


def check_explicit(session: Mapping[str, Any], language: str, task: int, rewritten: str) -> tuple[str, str] | None:
    """``None`` when a model's ``rewritten`` user message may replace task ``task``'s message on the
    ``language`` side in an ``explicit`` variant, else ``(rule id, reason)`` (docs/variants.md §3.6, table 2):

    - ``explicit_empty``: empty, or the message unchanged;
    - ``explicit_meta``: a :func:`meta_phrase` (a preface, a comment or a refusal);
    - ``explicit_missing``: a context value (:func:`implicit_values` of that side) is not named
      (:func:`names_value`);
    - ``explicit_lost``: a kept term of the original (:func:`kept_terms`: its entities and the gold
      values it states) is missing;
    - ``explicit_added``: an entity of the rewrite (:func:`entities`) that is neither a word or entity
      of the original nor part of a context value.
    """
    original = session[fields_for(language).tasks][task]
    text = rewritten.strip()
    if not text or text == original.strip():
        return "explicit_empty", "the model's rewrite is empty or the message unchanged"
    phrase = meta_phrase(text, language, original)
    if phrase is not None:
        return (
            "explicit_meta",
            f"the model talks about the task or refuses it ({phrase!r}) instead of writing the message",
        )
    values = implicit_values(session, fields_for(language), task)
    missing = [value_text(v) for name, v in values if not names_value(text, name, v)]
    if missing:
        return "explicit_missing", f"the rewrite does not name {', '.join(repr(v) for v in missing[:5])}"
    lost = [term for term in kept_terms(session, language, task) if term.casefold() not in text.casefold()]
    if lost:
        return "explicit_lost", f"the rewrite drops {', '.join(repr(t) for t in lost[:5])}"
    known = {t.casefold() for t in _TOKEN.findall(original)} | {e.casefold() for e in entities(original)}
    added = sorted(
        e
        for e in entities(text)
        if e.casefold() not in known
        and not (_NUMBER.fullmatch(e) and holds_value(original, float(e)))
        and not _context_part(e[1:-1] if _QUOTED.fullmatch(e) else e, [v for _, v in values])
        and not (_QUOTED.fullmatch(e) and e[1:-1].casefold() in original.casefold())
    )
    if added:
        return "explicit_added", f"the rewrite adds {', '.join(repr(t) for t in added[:5])}"
    return None


def model_explicit(session: Mapping[str, Any], language: str, task: int, rewritten: str) -> dict[str, Any]:
    """The ``explicit`` variant of a checked rewrite (docs/variants.md §3.6): task ``task``'s message on the
    ``language`` side replaced by ``rewritten``; the other side gets its mechanical clause (§3.1) when it
    has context values; gold unchanged."""
    edited = clone(session)
    edited[fields_for(language).tasks][task] = rewritten.strip()
    for side in sides():
        if side.language == language:
            continue
        values = implicit_values(session, side, task)
        if values:
            edited[side.tasks][task] = f"{session[side.tasks][task]} {explicit_clause(values, side.language)}"
    return make_variant(session, edited, "explicit", "", task, task)


def needed_values(session: Mapping[str, Any], language: str, target: int) -> list[Any]:
    """The values task ``target`` needs on the ``language`` side: every leaf of its real tool calls' gold
    arguments except booleans, each once, in gold order."""
    found: list[Any] = []
    for node in real_nodes(session[fields_for(language).answer_list][target]):
        for _, value in leaf_values(node["action"]["arguments"]):
            if not isinstance(value, bool) and value not in found:
                found.append(value)
    return found


def holds_value(text: str, value: Any) -> bool:
    """Does ``text`` hold the gold value ``value``? A number: a number of the text equal to it (``17`` holds
    ``17.0``); anything else: :func:`mentions` of its text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return any(float(m.group(0)) == float(value) for m in _NUMBER.finditer(text))
    return mentions(text, value_text(value))


def check_exchange(
    session: Mapping[str, Any],
    language: str,
    target: int,
    text: str,
    *,
    part: str = "reply",
    tool_calls: int = 0,
    earlier: Sequence[str] = (),
) -> tuple[str, str] | None:
    """``None`` when ``text``, one ``part`` of a model-written chat exchange (``"user turn"``, written by
    the User role's model, or ``"reply"``, by the Agent role's model), may be inserted before task
    ``target`` on the ``language`` side, else ``(rule id, reason)`` (docs/variants.md §3.6, table 2):

    - ``exchange_empty``: the text is empty;
    - ``exchange_meta``: a :func:`meta_phrase` (a preface, a comment, a refusal, the assistant named in
      the third person);
    - ``exchange_repeated``: the text equals one of ``earlier`` (the texts already written for this
      target: the earlier user turns, or for a reply also its user turn), case-insensitively;
    - ``exchange_tool_call``: the model's message came with tool calls (``tool_calls`` > 0), or the text
      names a tool of the session's tool list whose name is not a plain word (``_``, ``.`` or camelCase);
    - ``exchange_leak``: the text holds a value the target needs (:func:`needed_values`, :func:`holds_value`);
    - ``exchange_language``: ``zh`` and no Chinese character, or ``en`` and a Chinese character or no
      Latin letter.
    """
    text = text.strip()
    if not text:
        return "exchange_empty", f"the {part} is empty"
    phrase = meta_phrase(text, language)
    if phrase is not None:
        return "exchange_meta", f"the {part} talks about the task or refuses it ({phrase!r})"
    if any(text.casefold() == other.strip().casefold() for other in earlier):
        return "exchange_repeated", f"the {part} repeats one already written for this task"
    side = fields_for(language)
    tool_names = [
        str((tool.get("function") or tool).get("name", "")) for tool in session[side.tools] if isinstance(tool, Mapping)
    ]
    named = [n for n in tool_names if _FUNCTION_NAME.search(n) and mentions(text, n)]
    if tool_calls or named:
        what = f"{tool_calls} tool call(s)" if tool_calls else f"the tool name {named[0]!r}"
        return "exchange_tool_call", f"the {part} holds {what}"
    leaked = [value for value in needed_values(session, language, target) if holds_value(text, value)]
    if leaked:
        return "exchange_leak", f"the {part} holds {value_text(leaked[0])!r}, a value the target task needs"
    chinese = bool(_CJK.search(text))
    if (language == "zh" and not chinese) or (language == "en" and (chinese or not _LATIN.search(text))):
        return "exchange_language", f"the {part} is not written in {'Chinese' if language == 'zh' else 'English'}"
    return None


def exchange_record(language: str, user_turn: str, reply: str, subtype: str | None = None) -> list[Any]:
    """One side of an inserted chat exchange as a task record: the message, a gold that is one
    ``prepare_to_answer`` chat reply holding ``reply``, the Chat task type and ``subtype`` (default: the
    filler turn subtype of §3.2)."""
    node = {
        "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}},
        "observation": reply.strip(),
        "dependency_list": [],
    }
    return [user_turn.strip(), [node], CHAT_TYPE[language], subtype or FILLER_SUBTYPE[language]]


def model_transition(
    session: Mapping[str, Any],
    language: str,
    target: int,
    level: str,
    exchanges: Sequence[tuple[str, str]],
    donors: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """The ``transitions +k`` variant with model-written exchanges (docs/variants.md §3.6): the k =
    ``len(exchanges)`` checked ``(user turn, reply)`` pairs inserted right before task ``target`` on the
    ``language`` side; the other side gets the k donor exchanges the mechanical form would insert (the
    same seeded choice of ``donors``, §3.2). Raises ValueError when ``donors`` holds fewer than k."""
    k = len(exchanges)
    rng = seeded(seed, "transitions", session["id"], target, level)
    chosen = [clone(dict(record)) for record in rng.sample(list(donors), k)]
    for record, (user_turn, reply) in zip(chosen, exchanges):
        record[language] = exchange_record(language, user_turn, reply, record[language][3])
    edited = insert_tasks(session, target, chosen)
    return make_variant(session, edited, "transitions", level, target, target + k)
