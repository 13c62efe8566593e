"""The conversation factors (docs/variants.md §3.1, §3.2): ``explicit`` (the target's implicit values
stated in its turn) and ``transitions`` (earlier tasks removed, or chat exchanges inserted, before the
target). Pure functions on session dicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.variants.common import (
    SKIP_RULES,
    Outcome,
    VariantError,
    clone,
    gold_correct,
    implicit_values,
    make_variant,
    seeded,
    sides,
    tasks_in,
    value_text,
)

CLAUSE = {
    "en": ("(To be explicit: ", "; ", ".)"),
    "zh": ("（明确地说：", "；", "。）"),
}
"""The mechanical clause of ``explicit`` per side: opening, separator, closing (docs/variants.md §3.1)."""
REMOVABLE_TYPES = ("Chat", "Clarify")
"""English task types ``transitions -k`` may remove (docs/variants.md §3.2)."""
CHAT_TYPE = {"en": "Chat", "zh": "闲聊"}
FILLER_SUBTYPE = {"en": "Partial Information", "zh": "省略成分"}
"""The turn subtype given to a task that moves off index 0, or to an inserted exchange that had none."""
_LEVEL = re.compile(r"^([+-])([1-9][0-9]*)$")


def explicit_clause(values: Sequence[tuple[str, Any]], language: str) -> str:
    """The clause naming each ``(parameter, value)`` as ``parameter = value``, in ``language``."""
    opening, separator, closing = CLAUSE[language]
    return opening + separator.join(f"{name} = {value_text(value)}" for name, value in values) + closing


def make_explicit(session: Mapping[str, Any], task: int) -> dict[str, Any] | None:
    """A copy of ``session`` whose task ``task`` states its implicit values (docs/variants.md §3.1): on
    each side, :func:`explicit_clause` of that side's :func:`implicit_values` appended to the task's
    user message (after a space). ``None`` when neither side has an implicit value. Gold unchanged."""
    edited = clone(session)
    changed = False
    for side in sides():
        values = implicit_values(session, side, task)
        if values:
            edited[side.tasks][task] = f"{session[side.tasks][task]} {explicit_clause(values, side.language)}"
            changed = True
    return edited if changed else None


def explicit_variants(session: Mapping[str, Any], *, language: str = "en") -> Outcome:
    """``explicit`` (docs/variants.md §3.1): one variant per task whose origin gold scores correct and
    whose gold takes at least one value the user never states on the ``language`` side."""
    out = Outcome()
    side = sides(language)[0]
    for task, ok in enumerate(gold_correct(session, language)):
        if not ok:
            out.skipped.append((task, "", "origin_gold_wrong", SKIP_RULES["origin_gold_wrong"]))
        elif not implicit_values(session, side, task):
            out.skipped.append((task, "", "no_implicit_value", SKIP_RULES["no_implicit_value"]))
        else:
            edited = make_explicit(session, task)
            assert edited is not None  # the language side has a value, so the clause was added
            out.variants.append(make_variant(session, edited, "explicit", "", task, task))
    return out


def parse_transition_level(level: str) -> int:
    """``"-2"`` -> -2, ``"+1"`` -> 1 (docs/variants.md §3.2).

    Raises:
        VariantError: not a sign followed by a positive integer.
    """
    match = _LEVEL.match(level.strip())
    if not match:
        raise VariantError(f"transitions level {level!r}: expected -k or +k with k >= 1 (e.g. -1,+1,+2)")
    return int(match.group(2)) * (1 if match.group(1) == "+" else -1)


def _tasks_of(session: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The session as one record per task: ``{language: (message, answer list, type, subtype or None)}``."""
    records: list[dict[str, Any]] = [{} for _ in range(tasks_in(session))]
    for side in sides():
        subtypes = [None, *session[side.turn_subtypes]]
        for index, record in enumerate(records):
            record[side.language] = [
                session[side.tasks][index],
                session[side.answer_list][index],
                session[side.task_types][index],
                subtypes[index],
            ]
    return records


def _with_tasks(session: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    edited = clone(session)
    for side in sides():
        rows = [record[side.language] for record in records]
        edited[side.tasks] = [row[0] for row in rows]
        edited[side.answer_list] = [clone({"a": row[1]})["a"] for row in rows]
        edited[side.task_types] = [row[2] for row in rows]
        edited[side.turn_subtypes] = [row[3] or FILLER_SUBTYPE[side.language] for row in rows[1:]]
    return edited


def depends_on(session: Mapping[str, Any], target: int, earlier: int) -> bool:
    """Does task ``target`` use anything of task ``earlier`` (docs/variants.md §3.2)? True when a gold
    value the target's user never states (:func:`implicit_values`, either side) occurs, case-insensitively,
    in the earlier task's message, gold arguments, observations or user answers."""
    for side in sides():
        earlier_text = (
            session[side.tasks][earlier] + json.dumps(session[side.answer_list][earlier], ensure_ascii=False)
        ).casefold()
        for _, value in implicit_values(session, side, target):
            text = value_text(value).casefold()
            if text in earlier_text or json.dumps(text, ensure_ascii=False)[1:-1] in earlier_text:
                return True
    return False


def chat_donors(session: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The chat exchanges ``transitions +k`` may insert (docs/variants.md §3.2): every Chat task (English
    task type) of another session, as a task record of both sides; first tasks (which lean on no
    earlier turn) first, then the others, each group in file order."""
    return [record for owner, record in all_chat_exchanges(others) if owner != session["id"]]


def all_chat_exchanges(sessions: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """``(session id, task record)`` of every Chat task of ``sessions``, in the order of :func:`chat_donors`
    (computed once per dataset by :func:`transition_variants` callers)."""
    first, later = [], []
    for other in sessions:
        for index, chat_type in enumerate(other["english_task_types"]):
            if chat_type == CHAT_TYPE["en"]:
                (first if index == 0 else later).append((other["id"], _tasks_of(other)[index]))
    return first + later


def remove_tasks(session: Mapping[str, Any], removed: Sequence[int]) -> dict[str, Any]:
    """A copy of ``session`` without the tasks ``removed`` (both sides, turn subtypes kept per task)."""
    records = [r for index, r in enumerate(_tasks_of(session)) if index not in set(removed)]
    return _with_tasks(session, records)


def insert_tasks(session: Mapping[str, Any], position: int, inserted: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A copy of ``session`` with the task records ``inserted`` placed before task ``position``."""
    records = _tasks_of(session)
    records[position:position] = [clone(dict(r)) for r in inserted]
    return _with_tasks(session, records)


def transition_variants(
    session: Mapping[str, Any],
    others: Sequence[Mapping[str, Any]],
    levels: Sequence[str],
    *,
    language: str = "en",
    seed: int = 0,
    exchanges: Sequence[tuple[str, dict[str, Any]]] | None = None,
) -> Outcome:
    """``transitions`` (docs/variants.md §3.2): per target task whose origin gold scores correct and per
    level: ``-k`` removes the k nearest earlier Chat or Clarify tasks the target does not
    :func:`depends_on`; ``+k`` inserts k chat exchanges of :func:`chat_donors` (seeded choice, no
    donor twice) right before the target. Not applied when too few tasks can be removed or
    too few exchanges are available. ``exchanges``: :func:`all_chat_exchanges` of ``others``, when the
    caller has it already.

    Raises:
        VariantError: a malformed level.
    """
    out = Outcome()
    steps = {level: parse_transition_level(level) for level in levels}
    if exchanges is None:
        exchanges = all_chat_exchanges(others)
    donors = [record for owner, record in exchanges if owner != session["id"]]
    for target, ok in enumerate(gold_correct(session, language)):
        for level, k in steps.items():
            if not ok:
                out.skipped.append((target, level, "origin_gold_wrong", SKIP_RULES["origin_gold_wrong"]))
            elif k < 0:
                removable = [
                    j
                    for j in range(target - 1, -1, -1)
                    if session["english_task_types"][j] in REMOVABLE_TYPES and not depends_on(session, target, j)
                ]
                if len(removable) < -k:
                    why = f"{len(removable)} earlier Chat or Clarify task(s) the target does not depend on, not {-k}"
                    out.skipped.append((target, level, "too_few_removable", why))
                    continue
                edited = remove_tasks(session, removable[:-k])
                out.variants.append(make_variant(session, edited, "transitions", level, target, target + k))
            else:
                if len(donors) < k:
                    out.skipped.append(
                        (
                            target,
                            level,
                            "too_few_exchanges",
                            f"{len(donors)} chat exchange(s) in other sessions, not {k}",
                        )
                    )
                    continue
                rng = seeded(seed, "transitions", session["id"], target, level)
                edited = insert_tasks(session, target, rng.sample(donors, k))
                out.variants.append(make_variant(session, edited, "transitions", level, target, target + k))
    return out
