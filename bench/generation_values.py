"""Concrete values for the generated user's requests, and the values a call may use (docs/generation.md §4.4).

A small model asked for "a real city" writes ``"example"`` or copies the tool's description; asked to
state values it has just chosen, it often leaves them out. The generator therefore chooses the
values of a request itself where a parameter says what kind of value it wants, and lets the model
choose the rest:

- :func:`planned_value`: one value for one parameter, from the parameter's own schema (an ``enum``
  member, a value its description offers), else by the parameter's name and type from a small
  bilingual bank (cities, countries, currencies, people, dates after the session's date, small
  counts, identifiers), else ``None`` (the model chooses it);
- :func:`known_values`: the scalar values a call may use at a point of the session (what the user
  gave, earlier results and calls, the environment's date), for the planner's grammar.

Every choice follows from the ``random.Random`` it is given (the session's seed). Pure module: no
I/O, no model.
"""

from __future__ import annotations

import datetime as _dt
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.audit_context import leaves
from wildtoolbench.bench.rules.value import described_options, placeholder_problem

_NOT_A_VALUE = re.compile(
    r"^(the|a|an|empty|none|null|true|false|all|any)\b|yyyy|\bmm\b|\bdd\b|hh:|latitude|longitude|纬度|经度|<|>|\{|\}",
    re.IGNORECASE,
)
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def name_words(name: str) -> list[str]:
    """The lower-case words of a parameter name: ``"startDate"`` and ``"start_date"`` give ``["start", "date"]``."""
    return [w.lower() for w in _NAME_WORDS.findall(name or "")]


_BANK: dict[str, dict[str, tuple[str, ...]]] = {
    "city": {
        "en": ("Paris", "Tokyo", "Chicago", "Barcelona", "Toronto", "Sydney", "Berlin", "Seattle", "Lisbon", "Denver"),
        "zh": ("北京", "上海", "杭州", "成都", "深圳", "广州", "南京", "西安", "武汉", "厦门"),
    },
    "country": {
        "en": ("Japan", "Canada", "Germany", "Brazil", "Italy", "Kenya", "Mexico", "Norway", "India", "Spain"),
        "zh": ("日本", "加拿大", "德国", "巴西", "意大利", "法国", "墨西哥", "挪威", "印度", "西班牙"),
    },
    "country_code": {
        "en": ("US", "JP", "DE", "FR", "CA", "BR", "IT", "GB"),
        "zh": ("CN", "JP", "US", "DE", "FR", "GB"),
    },
    "currency": {"en": ("USD", "EUR", "JPY", "GBP", "CAD", "CHF"), "zh": ("CNY", "USD", "EUR", "JPY", "HKD")},
    "language": {
        "en": ("French", "Spanish", "German", "Japanese", "Italian", "Portuguese"),
        "zh": ("英语", "日语", "法语", "德语", "韩语", "西班牙语"),
    },
    "language_code": {"en": ("fr", "es", "de", "ja", "it", "pt"), "zh": ("en", "ja", "fr", "de", "ko", "es")},
    "person": {
        "en": ("Maria Lopez", "Kenji Sato", "Olivia Brown", "Ahmed Khan", "Lucas Meyer", "Emma Wilson"),
        "zh": ("张伟", "李娜", "王芳", "刘洋", "陈静", "杨磊"),
    },
    "username": {
        "en": ("maria_lopez", "kenji88", "obrown", "lucas.meyer"),
        "zh": ("zhangwei01", "lina_sh", "wangfang"),
    },
    "artist": {
        "en": ("Adele", "Coldplay", "Taylor Swift", "Miles Davis", "Daft Punk"),
        "zh": ("周杰伦", "王菲", "邓紫棋", "陈奕迅", "林俊杰"),
    },
    "author": {
        "en": ("Jane Austen", "Haruki Murakami", "George Orwell", "Toni Morrison"),
        "zh": ("鲁迅", "莫言", "余华", "金庸"),
    },
    "symbol": {"en": ("AAPL", "MSFT", "TSLA", "NVDA", "AMZN"), "zh": ("AAPL", "BABA", "TSLA", "NVDA", "600519")},
    "crypto": {"en": ("BTC", "ETH", "SOL"), "zh": ("BTC", "ETH", "SOL")},
    "color": {"en": ("blue", "green", "red", "black"), "zh": ("蓝色", "绿色", "红色", "黑色")},
    "genre": {"en": ("jazz", "science fiction", "comedy", "hip hop"), "zh": ("爵士", "科幻", "喜剧", "摇滚")},
    "email": {
        "en": ("maria.lopez@mailbox.org", "kenji.sato@fastmail.com", "olivia.brown@gmail.com"),
        "zh": ("zhangwei@163.com", "lina@qq.com", "wangfang@126.com"),
    },
    "domain": {"en": ("wikipedia.org", "github.com", "bbc.co.uk"), "zh": ("baidu.com", "zhihu.com", "bilibili.com")},
    "url": {
        "en": ("https://www.wikipedia.org", "https://github.com/langchain-ai/langgraph", "https://www.bbc.com/news"),
        "zh": ("https://www.zhihu.com", "https://www.bilibili.com", "https://news.163.com"),
    },
    "ip": {"en": ("8.8.8.8", "1.1.1.1", "203.0.113.7"), "zh": ("114.114.114.114", "8.8.8.8", "223.5.5.5")},
    "airport": {"en": ("JFK", "LHR", "NRT", "CDG", "SFO"), "zh": ("PEK", "PVG", "CAN", "SZX", "CTU")},
    "team": {
        "en": ("Chicago Bulls", "Real Madrid", "Boston Red Sox", "Manchester United"),
        "zh": ("广东宏远", "北京国安", "上海申花", "湖人队"),
    },
}
"""The bank of values, by kind and language."""

_STRING_KINDS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"email", "mail"}), "email"),
    (frozenset({"url", "link", "longurl", "website"}), "url"),
    (frozenset({"domain", "hostname", "host"}), "domain"),
    (frozenset({"ip"}), "ip"),
    (frozenset({"airport", "airportcode", "iata"}), "airport"),
    (frozenset({"currency", "basecurrency", "targetcurrency", "fromcurrency", "tocurrency"}), "currency"),
    (frozenset({"countrycode"}), "country_code"),
    (frozenset({"country", "nation"}), "country"),
    (frozenset({"city", "location", "destination", "place", "town", "region", "origin"}), "city"),
    (frozenset({"language", "lang", "fromlanguage", "tolanguage"}), "language"),
    (frozenset({"username", "handle", "login", "nickname"}), "username"),
    (frozenset({"artist", "singer", "band"}), "artist"),
    (frozenset({"author", "writer"}), "author"),
    (frozenset({"team"}), "team"),
    (frozenset({"symbol", "ticker", "stock"}), "symbol"),
    (frozenset({"coin", "crypto", "cryptocurrency"}), "crypto"),
    (frozenset({"color", "colour"}), "color"),
    (frozenset({"genre"}), "genre"),
    (frozenset({"name", "fullname", "person", "player", "playername", "customer", "contact", "recipient"}), "person"),
)
_DATE_WORDS = frozenset(
    {"date", "day", "since", "until", "from", "to", "start", "end", "checkin", "checkout", "birthday"}
)
_ID_WORDS = frozenset({"id", "ids", "number", "no", "ref", "reference", "uuid"})
_COUNT_WORDS = frozenset({"limit", "count", "size", "page", "top", "max", "min", "results", "num", "number", "per"})
_AMOUNT_WORDS = frozenset({"amount", "price", "budget", "cost", "salary", "value", "income", "total"})


_PERSON_HINT = re.compile(
    r"person|people|user|customer|player|author|artist|contact|full name|first name|last name|employee|"
    r"student|patient|actor|celebrit|姓名|人名|用户",
    re.IGNORECASE,
)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _kind_of(words: Sequence[str], description: str) -> str:
    words = [_singular(w) for w in words]
    joined = "".join(words)
    for keys, kind in _STRING_KINDS:
        if joined in keys or keys & set(words):
            if kind == "person" and joined not in keys - {"name"} and not _PERSON_HINT.search(description):
                return ""  # the name of anything (a fish, a product): the model knows better what fits
            if kind == "language" and re.search(r"\bcode\b|iso|639|\ben\b", description, re.IGNORECASE):
                return "language_code"
            if kind == "country" and re.search(r"\bcode\b|iso|alpha", description, re.IGNORECASE):
                return "country_code"
            return kind
    return ""


def _schema_type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "")
    return {"float": "number", "double": "number", "int": "integer", "bool": "boolean", "str": "string"}.get(
        str(kind or "").lower(), str(kind or "").lower()
    )


def _offered(schema: Mapping[str, Any]) -> list[Any]:
    enum = schema.get("enum")
    if isinstance(enum, list):
        members = [v for v in enum if isinstance(v, (str, int, float)) and not isinstance(v, bool) and v != ""]
        if members:
            return members
    options = [o.strip().rstrip(".") for o in described_options(schema.get("description"))]
    return [o for o in options if len(o) >= 2 and not placeholder_problem(o) and not _NOT_A_VALUE.search(o)]


def _number(words: Sequence[str], schema: Mapping[str, Any], rng: random.Random, today: _dt.date) -> int | float:
    word_set = set(words)
    if "year" in word_set:
        value: int | float = today.year
    elif "latitude" in word_set or "lat" in word_set:
        value = rng.choice((48.8566, 35.6762, 41.8781, -33.8688))
    elif "longitude" in word_set or "lon" in word_set or "lng" in word_set:
        value = rng.choice((2.3522, 139.6503, -87.6298, 151.2093))
    elif word_set & _AMOUNT_WORDS:
        value = rng.choice((50, 120, 250, 1500))
    elif word_set & _COUNT_WORDS:
        value = rng.choice((3, 5, 10, 20))
    elif "age" in word_set:
        value = rng.randint(22, 64)
    elif word_set & _ID_WORDS:
        value = rng.randint(1000, 99999)
    else:
        value = rng.choice((2, 3, 5, 7, 12))
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and not isinstance(low, bool) and value < low:
        value = low
    if isinstance(high, (int, float)) and not isinstance(high, bool) and value > high:
        value = high
    if _schema_type(schema) == "integer":
        value = int(value)
    return value


def planned_value(name: str, schema: Any, *, rng: random.Random, today: _dt.date, language: str = "en") -> Any:
    """A concrete value for the parameter ``name`` of a tool, or ``None`` for "the model chooses it" (docs/generation.md §4.4).

    In order: an ``enum`` member or a value the parameter's description offers (``e.g. 'en'``, quoted
    values); a date (``YYYY-MM-DD``, 1 to 30 days after ``today``) for a date-like name or format; a
    number by the name (year, coordinates, amount, count, age, identifier), kept within ``minimum``
    / ``maximum``; a string of the bank by the name's kind (city, country, currency, language,
    person, user name, artist, author, team, stock symbol, e-mail address, URL, domain, IP address,
    airport code, colour, genre), in ``language``; an identifier (``"48213"``) for a name ending in
    ``id``/``number``/``code``. Booleans, objects, and strings of no known kind (a query, a word, a
    text) give ``None``.

    Args:
        name: the parameter's name.
        schema: its JSON schema (a non-dict means "any value").
        rng: the session's random source (advanced by the choice).
        today: the session's environment date.
        language: ``en`` or ``zh`` (the bank's language).

    Returns:
        A string, an int or a float, or ``None``.
    """
    schema = schema if isinstance(schema, Mapping) else {}
    kind = _schema_type(schema)
    if kind in ("boolean", "object", "null"):
        return None
    if kind == "array":
        item = planned_value(name, schema.get("items"), rng=rng, today=today, language=language)
        return None if item is None else [item]
    offered = _offered(schema)
    if offered:
        return rng.choice(offered)
    words = name_words(name)
    description = str(schema.get("description") or "")
    fmt = str(schema.get("format") or "").lower()
    if kind in ("integer", "number"):
        return _number(words, schema, rng, today)
    if (
        fmt in ("date", "date-time")
        or "date" in name.lower()
        or (set(words) & _DATE_WORDS and re.search(r"\bdate|yyyy", description, re.IGNORECASE))
    ):
        return (today + _dt.timedelta(days=rng.randint(1, 30))).isoformat()
    if "year" in words:
        return str(today.year)
    if words and words[-1] in _ID_WORDS and len(words) > 1:
        return str(rng.randint(10000, 99999))  # customer_id, orderNumber: an identifier, not a person
    bank_kind = _kind_of(words, description)
    if bank_kind:
        bank = _BANK[bank_kind]
        return rng.choice(bank.get(language) or bank["en"])
    if words and words[-1] in _ID_WORDS:
        return str(rng.randint(10000, 99999))
    return None


_RANGE_ENDS = (("start", "end"), ("from", "to"), ("begin", "end"), ("since", "until"), ("checkin", "checkout"))
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def ordered_ranges(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` (parameter name -> planned value) with each date range in order: where a start-like and an
    end-like parameter of the same stem (``start_date`` / ``end_date``, ``dateFrom`` / ``dateTo``,
    ``checkin`` / ``checkout``) both hold ISO dates and the end comes first, the two are swapped
    (docs/generation.md §4.4: the dates are drawn one by one, so "from the 30th to the 20th" happened).

    Returns:
        A new dict; other values unchanged.
    """
    out = dict(plan)
    words = {name: name_words(name) for name in out}
    for first, last in _RANGE_ENDS:
        for a, a_words in words.items():
            if first not in a_words:
                continue
            stem = [w for w in a_words if w != first]
            for b, b_words in words.items():
                if b == a or last not in b_words or [w for w in b_words if w != last] != stem:
                    continue
                x, y = out.get(a), out.get(b)
                if isinstance(x, str) and isinstance(y, str) and _ISO_DATE.match(x) and _ISO_DATE.match(y) and y < x:
                    out[a], out[b] = y, x
    return out


def known_values(texts_values: Iterable[Any], *, today: _dt.date | None = None) -> list[Any]:
    """The distinct scalar values found in ``texts_values`` (any JSON values: the user's details, call
    arguments, tool results), in first-seen order, with the environment's date as ``YYYY-MM-DD``
    (docs/generation.md §2): what the planner's grammar lets a call use. Empty strings, ``None``,
    booleans and strings over 80 characters are left out.

    Returns:
        A list of strings and numbers.
    """
    out: dict[Any, Any] = {}
    if today is not None:
        out[("s", today.isoformat())] = today.isoformat()
    for value in texts_values:
        for _, leaf in leaves(value):
            if isinstance(leaf, bool) or leaf is None:
                continue
            if isinstance(leaf, str):
                text = leaf.strip()
                if text and len(text) <= 80:
                    out.setdefault(("s", text), text)
            elif isinstance(leaf, (int, float)):
                out.setdefault(("n", float(leaf)), leaf)
    return list(out.values())


def given_by_name(given: Iterable[Any]) -> dict[str, list[Any]]:
    """The values the user gave, by parameter name (docs/generation.md §4.4).

    Args:
        given: the user's details objects in session order (``{"city": "Paris"}``; a multi-tool
            request's ``{"request_1": {...}, "request_2": {...}}`` is read through).

    Returns:
        ``{parameter: [values in order, distinct]}``; empty strings, ``None`` and objects left out.
    """
    out: dict[str, list[Any]] = {}

    def add(details: Any) -> None:
        if not isinstance(details, Mapping):
            return
        for key, value in details.items():
            if isinstance(key, str) and key.startswith("request_") and isinstance(value, Mapping):
                add(value)
            elif value not in (None, "") and not isinstance(value, Mapping):
                bucket = out.setdefault(str(key), [])
                if value not in bucket:
                    bucket.append(value)

    for details in given:
        add(details)
    return out


_FALLBACK: dict[str, dict[str, tuple[str, ...]]] = {
    "word": {
        "en": ("serendipity", "harbor", "gentle", "resilient", "lantern", "meadow", "curious", "brisk"),
        "zh": ("坚持", "温柔", "希望", "自由", "勇敢", "安静", "灿烂", "谦虚"),
    },
    "topic": {
        "en": ("electric cars", "marathon training", "Italian recipes", "solar energy", "remote work", "jazz history"),
        "zh": ("新能源汽车", "马拉松训练", "家常菜", "太阳能", "远程办公", "爵士乐历史"),
    },
    "text": {
        "en": ("I will be there at six.", "The meeting moved to Friday.", "Happy birthday, see you soon!"),
        "zh": ("我六点到。", "会议改到周五了。", "生日快乐，回头见！"),
    },
    "secret": {"en": ("Blue-Lantern-42", "Maple!Road7"), "zh": ("Blue-Lantern-42", "Maple!Road7")},
}
_TEXT_WORDS = frozenset({"text", "content", "message", "body", "sentence", "comment", "note", "description", "review"})


def fallback_value(name: str, schema: Any, *, rng: random.Random, language: str = "en") -> Any:
    """A stand-in value for a parameter no rule of :func:`planned_value` covers, used when the model's own
    choice for it is rejected (docs/generation.md §4.4): a word for ``word``, a sentence for a text or
    message, a password-like string for a secret, else a topic; ``True`` for a boolean, ``3`` for a
    number; ``None`` for an object (the model's choice stands)."""
    schema = schema if isinstance(schema, Mapping) else {}
    kind = _schema_type(schema)
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 3
    if kind == "object":
        return None
    if kind == "array":
        item = fallback_value(name, schema.get("items"), rng=rng, language=language)
        return None if item is None else [item]
    words = set(name_words(name))
    if "word" in words or "words" in words or "term" in words:
        bank = _FALLBACK["word"]
    elif words & _TEXT_WORDS:
        bank = _FALLBACK["text"]
    elif words & {"password", "secret", "token", "key", "apikey"}:
        bank = _FALLBACK["secret"]
    else:
        bank = _FALLBACK["topic"]
    return rng.choice(bank.get(language) or bank["en"])


_PHRASE_PREFIX_EN = re.compile(
    r"^(this|the)\s+(tool|api|function|interface|endpoint|service|method)\s+"
    r"(is used to|is used for|can be used to|allows (you|users) to|helps (you )?(to )?|lets you|can|will|is for)\s*",
    re.IGNORECASE,
)
_PHRASE_PREFIX_ZH = re.compile(r"^(该|此|这个)?(工具|接口|函数|API|服务)?(用于|可以|能够|用来|帮助用户)\s*")


def request_phrase(description: str, language: str = "en") -> str:
    """What a tool does, as the object of a request (docs/generation.md §4.3): the first sentence of its
    ``description`` without a "This tool is used to" opening and the final period, lower-cased at the
    start unless it is an acronym (``"Get the weather of a city."`` gives ``"get the weather of a city"``).
    """
    text = " ".join(str(description or "").split())
    if language == "zh":
        first = re.split(r"[。！？!?\n]", text, maxsplit=1)[0]
        return _PHRASE_PREFIX_ZH.sub("", first).strip("，,。 ") or text[:60]
    first = re.split(r"(?<=[a-z0-9)])\.\s|\.$|\n", text, maxsplit=1)[0]
    first = _PHRASE_PREFIX_EN.sub("", first).strip().rstrip(".")
    if len(first) > 1 and first[0].isupper() and not first[1].isupper():
        first = first[0].lower() + first[1:]
    return first
