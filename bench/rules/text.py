"""Text rules of any speaker: the wrong language, and broken text (docs/generation.md §10, §11).

The broken-text rules (``text.cut_off``, ``text.parameter_fragment``, ``text.stray_bracket``) judge the
kept sessions under every profile (the quality check) and the roles' outputs under ``standard`` only,
so that the ``small`` profile generates what it did before the catalog.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, STANDARD, Problem, Rule

_DOC = "docs/generation.md §10"
_BROKEN = "rules.broken.broken_text"
_BY_ROLE = {"user": STANDARD, "agent": STANDARD}

TEXT_RULES = (
    Rule("text.language", "text", ("user", "agent", "session"), SMALL,
         "Chinese in an English session's text", "rules.voice.voice_problems", _DOC, languages=("en",),
         hints={"user": "language", "agent": "language"}),
    Rule("text.cut_off", "text", ("user", "agent", "session"), SMALL_STANDARD,
         "a text cut off mid-sentence (\"...with the days set to\")", _BROKEN, _DOC, role_profiles=_BY_ROLE),
    Rule("text.parameter_fragment", "text", ("user", "agent", "session"), SMALL_STANDARD,
         "a cut-off piece of a parameter name (\"for a yearly_consum\")", _BROKEN, _DOC, role_profiles=_BY_ROLE),
    Rule("text.stray_bracket", "text", ("user", "agent", "session"), SMALL_STANDARD,
         "a closing bracket that nothing opened, or one left open (\"proceed to} Central\")", _BROKEN, _DOC,
         role_profiles=_BY_ROLE),
)  # fmt: skip


_CHINESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff][\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e]*")
"""A run of CJK characters (with the full-width punctuation around them): out of place in an English
session's text. A lone full-width mark ("？") is a typing slip, not Chinese."""


ENV_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?")
"""The environment line's date and time (``2024-06-25 08:37:00``): pasted, not said."""


def language_problems(text: str, language: str) -> list[str]:
    """``text.language``: Chinese in an English session's text, quoted (empty list = none; docs/generation.md
    §10)."""
    chinese = _CHINESE.search(text or "") if language == "en" else None
    if not chinese:
        return []
    return [Problem(f'"{chinese.group(0)}" switches to Chinese in an English session', "text.language", text=chinese.group(0))]


_TOKEN = re.compile(
    r"(?:https?://|www\.)[^\s<>\"'()\[\]{}]*[^\s<>\"'()\[\]{}.,;:!?]|[\u3400-\u9fff]|[^\W\u3400-\u9fff_]+"
)
"""A word: a web address whole (naming the page the assistant gave is one word, not a run of six), a
Chinese character, or a run of letters and digits."""


CJK = re.compile(r"[\u3400-\u9fff]")


def word_tokens(text: str) -> list[str]:
    """The words of ``text``, lower-cased (a web address whole, a Chinese character alone; docs/generation.md
    §10): what the copy rules (``voice.echo``, ``reply.echo_request``, ...) compare."""
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
    tokens = word_tokens(text)
    size = words * 2 if len(CJK.findall(text or "")) > len(tokens) / 2 else words
    if len(tokens) < size:
        return ""
    grams: set[tuple[str, ...]] = set()
    for other in earlier:
        other_tokens = word_tokens(other)
        grams.update(tuple(other_tokens[i : i + size]) for i in range(len(other_tokens) - size + 1))
    for i in range(len(tokens) - size + 1):
        gram = tuple(tokens[i : i + size])
        if gram in grams:
            joiner = "" if CJK.match(gram[0]) else " "
            return joiner.join(gram)
    return ""
