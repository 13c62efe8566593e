"""Escaping for the report's exports: text from runs and datasets never becomes markup or a formula
(docs/cli.md §4).

Session ids, tool names, error reasons, model names and folder names come from untrusted files. In
``report.md`` they are written so that a CommonMark renderer shows them as text: ``<``, ``>`` and
``&`` become character references (no raw HTML, no entity of the input's choosing), and the
characters that open links, images or code spans are backslash-escaped. In the CSV files a
text cell that a spreadsheet would evaluate as a formula gets a leading apostrophe (the usual rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""First characters that make a spreadsheet read a cell as a formula (ASCII and full-width forms)."""


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
    """A CSV cell a spreadsheet shows as text: a string starting with one of :data:`FORMULA_STARTS`
    gets a leading ``'`` (docs/cli.md §4). Numbers and other strings are returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_row(values: Iterable[Any]) -> list[Any]:
    """:func:`csv_cell` of every value of a row."""
    return [csv_cell(value) for value in values]
