"""Regular-expression grammars of the roles that write text (docs/generation.md §4.3): a user message that
states given values (:func:`message_pattern`) and the assistant's sentences (:func:`sentences_pattern`),
for the local runtime's pattern-constrained decoding; :func:`stated` gives the forms a value may be said
in.

Split out of ``role_schemas.py`` (the JSON schemas). Pure functions, no model or graph import.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

_PATTERN_SPECIAL = frozenset("\\^$.|?*+()[]{}")
_WORD = '[^"\\\\\\n\\t\\r.?!。？！`{}\\[\\]【】]'
"""A character of a sentence that a JSON string holds without escapes (no quote, backslash, line break,
tab, backtick or sentence end), and no curly or square bracket: a small model that wants to close its JSON
object before the grammar lets it otherwise writes a ``}`` into the text ("before we proceed to}
Central", "is estimated to be 23.} <tab>{", rule ``text.stray_bracket``)."""
_LETTER = '[^"\\\\\\n\\t\\r.?!。？！`{}\\[\\]【】 ]'
"""A character of a word: :data:`_WORD` but a space."""


def _words(most: int) -> str:
    """A run of at most ``most`` words of at most 30 characters each, one space apart (maybe one space
    before the first): a run that reaches its bound ends after a whole word, never inside one (a bound
    in characters cut "for a yearly_consum" and "if you'", rule ``text.parameter_fragment``)."""
    return f"( ?{_LETTER}{{1,30}}( {_LETTER}{{1,30}}){{0,{most - 1}}})?"


_STOP = "[.?!。？！]"
_BEFORE = "[ ,;:('/\\-]"
"""A character right before a value: a space or a punctuation mark that opens or separates (no letter,
digit or period: ``theR99924`` or ``team.99924`` do not state ``99924``)."""
_AFTER = "[ ,;:)'/\\-.?!]"
"""A character right after a value: a space or a punctuation mark that closes, separates or ends a sentence."""
_BEFORE_ZH = "[ ,;:('/\\-。，、：；（「《一-鿿]"
_AFTER_ZH = "[ ,;:)'/\\-.?!。，、：；）」》！？一-鿿]"
"""The same on the Chinese side, where a CJK character also borders a value."""
_TEXT_ZH = f"{_WORD}{{0,80}}({_STOP} ?{_WORD}{{0,80}})?"
"""A run of Chinese text: at most 80 characters, at most one sentence end, then at most 80 more (so a
message cannot ramble to the token cap)."""
_TEXT = f"{_words(24)}({_STOP}{_words(24)})?"
"""A run of English text: at most 24 words, at most one sentence end, then at most 24 more words (a bound
reached mid-thought makes a small model glue the next word on, so it sits above what a message needs)."""


def _literal(text: str) -> str:
    return "".join(f"\\{c}" if c in _PATTERN_SPECIAL else c for c in text)


def stated(value: Any) -> list[str]:
    """How a value is written in a message: a string as it is, a number as JSON, each item of a list or
    value of an object; nothing for a boolean, ``null``, or a string holding a quote, backslash, backtick
    or line break (such a value is not forced into the text)."""
    if isinstance(value, list):
        return [t for item in value for t in stated(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in stated(item)]
    if isinstance(value, bool) or value is None:
        return []
    text = value if isinstance(value, str) else json.dumps(value)
    return [text] if text and not any(c in text for c in '"\\\n`') else []


def message_pattern(openers: Sequence[str] = (), values: Sequence[Any] = (), language: str = "en") -> str:
    """The regular expression a user message is sampled under on a model with grammar support (docs/generation.md §4.3).

    The message starts with one of ``openers`` (the user's first words: "Can you", "I need", ...;
    none: any start) and states every one of ``values`` word for word, in order (numbers as JSON,
    each item of a list), each as a word of its own (:data:`_BEFORE` and :data:`_AFTER` around it; on
    the Chinese side, ``language="zh"``, a CJK character too);
    around them short runs of text (:data:`_TEXT`: no quote, backslash, backtick, bracket or line break,
    at most 48 whole words, or 160 characters on the Chinese side, and one sentence end each), then a
    sentence end: the message cannot stop mid-sentence (rule ``text.cut_off``).

    Returns:
        An anchored pattern (``^...$``) in the subset llama.cpp's schema converter reads.
    """
    texts = [_literal(text) for value in values for text in stated(value)]
    head = "(" + "|".join(_literal(o) for o in openers) + ")" if openers else ""
    run = _TEXT_ZH if language == "zh" else _TEXT
    if not texts:
        return f"^{head}{run}{_STOP}$"
    before, after = (_BEFORE_ZH, _AFTER_ZH) if language == "zh" else (_BEFORE, _AFTER)
    first = f"{run}{before}" if openers else f"({run}{before})?"
    between = f"{after}({run}{before})?"
    return f"^{head}{first}{between.join(texts)}({after}{run})?{_STOP}$"


def sentences_pattern(openers: Sequence[str] = (), *, sentences: int = 3, end: str = "", language: str = "en") -> str:
    """The regular expression of a short text on one line (docs/generation.md §2): it opens with one of
    ``openers`` (none: any start), holds at most ``sentences`` sentences of at most 50 whole words
    (``language="zh"``: 200 characters), no quote, backslash, backtick, bracket or line break, and ends
    with one of the characters of ``end`` (none: a sentence end), so it cannot stop mid-sentence or
    mid-word (rules ``text.cut_off``, ``text.parameter_fragment``)."""
    head = "(" + "|".join(_literal(o) for o in openers) + ")" if openers else ""
    sentence = f"{_WORD}{{0,200}}" if language == "zh" else _words(50)
    space = " ?" if language == "zh" else ""  # an English run may start with its own space
    more = f"({_STOP}{space}{sentence}){{0,{max(0, sentences - 1)}}}"
    tail = f"[{_literal(end)}]" if end else _STOP
    return f"^{head}{sentence}{more}{tail}$"
