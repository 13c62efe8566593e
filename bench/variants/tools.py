"""The tool-list factors (docs/variants.md §3.3, §3.4): ``names`` (neutral tool names) and
``distractors`` (tools of other sessions added). Pure functions on session dicts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.terms import ASK_USER, PSEUDO_TOOLS
from wildtoolbench.bench.variants.common import (
    SKIP_RULES,
    Outcome,
    clone,
    gold_correct,
    make_variant,
    seeded,
    sides,
    tasks_in,
)

NEUTRAL_NAME = "tool_{:0{width}d}"
"""The neutral identifiers of ``names`` (``tool_01`` ...; three digits from the 100th tool on)."""
_WORD = re.compile(r"[a-z]+|[0-9]+|[^\x00-\x7f]")


def tool_name(tool: Any) -> str | None:
    """The ``function.name`` of a tool entry, else ``None``."""
    function = tool.get("function") if isinstance(tool, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else None


def name_map(session: Mapping[str, Any]) -> dict[str, str]:
    """The renaming of ``names`` (docs/variants.md §3.3): each distinct tool name of the session's tool
    lists (English side first, then names only the Chinese side has), in list order, to ``tool_01``,
    ``tool_02`` ...; pseudo-tools keep their names and are not in the map."""
    names: list[str] = []
    for side in sides():
        for tool in session[side.tools]:
            name = tool_name(tool)
            if name and name not in PSEUDO_TOOLS and name not in names:
                names.append(name)
    width = max(2, len(str(len(names))))
    return {name: NEUTRAL_NAME.format(index, width=width) for index, name in enumerate(names, start=1)}


def rename_session(session: Mapping[str, Any], mapping: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``session`` with every tool name renamed by ``mapping`` on both sides: the tool
    lists, every gold node's ``action.name`` and the ``tool_name`` an ask node names. Descriptions,
    parameters, observations and texts are unchanged (docs/variants.md §3.3)."""
    renamed = clone(session)
    for side in sides():
        for tool in renamed[side.tools]:
            name = tool_name(tool)
            if name in mapping:
                tool["function"]["name"] = mapping[name]
        for answer_list in renamed[side.answer_list]:
            for node in answer_list:
                action = node["action"]
                action["name"] = mapping.get(action["name"], action["name"])
                if action["name"] == ASK_USER and isinstance(action.get("arguments"), dict):
                    asked = action["arguments"].get("tool_name")
                    if isinstance(asked, str) and asked in mapping:
                        action["arguments"]["tool_name"] = mapping[asked]
    return renamed


def _eligible_tasks(session: Mapping[str, Any], language: str, level: str, out: Outcome) -> list[int]:
    correct = gold_correct(session, language)
    for task, ok in enumerate(correct):
        if not ok:
            out.skipped.append((task, level, "origin_gold_wrong", SKIP_RULES["origin_gold_wrong"]))
    return [task for task, ok in enumerate(correct) if ok]


def names_variants(session: Mapping[str, Any], *, language: str = "en") -> Outcome:
    """``names`` (docs/variants.md §3.3): one variant per task whose origin gold scores correct, each
    the whole session renamed by :func:`name_map`, with that task as its target. The map is in
    ``Outcome.extra["map"]``. Not applied when a neutral name is already a tool name of the session."""
    out = Outcome()
    mapping = name_map(session)
    taken = {tool_name(t) for side in sides() for t in session[side.tools]}
    if not mapping or taken & set(mapping.values()):
        rule = "no_tool" if not mapping else "name_taken"
        out.skipped.append((None, "", rule, SKIP_RULES[rule]))
        return out
    out.extra["map"] = mapping
    renamed = rename_session(session, mapping)
    for task in _eligible_tasks(session, language, "", out):
        out.variants.append(make_variant(session, clone(renamed), "names", "", task, task))
    return out


def _words(tools: Sequence[Any]) -> set[str]:
    text = " ".join(f"{tool_name(t) or ''} {(t.get('function') or {}).get('description') or ''}" for t in tools)
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()
    return {word for word in _WORD.findall(spaced) if len(word) > 2 or not word.isascii()}


def distractor_pool(
    session: Mapping[str, Any],
    others: Sequence[Mapping[str, Any]],
    seed: int,
    words_of: dict[str, set[str]] | None = None,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Candidate distractors for ``session`` (docs/variants.md §3.4): ``(English tool, Chinese tool)`` of
    every other session's tool list, sessions of the closest domain first (the most words shared by
    the tool names and descriptions, Jaccard; ties in a seeded random order), never a name the
    session has, a pseudo-tool, or a name twice. The Chinese entry is the other session's Chinese
    tool of the same name, else the English one. ``words_of``: a cache of each session's words by id
    (filled as needed)."""
    words_of = {} if words_of is None else words_of
    own = {tool_name(t) for side in sides() for t in session[side.tools]}
    words = words_of.setdefault(session["id"], _words(session["english_tools"]))
    rng = seeded(seed, "distractors", session["id"])
    ranked = []
    for other in others:
        if other["id"] == session["id"]:
            continue
        theirs = words_of.get(other["id"]) or words_of.setdefault(other["id"], _words(other["english_tools"]))
        overlap = len(words & theirs) / max(1, len(words | theirs))
        ranked.append((-overlap, rng.random(), other))
    ranked.sort(key=lambda item: item[:2])
    pool: list[tuple[dict[str, Any], dict[str, Any]]] = []
    seen: set[str] = set()
    for _, _, other in ranked:
        chinese = {tool_name(t): t for t in other["tools"]}
        for tool in other["english_tools"]:
            name = tool_name(tool)
            if not name or name in own or name in seen or name in PSEUDO_TOOLS:
                continue
            seen.add(name)
            pool.append((tool, chinese.get(name, tool)))
    return pool


def add_distractors(
    session: Mapping[str, Any], chosen: Sequence[tuple[dict[str, Any], dict[str, Any]]], seed: int, level: str
) -> dict[str, Any]:
    """A copy of ``session`` with the ``chosen`` tools inserted into both tool lists at seeded random
    positions (the same positions on both sides); the gold is unchanged (docs/variants.md §3.4)."""
    edited = clone(session)
    rng = seeded(seed, "distractor-positions", session["id"], level)
    for english, chinese in chosen:
        position = rng.randint(0, len(edited["english_tools"]))
        edited["english_tools"].insert(position, clone(english))
        edited["tools"].insert(min(position, len(edited["tools"])), clone(chinese))
    return edited


def distractor_variants(
    session: Mapping[str, Any],
    others: Sequence[Mapping[str, Any]],
    levels: Sequence[str],
    *,
    language: str = "en",
    seed: int = 0,
    words_of: dict[str, set[str]] | None = None,
) -> Outcome:
    """``distractors`` (docs/variants.md §3.4): for each level N, N tools of :func:`distractor_pool` added
    to the session's tool list (which every task uses), one variant per task whose origin gold scores
    correct. Not applied when the other sessions offer fewer than N tools."""
    out = Outcome()
    pool = distractor_pool(session, others, seed, words_of)
    eligible = [task for task, ok in enumerate(gold_correct(session, language)) if ok]
    for level in levels:
        for task in sorted(set(range(tasks_in(session))) - set(eligible)):
            out.skipped.append((task, level, "origin_gold_wrong", SKIP_RULES["origin_gold_wrong"]))
        count = int(level)
        if len(pool) < count:
            out.skipped.append(
                (
                    None,
                    level,
                    "too_few_distractors",
                    f"the other sessions offer {len(pool)} tool(s), fewer than {count}",
                )
            )
            continue
        edited = add_distractors(session, pool[:count], seed, level)
        for task in eligible:
            out.variants.append(make_variant(session, clone(edited), "distractors", level, task, task))
    return out


def is_bijective_renaming(origin: Mapping[str, Any], variant: Mapping[str, Any]) -> bool:
    """True when ``variant``'s tool lists are ``origin``'s with the names mapped one to one (docs/variants.md §3.3)."""
    pairs = {
        (tool_name(a), tool_name(b))
        for side in sides()
        for a, b in zip(origin[side.tools], variant[side.tools], strict=True)
    }
    forward = {a for a, _ in pairs}
    backward = {b for _, b in pairs}
    return len(pairs) == len(forward) == len(backward) and tasks_in(origin) == tasks_in(variant)
