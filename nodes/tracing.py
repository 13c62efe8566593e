"""Task and step metadata that graph nodes attach to their own LangSmith runs.

LangGraph and LangChain already trace every node and model call; these helpers add the
benchmark's coordinates (task index, task type, turn subtype, step index, step label) to the run
of the node that is executing. Nothing is sent when tracing is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.terms import FIRST_TURN


def task_metadata(task_idx: int, task_type: str | None, turn_subtype: str | None) -> dict[str, Any]:
    """Metadata of a task's runs: ``task_idx`` (0-based), ``task_type``, ``turn_subtype`` (``First Turn`` for task 0).

    ``turn_subtype`` is the session's ``english_turn_subtypes[task_idx - 1]`` for later tasks (docs/metrics.md).
    """
    return {
        "task_idx": task_idx,
        "task_type": task_type,
        "turn_subtype": turn_subtype if turn_subtype is not None else (FIRST_TURN if task_idx == 0 else None),
    }


def turn_subtype_of(session: Mapping[str, Any], task_idx: int, language: str = "en") -> str | None:
    """The turn subtype of task ``task_idx`` of ``session``: ``First Turn`` for task 0, else the stored label."""
    if task_idx == 0:
        return FIRST_TURN
    subtypes = session.get(fields_for(language).turn_subtypes) or []
    return subtypes[task_idx - 1] if task_idx - 1 < len(subtypes) else None


def task_type_of(session: Mapping[str, Any], task_idx: int, language: str = "en") -> str | None:
    """The task type of task ``task_idx`` of ``session`` (``english_task_types`` for ``en``)."""
    types = session.get(fields_for(language).task_types) or []
    return types[task_idx] if task_idx < len(types) else None


def step_metadata(
    task_idx: int,
    step_idx: int,
    step_label: str | None = None,
    *,
    task_type: str | None = None,
    turn_subtype: str | None = None,
) -> dict[str, Any]:
    """Metadata of a step's runs: task metadata plus ``step_idx`` and ``step_label``.

    ``step_label`` is the step's ``current_action_name_label`` (``correct`` / ``error``) once known,
    or a role label during generation (``planner``, ``checker``...).
    """
    meta = task_metadata(task_idx, task_type, turn_subtype)
    meta["step_idx"] = step_idx
    if step_label is not None:
        meta["step_label"] = step_label
    return meta


def annotate_current_run(metadata: Mapping[str, Any] | None = None, tags: list[str] | None = None) -> bool:
    """Add ``metadata`` / ``tags`` to the LangSmith run of the code that is executing (a graph node).

    Inside a LangGraph node the current run is the node's run; the additions are sent with the
    run's end. Does nothing when tracing is off.

    Returns:
        ``True`` when a run was annotated.
    """
    try:
        from langsmith.run_helpers import get_current_run_tree
    except ImportError:  # pragma: no cover - langsmith is a dependency
        return False
    run = get_current_run_tree()
    if run is None:
        return False
    if metadata:
        run.add_metadata(dict(metadata))
    if tags:
        run.add_tags(list(tags))
    return True


def evaluation_node_metadata(
    state: Mapping[str, Any],
    *,
    with_step: bool = True,
    step_label: str | None = None,
    task_label: str | None = None,
) -> dict[str, Any]:
    """Task / step metadata of an evaluation-graph node run, read from the graph state.

    Args:
        state: the evaluation state (``session``, ``task_idx``, ``step``, ``language``: the labels
            are those of the side that runs).
        with_step: include ``step_idx`` (nodes inside the step loop).
        step_label: the step's ``current_action_name_label`` once the matcher has judged it.
        task_label: the task's ``action_name_label`` when the task is finished.

    Returns:
        ``{"task_idx", "task_type", "turn_subtype"[, "step_idx"][, "step_label"][, "task_label"]}``.
    """
    session = state.get("session") or {}
    task_idx = int(state.get("task_idx") or 0)
    language = state.get("language") or "en"
    meta = task_metadata(
        task_idx, task_type_of(session, task_idx, language), turn_subtype_of(session, task_idx, language)
    )
    if with_step:
        meta["step_idx"] = int(state.get("step") or 0)
    if step_label is not None:
        meta["step_label"] = step_label
    if task_label is not None:
        meta["task_label"] = task_label
    return meta


def annotate_evaluation_node(state: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Attach :func:`evaluation_node_metadata` to the running node's LangSmith run; returns the metadata."""
    meta = evaluation_node_metadata(state, **kwargs)
    annotate_current_run(meta)
    return meta


def generation_node_metadata(state: Any, role: str) -> dict[str, Any]:
    """Task / step metadata of a generation-graph role call, read from the generation state.

    Args:
        state: the generation ``State`` (attributes ``tasks``, ``layer_types``, ``strategies``) or a mapping.
        role: ``user`` / ``planner`` / ``checker`` / ``tool`` / ``agent``; recorded as ``step_label``.

    Returns:
        ``{"task_idx", "task_type" (the layer type: ST/MT/CQ/CC), "turn_subtype" (the implicit-intent
        strategy, ``First Turn`` for task 0), "step_idx" (planner steps already taken in the task),
        "step_label": role}``.
    """

    def get(name: str) -> Any:
        return state.get(name) if isinstance(state, Mapping) else getattr(state, name, None)

    tasks = get("tasks") or []
    task_idx = max(len(tasks) - 1, 0)
    layer_types = get("layer_types") or []
    strategies = get("strategies") or []
    nodes = (tasks[-1].get("nodes") or []) if tasks else []
    steps = {n.get("step") for n in nodes if isinstance(n, Mapping)}
    return step_metadata(
        task_idx,
        len(steps),
        role,
        task_type=layer_types[task_idx] if task_idx < len(layer_types) else None,
        turn_subtype=(strategies[task_idx] or None) if task_idx < len(strategies) and task_idx > 0 else None,
    )
