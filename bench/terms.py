"""The benchmark's vocabulary, defined once (docs/terms.md): pseudo-tools, task types, turn subtypes.

Every other module imports these names from here; the strings are the dataset's own labels.
"""

from __future__ import annotations

from typing import Literal

ASK_USER = "ask_user_for_required_parameters"
"""Pseudo-tool: the assistant asks the user for missing required parameters, in plain text."""
PREPARE_TO_ANSWER = "prepare_to_answer"
"""Pseudo-tool: the assistant replies in plain text and the task ends."""
PSEUDO_TOOLS = frozenset({ASK_USER, PREPARE_TO_ANSWER})
"""Node names that a model never calls as functions."""

TASKS_PER_SESSION = 4
"""Tasks (user turns) per session in the benchmark; generated sessions may have another count."""

LANGUAGES: tuple[str, ...] = ("en", "zh")
"""Sides of the dataset a run can evaluate: ``en`` reads the ``english_*`` fields, ``zh`` the unprefixed ones."""

TaskType = Literal[
    "Single-Tool",
    "Parallel Multi-Tool",
    "Sequential Multi-Tool",
    "Mixed Multi-Tool",
    "Clarify",
    "Chat",
]
TASK_TYPES: tuple[str, ...] = TaskType.__args__  # type: ignore[attr-defined]
MULTI_TOOL_TYPES: tuple[str, ...] = ("Parallel Multi-Tool", "Sequential Multi-Tool", "Mixed Multi-Tool")
MULTI_TOOL = "Multi-Tool"
"""Metric bucket that sums the three multi-tool task types."""
OPTIMAL_TYPES: tuple[str, ...] = ("Parallel Multi-Tool", "Mixed Multi-Tool")
"""Task types counted by the optimal path rate."""
PROGRESS_TYPES: tuple[str, ...] = ("Sequential Multi-Tool", "Mixed Multi-Tool")
"""Task types counted by the accomplish progress rate."""

TurnSubtype = Literal["Coreferential Reference", "Partial Information", "Long-Range Dependency"]
TURN_SUBTYPES: tuple[str, ...] = TurnSubtype.__args__  # type: ignore[attr-defined]
FIRST_TURN = "First Turn"
"""Turn-subtype bucket of task 1 (the first user turn)."""
SUBSEQUENT_TURN = "Subsequent Turn"
"""Turn-subtype bucket of tasks 2-4."""

ChineseTaskType = Literal["单工具", "多工具", "澄清", "闲聊"]
ChineseTurnSubtype = Literal["指代", "省略成分", "长期记忆"]

TASK_TYPE_ZH: dict[str, str] = {
    "Single-Tool": "单工具",
    "Parallel Multi-Tool": "多工具",
    "Sequential Multi-Tool": "多工具",
    "Mixed Multi-Tool": "多工具",
    "Clarify": "澄清",
    "Chat": "闲聊",
}
"""Chinese label (``task_types``) of each English task type."""

TURN_SUBTYPE_ZH: dict[str, str] = {
    "Coreferential Reference": "指代",
    "Partial Information": "省略成分",
    "Long-Range Dependency": "长期记忆",
}
"""Chinese label (``turn_subtypes``) of each English turn subtype."""

CORRECT = "correct"
ERROR = "error"
"""Step and task labels."""

from wildtoolbench.bench.strategy import SCORING_MODES  # noqa: E402, F401 - re-exported: the mode names, beside the other terms

FIXES: dict[int, str] = {
    1: "tool messages carry the id of the call they answer",
    2: "a question consumes an ask node; asking where none is due is a name error",
    3: "ask nodes stand alone in a step; every gold DAG can be replayed",
    4: "history observations encoded as live; same-name calls matched by best fit; no order lost to name de-duplication",
    5: "same-name calls paired with gold calls by an optimal assignment",
    6: "log kept whole after an argument error; task labelled by its first error",
    7: "objects without properties accept any keys; type lists and object arguments checked",
    8: "accomplish progress counts gold nodes matched",
}
"""Short title of each fixed-mode correction, by its number in docs/fixed-mode.md (1-4 inference, 5-8 scoring)."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 session"``, ``"2 sessions"``: ``n`` and ``noun``, plural unless ``n`` is 1 (``plural`` when the
    plural is not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
