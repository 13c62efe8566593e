"""Assemble the self-contained report page: one HTML file with its CSS, script and data inline.

The summary data (tables, plots, one compact row per task) sits in one
``<script type="application/json" id="wtb-data">`` block that the page parses
at load. Each session's gold data and trajectories sit in their own
``<script type="application/gzip+base64" id="s-<n>">`` block: the JSON,
gzip-compressed and base64-encoded (a report of 1,024 sessions and two runs
shrinks from about 29 MB to a few MB). The browser keeps those blocks as inert
text; the page decompresses (``DecompressionStream``) and parses a session
only when it is opened, so a large report opens about as fast as a small one. The flipped tasks of
the run-against-run diffs sit the same way in one block (``id="diffs"``), read when the Diff view opens.
A Content Security Policy forbids any network access.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterable, Iterator
from importlib.resources import files
from typing import Any

_ASSETS = files("wildtoolbench.reports").joinpath("assets")


def json_for_script(value: Any) -> str:
    """``value`` as compact JSON that is safe inside a ``<script>`` element (every ``<`` written as ``\\u003c``)."""
    return script_safe(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def script_safe(json_text: str) -> str:
    """Make JSON text safe inside ``<script>``: ``<`` only occurs inside JSON strings, where ``\\u003c`` means the same."""
    return json_text.replace("<", "\\u003c")


def pack_session(json_text: str) -> str:
    """A session block's content: the JSON text gzip-compressed (fixed mtime, so the output is reproducible) and base64-encoded."""
    return base64.b64encode(gzip.compress(json_text.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def unpack_session(block: str) -> Any:
    """The parsed JSON of a session block (the inverse of :func:`pack_session`)."""
    return json.loads(gzip.decompress(base64.b64decode(block)).decode("utf-8"))


def diffs_block(html: str) -> Any:
    """The parsed flipped-task lists of a report page's ``diffs`` block, ``None`` when it has none."""
    found = re.findall(r'<script type="application/gzip\+base64" id="diffs">([^<]*)</script>', html)
    return unpack_session(found[0]) if found else None


def session_blocks(html: str) -> dict[int, Any]:
    """Every session block of a report page, parsed: ``{n: {"s": session, "r": {run key: trajectory}}}``."""
    found = re.findall(r'<script type="application/gzip\+base64" id="s-(\d+)">([^<]*)</script>', html)
    return {int(number): unpack_session(block) for number, block in found}


def _asset(name: str) -> str:
    return _ASSETS.joinpath(name).read_text(encoding="utf-8")


INCLUDE = "  // @include ablation.js"
"""The line of ``report.js`` that ``ablation.js`` replaces: one closure, two files."""


def page_script() -> str:
    """The page's script: ``report.js`` with ``ablation.js`` (the Ablation view) inlined at :data:`INCLUDE`."""
    script = _asset("report.js")
    at = script.index(INCLUDE)
    return script[:at] + _asset("ablation.js") + script[script.index("\n", at) + 1 :]


def page_chunks(
    title: str, data: Any, session_blocks: Iterable[tuple[int, str]], diffs: Any = None, *, ablation: bool = False
) -> Iterator[str]:
    """The page as a sequence of text chunks (write them in order).

    Args:
        title: the page title (plain text; escaped here).
        data: the summary data object the script reads (see ``wildtoolbench/reports/assets/report.js``).
        session_blocks: ``(n, json_text)`` per session: the JSON of ``{"s": session, "r": {run key: trajectory}}``
            (packed here with :func:`pack_session`).
        diffs: the flipped tasks of the Diff view, one list per pair of ``data["diffs"]`` (docs/diff.md §4),
            packed as a session is into the block ``id="diffs"``; ``None``: no block.
        ablation: add the Ablation view to the navigation (the report holds an ablation, docs/variants.md §6.7).
    """
    from html import escape

    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data:\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{escape(title)}</title>\n<style>\n{_asset('report.css')}</style></head>\n<body>\n"
        "<header><h1>WildToolBench report</h1><nav>"
        '<a href="#overview" data-view="overview">Overview</a>'
        '<a href="#leaderboard" data-view="leaderboard">Leaderboard</a>'
        '<a href="#orchestration" data-view="orchestration">Orchestration</a>'
        '<a href="#errors" data-view="errors">Errors</a>'
        '<a href="#plots" data-view="plots">Plots</a>'
        '<a href="#dataset" data-view="dataset">Dataset</a>'
        '<a href="#audit" data-view="audit">Audit</a>'
        '<a href="#tasks" data-view="tasks">Tasks</a>'
        '<a href="#diff" data-view="diff">Diff</a>'
        + ('<a href="#ablation" data-view="ablation">Ablation</a>' if ablation else "")
        + '</nav></header>\n<main id="view"><noscript>This report needs JavaScript; report.md and the CSV files hold the same tables.</noscript></main>\n'
        '<script type="application/json" id="wtb-data">'
    )
    yield json_for_script(data)
    yield "</script>\n"
    for number, text in session_blocks:
        yield f'<script type="application/gzip+base64" id="s-{number}">{pack_session(text)}</script>\n'
    if diffs is not None:
        text = json.dumps(diffs, ensure_ascii=False, separators=(",", ":"))
        yield f'<script type="application/gzip+base64" id="diffs">{pack_session(text)}</script>\n'
    yield f"<script>\n{page_script()}</script>\n</body></html>\n"
