"""Escaping for the report's exports: text from runs and datasets never becomes markup or a formula
(docs/cli.md §4).

Session ids, tool names, error reasons, model names and folder names come from untrusted files. In
``report.md`` they are written so that a CommonMark renderer shows them as text: ``<``, ``>`` and
``&`` become character references (no raw HTML, no entity of the input's choosing), and the
characters that open links, images or code spans are backslash-escaped. In the CSV files a
text cell, and each line inside a cell, that a spreadsheet would evaluate as a formula gets a leading
apostrophe (the usual rule), and every line break inside a cell is LF, so the cell is quoted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

_MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}

FORMULA_STARTS = (
    "=", "+", "-", "@", "\t", "\r", "\n",
    "\uff1d", "\uff0b", "\uff0d", "\uff20",  # full-width = + - @
    "\ufe66", "\ufe62", "\ufe63", "\ufe6b",  # small = + - @
    "\u2212",  # minus sign
)  # fmt: skip
"""First characters that make a spreadsheet read a cell as a formula (ASCII, full-width and small forms)."""

_LINE_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
"""Every line boundary of ``str.splitlines`` (CR, LF, CRLF, VT, FF, FS, GS, RS, NEL, LS, PS)."""

_BLANK = " \t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\u200b\u200c\u200d\u2060\ufeff"
"""Spaces (and zero-width characters) a reader may skip before a formula's first character."""


def _opens_formula(line: str) -> bool:
    """Whether a line of a cell would be read as a formula: it starts with a control character (tab,
    escape ...) or, after any spaces, with one of :data:`FORMULA_STARTS`."""
    if not line:
        return False
    if unicodedata.category(line[0]) == "Cc":
        return True
    return line.lstrip(_BLANK).startswith(FORMULA_STARTS)


def markdown_text(value: Any) -> str:
    """``value`` as Markdown inline text that renders as exactly that text (docs/cli.md §4).

    ``&``, ``<``, ``>`` become ``&amp;``, ``&lt;``, ``&gt;`` (so no HTML tag or entity survives);
    backslash, backtick, ``[`` and ``]`` are backslash-escaped (no link, image or code span can start);
    line breaks become spaces (a line break would end a table row or heading). Emphasis characters are
    left alone: they change the look of a run's text, never what runs.
    """
    text = " ".join(str(value).splitlines()) if value is not None else ""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return "".join(_HTML.get(char, char) for char in text)


def markdown_cell(value: Any) -> str:
    """:func:`markdown_text` for a table cell: ``|`` is escaped too (it would end the cell)."""
    return markdown_text(value).replace("|", "\\|")


def markdown_code(value: Any) -> str:
    """``value`` as a Markdown code span: a backtick fence longer than any backtick run inside it, so the
    span cannot be closed early (code spans show ``<`` and ``&`` literally; docs/cli.md §4). Line breaks
    become spaces."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def csv_cell(value: Any) -> Any:
    """A CSV cell every reader shows as text, quote-aware or not (docs/cli.md §4).

    Every line break of the text (CR, CRLF and the other ``str.splitlines`` boundaries) becomes LF, so
    the CSV writer quotes the cell and no reader sees a line end there that the writer did not mark;
    then the cell, and each line after a line break inside it, that starts with a control character
    or, after any spaces, with one of :data:`FORMULA_STARTS` gets a leading ``'``. A reader that splits
    the file at every CR and LF therefore never sees a line starting a formula, and a CSV reader never
    a cell. Numbers and other values are returned unchanged; a string that needs none of this is
    returned as it is."""
    if not isinstance(value, str):
        return value
    text = _LINE_BREAKS.sub("\n", value)
    if text.startswith("\n"):
        text = "'" + text
    if "\n" not in text:
        return "'" + text if _opens_formula(text) else text
    return "\n".join("'" + line if _opens_formula(line) else line for line in text.split("\n"))


def csv_row(values: Iterable[Any]) -> list[Any]:
    """:func:`csv_cell` of every value of a row."""
    return [csv_cell(value) for value in values]
