"""The ``ablate.json`` document (docs/variants.md §6): effects per factor and level, per task type and
turn subtype of the origin task, and the transitions curve, from the pairs and the run's verdicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.terms import FIRST_TURN
from wildtoolbench.bench.variants.stats import accuracy_point, effect, pair_outcomes
from wildtoolbench.bench.variants.turns import parse_transition_level

TEST = "cluster sign-flip (exact)"
INTERVAL = "session-clustered (sandwich variance, Student t with sessions - 1 df), 95%"


def _level_key(factor: str, level: str | None) -> tuple[Any, ...]:
    if factor == "transitions" and level:
        return (parse_transition_level(level),)
    return (int(level),) if level and level.isdigit() else (0,)


def _cells(outcomes: Sequence[Mapping[str, Any]], key: Any) -> dict[Any, list[Mapping[str, Any]]]:
    cells: dict[Any, list[Mapping[str, Any]]] = {}
    for outcome in outcomes:
        cells.setdefault(key(outcome), []).append(outcome)
    return cells


def bucket_of(origins: Mapping[str, Mapping[str, Any]], pair: Mapping[str, Any]) -> tuple[str, str]:
    """``(task type, turn subtype)`` of a pair's origin task (English labels; ``First Turn`` for task 0)."""
    session = origins[pair["origin"]]
    task = pair["origin_task"]
    subtype = FIRST_TURN if task == 0 else session["english_turn_subtypes"][task - 1]
    return session["english_task_types"][task], subtype


def ablation_document(
    pairs: Sequence[Mapping[str, Any]],
    verdicts: Mapping[tuple[str, int], Sequence[bool]],
    origins: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """``ablate.json`` (docs/variants.md §6.5).

    Args:
        pairs: ``pairs.jsonl`` lines.
        verdicts: ``(session id, task) -> [verdict per trial]`` of the run on the variant set.
        origins: origin sessions by id.
        settings: recorded as is (model, dataset, variants, trials ...).

    Returns:
        ``{..settings, "test", "interval", "unscored_pairs", "effects": [...], "by_task_type": [...],
        "by_turn_subtype": [...], "transitions_curve": [...]}``; each effect has ``factor``, ``level``
        and the keys of :func:`wildtoolbench.bench.variants.stats.effect`, plus ``control`` (the
        paraphrase control's difference and interval, ``None`` when not run).
    """
    outcomes = pair_outcomes(pairs, verdicts)
    control_cells = [o for o in outcomes if o["factor"] == "paraphrase"]
    control = effect(control_cells) if control_cells else None
    effects = []
    by_cell = _cells(outcomes, lambda o: (o["factor"], o["level"]))
    for (factor, level), cell in sorted(by_cell.items(), key=lambda kv: (kv[0][0], _level_key(*kv[0]))):
        entry = {"factor": factor, "level": level, **effect(cell)}
        entry["control"] = (
            None
            if control is None or factor == "paraphrase"
            else {k: control[k] for k in ("difference", "ci_low", "ci_high", "p_value")}
        )
        effects.append(entry)
    by_type, by_subtype = [], []
    for (factor, level), cell in sorted(by_cell.items(), key=lambda kv: (kv[0][0], _level_key(*kv[0]))):
        for name, rows, index in (("task_type", by_type, 0), ("turn_subtype", by_subtype, 1)):
            for bucket, part in sorted(_cells(cell, lambda o, i=index: bucket_of(origins, o)[i]).items()):
                rows.append({"factor": factor, "level": level, name: bucket, **effect(part)})
    return {
        **settings,
        "test": TEST,
        "interval": INTERVAL,
        "unscored_pairs": len(pairs) - len(outcomes),
        "effects": effects,
        "by_task_type": by_type,
        "by_turn_subtype": by_subtype,
        "transitions_curve": transitions_curve(outcomes),
    }


def transitions_curve(outcomes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Target-task accuracy against the change in transitions before the target (docs/variants.md §6.4):
    level 0 is the origins of every ``transitions`` pair (each origin task once), the others the variants
    of that level; each point with its session-clustered interval, sorted by level."""
    chosen = [o for o in outcomes if o["factor"] == "transitions"]
    if not chosen:
        return []
    origins: dict[tuple[str, int], Any] = {}
    for o in chosen:
        origins[(o["origin"], o["origin_task"])] = o["origin_share"]
    points = [{"level": 0, **accuracy_point(list(origins.values()), [k[0] for k in origins])}]
    for level, cell in _cells(chosen, lambda o: parse_transition_level(o["level"])).items():
        points.append(
            {"level": level, **accuracy_point([o["variant_share"] for o in cell], [o["origin"] for o in cell])}
        )
    return sorted(points, key=lambda p: p["level"])
