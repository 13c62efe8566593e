"""The ``paraphrase`` control (docs/variants.md §3.5): the target user turn reworded by a model, checked
to keep every value and named entity and to add none. Pure functions; the model call is the node's
(``wildtoolbench.nodes.variants.paraphrase``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.common import clone, leaf_values, make_variant, real_nodes, value_text

_QUOTED = re.compile(r"'[^']+'|\"[^\"]+\"|“[^”]+”|‘[^’]+’|《[^》]+》|「[^」]+」")
_NUMBER = re.compile(r"(?<!\w)\d[\d.,:/\-]*")
_WORD = re.compile(r"(?<![\w])([A-Z][\w\-]*)")
_TOKEN = re.compile(r"[\w\-]+(?:[.,:/][\w\-]+)*")
_SENTENCE_START = re.compile(r"(^|[.!?。！？]\s*)$")


def entities(text: str) -> set[str]:
    """The named entities of a user turn kept by a paraphrase (docs/variants.md §3.5): quoted spans, numbers
    (dates, times, amounts, codes) and capitalised words that do not start a sentence, as written."""
    found = {m.group(0) for m in _QUOTED.finditer(text)}
    found |= {m.group(0).rstrip(".,:/-") for m in _NUMBER.finditer(text)}
    for match in _WORD.finditer(text):
        if not _SENTENCE_START.search(text[: match.start()]):
            found.add(match.group(1))
    return {item for item in found if item}


def kept_terms(session: Mapping[str, Any], language: str, task: int) -> list[str]:
    """What a paraphrase of task ``task``'s message must keep: its :func:`entities` and every gold value
    of the task (a leaf of a real tool call's arguments) that occurs in the message, in that order."""
    side = fields_for(language)
    text = session[side.tasks][task]
    terms = sorted(entities(text))
    for node in real_nodes(session[side.answer_list][task]):
        for _, value in leaf_values(node["action"]["arguments"]):
            value_str = value_text(value)
            if value_str.casefold() in text.casefold() and value_str not in terms:
                terms.append(value_str)
    return terms


def check_paraphrase(session: Mapping[str, Any], language: str, task: int, reworded: str) -> tuple[str, str] | None:
    """``None`` when ``reworded`` may replace task ``task``'s message, else ``(rule id, reason)``
    (docs/variants.md §4, table 2): ``paraphrase_empty`` (empty or unchanged), ``paraphrase_lost`` (a
    kept term of :func:`kept_terms` missing, case-insensitively), ``paraphrase_added`` (an entity of
    :func:`entities` that is neither a word, number or entity of the message, case-insensitively)."""
    original = session[fields_for(language).tasks][task]
    if not reworded.strip() or reworded.strip() == original.strip():
        return "paraphrase_empty", "the model's rewording is empty or the message unchanged"
    lost = [term for term in kept_terms(session, language, task) if term.casefold() not in reworded.casefold()]
    if lost:
        return "paraphrase_lost", f"the rewording drops {', '.join(repr(t) for t in lost[:5])}"
    known = {t.casefold() for t in _TOKEN.findall(original)} | {e.casefold() for e in entities(original)}
    added = sorted(
        e
        for e in entities(reworded)
        if e.casefold() not in known and not (_QUOTED.fullmatch(e) and e[1:-1].casefold() in original.casefold())
    )
    if added:
        return "paraphrase_added", f"the rewording adds {', '.join(repr(t) for t in added[:5])}"
    return None


def paraphrase_variant(session: Mapping[str, Any], language: str, task: int, reworded: str) -> dict[str, Any]:
    """The ``paraphrase`` variant: ``session`` with task ``task``'s message on the ``language`` side replaced
    by ``reworded`` (the other side unchanged); gold unchanged (docs/variants.md §3.5)."""
    edited = clone(session)
    edited[fields_for(language).tasks][task] = reworded.strip()
    return make_variant(session, edited, "paraphrase", "", task, task)
