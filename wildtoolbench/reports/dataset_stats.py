"""Dataset statistics for the report: task types, turn subtypes, calls per task, DAG layer widths, tools per session,
and the coverage and diversity figures of docs/coverage.md beside the official set's published figures.

Input is a list of session dicts (docs/dataset.md); only the ``english_*`` fields are read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.coverage import comparison_rows, coverage_statistics
from wildtoolbench.bench.schema import ASK_USER, TASK_TYPES, TURN_SUBTYPES
from wildtoolbench.reports.run_data import PSEUDO, session_transitions


def node_depths(answer_list: Sequence[Mapping[str, Any]]) -> list[int]:
    """Depth of every node of a gold DAG: 0 without dependencies, else 1 + the deepest dependency.

    Raises:
        ValueError: a dependency index is out of range or the list has a cycle.
    """
    depths: list[int | None] = [None] * len(answer_list)

    def depth(index: int, trail: frozenset[int]) -> int:
        if index in trail:
            raise ValueError("the gold answer list has a dependency cycle")
        known = depths[index]
        if known is not None:
            return known
        deps = answer_list[index].get("dependency_list") or []
        for dep in deps:
            if not 0 <= dep < len(answer_list):
                raise ValueError(f"dependency {dep} out of range")
        value = 1 + max(depth(d, trail | {index}) for d in deps) if deps else 0
        depths[index] = value
        return value

    return [depth(i, frozenset()) for i in range(len(answer_list))]


def layer_widths(answer_list: Sequence[Mapping[str, Any]]) -> list[int]:
    """Real-tool calls per DAG layer (nodes of equal depth), layers without a real call left out."""
    depths = node_depths(answer_list)
    width: Counter[int] = Counter()
    for node, depth in zip(answer_list, depths):
        if node["action"]["name"] not in PSEUDO:
            width[depth] += 1
    return [width[d] for d in sorted(width)]


def _histogram(values: Sequence[int]) -> dict[str, int]:
    counts = Counter(values)
    return {str(k): counts[k] for k in sorted(counts)}


def dataset_statistics(sessions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts over a dataset.

    Returns:
        ``{"sessions", "tasks", "task_types": {type: n}, "turn_subtypes": {subtype: n},
        "calls_per_task": {calls: tasks}, "layer_widths": {width: layers},
        "tools_per_session": {tools: sessions}, "transitions": {k: sessions},
        "ask_nodes": n, "calls": n}``; histogram keys are strings, ascending.
    """
    types: Counter[str] = Counter()
    subtypes: Counter[str] = Counter()
    calls_per_task: list[int] = []
    widths: list[int] = []
    tools: list[int] = []
    transitions: list[int] = []
    asks = 0
    for session in sessions:
        types.update(session["english_task_types"])
        subtypes.update(session["english_turn_subtypes"])
        tools.append(len(session["english_tools"]))
        transitions.append(session_transitions(session["english_task_types"]))
        for answer_list in session["english_answer_list"]:
            names = [node["action"]["name"] for node in answer_list]
            calls_per_task.append(sum(1 for n in names if n not in PSEUDO))
            asks += sum(1 for n in names if n == ASK_USER)
            widths.extend(layer_widths(answer_list))
    return {
        "sessions": len(sessions),
        "tasks": sum(len(s["english_task_types"]) for s in sessions),
        "task_types": {t: types[t] for t in TASK_TYPES},
        "turn_subtypes": {t: subtypes[t] for t in TURN_SUBTYPES},
        "calls_per_task": _histogram(calls_per_task),
        "layer_widths": _histogram(widths),
        "tools_per_session": _histogram(tools),
        "transitions": _histogram(transitions),
        "ask_nodes": asks,
        "calls": sum(calls_per_task),
    }


def session_overview(session: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset browser's line for one session: ``{"id", "types", "subtypes", "tools", "calls", "transitions"}``."""
    return {
        "id": session["id"],
        "types": list(session["english_task_types"]),
        "subtypes": list(session["english_turn_subtypes"]),
        "tools": len(session["english_tools"]),
        "calls": [sum(1 for n in a if n["action"]["name"] not in PSEUDO) for a in session["english_answer_list"]],
        "transitions": session_transitions(session["english_task_types"]),
    }


def dataset_coverage(sessions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The dataset view's coverage and diversity (docs/coverage.md §2-§8) of the English side.

    Returns:
        ``{"statistics": wildtoolbench.bench.coverage.coverage_statistics(...), "comparison": wildtoolbench.bench.coverage.comparison_rows(...)}``,
        the comparison against the official set's published figures.
    """
    statistics = coverage_statistics(sessions, "en")
    return {"statistics": statistics, "comparison": comparison_rows(statistics)}
