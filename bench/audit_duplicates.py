"""Exact and near-duplicate sessions: the ``duplicate_session`` check (docs/audit.md §4).

Each session is reduced once to a cheap signature: its exact key (the normalised user messages in
order and the sorted tool names) and a set of shingles (token 3-grams of each user message, plus one
token per tool name). Exact duplicates share a key (a dict look-up); near duplicates are pairs whose
shingle sets have a Jaccard similarity of at least the threshold, found by prefix filtering: every
set is sorted by how rare its shingles are, only a prefix of each set is indexed, and only pairs
sharing a prefix shingle are compared, which finds every pair above the threshold without comparing
all pairs (Chaudhuri et al., "A primitive operator for similarity joins", 2006).

Pure module: no I/O.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.audit_context import normalise, tokens

NEAR_DUPLICATE_THRESHOLD = 0.7
"""Jaccard similarity of two sessions' shingle sets from which they are near duplicates (docs/audit.md §4)."""
SHINGLE = 3


def _messages(session: Mapping[str, Any], tasks_field: str) -> list[str]:
    messages = session.get(tasks_field)
    return [m for m in messages if isinstance(m, str)] if isinstance(messages, list) else []


def tool_names(tools: Any) -> list[str]:
    """The function names of a tool list, in order; malformed entries are skipped."""
    names = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def exact_key(session: Mapping[str, Any], tasks_field: str, tools_field: str) -> tuple:
    """Two sessions are exact duplicates when these keys are equal: the normalised user messages in
    order and the sorted set of tool names (docs/audit.md §4)."""
    return (
        tuple(normalise(m) for m in _messages(session, tasks_field)),
        tuple(sorted(set(tool_names(session.get(tools_field))))),
    )


def shingles(session: Mapping[str, Any], tasks_field: str, tools_field: str) -> frozenset[str]:
    """The shingle set of a session (docs/audit.md §4): the token 3-grams of each normalised user
    message (a message of fewer tokens gives itself as one shingle) and ``tool:<name>`` for each tool."""
    out: set[str] = set()
    for message in _messages(session, tasks_field):
        words = tokens(normalise(message))
        if len(words) < SHINGLE:
            out.add(" ".join(words))
        else:
            out.update(" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
    out.update(f"\0tool:{name}" for name in tool_names(session.get(tools_field)))
    return frozenset(out)


def jaccard(a: frozenset, b: frozenset) -> float:
    """``|a ∩ b| / |a ∪ b|``; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def duplicate_pairs(
    sessions: Sequence[Mapping[str, Any]],
    *,
    tasks_field: str = "english_tasks",
    tools_field: str = "english_tools",
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> list[tuple[int, int, float, bool]]:
    """Every pair of duplicate sessions (docs/audit.md §4).

    Args:
        sessions: session dicts (malformed fields count as empty).
        tasks_field, tools_field: the side's user messages and tools (docs/dataset.md §2.2).
        threshold: the near-duplicate Jaccard threshold (0 < threshold <= 1).

    Returns:
        ``(i, j, similarity, exact)`` with ``i < j`` indices into ``sessions``, sorted; ``exact`` when
        the exact keys are equal (then ``similarity`` is that of the shingle sets, usually 1.0).
    """
    keys = [exact_key(s, tasks_field, tools_field) for s in sessions]
    sets = [shingles(s, tasks_field, tools_field) for s in sessions]
    pairs: dict[tuple[int, int], tuple[float, bool]] = {}
    first_of: dict[tuple, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        for other in first_of[key]:
            pairs[(other, index)] = (jaccard(sets[other], sets[index]), True)
        first_of[key].append(index)

    frequency = Counter(shingle for s in sets for shingle in s)
    index_of: dict[str, list[int]] = defaultdict(list)
    for j, shingle_set in enumerate(sets):
        ordered = sorted(shingle_set, key=lambda x: (frequency[x], x))
        prefix = len(ordered) - math.ceil(threshold * len(ordered)) + 1
        candidates: set[int] = set()
        for shingle in ordered[:prefix]:
            candidates.update(index_of[shingle])
            index_of[shingle].append(j)
        for i in candidates:
            if (i, j) in pairs:
                continue
            a, b = sets[i], sets[j]
            if min(len(a), len(b)) < threshold * max(len(a), len(b)):
                continue  # the size bound: Jaccard <= |small| / |large|
            similarity = jaccard(a, b)
            if similarity >= threshold:
                pairs[(i, j)] = (similarity, False)
    return sorted((i, j, sim, exact) for (i, j), (sim, exact) in pairs.items())
