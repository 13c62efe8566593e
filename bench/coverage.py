"""Coverage and diversity of a dataset (docs/coverage.md): what its sessions cover and how varied they are.

:func:`coverage_statistics` reduces a dataset's sessions to figures: task types, turn subtypes, the
topology of the gold DAGs (parallel, sequential, mixed; widths and depths), tools and tool categories
offered and called, parameter kinds, instruction transitions and user turns per session, distinct-n
and self-similarity of the user messages, the diversity of the gold argument values.
:func:`comparison_rows` puts two sets' figures side by side (a generated set against the official
one, computed or as published: :func:`published_figures`); :func:`contamination` finds the sessions
of a fresh set that repeat a session of a reference set.

Pure module: no I/O besides reading the bundled published figures (``bench/data/official_figures.json``).
The sessions are read defensively: a malformed field counts as empty.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from wildtoolbench.bench.audit_context import leaves, normalise, tokens
from wildtoolbench.bench.audit_duplicates import NEAR_DUPLICATE_THRESHOLD, duplicate_pairs
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.terms import ASK_USER, PSEUDO_TOOLS, TASK_TYPES, TURN_SUBTYPES

SHAPES: tuple[str, ...] = ("none", "single", "parallel", "sequential", "mixed")
"""Topology of a task's gold DAG, from its real tool calls (docs/coverage.md §3)."""

PARAMETER_KINDS: tuple[str, ...] = (
    "string",
    "string enum",
    "integer",
    "integer enum",
    "float",
    "boolean",
    "array",
    "object",
    "nested object",
    "other",
)
"""Kinds of a tool's top-level parameter (docs/coverage.md §5)."""

TOOL_CATEGORIES: tuple[str, ...] = (
    "Location",
    "Development",
    "Entertainment",
    "Information",
    "Lifestyle",
    "Business",
    "Public",
    "Utilities",
)
"""The tool categories of the project page's figure (docs/coverage.md §4); a tool no keyword places is ``other``."""

CATEGORY_KEYWORDS: dict[str, frozenset[str]] = {
    "Location": frozenset(
        "weather forecast temperature climate city map maps geo geocode location address route navigation "
        "distance country countries timezone place places nearby coordinate coordinates latitude longitude travel "
        "flight flights hotel hotels airport train trains metro bus traffic tourist attraction attractions region station stations trip trips poi venue venues street streets district vehicle timetable transit".split()
    ),
    "Development": frozenset(
        "code coding github repository repo developer database sql dataset security password encrypt encryption "
        "hash ip domain dns server programming compile json regex api apis vulnerability ssl whois website url "
        "html git malware link links urls svg sensor metadata login biometric users".split()
    ),
    "Entertainment": frozenset(
        "game games movie movies film films music song songs video videos anime tv show shows joke jokes meme "
        "comic comics media image images photo photos art celebrity lottery horoscope podcast radio album artist "
        "lyrics novel novels mod mods player players creatures minions villager quote quotes poem poems chapter audio stream".split()
    ),
    "Information": frozenset(
        "news social twitter tweet reddit post posts blog article articles wikipedia trend trending comment "
        "comments forum headline headlines hot topic topics weibo word words definition synonyms antonyms content chat message messages sentiment text summarize".split()
    ),
    "Lifestyle": frozenset(
        "health fitness recipe recipes food foods restaurant restaurants diet calorie calories sport sports "
        "football soccer basketball nba match matches calendar holiday holidays medical medicine drug hospital "
        "exercise sleep cooking dish taco tacos beer activities activity advice liturgical greeting mlb fish influenza clinical".split()
    ),
    "Business": frozenset(
        "business company companies stock stocks finance financial market markets price prices invoice payment "
        "bank crypto cryptocurrency currency exchange tax product products ecommerce order orders shop shopping "
        "fund funds loan insurance budget budgets trade transaction transactions tender tenders job jobs store branding provider blockchain".split()
    ),
    "Public": frozenset(
        "government law laws legal education science scientific research public census school university "
        "patent space nasa environment policy election population electoral votes schools toxic".split()
    ),
    "Utilities": frozenset(
        "email mail sms translate translation qr unit units calculator calculate random uuid file files pdf "
        "reminder todo note notes alarm timer system password generator convert conversion echo number signing workflow".split()
    ),
}
"""Keywords placing a tool in a category (docs/coverage.md §4): a word of the tool's name counts twice, a
word of its description once; the category with most counts wins, the first of :data:`TOOL_CATEGORIES` on a tie."""

SELF_SIMILARITY_SAMPLE = 1000
"""At most this many user messages are compared pairwise for the self-similarity (a seeded sample above it,
docs/coverage.md §6)."""

DISTINCT_N: tuple[int, ...] = (1, 2, 3)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-\s./]+")


# --------------------------------------------------------------------------- reading a session


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _actions(answer_list: Any) -> list[tuple[str | None, Any, Any]]:
    """``(name, arguments, dependency_list)`` of each node that is a mapping."""
    out = []
    for node in _list(answer_list):
        if not isinstance(node, Mapping):
            continue
        action = node.get("action") if isinstance(node.get("action"), Mapping) else {}
        name = action.get("name") if isinstance(action.get("name"), str) else None
        out.append((name, action.get("arguments"), node.get("dependency_list")))
    return out


def _depths(answer_list: Any) -> list[int]:
    """Depth of each node (0 without dependencies, else 1 + the deepest dependency); bad or cyclic
    dependencies are ignored."""
    nodes = _list(answer_list)
    depths: dict[int, int] = {}

    def depth(index: int, trail: frozenset[int]) -> int:
        if index in depths:
            return depths[index]
        node = nodes[index] if isinstance(nodes[index], Mapping) else {}
        deps = [
            d
            for d in _list(node.get("dependency_list"))
            if isinstance(d, int) and not isinstance(d, bool) and 0 <= d < len(nodes) and d not in trail and d != index
        ]
        value = 1 + max(depth(d, trail | {index}) for d in deps) if deps else 0
        depths[index] = value
        return value

    return [depth(i, frozenset()) for i in range(len(nodes))]


def task_topology(answer_list: Any) -> dict[str, Any]:
    """The topology of one task's gold DAG (docs/coverage.md §3).

    Args:
        answer_list: the task's gold nodes (docs/dataset.md).

    Returns:
        ``{"calls", "depth", "width", "widths", "shape"}``: the real tool calls (pseudo-tools left out),
        ``widths`` the calls per DAG layer (nodes of equal depth; layers without a call left out),
        ``depth`` the number of such layers, ``width`` the widest, ``shape`` one of :data:`SHAPES`:
        ``none`` (no call), ``single`` (one), ``parallel`` (several in one layer), ``sequential`` (one per
        layer, several layers), ``mixed`` (several layers, one of them with several calls).
    """
    actions = _actions(answer_list)
    depths = _depths(answer_list)
    per_layer: Counter[int] = Counter()
    for (name, _, _), depth in zip(actions, depths):
        if name is not None and name not in PSEUDO_TOOLS:
            per_layer[depth] += 1
    widths = [per_layer[d] for d in sorted(per_layer)]
    calls = sum(widths)
    if calls == 0:
        shape = "none"
    elif calls == 1:
        shape = "single"
    elif len(widths) == 1:
        shape = "parallel"
    elif max(widths) == 1:
        shape = "sequential"
    else:
        shape = "mixed"
    return {"calls": calls, "depth": len(widths), "width": max(widths, default=0), "widths": widths, "shape": shape}


def instruction_transitions(task_types: Sequence[Any]) -> int:
    """Instruction transitions of a session (docs/coverage.md §2): neighbouring tasks of different kinds,
    the kinds being a tool task (the four tool types), a clarification (``Clarify``) and chat (``Chat``)."""
    kinds = [t if t in ("Clarify", "Chat") else "tool" for t in task_types]
    return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)


def user_turns(session: Mapping[str, Any], language: str = "en") -> int:
    """User turns of a session (docs/coverage.md §2): its user messages plus the user's replies to the gold
    questions (``ask_user_for_required_parameters`` nodes with a ``user_input``)."""
    side = fields_for(language)
    replies = sum(
        1
        for answer_list in _list(session.get(side.answer_list))
        for node in _list(answer_list)
        if isinstance(node, Mapping)
        and isinstance(node.get("action"), Mapping)
        and node["action"].get("name") == ASK_USER
        and isinstance(node.get("user_input"), str)
    )
    return len(_list(session.get(side.tasks))) + replies


def parameter_kind(schema: Any) -> str:
    """The kind of one parameter schema (docs/coverage.md §5): ``string``, ``string enum``, ``integer``,
    ``integer enum``, ``float`` (``number`` or ``float``), ``boolean``, ``array``, ``object`` (an object
    none of whose properties is an object or an array of objects), ``nested object``, else ``other``."""
    if not isinstance(schema, Mapping):
        return "other"
    kind = schema.get("type")
    enum = isinstance(schema.get("enum"), list)
    if kind == "string":
        return "string enum" if enum else "string"
    if kind == "integer":
        return "integer enum" if enum else "integer"
    if kind in ("number", "float"):
        return "float"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        return "array"
    if kind == "object":
        properties = schema.get("properties")
        for inner in properties.values() if isinstance(properties, Mapping) else ():
            if isinstance(inner, Mapping) and (
                inner.get("type") == "object"
                or (
                    inner.get("type") == "array"
                    and isinstance(inner.get("items"), Mapping)
                    and inner["items"].get("type") == "object"
                )
            ):
                return "nested object"
        return "object"
    return "other"


def _words(text: str) -> list[str]:
    return [w for w in (part.casefold() for part in _CAMEL.split(text)) if w]


def tool_category(function: Mapping[str, Any]) -> str:
    """The category of a tool (docs/coverage.md §4) from :data:`CATEGORY_KEYWORDS`: each word of its name
    (camelCase and snake_case split) counts 2, each word of its description 1; the category with most
    counts, ``other`` when none. An approximation: the official data carries no category per tool."""
    name = function.get("name") if isinstance(function.get("name"), str) else ""
    description = function.get("description") if isinstance(function.get("description"), str) else ""
    counts: Counter[str] = Counter()
    for weight, words in ((2, _words(name)), (1, re.findall(r"[a-z]+", description.casefold()))):
        for word in words:
            for category in TOOL_CATEGORIES:
                if word in CATEGORY_KEYWORDS[category]:
                    counts[category] += weight
    if not counts:
        return "other"
    best = max(counts.values())
    return next(c for c in TOOL_CATEGORIES if counts[c] == best)


def _functions(tools: Any) -> list[Mapping[str, Any]]:
    out = []
    for tool in _list(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            out.append(function)
    return out


# --------------------------------------------------------------------------- text diversity


def _ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def distinct_n(messages: Iterable[str], n: int) -> float | None:
    """distinct-n of a set of texts (docs/coverage.md §6; Li et al. 2016): distinct token n-grams over all
    n-grams of the normalised texts (tokens as docs/audit.md §5.2). ``None`` when there is no n-gram."""
    return _distinct([tokens(normalise(message)) for message in messages], n)


def _distinct(token_lists: Iterable[Sequence[str]], n: int) -> float | None:
    total = 0
    seen: set[tuple[str, ...]] = set()
    for words in token_lists:
        grams = _ngrams(words, n)
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else None


def _bigram_set(message: str) -> frozenset:
    words = tokens(normalise(message))
    return frozenset(_ngrams(words, 2)) if len(words) >= 2 else frozenset([tuple(words)])


def self_similarity(messages: Sequence[str], *, sample: int = SELF_SIMILARITY_SAMPLE, seed: int = 0) -> dict[str, Any]:
    """How alike the user messages of a set are (docs/coverage.md §6): the Jaccard similarity of the token
    bigram sets of two messages, averaged over every pair (``mean_pairwise``), and each message's highest
    similarity with any other, averaged (``mean_nearest``; 1.0 when every message has a copy).

    Args:
        messages: the texts (empty ones are left out).
        sample: above this many messages a seeded sample of ``sample`` of them is compared.
        seed: the sample's seed.

    Returns:
        ``{"messages", "compared", "mean_pairwise", "mean_nearest"}``, the means ``None`` for fewer than
        two messages.
    """
    texts = [m for m in messages if isinstance(m, str) and m.strip()]
    chosen = texts if len(texts) <= sample else random.Random(seed).sample(texts, sample)
    sets = [_bigram_set(m) for m in chosen]
    n = len(sets)
    if n < 2:
        return {"messages": len(texts), "compared": n, "mean_pairwise": None, "mean_nearest": None}
    ids: dict[tuple[str, ...], int] = {}
    masks = []  # each set as an integer bit mask over the bigrams seen: an intersection is one AND
    for bigrams in sets:
        mask = 0
        for bigram in bigrams:
            mask |= 1 << ids.setdefault(bigram, len(ids))
        masks.append(mask)
    sizes = [len(bigrams) for bigrams in sets]
    nearest = [0.0] * n
    total = 0.0
    for i in range(n):
        a, size, best = masks[i], sizes[i], nearest[i]
        for j in range(i + 1, n):
            common = (a & masks[j]).bit_count()
            if not common:
                continue
            similarity = common / (size + sizes[j] - common)
            total += similarity
            if similarity > best:
                best = similarity
            if similarity > nearest[j]:
                nearest[j] = similarity
        nearest[i] = best
    return {
        "messages": len(texts),
        "compared": n,
        "mean_pairwise": total / (n * (n - 1) / 2),
        "mean_nearest": sum(nearest) / n,
    }


def _value_key(value: Any) -> str:
    return normalise(value) if isinstance(value, str) else json.dumps(value)


def argument_diversity(calls: Iterable[tuple[str, Any]], top: int = 5) -> dict[str, Any]:
    """Diversity of the gold argument values (docs/coverage.md §7).

    Args:
        calls: ``(tool name, arguments)`` of every gold call.
        top: how many of the most used values to list.

    Returns:
        ``{"values", "distinct", "distinct_ratio", "entropy_bits", "parameters", "repeated_parameters",
        "mean_parameter_distinct_ratio", "most_common"}``: the scalar values (at any depth; strings
        normalised as docs/audit.md §5.2), how many differ, their Shannon entropy in bits; the
        parameters used (tool and path, list indices dropped), those used at least twice and the mean,
        over those, of distinct values per use; the ``top`` most used values as ``[value, uses]``.
    """
    values: Counter[str] = Counter()
    per_parameter: dict[tuple[str, str], list[str]] = {}
    for name, arguments in calls:
        for path, value in leaves(arguments):
            key = _value_key(value)
            values[key] += 1
            per_parameter.setdefault((name, re.sub(r"\[\d+\]", "[]", path)), []).append(key)
    total = sum(values.values())
    entropy = -sum(c / total * math.log2(c / total) for c in values.values()) if total else 0.0
    repeated = [used for used in per_parameter.values() if len(used) >= 2]
    return {
        "values": total,
        "distinct": len(values),
        "distinct_ratio": len(values) / total if total else None,
        "entropy_bits": round(entropy, 6),
        "parameters": len(per_parameter),
        "repeated_parameters": len(repeated),
        "mean_parameter_distinct_ratio": (
            sum(len(set(used)) / len(used) for used in repeated) / len(repeated) if repeated else None
        ),
        "most_common": [
            [value, count] for value, count in sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        ],
    }


# --------------------------------------------------------------------------- the figures of a set


def _shares(counts: Mapping[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {k: (100.0 * v / total if total else 0.0) for k, v in counts.items()}


def _histogram(values: Iterable[int], cap: int | None = None) -> dict[str, int]:
    counts = Counter(values)
    out = {str(k): counts[k] for k in sorted(counts) if cap is None or k < cap}
    if cap is not None and any(k >= cap for k in counts):
        out[f"{cap}+"] = sum(v for k, v in counts.items() if k >= cap)
    return out


def coverage_statistics(sessions: Sequence[Mapping[str, Any]], language: str = "en") -> dict[str, Any]:
    """Every figure of docs/coverage.md for a dataset's sessions.

    Args:
        sessions: session dicts (malformed fields count as empty).
        language: the side read for messages, tools and gold (docs/dataset.md §2.2); task types and turn
            subtypes are always the ``english_*`` labels.

    Returns:
        A JSON-ready dict: ``sessions``, ``tasks``, ``task_types`` and ``turn_subtypes`` (counts, and
        ``*_percent``), ``topology`` (``shapes`` per task type, ``depths`` and ``widths`` histograms of
        the tasks with calls, ``layer_widths``, ``multi_tool`` shapes of the Multi-Tool tasks),
        ``calls_per_task`` (tasks with at least one call, ``10+`` bucket), ``calls``, ``questions``,
        ``tools`` (offered and called distinct names, tool lists, coverage, ``categories`` offered and
        called, ``parameter_kinds`` of the offered tools' parameters), ``transitions`` and ``user_turns``
        histograms, ``messages`` (``distinct_1``..``distinct_3`` and ``self_similarity``), ``arguments``
        (:func:`argument_diversity`). Histogram keys are strings in ascending order.

    Raises:
        ValueError: ``language`` is not ``en`` or ``zh``.
    """
    side = fields_for(language)
    types: Counter[str] = Counter({t: 0 for t in TASK_TYPES})
    subtypes: Counter[str] = Counter({t: 0 for t in TURN_SUBTYPES})
    shapes: dict[str, Counter[str]] = {}
    depths: list[int] = []
    widths: list[int] = []
    layer_widths: list[int] = []
    calls_per_task: list[int] = []
    transitions: list[int] = []
    turns: list[int] = []
    messages: list[str] = []
    offered: dict[str, Mapping[str, Any]] = {}
    called: Counter[str] = Counter()
    tool_lists: set[tuple[str, ...]] = set()
    gold_calls: list[tuple[str, Any]] = []
    questions = 0
    tasks = 0
    for session in sessions:
        task_types = [t if isinstance(t, str) else "" for t in _list(session.get("english_task_types"))]
        types.update(t for t in task_types if t)
        subtypes.update(t for t in _list(session.get("english_turn_subtypes")) if isinstance(t, str))
        transitions.append(instruction_transitions(task_types))
        turns.append(user_turns(session, language))
        messages.extend(m for m in _list(session.get(side.tasks)) if isinstance(m, str))
        functions = _functions(session.get(side.tools))
        tool_lists.add(tuple(sorted(f["name"] for f in functions)))
        for function in functions:
            offered.setdefault(function["name"], function)
        for index, answer_list in enumerate(_list(session.get(side.answer_list))):
            tasks += 1
            topology = task_topology(answer_list)
            label = task_types[index] if index < len(task_types) and task_types[index] else "(no type)"
            shapes.setdefault(label, Counter())[topology["shape"]] += 1
            if topology["calls"]:
                depths.append(topology["depth"])
                widths.append(topology["width"])
                calls_per_task.append(topology["calls"])
            layer_widths.extend(topology["widths"])
            for name, arguments, _ in _actions(answer_list):
                if name == ASK_USER:
                    questions += 1
                elif name is not None and name not in PSEUDO_TOOLS:
                    called[name] += 1
                    gold_calls.append((name, arguments))
    multi = Counter()
    for label in ("Parallel Multi-Tool", "Sequential Multi-Tool", "Mixed Multi-Tool"):
        multi.update(shapes.get(label, Counter()))
    categories_offered = Counter({c: 0 for c in (*TOOL_CATEGORIES, "other")})
    categories_offered.update(tool_category(f) for f in offered.values())
    categories_called = Counter({c: 0 for c in (*TOOL_CATEGORIES, "other")})
    categories_called.update(tool_category(offered[name]) for name in called if name in offered)
    kinds = Counter({k: 0 for k in PARAMETER_KINDS})
    for function in offered.values():
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        kinds.update(parameter_kind(p) for p in (properties.values() if isinstance(properties, Mapping) else ()))
    type_counts = {t: types[t] for t in TASK_TYPES} | {t: n for t, n in types.items() if t not in TASK_TYPES}
    subtype_counts = {t: subtypes[t] for t in TURN_SUBTYPES} | {
        t: n for t, n in subtypes.items() if t not in TURN_SUBTYPES
    }
    words = [tokens(normalise(message)) for message in messages]
    return {
        "sessions": len(sessions),
        "tasks": tasks,
        "task_types": type_counts,
        "task_types_percent": _shares(type_counts),
        "turn_subtypes": subtype_counts,
        "turn_subtypes_percent": _shares(subtype_counts),
        "topology": {
            "shapes": {label: {s: counts[s] for s in SHAPES} for label, counts in shapes.items()},
            "multi_tool": {s: multi[s] for s in SHAPES},
            "depths": _histogram(depths),
            "widths": _histogram(widths),
            "layer_widths": _histogram(layer_widths),
        },
        "calls": sum(called.values()),
        "questions": questions,
        "calls_per_task": _histogram(calls_per_task, cap=10),
        "tools": {
            "offered": len(offered),
            "called": len(called),
            "called_percent": 100.0 * len(called) / len(offered) if offered else 0.0,
            "tool_lists": len(tool_lists),
            "categories_offered": dict(categories_offered),
            "categories_offered_percent": _shares(categories_offered),
            "categories_called": dict(categories_called),
            "parameter_kinds": dict(kinds),
            "parameter_kinds_percent": _shares(kinds),
            "most_called": [[name, n] for name, n in sorted(called.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        },
        "transitions": _histogram(transitions),
        "user_turns": _histogram(turns),
        "messages": {
            **{f"distinct_{n}": _distinct(words, n) for n in DISTINCT_N},
            "self_similarity": self_similarity(messages),
        },
        "arguments": argument_diversity(gold_calls),
    }


# --------------------------------------------------------------------------- against the official set


@lru_cache(maxsize=1)
def published_figures() -> dict[str, Any]:
    """The official dataset's published figures (docs/coverage.md §8), each ``{"value", "source"}``, from the
    bundled ``bench/data/official_figures.json`` (``{"source", "figures"}``)."""
    text = resources.files("wildtoolbench.bench").joinpath("data/official_figures.json").read_text(encoding="utf-8")
    return json.loads(text)


COMPARED: tuple[tuple[str, str], ...] = (
    ("sessions", "sessions"),
    ("tasks", "tasks"),
    ("tool_lists", "distinct tool lists"),
    ("unique_tools", "distinct tools offered"),
    ("task_types_percent", "task type, % of tasks"),
    ("turn_subtypes_percent", "turn subtype, % of tasks 2-4"),
    ("parameter_kinds_percent", "parameter kind, % of parameters"),
    ("tool_categories_percent", "tool category, % of tools"),
    ("dialogue_turns", "user turns per session, % of sessions"),
    ("calls_per_task", "tool calls per task, % of tasks with a call"),
)
"""The figures compared with the official set, in order: ``(key, label)`` (docs/coverage.md §8)."""


def comparable_figures(stats: Mapping[str, Any]) -> dict[str, Any]:
    """A set's figures under the keys of the published ones (:data:`COMPARED`): counts, and shares in
    percent (histograms of sessions and tasks turned into shares too)."""
    return {
        "sessions": stats["sessions"],
        "tasks": stats["tasks"],
        "tool_lists": stats["tools"]["tool_lists"],
        "unique_tools": stats["tools"]["offered"],
        "task_types_percent": {k: stats["task_types_percent"][k] for k in TASK_TYPES},
        "turn_subtypes_percent": {k: stats["turn_subtypes_percent"][k] for k in TURN_SUBTYPES},
        "parameter_kinds_percent": _shares(stats["tools"]["parameter_kinds"]),
        "tool_categories_percent": _shares(stats["tools"]["categories_offered"]),
        "dialogue_turns": _shares(stats["user_turns"]),
        "calls_per_task": _shares(stats["calls_per_task"]),
    }


def comparison_rows(stats: Mapping[str, Any], reference: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The set's figures beside the official set's (docs/coverage.md §8).

    Args:
        stats: :func:`coverage_statistics` of the set.
        reference: :func:`coverage_statistics` of the official dataset when it is at hand; ``None``:
            the published figures (:func:`published_figures`) are used, with their source.

    Returns:
        ``[{"figure", "key", "this", "official", "source"}]``, one row per number: a count, or one share
        (``key`` then names the bucket, ``figure`` its group of :data:`COMPARED`); ``official`` is ``None``
        where the published figures have no such number. Shares are percents rounded to 0.1, counts are
        integers; a published count given as a lower bound reads ``">= 1600"``.
    """
    ours = comparable_figures(stats)
    if reference is not None:
        theirs = {
            k: {"value": v, "source": "computed from the reference dataset"}
            for k, v in comparable_figures(reference).items()
        }
    else:
        theirs = dict(published_figures()["figures"])
        theirs["dialogue_turns"] = _published_share(theirs["dialogue_turns"])
        theirs["calls_per_task"] = _published_share(theirs["calls_per_task"])
    rows: list[dict[str, Any]] = []
    for key, label in COMPARED:
        mine = ours[key]
        entry = theirs.get(key)
        official = entry["value"] if entry is not None else None
        source = entry["source"] if entry is not None else None
        if isinstance(mine, Mapping):
            buckets = list(mine) + [b for b in (official or {}) if b not in mine]
            for bucket in buckets:
                value = (official or {}).get(bucket) if isinstance(official, Mapping) else None
                rows.append(
                    {
                        "figure": label,
                        "key": bucket,
                        "this": round(mine.get(bucket, 0.0), 1),
                        "official": None if value is None else round(value, 1),
                        "source": source,
                    }
                )
        else:
            shown = official
            if entry is not None and entry.get("at_least"):
                shown = f">= {official}"
            rows.append({"figure": label, "key": None, "this": mine, "official": shown, "source": source})
    if reference is None:  # the published APIs figure has no counterpart key of its own
        apis = published_figures()["figures"]["apis"]
        rows.insert(
            4,
            {"figure": "APIs (tools) offered", "key": None, "this": stats["tools"]["offered"],
             "official": f">= {apis['value']}", "source": apis["source"]},
        )  # fmt: skip
    return rows


def _published_share(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {**entry, "value": _shares(entry["value"]), "source": entry["source"] + ", as % of the total printed"}


def contamination(
    sessions: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    language: str = "en",
    *,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> list[dict[str, Any]]:
    """Sessions of a set that repeat a session of a reference set (docs/coverage.md §9), by the
    ``duplicate_session`` rule of docs/audit.md §4 (same user messages and tool names, or shingle Jaccard
    similarity at least ``threshold``), pairs within one set left out.

    Returns:
        ``[{"id", "reference_id", "similarity", "exact"}]`` in the set's order (ids ``None`` when missing),
        similarity rounded to 3 decimals.
    """
    side = fields_for(language)
    combined = [*sessions, *reference]
    found = []
    for i, j, similarity, exact in duplicate_pairs(
        combined, tasks_field=side.tasks, tools_field=side.tools, threshold=threshold
    ):
        if i < len(sessions) <= j:
            this, other = combined[i].get("id"), combined[j].get("id")
            found.append(
                {
                    "id": this if isinstance(this, str) else None,
                    "reference_id": other if isinstance(other, str) else None,
                    "similarity": round(similarity, 3),
                    "exact": exact,
                    "_order": (i, j),
                }
            )
    found.sort(key=lambda f: f["_order"])
    for entry in found:
        del entry["_order"]
    return found


__all__ = [
    "CATEGORY_KEYWORDS",
    "COMPARED",
    "PARAMETER_KINDS",
    "SHAPES",
    "TOOL_CATEGORIES",
    "argument_diversity",
    "comparable_figures",
    "comparison_rows",
    "contamination",
    "coverage_statistics",
    "distinct_n",
    "instruction_transitions",
    "parameter_kind",
    "published_figures",
    "self_similarity",
    "task_topology",
    "tool_category",
    "user_turns",
]
