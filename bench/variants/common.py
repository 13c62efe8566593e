"""What every variant factor shares (docs/variants.md §1-§2): the variant fields, the two language sides
edited together, gold values as text, and the checks a variant passes before it is written.

Pure module: no I/O, no LangGraph. A *session* here is the plain dict of one dataset line
(docs/dataset.md §2); functions never change their input, they return edited deep copies.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wildtoolbench.bench.audit_oracle import gold_labels
from wildtoolbench.bench.schema import fields_for, session_issues
from wildtoolbench.bench.scoring import ScoringError
from wildtoolbench.bench.terms import PSEUDO_TOOLS

FACTORS: tuple[str, ...] = ("explicit", "transitions", "names", "distractors", "paraphrase")
"""Every factor name, in the order the variant graph runs them (docs/variants.md §3)."""
MECHANICAL_FACTORS: tuple[str, ...] = ("explicit", "transitions", "names", "distractors")
"""The factors that need no model (docs/variants.md §3): the whole experiment can run offline."""
DEFAULT_LEVELS: dict[str, tuple[str, ...]] = {
    "explicit": ("",),
    "transitions": ("-1", "+1", "+2", "+3"),
    "names": ("",),
    "distractors": ("5",),
    "paraphrase": ("",),
}
"""Levels used when ``--levels`` does not name the factor; ``""`` marks an ungraded factor (docs/variants.md §3)."""
VARIANT_FIELDS: tuple[str, ...] = ("variant_of", "factor", "level", "target_task", "origin_task")
"""The top-level fields every variant carries (docs/variants.md §2)."""

PER_TASK_FIELDS = ("tasks", "answer_list", "task_types")
"""Per-task fields of one side (the turn subtypes are handled apart: one fewer, no entry for task 0)."""


SKIP_RULES: dict[str, str] = {
    "origin_gold_wrong": "the origin's gold does not score correct on this task",
    "no_implicit_value": "every gold value is stated in the task's turn",
    "too_few_removable": "too few earlier Chat or Clarify tasks the target does not depend on",
    "too_few_exchanges": "too few chat exchanges in the other sessions",
    "too_few_distractors": "too few tools in the other sessions' tool lists",
    "no_tool": "no tool to rename",
    "name_taken": "a neutral name is already a tool name of the session",
    "paraphrase_empty": "paraphrase: the model's rewording is empty or the message unchanged",
    "paraphrase_lost": "paraphrase: the rewording drops a value or named entity of the message",
    "paraphrase_added": "paraphrase: the rewording adds a named entity or number",
    "model_failed": "a model-written factor: the model request failed",
    "explicit_empty": "explicit (model): the rewrite is empty or the message unchanged",
    "explicit_meta": "explicit (model): the model comments on the task or refuses it instead of writing the message",
    "explicit_missing": "explicit (model): the rewrite leaves a context value unnamed",
    "explicit_lost": "explicit (model): the rewrite drops a value or named entity of the message",
    "explicit_added": "explicit (model): the rewrite adds a value that is not one of the task's context values",
    "exchange_empty": "transitions (model): the user turn or the reply is empty",
    "exchange_meta": "transitions (model): the model comments on the task or refuses it instead of writing the text",
    "exchange_repeated": "transitions (model): the text repeats one already written for this task",
    "exchange_tool_call": "transitions (model): the reply calls or names a tool",
    "exchange_leak": "transitions (model): the exchange holds a value the target task needs",
    "exchange_language": "transitions (model): the exchange is not in the session's language",
}
"""Why a factor does not apply to a session or task, by rule id (docs/variants.md §4, table 2)."""
REJECT_RULES: dict[str, str] = {
    "invalid": "the variant does not pass the loader's checks (wtb validate)",
    "gold_not_correct": "its gold does not score correct on the target task when replayed",
}
"""Why a variant that was made is not written, by rule id (docs/variants.md §4, table 2)."""
MODEL_ROLES: dict[str, str] = {
    "paraphrase": "paraphrase",
    "explicit": "explicit",
    "user": "transitions",
    "agent": "transitions",
}
"""The model roles of the variant graph and the factor each belongs to (docs/variants.md §3.6): the keys
``wtb variants --model ROLE=SPEC`` and ``wtb ablate --variant-model ROLE=SPEC`` accept. ``paraphrase``
always calls its model (default: the bundled local model); ``explicit`` and ``transitions`` call theirs
only when one of their roles is given a model, else they stay mechanical."""
DEFAULT_ROLE_MODEL = "local"
"""The model of a role that a model-written factor needs when none is given: the bundled local model."""
MODEL_ATTEMPTS = 3
"""Requests per model-written text before the task is skipped with the last check's rule id (docs/variants.md §3.6)."""


class VariantError(ValueError):
    """A factor or level that cannot be used (unknown factor, malformed level); the message names it."""


@dataclass
class Outcome:
    """What one factor made of one origin session (docs/variants.md §4).

    Attributes:
        variants: the variant sessions (dicts with the fields of :data:`VARIANT_FIELDS`).
        skipped: ``(origin_task or None, level, rule id, reason)`` for each task (or the whole session,
            ``None``) the factor did not apply to; the ids are those of :data:`SKIP_RULES`.
        extra: factor-specific facts for the manifest (``names``: ``{"map": {...}}``).
    """

    variants: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[int | None, str, str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def sides(language: str | None = None) -> list[Any]:
    """The :class:`wildtoolbench.bench.schema.SessionFields` to edit: both sides (default), or only ``language``."""
    return [fields_for(language)] if language else [fields_for("en"), fields_for("zh")]


def tasks_in(session: Mapping[str, Any]) -> int:
    """Number of tasks of a session (the length of ``english_tasks``)."""
    return len(session["english_tasks"])


def variant_id(origin: str, factor: str, level: str, target: int) -> str:
    """The id of a variant: ``<origin>~<factor><level>~t<target>`` (docs/variants.md §2); unique per
    origin, factor, level and origin task, and sorted right after its origin."""
    return f"{origin}~{factor}{level}~t{target}"


def make_variant(
    origin: Mapping[str, Any], edited: dict[str, Any], factor: str, level: str, origin_task: int, target_task: int
) -> dict[str, Any]:
    """``edited`` (a deep copy of ``origin``) with its id and the variant fields set (docs/variants.md §2).

    ``level`` is ``None`` in the file for an ungraded factor. Fields of the origin that are not part
    of the schema are kept.
    """
    edited["id"] = variant_id(origin["id"], factor, level, origin_task)
    edited["variant_of"] = origin["id"]
    edited["factor"] = factor
    edited["level"] = level or None
    edited["target_task"] = target_task
    edited["origin_task"] = origin_task
    return edited


def clone(session: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a session dict, without the variant fields an origin might carry."""
    copied = copy.deepcopy(dict(session))
    for name in VARIANT_FIELDS:
        copied.pop(name, None)
    return copied


def seeded(seed: int, *parts: Any) -> random.Random:
    """A random generator that depends only on ``seed`` and ``parts`` (same input, same variant)."""
    return random.Random("|".join(str(part) for part in (seed, *parts)))


def real_nodes(answer_list: Sequence[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The nodes of an answer list that call a real tool (not a pseudo-tool; docs/dataset.md §4)."""
    for node in answer_list:
        if node["action"]["name"] not in PSEUDO_TOOLS:
            yield node


def value_text(value: Any) -> str:
    """A gold leaf value as the text a user would type: a string as is, any other JSON value as its JSON text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def leaf_values(arguments: Any, name: str = "") -> Iterator[tuple[str, Any]]:
    """``(parameter path, leaf value)`` for every leaf of a JSON argument object, depth first, in key
    order; an empty string, an empty list and ``null`` are not leaves."""
    if isinstance(arguments, Mapping):
        for key, value in arguments.items():
            yield from leaf_values(value, f"{name}.{key}" if name else str(key))
    elif isinstance(arguments, list):
        for index, value in enumerate(arguments):
            yield from leaf_values(value, f"{name}[{index}]")
    elif arguments is not None and arguments != "":
        yield name, arguments


def task_user_text(session: Mapping[str, Any], side: Any, task: int) -> str:
    """What the user says in task ``task`` on one side: the task message plus the answers to the
    assistant's questions (``user_input`` of the ask nodes), joined by newlines."""
    parts = [session[side.tasks][task]]
    parts += [str(n.get("user_input") or "") for n in session[side.answer_list][task] if "user_input" in n]
    return "\n".join(parts)


def implicit_values(session: Mapping[str, Any], side: Any, task: int) -> list[tuple[str, Any]]:
    """The gold values of task ``task`` that its user never states (docs/variants.md §3.1):
    ``(parameter, value)`` for every leaf of the real tool calls' gold arguments whose text occurs
    (case-insensitively) neither in :func:`task_user_text` nor in the observations of the task's own
    gold nodes (a value a tool returns within the task is not implicit). Each value once, in gold order."""
    observed = [json.dumps(n.get("observation"), ensure_ascii=False) for n in session[side.answer_list][task]]
    said = "\n".join([task_user_text(session, side, task), *observed]).casefold()
    found: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for node in real_nodes(session[side.answer_list][task]):
        for name, value in leaf_values(node["action"]["arguments"]):
            text = value_text(value)
            if text.casefold() in said or text in seen:
                continue
            seen.add(text)
            found.append((name, value))
    return found


def gold_correct(session: Mapping[str, Any], language: str, scoring: str = "reference") -> list[bool]:
    """Per task: does the gold, replayed as a candidate, score correct (docs/audit.md §7.1)? All
    ``False`` when the scorer cannot check the gold (a gold tool missing from the tool list)."""
    try:
        return [label.label == "correct" for label in gold_labels(session, scoring=scoring, language=language)]
    except ScoringError:
        return [False] * tasks_in(session)


def check_variant(variant: Mapping[str, Any], language: str) -> tuple[str, str] | None:
    """``None`` when ``variant`` may be written, else ``(rule id, why not)`` (docs/variants.md §2): it must pass the
    loader's checks for its own task count (``wtb validate``) and its gold, replayed as a candidate,
    must score correct on its target task."""
    problems = session_issues(dict(variant), tasks=tasks_in(variant), language=language)
    if problems:
        where, message = problems[0]
        return "invalid", f"does not validate: {where}: {message}"
    if not gold_correct(variant, language)[variant["target_task"]]:
        return "gold_not_correct", REJECT_RULES["gold_not_correct"]
    return None
