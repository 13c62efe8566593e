"""Broken text: a turn cut off mid-sentence, a piece of a parameter name, a stray bracket (docs/generation.md §10, §11).

Measured on the bundled model's demo run: a reply ending "...with the days set to", a request "for a
yearly_consum", "before we proceed to} Central".

Pure module: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from wildtoolbench.bench.rules.catalog import Problem

_END = re.compile(r"[.!?。！？…~)\]}>\"'”’」』】*:;：；)）\U0001F300-\U0001FAFF\u2600-\u27BF]\s*$")
_DANGLING_EN = frozenset("the a an your my our their and or but because than whether of to with".split())
"""Words no English sentence ends with (an article, a possessive, a conjunction, "of", "to", "with"): a
preposition such as "in" or "about" may end one ("count me in")."""
_DANGLING_ZH = tuple("和与及把从给跟")
"""Chinese characters no sentence ends with (的, 在, 是 may: 这是我找到的)."""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]*)*")
_PAIRS = {"}": "{", "]": "[", "】": "【"}


def cut_off(text: str) -> str:
    """The last words of a text cut off mid-sentence (``""`` = it ends as a sentence may): no closing mark
    and a last word that cannot end an English sentence (``to``, ``the``, ``with`` ...) or a last Chinese
    character that cannot end one (的, 和, 在 ...)."""
    body = (text or "").strip()
    if not body or _END.search(body):
        return ""
    if body.endswith(_DANGLING_ZH):
        return body[-8:]
    words = body.split()
    last = re.sub(r"[^\w]", "", words[-1].lower()) if words else ""
    return " ".join(words[-4:]) if last in _DANGLING_EN else ""


def parameter_fragment(text: str, parameters: Iterable[str]) -> str:
    """A word of ``text`` that is the cut-off start of one of ``parameters`` (a snake_case or camelCase name
    of 5 characters or more, the word at least 4 characters and holding ``_`` or an inner capital): ``""`` = none."""
    names = [p for p in parameters if isinstance(p, str) and len(p) >= 5 and ("_" in p or p != p.lower())]
    for word in _WORD.findall(text or ""):
        if len(word) < 4 or not ("_" in word or word[1:] != word[1:].lower()):
            continue
        if any(name != word and name.startswith(word) for name in names) and word not in names:
            return word
    return ""


def stray_bracket(text: str) -> str:
    """The first curly or square bracket (or 【】) that closes nothing, or ``"{"``-style opener left open;
    ``""`` = every bracket pairs up. Round brackets are left alone (``1)``, ``:)``)."""
    stack: list[str] = []
    for char in text or "":
        if char in _PAIRS.values():
            stack.append(char)
        elif char in _PAIRS:
            if not stack or stack[-1] != _PAIRS[char]:
                return char
            stack.pop()
    return stack[0] if stack else ""


def broken_text(text: str, parameters: Iterable[str] = ()) -> list[Problem]:
    """The broken-text problems of one turn (module doc), each with its rule id (``text.cut_off``,
    ``text.parameter_fragment``, ``text.stray_bracket``) and the words quoted."""
    found = []
    tail = cut_off(text)
    if tail:
        found.append(Problem(f'ends mid-sentence ("...{tail}")', "text.cut_off", text=tail))
    piece = parameter_fragment(text, parameters)
    if piece:
        found.append(Problem(f'"{piece}" is a cut-off piece of a parameter name', "text.parameter_fragment", text=piece))
    bracket = stray_bracket(text)
    if bracket:
        found.append(Problem(f'"{bracket}" is a stray bracket', "text.stray_bracket", text=bracket))
    return found
