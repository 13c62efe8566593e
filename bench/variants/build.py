"""One factor over a whole dataset, the pairs and the manifest (docs/variants.md §2, §4).

:func:`run_factor` is what each node of the variant graph calls; :func:`variant_set` joins the
factors' results into the files ``wtb variants`` writes. Pure module: no I/O, no LangGraph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.variants.common import (
    DEFAULT_LEVELS,
    FACTORS,
    MECHANICAL_FACTORS,
    Outcome,
    VariantError,
    check_variant,
)
from wildtoolbench.bench.variants.tools import distractor_variants, names_variants
from wildtoolbench.bench.variants.turns import (
    all_chat_exchanges,
    explicit_variants,
    parse_transition_level,
    transition_variants,
)


def parse_factors(text: str) -> list[str]:
    """``"names,distractors"`` -> ``["names", "distractors"]`` in the order given, each once.

    Raises:
        VariantError: an empty list or an unknown factor (the message lists the known ones).
    """
    factors: list[str] = []
    for part in text.split(","):
        name = part.strip().lower()
        if not name:
            continue
        if name not in FACTORS:
            raise VariantError(f"unknown factor {name!r}; known: {', '.join(FACTORS)}")
        if name not in factors:
            factors.append(name)
    if not factors:
        raise VariantError("no factor given; known: " + ", ".join(FACTORS))
    return factors


def parse_levels(options: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``["transitions=-1,+2", "distractors=3,10"]`` -> ``{"transitions": ("-1", "+2"), ...}``.

    Raises:
        VariantError: not ``FACTOR=L1,L2``, an unknown or ungraded factor, a malformed level.
    """
    levels: dict[str, tuple[str, ...]] = {}
    for option in options:
        factor, sep, values = option.partition("=")
        factor = factor.strip().lower()
        if not sep or factor not in FACTORS:
            raise VariantError(f"--levels {option!r}: expected FACTOR=L1,L2 with FACTOR one of {', '.join(FACTORS)}")
        if DEFAULT_LEVELS[factor] == ("",):
            raise VariantError(f"--levels {option!r}: {factor} has no levels")
        parsed = tuple(v.strip() for v in values.split(",") if v.strip())
        for value in parsed:
            if factor == "transitions":
                parse_transition_level(value)
            elif not value.isdigit() or int(value) < 1:
                raise VariantError(f"--levels {option!r}: distractors levels are positive integers, got {value!r}")
        if not parsed:
            raise VariantError(f"--levels {option!r}: no level given")
        levels[factor] = parsed
    return levels


def new_result(factor: str) -> dict[str, Any]:
    """An empty :func:`run_factor` result for ``factor``."""
    return {"factor": factor, "variants": [], "pairs": [], "skipped": [], "rejected": [], "maps": {}}


def run_factor(
    factor: str,
    sessions: Sequence[Mapping[str, Any]],
    *,
    levels: Sequence[str] | None = None,
    language: str = "en",
    seed: int = 0,
) -> dict[str, Any]:
    """Make the variants of one mechanical factor for every session (docs/variants.md §3, §4).

    Each variant is checked (:func:`check_variant`): one that fails is not kept but counted in
    ``rejected`` with the reason.

    Returns:
        ``{"factor", "variants": [...], "pairs": [...], "skipped": [...], "rejected": [...], "maps": {...}}``;
        ``skipped``/``rejected`` entries are ``{"session", "task", "level", "rule", "reason"}`` (``task`` is the
        origin task, ``None`` for the whole session); ``maps`` holds the ``names`` map per session.

    Raises:
        VariantError: an unknown factor, a factor that needs a model (``paraphrase``), a malformed level.
    """
    if factor not in MECHANICAL_FACTORS:
        raise VariantError(f"factor {factor!r} needs a model and has no mechanical form")
    chosen = tuple(levels or DEFAULT_LEVELS[factor])
    result = new_result(factor)
    words_of: dict[str, set[str]] = {}
    exchanges = all_chat_exchanges(sessions) if factor == "transitions" else []
    for session in sessions:
        if factor == "names":
            outcome = names_variants(session, language=language)
        elif factor == "distractors":
            outcome = distractor_variants(session, sessions, chosen, language=language, seed=seed, words_of=words_of)
        elif factor == "explicit":
            outcome = explicit_variants(session, language=language)
        else:
            outcome = transition_variants(session, sessions, chosen, language=language, seed=seed, exchanges=exchanges)
        collect_outcome(result, session, outcome, language)
    return result


def collect_outcome(result: dict[str, Any], session: Mapping[str, Any], outcome: Outcome, language: str) -> None:
    """Add one session's :class:`Outcome` to a :func:`run_factor` ``result``: skipped tasks as they are,
    each variant checked (:func:`check_variant`) into ``variants`` and ``pairs`` or ``rejected``."""
    for task, level, rule, reason in outcome.skipped:
        result["skipped"].append(
            {"session": session["id"], "task": task, "level": level or None, "rule": rule, "reason": reason}
        )
    if "map" in outcome.extra:
        result["maps"][session["id"]] = outcome.extra["map"]
    for variant in outcome.variants:
        problem = check_variant(variant, language)
        if problem is not None:
            result["rejected"].append(
                {
                    "session": session["id"],
                    "task": variant["origin_task"],
                    "level": variant["level"],
                    "rule": problem[0],
                    "reason": problem[1],
                }
            )
            continue
        result["variants"].append(variant)
        result["pairs"].append(pair_of(variant))


def pair_of(variant: Mapping[str, Any]) -> dict[str, Any]:
    """The ``pairs.jsonl`` line of a variant (docs/variants.md §4)."""
    return {
        "pair": variant["id"],
        "factor": variant["factor"],
        "level": variant["level"],
        "origin": variant["variant_of"],
        "origin_task": variant["origin_task"],
        "variant": variant["id"],
        "target_task": variant["target_task"],
    }


def variant_set(
    origins: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The three outputs of ``wtb variants`` (docs/variants.md §4): the sessions (every origin that has
    a variant, each followed by its variants, origins in dataset order), the pairs, and the manifest
    (``settings``, counts per factor and level, and every skipped or rejected session/task with the reason)."""
    by_origin: dict[str, list[dict[str, Any]]] = {}
    pairs: list[dict[str, Any]] = []
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for result in results:
        factor_counts = counts.setdefault(result["factor"], {})
        for variant in result["variants"]:
            by_origin.setdefault(variant["variant_of"], []).append(variant)
            level_counts = factor_counts.setdefault(
                variant["level"] or "", {"variants": 0, "skipped": 0, "rejected": 0}
            )
            level_counts["variants"] += 1
        for kind in ("skipped", "rejected"):
            for entry in result[kind]:
                key = entry["level"] or ""
                factor_counts.setdefault(key, {"variants": 0, "skipped": 0, "rejected": 0})[kind] += 1
        pairs.extend(result["pairs"])
    counts = {f: dict(sorted(levels.items(), key=lambda kv: int(kv[0] or 0))) for f, levels in counts.items()}
    sessions: list[dict[str, Any]] = []
    for origin in origins:
        if origin["id"] in by_origin:
            sessions.append(dict(origin))
            sessions.extend(by_origin[origin["id"]])
    manifest = {
        **settings,
        "origins": sum(1 for o in origins if o["id"] in by_origin),
        "variants": sum(len(v) for v in by_origin.values()),
        "pairs": len(pairs),
        "counts": counts,
        "task_counts": dict(sorted(Counter(len(s["english_tasks"]) for s in sessions).items())),
        "skipped": {r["factor"]: r["skipped"] for r in results},
        "rejected": {r["factor"]: r["rejected"] for r in results},
        "names_maps": {sid: m for r in results for sid, m in r.get("maps", {}).items()},
    }
    return sessions, pairs, manifest
