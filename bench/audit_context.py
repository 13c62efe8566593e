"""Can a gold argument value be known from what the model saw? The ``value_not_in_context`` check (docs/audit.md §5).

A :class:`CallContext` gathers the texts a model has seen before a gold call (user messages, the
environment string, earlier observations, the gold history, the called tool's own description) in
normalised form, and :meth:`CallContext.knows` says whether a value appears in them after the
normalisation of docs/audit.md §5.2.

Pure module: no I/O.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'", "\u00b4": "'"})
_SPACE = re.compile(r"\s+")
_LOOSE = re.compile(r"[\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\d])\.\d+")
_SCALES = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9,
    "trillion": 1e12, "千": 1e3, "万": 1e4, "百万": 1e6, "亿": 1e8,
}  # fmt: skip
_SCALE_AFTER = re.compile(
    r"\s*(thousand|million|billion|trillion|mn|bn|k|m|b|百万|千|万|亿)(?![^\W\d_])", re.IGNORECASE
)
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "hundred": 100, "dozen": 12, "single": 1, "once": 1, "twice": 2, "both": 2, "pair": 2, "couple": 2,
    "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
}  # fmt: skip
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
            ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
            ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+({_MONTH})\b")
_ZH_MONTH_DAY = re.compile(r"(\d{1,2})月(\d{1,2})[日号]")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})\b")
_ORDINAL_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b|(\d{1,2})[日号]")
_TIME = re.compile(
    r"(?<!\d)(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*(am|pm|a\.m\.|p\.m\.))?|(?<!\d)(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)"
)
_RANGE_SCALE = re.compile(
    r"\s*(?:and|to|or|-|–|~|至|到)\s*[-+]?\d[\d,]*(?:\.\d+)?\s*(thousand|million|billion|trillion|mn|bn|k|m|b|百万|千|万|亿)(?![^\W\d_])"
)
_LANGUAGES = {
    "zh": ("chinese", "中文", "汉语", "mandarin"), "en": ("english", "英文", "英语"), "es": ("spanish", "西班牙"),
    "fr": ("french", "法语"), "de": ("german", "德语"), "ja": ("japanese", "日语"), "ko": ("korean", "韩语"),
    "it": ("italian",), "pt": ("portuguese",), "ru": ("russian",), "ar": ("arabic",), "hi": ("hindi",),
    "nl": ("dutch",), "pl": ("polish",), "tr": ("turkish",), "sv": ("swedish",),
}  # fmt: skip
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?)?$")
_ENV_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
DATE_WINDOW_DAYS = 31
"""A date within this many days of the environment's date counts as derivable (docs/audit.md §5.2)."""
TOKEN_COVERAGE = 0.8
"""Share of a long string's tokens that must occur in the context (docs/audit.md §5.2)."""
LONG_STRING_TOKENS = 4


def normalise(text: str) -> str:
    """docs/audit.md §5.2 text normalisation: Unicode NFKC, typographic quotes made plain, casefold,
    runs of whitespace made one space, stripped."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return _SPACE.sub(" ", text).strip()


def loose(text: str) -> str:
    """A normalised text without punctuation, spaces and underscores (docs/audit.md §5.2)."""
    return _LOOSE.sub("", text)


def tokens(text: str) -> list[str]:
    """Word tokens of a normalised text: runs of letters and digits, each CJK character a token of its own (docs/audit.md §5.2)."""
    return _TOKEN.findall(text)


def has_cjk(text: str) -> bool:
    """``text`` holds a Chinese, Japanese or Korean character (docs/audit.md §6)."""
    return bool(_CJK.search(text))


def numbers_in(text: str) -> set[float]:
    """Absolute values of the numbers written in a normalised text (docs/audit.md §5.2): digits with
    an optional sign, thousands commas, decimals and exponent, also multiplied by a scale word that
    follows (``50 billion``, ``3万``) and divided by 100 before ``%``; number words (``two``, ``十``)."""
    found: set[float] = set()
    for match in _NUMBER.finditer(text):
        try:
            value = abs(float(match.group().replace(",", "")))
        except ValueError:
            continue
        found.add(value)
        rest = text[match.end() :]
        scale = _SCALE_AFTER.match(rest) or _RANGE_SCALE.match(rest)
        if scale:
            found.add(value * _SCALES[scale.group(1).lower()])
        if rest.startswith("%"):
            found.add(value / 100)
    for token in tokens(text):
        if token in _WORDS:
            found.add(float(_WORDS[token]))
    return found


def _month_days(text: str) -> set[tuple[int, int]]:
    found = {(_MONTHS[m], int(d)) for m, d in _MONTH_DAY.findall(text)}
    found |= {(_MONTHS[m], int(d)) for d, m in _DAY_MONTH.findall(text)}
    found |= {(int(m), int(d)) for m, d in _ZH_MONTH_DAY.findall(text)}
    for a, b in _SLASH_DATE.findall(text):
        found |= {(int(a), int(b)), (int(b), int(a))}
    return found


def _days(text: str) -> set[int]:
    return {int(a or b) for a, b in _ORDINAL_DAY.findall(text)}


def _clock(hour: int, minute: int, second: int, half: str | None) -> tuple[int, int, int]:
    if half and half.startswith("p") and hour < 12:
        hour += 12
    elif half and half.startswith("a") and hour == 12:
        hour = 0
    return hour, minute, second


def times_in(text: str) -> set[tuple[int, int, int]]:
    """Clock times written in a normalised text, as ``(hour, minute, second)``: ``1:45``, ``07:00:30``,
    ``7pm``, ``7:30 am`` (docs/audit.md §5.2)."""
    found = set()
    for h, m, sec, half, h2, half2 in _TIME.findall(text):
        if h:
            found.add(_clock(int(h), int(m), int(sec or 0), half or None))
        else:
            found.add(_clock(int(h2), 0, 0, half2))
    return found


def env_date(env_info: str) -> _dt.date | None:
    """The date of an environment string (``"2024-05-03 10:12:00 Friday"``), or ``None`` (docs/dataset.md §2.1)."""
    match = _ENV_DATE.search(env_info or "")
    if not match:
        return None
    try:
        return _dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, value)`` of every scalar inside a JSON value, depth first (``a.b[0]``); object keys are not values."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def as_text(value: Any) -> str:
    """A value as the model reads it: a string as it is, anything else as JSON text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class CallContext:
    """What a model has seen before one gold call, in normalised form (docs/audit.md §5.1).

    Args:
        texts: the strings seen (user messages, the environment string, observations and gold
            calls as JSON text, the tool's description), in any order.
        today: the environment's date, for the date rule of docs/audit.md §5.2.
        allowed: values the tool's schema offers for the parameter (its ``enum`` and ``default``).
    """

    def __init__(self, texts: Iterable[str], *, today: _dt.date | None = None, allowed: Iterable[Any] = ()) -> None:
        normalised = [normalise(text) for text in texts if isinstance(text, str) and text]
        self.text = "\n".join(normalised)
        self.loose = loose(self.text)
        self.numbers = numbers_in(self.text)
        self.tokens = set(tokens(self.text))
        self.month_days = _month_days(self.text)
        self.days = _days(self.text)
        self.times = times_in(self.text)
        self.today = today
        self.allowed = list(allowed)

    def knows(self, value: Any) -> bool:
        """Whether ``value`` (a scalar gold argument value) can be found in the context by the rules
        of docs/audit.md §5.2: booleans, ``null`` and empty strings always; a value the schema
        offers; a number equal in absolute value to a number of the context; a string as a
        substring (also without punctuation), a date by the date rule, a string of
        :data:`LONG_STRING_TOKENS` or more tokens when :data:`TOKEN_COVERAGE` of its tokens occur."""
        if value is None or isinstance(value, bool):
            return True
        if any(_same(value, member) for member in self.allowed):
            return True
        if isinstance(value, (int, float)):
            return abs(float(value)) in self.numbers
        if not isinstance(value, str):
            return True
        text = normalise(value)
        if not text or text in self.text:
            return True
        compact = loose(text)
        if not compact or compact in self.loose:
            return True
        if self._knows_date(text) or self._knows_time(text):
            return True
        if any(name in self.text for name in _LANGUAGES.get(text, ())):
            return True
        try:
            if abs(float(text.replace(",", ""))) in self.numbers:
                return True
        except ValueError:
            pass
        words = tokens(text)
        if len(words) >= LONG_STRING_TOKENS:
            seen = sum(1 for word in set(words) if word in self.tokens)
            return seen >= TOKEN_COVERAGE * len(set(words))
        return False

    def _knows_date(self, text: str) -> bool:
        match = _ISO_DATE.match(text)
        if not match:
            return False
        try:
            date = _dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return False
        return any(self._date_known(day) for day in _year_shifts(date))

    def _date_known(self, date: _dt.date) -> bool:
        if (date.month, date.day) in self.month_days:
            return True
        if self.today is None:
            return False
        distance = abs((date - self.today).days)
        if distance <= DATE_WINDOW_DAYS:
            return True
        if distance <= 2 * DATE_WINDOW_DAYS and date.day in self.days:
            return True  # "the 24th"
        first_or_last = date.day == 1 or (date + _dt.timedelta(days=1)).day == 1
        return first_or_last and distance <= 400  # "last month", "last year"

    def _knows_time(self, text: str) -> bool:
        match = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", text)
        return bool(match) and (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)) in self.times


def _year_shifts(date: _dt.date) -> list[_dt.date]:
    """The date, and the same day one year before and after ("the same weeks last year")."""
    out = [date]
    for shift in (-1, 1):
        try:
            out.append(date.replace(year=date.year + shift))
        except ValueError:  # 29 February
            pass
    return out


def _same(value: Any, member: Any) -> bool:
    if isinstance(value, str) and isinstance(member, str):
        return normalise(value) == normalise(member)
    return value == member and type(value) is type(member)
