"""Derived values: values the conversation implies without saying them literally (docs/audit.md §5.2, §5.3).

:class:`DerivedContext` extends :class:`wildtoolbench.bench.audit_context.CallContext` (literal matching)
with what a reader computes from what was said:

- **relative dates** from the environment's date: today, tomorrow, yesterday, the day after tomorrow,
  weekdays (``next Friday``, ``last Monday``, ``on Friday``), this/next/last weekend, week, month and
  year (their first and last days), ``the past two months``, ``in 3 days``, ``two weeks ago``, and their
  Chinese forms (今天, 明天, 昨天, 上周五, 下个月, 过去两个月, 周末 ...); a ``YYYY-MM`` value or a year too;
- **days of the week** of every date said or derived (``Friday`` for "tomorrow" on a Thursday);
- **countries** from demonyms and names, with their ISO 3166 alpha-2 and alpha-3 codes and the
  currency's ISO 4217 code (``Swiss`` -> ``Switzerland``, ``CH``, ``CHE``, ``CHF``);
- **numbers** written in words (``two dozen`` -> 24, ``three hundred`` -> 300, ``half a dozen`` -> 6) and
  in other units (``2 hours`` -> 120 minutes / 7200 seconds, ``1.5 km`` -> 1500 m, ``3 kg`` -> 3000 g);
- **composed values**: a text made of parts joined by ``-``, ``/``, ``,``, ``|``, ``~`` or `` to `` whose
  every part is known (a route ``Madrid-Barcelona``, a range ``120000-150000``);
- **named months and holidays**: any day of a month named without a day (``in August``, 8月) and the
  fixed-date holidays (Christmas, New Year, Halloween, 国庆 ...); ``noon`` and ``midnight``;
- **ordinal references** ("the third one", 第二个) resolve to what the earlier results say, which the
  context already holds word for word, so the literal rule accepts them.

Pure module: no I/O.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from typing import Any

from wildtoolbench.bench.audit_context import CallContext, normalise, tokens

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_SHORT = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_ZH_WEEKDAYS = "一二三四五六日"
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "couple": 2, "few": 3, "several": 3,
}  # fmt: skip
_MULTIPLIERS = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_ZH_UNITS = {"天": "days", "日": "days", "周": "weeks", "星期": "weeks", "个月": "months", "月": "months", "年": "years"}

# Unit conversions: (unit words, factors to other units).
_CONVERSIONS = (
    (("hour", "hours", "hr", "hrs", "小时"), (60, 3600)),
    (("minute", "minutes", "min", "mins", "分钟"), (60,)),
    (("day", "days", "天"), (24, 1440)),
    (("week", "weeks", "周"), (7,)),
    (("year", "years", "年"), (12,)),
    (("km", "kilometer", "kilometers", "kilometre", "kilometres", "公里"), (1000,)),
    (("kg", "kilogram", "kilograms", "公斤"), (1000,)),
    (("l", "liter", "liters", "litre", "litres", "升"), (1000,)),
    (("m", "meter", "meters", "metre", "metres", "米"), (100, 1000)),
)

_COUNTRIES: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    # name, alpha-2, alpha-3, currency, other words that name it (demonyms, Chinese, short forms)
    ("united states", "US", "USA", "USD", ("american", "america", "usa", "u.s.", "美国", "us")),
    ("united kingdom", "GB", "GBR", "GBP", ("british", "britain", "uk", "england", "english", "英国")),
    ("switzerland", "CH", "CHE", "CHF", ("swiss", "瑞士")),
    ("germany", "DE", "DEU", "EUR", ("german", "德国")),
    ("france", "FR", "FRA", "EUR", ("french", "法国")),
    ("italy", "IT", "ITA", "EUR", ("italian", "意大利")),
    ("spain", "ES", "ESP", "EUR", ("spanish", "西班牙")),
    ("portugal", "PT", "PRT", "EUR", ("portuguese", "葡萄牙")),
    ("netherlands", "NL", "NLD", "EUR", ("dutch", "holland", "荷兰")),
    ("belgium", "BE", "BEL", "EUR", ("belgian", "比利时")),
    ("austria", "AT", "AUT", "EUR", ("austrian", "奥地利")),
    ("ireland", "IE", "IRL", "EUR", ("irish", "爱尔兰")),
    ("greece", "GR", "GRC", "EUR", ("greek", "希腊")),
    ("finland", "FI", "FIN", "EUR", ("finnish", "芬兰")),
    ("sweden", "SE", "SWE", "SEK", ("swedish", "瑞典")),
    ("norway", "NO", "NOR", "NOK", ("norwegian", "挪威")),
    ("denmark", "DK", "DNK", "DKK", ("danish", "丹麦")),
    ("poland", "PL", "POL", "PLN", ("polish", "波兰")),
    ("russia", "RU", "RUS", "RUB", ("russian", "俄罗斯")),
    ("ukraine", "UA", "UKR", "UAH", ("ukrainian", "乌克兰")),
    ("turkey", "TR", "TUR", "TRY", ("turkish", "türkiye", "土耳其")),
    ("china", "CN", "CHN", "CNY", ("chinese", "中国", "rmb", "renminbi", "yuan", "人民币")),
    ("japan", "JP", "JPN", "JPY", ("japanese", "yen", "日本", "日元")),
    ("south korea", "KR", "KOR", "KRW", ("korean", "korea", "won", "韩国")),
    ("india", "IN", "IND", "INR", ("indian", "rupee", "rupees", "印度")),
    ("canada", "CA", "CAN", "CAD", ("canadian", "加拿大")),
    ("mexico", "MX", "MEX", "MXN", ("mexican", "墨西哥")),
    ("brazil", "BR", "BRA", "BRL", ("brazilian", "巴西")),
    ("argentina", "AR", "ARG", "ARS", ("argentine", "argentinian", "阿根廷")),
    ("australia", "AU", "AUS", "AUD", ("australian", "澳大利亚", "澳洲")),
    ("new zealand", "NZ", "NZL", "NZD", ("new zealander", "kiwi", "新西兰")),
    ("singapore", "SG", "SGP", "SGD", ("singaporean", "新加坡")),
    ("thailand", "TH", "THA", "THB", ("thai", "泰国")),
    ("vietnam", "VN", "VNM", "VND", ("vietnamese", "越南")),
    ("indonesia", "ID", "IDN", "IDR", ("indonesian", "印度尼西亚", "印尼")),
    ("malaysia", "MY", "MYS", "MYR", ("malaysian", "马来西亚")),
    ("philippines", "PH", "PHL", "PHP", ("filipino", "philippine", "菲律宾")),
    ("egypt", "EG", "EGY", "EGP", ("egyptian", "埃及")),
    ("south africa", "ZA", "ZAF", "ZAR", ("south african", "南非")),
    ("nigeria", "NG", "NGA", "NGN", ("nigerian", "尼日利亚")),
    ("kenya", "KE", "KEN", "KES", ("kenyan", "肯尼亚")),
    ("israel", "IL", "ISR", "ILS", ("israeli", "以色列")),
    ("saudi arabia", "SA", "SAU", "SAR", ("saudi", "沙特")),
    ("united arab emirates", "AE", "ARE", "AED", ("emirati", "uae", "dubai", "阿联酋")),
    ("chile", "CL", "CHL", "CLP", ("chilean", "智利")),
    ("colombia", "CO", "COL", "COP", ("colombian", "哥伦比亚")),
    ("peru", "PE", "PER", "PEN", ("peruvian", "秘鲁")),
    ("czech republic", "CZ", "CZE", "CZK", ("czech", "czechia", "捷克")),
    ("hungary", "HU", "HUN", "HUF", ("hungarian", "匈牙利")),
    ("iceland", "IS", "ISL", "ISK", ("icelandic", "冰岛")),
)
"""Countries: name, ISO 3166 alpha-2 and alpha-3 codes, ISO 4217 currency code, words naming it."""


def _country_words() -> dict[str, set[str]]:
    """Each value a country may be given as (lower-cased) -> the words that imply it."""
    out: dict[str, set[str]] = {}
    for name, alpha2, alpha3, currency, words in _COUNTRIES:
        said = {name, *words}
        for value in (name, alpha2.lower(), alpha3.lower(), currency.lower(), *words):
            out.setdefault(value, set()).update(said)
    return out


_COUNTRY_WORDS = _country_words()


def _add_months(date: _dt.date, months: int) -> _dt.date:
    month = date.month - 1 + months
    year, month = date.year + month // 12, month % 12 + 1
    day = min(date.day, [31, 29 if year % 4 == 0 and (year % 100 or year % 400 == 0) else 28, 31, 30, 31, 30,
                         31, 31, 30, 31, 30, 31][month - 1])  # fmt: skip
    return _dt.date(year, month, day)


def _month_bounds(date: _dt.date) -> list[_dt.date]:
    first = date.replace(day=1)
    return [first, _add_months(first, 1) - _dt.timedelta(days=1)]


def _week_days(date: _dt.date) -> list[_dt.date]:
    monday = date - _dt.timedelta(days=date.weekday())
    return [monday + _dt.timedelta(days=i) for i in range(7)]


def _amount(word: str) -> int | None:
    """A count written in digits, English words or Chinese numerals (``3``, ``two``, ``两``, ``十二``)."""
    if word.isdigit():
        return int(word)
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    if not word or any(ch not in _ZH_DIGITS for ch in word):
        return None
    if "十" in word:
        tens, _, ones = word.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)
    return _ZH_DIGITS[word] if len(word) == 1 else None


_SPAN = re.compile(
    r"\b(past|last|previous|next|coming|upcoming|in|within|following)\s+(?:the\s+)?(\w+\s+)?(days?|weeks?|months?|years?)\b"
)
_AGO = re.compile(r"\b(\w+)\s+(days?|weeks?|months?|years?)\s+(ago|later|from now|before|after)\b")
_WEEKDAY = re.compile(r"\b(next|last|this|coming|previous|on)?\s*(" + "|".join(_WEEKDAYS) + r")\b")
_ZH_SPAN = re.compile(r"(过去|最近|近|前|未来|接下来|后|之后)([0-9一二两三四五六七八九十]+)(天|日|周|星期|个月|年)")
_ZH_WEEKDAY = re.compile(r"(上|下|这|本)?(?:周|星期|礼拜)([一二三四五六日天])")


def relative_dates(text: str, today: _dt.date) -> set[_dt.date]:
    """The dates a normalised text refers to relative to ``today`` (module doc; docs/audit.md §5.3):
    each named day, and the first and last day of each named range (``past two months`` gives
    ``today`` minus two months and ``today``)."""
    out: set[_dt.date] = {today}
    day = _dt.timedelta(days=1)
    words = {
        "today": [today], "tonight": [today], "now": [today], "tomorrow": [today + day],
        "yesterday": [today - day], "day after tomorrow": [today + 2 * day],
        "day before yesterday": [today - 2 * day], "今天": [today], "今日": [today], "明天": [today + day],
        "明日": [today + day], "后天": [today + 2 * day], "昨天": [today - day], "前天": [today - 2 * day],
    }  # fmt: skip
    for phrase, dates in words.items():
        if phrase in text:
            out.update(dates)
    saturday = today + _dt.timedelta(days=(5 - today.weekday()) % 7)
    if "weekend" in text or "周末" in text:
        for base in (saturday, saturday - 7 * day, saturday + 7 * day):
            out.update({base, base + day})
    for when, shift in (("this", 0), ("next", 1), ("last", -1), ("本", 0), ("这", 0), ("下", 1), ("上", -1)):
        for unit in ("week", "周", "星期"):
            if f"{when} {unit}" in text or f"{when}{unit}" in text or f"{when}个{unit}" in text:
                out.update(_week_days(today + 7 * shift * day))
        for unit in ("month", "月", "个月"):
            if f"{when} {unit}" in text or f"{when}{unit}" in text:
                out.update(_month_bounds(_add_months(today, shift)))
        if f"{when} year" in text:
            year = today.year + shift
            out.update({_dt.date(year, 1, 1), _dt.date(year, 12, 31)})
    for phrase, year in (("今年", today.year), ("明年", today.year + 1), ("去年", today.year - 1)):
        if phrase in text:
            out.update({_dt.date(year, 1, 1), _dt.date(year, 12, 31)})
    for direction, amount, unit in _SPAN.findall(text):
        count = _amount(amount.strip()) if amount.strip() else 1
        if count is not None:
            sign = -1 if direction in ("past", "last", "previous") else 1
            out.update(_shifted(today, sign * count, unit))
    for amount, unit, direction in _AGO.findall(text):
        count = _amount(amount)
        if count is not None:
            out.update(_shifted(today, (-1 if direction in ("ago", "before") else 1) * count, unit))
    for direction, amount, unit in _ZH_SPAN.findall(text):
        count = _amount(amount)
        if count is not None:
            sign = -1 if direction in ("过去", "最近", "近", "前") else 1
            out.update(_shifted(today, sign * count, _ZH_UNITS[unit]))
    for when, name in _WEEKDAY.findall(text):
        out.update(_weekday_dates(today, _WEEKDAYS.index(name), when))
    for when, name in _ZH_WEEKDAY.findall(text):
        index = 6 if name in "日天" else _ZH_WEEKDAYS.index(name)
        out.update(_weekday_dates(today, index, {"上": "last", "下": "next"}.get(when, "")))
    return out


def _shifted(today: _dt.date, count: int, unit: str) -> set[_dt.date]:
    unit = unit.rstrip("s")
    if unit == "month":
        end = _add_months(today, count)
    elif unit == "year":
        end = _add_months(today, 12 * count)
    else:
        end = today + _dt.timedelta(days=count * _UNITS[unit])
    return {end, end - _dt.timedelta(days=1), end + _dt.timedelta(days=1)}  # inclusive or exclusive ends


def _weekday_dates(today: _dt.date, index: int, when: str) -> set[_dt.date]:
    ahead = (index - today.weekday()) % 7
    coming = today + _dt.timedelta(days=ahead)
    if when in ("next", "coming"):
        return {coming if ahead else coming + _dt.timedelta(days=7), coming + _dt.timedelta(days=7)}
    if when in ("last", "previous"):
        back = (today.weekday() - index) % 7 or 7
        return {today - _dt.timedelta(days=back), today - _dt.timedelta(days=back + 7)}
    return {coming, coming - _dt.timedelta(days=7) if ahead else coming}


def word_numbers(text: str) -> set[float]:
    """Numbers a normalised text writes in words or in other units (module doc): ``two dozen`` -> 24,
    ``half a dozen`` -> 6, ``three hundred`` -> 300, ``twenty five`` -> 25, ``2 hours`` -> 120 and 7200."""
    found: set[float] = set()
    words = tokens(text)
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        after = words[i + 2] if i + 2 < len(words) else ""
        if word == "half" and following in ("a", "an") and after in _MULTIPLIERS:
            found.add(_MULTIPLIERS[after] / 2)
        base = _amount(word)
        if base is None:
            continue
        if following in _NUMBER_WORDS and _NUMBER_WORDS[following] < 10 and 20 <= base < 100 and base % 10 == 0:
            found.add(float(base + _NUMBER_WORDS[following]))  # twenty five
        if following in _MULTIPLIERS:
            found.add(float(base * _MULTIPLIERS[following]))
            if after in _MULTIPLIERS:
                found.add(float(base * _MULTIPLIERS[following] * _MULTIPLIERS[after]))
    for match in re.finditer(r"(\d+(?:\.\d+)?)\s*([a-z\u4e00-\u9fff]+)", text):
        value, unit = float(match.group(1)), match.group(2)
        for names, factors in _CONVERSIONS:
            if unit in names:
                found.update(value * factor for factor in factors)
    return found


_MONTH_NAMES = {name: i + 1 for i, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march",), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec"))) for name in names}  # fmt: skip
_ZH_MONTH = re.compile(r"(十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])月(?!\d|[一二三四五六七八九十]+[日号])")
_HOLIDAYS = {
    "christmas": (12, 25), "new year": (1, 1), "valentine": (2, 14), "halloween": (10, 31),
    "independence day": (7, 4), "圣诞": (12, 25), "元旦": (1, 1), "情人节": (2, 14), "国庆": (10, 1),
}  # fmt: skip
"""Fixed-date holidays a user names instead of the date."""


def _named_months(text: str) -> set[int]:
    """The months a normalised text names without a day (``in august``, ``8月``)."""
    out = {month for word, month in _MONTH_NAMES.items() if re.search(rf"\b{word}\b", text)}
    for match in _ZH_MONTH.findall(text):
        out.add(int(match) if match.isdigit() else _amount(match) or 0)
    return {m for m in out if 1 <= m <= 12}


def _names(word: str, text: str) -> bool:
    """``word`` occurs in ``text`` as a whole word (a Chinese word: anywhere)."""
    if re.search(r"[\u3400-\u9fff]", word):
        return word in text
    return re.search(rf"(?<![^\W\d_]){re.escape(word)}(?![^\W\d_])", text) is not None


_PARTS = re.compile(r"\s*(?:-|–|/|,|\||~|\bto\b|至|到)\s*")


class DerivedContext(CallContext):
    """:class:`CallContext` that also knows the values derived from what was said (module doc;
    docs/audit.md §5.3). Same arguments as :class:`CallContext`."""

    def __init__(self, texts: Iterable[str], *, today: _dt.date | None = None, allowed: Iterable[Any] = ()) -> None:
        super().__init__(texts, today=today, allowed=allowed)
        self.derived_dates = relative_dates(self.text, today) if today is not None else set()
        self.derived_dates |= self._said_dates()
        self.weekdays = {d.weekday() for d in self.derived_dates}
        self.numbers = self.numbers | word_numbers(self.text)
        if "noon" in self.text or "中午" in self.text:
            self.times.add((12, 0, 0))
        if "midnight" in self.text or "午夜" in self.text:
            self.times.add((0, 0, 0))
        self.months = {(d.year, d.month) for d in self.derived_dates}
        self.years = {d.year for d in self.derived_dates}

    def _said_dates(self) -> set[_dt.date]:
        out = set()
        for match in re.finditer(r"(\d{4})-(\d{2})-(\d{2})", self.text):
            try:
                out.add(_dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3))))
            except ValueError:
                continue
        if self.today is not None:
            years = (self.today.year - 1, self.today.year, self.today.year + 1)
            for month in _named_months(self.text):  # "in August": any day of it
                out.update(_dt.date(year, month, 1) + _dt.timedelta(days=d) for year in years for d in range(31)
                           if (_dt.date(year, month, 1) + _dt.timedelta(days=d)).month == month)  # fmt: skip
            for phrase, (month, day) in _HOLIDAYS.items():
                if phrase in self.text:
                    out.update(_dt.date(year, month, day) for year in years)
            for month, day in self.month_days:
                for year in (self.today.year - 1, self.today.year, self.today.year + 1):
                    try:
                        out.add(_dt.date(year, month, day))
                    except ValueError:
                        continue
        return out

    def knows(self, value: Any) -> bool:
        """Whether ``value`` is said (:meth:`CallContext.knows`) or derived (module doc)."""
        if super().knows(value):
            return True
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) in self.years
        if not isinstance(value, str):
            return False
        return self._derives(normalise(value), depth=0)

    def _derives(self, text: str, depth: int) -> bool:
        if not text:
            return False
        match = re.match(r"^(\d{4})-(\d{2})-(\d{2})", text)
        if match:
            try:
                date = _dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            except ValueError:
                return False
            return date in self.derived_dates
        match = re.fullmatch(r"(\d{4})-(\d{2})", text)
        if match:
            return (int(match.group(1)), int(match.group(2))) in self.months
        if re.fullmatch(r"\d{4}", text):
            return int(text) in self.years
        if text in _WEEKDAYS or text in _WEEKDAY_SHORT:
            index = _WEEKDAYS.index(text) if text in _WEEKDAYS else _WEEKDAY_SHORT.index(text)
            return index in self.weekdays
        said = _COUNTRY_WORDS.get(text)
        if said and any(_names(word, self.text) for word in said):
            return True
        if depth == 0:
            parts = [p for p in _PARTS.split(text) if p]
            if len(parts) >= 2 and all(super(DerivedContext, self).knows(p) or self._derives(p, 1) for p in parts):
                return True
        return False
