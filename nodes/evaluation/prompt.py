"""Nodes that open a session and each of its tasks (docs/evaluation.md §2)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Command

from wildtoolbench.bench import harness as inference
from wildtoolbench.bench.io import json_lines
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.strategy import scoring_strategy
from wildtoolbench.models.messages import to_langchain
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.evaluation.state import EvaluationState
from wildtoolbench.nodes.tracing import annotate_evaluation_node


def find_session(path: str, session_id: str) -> dict[str, Any]:
    """The dataset line with ``"id" == session_id`` in the JSON Lines file ``path`` (docs/dataset.md).

    Raises:
        ValueError: no dataset path given, a line that is not JSON (file and line
            named), or no such session.
    """
    if not path:
        raise ValueError(
            "the input names a session by 'session_id' but no dataset is set (context 'dataset' / WTB_DATASET)"
        )
    for _, row in json_lines(path):
        if isinstance(row, dict) and row.get("id") == session_id:
            return row
    raise ValueError(f"{path}: no session with id {session_id!r}")


async def load_session(state: EvaluationState, runtime: Runtime[EvaluationContext]) -> dict[str, Any]:
    """Resolve the input session and reset the per-session state.

    Reads ``state["session"]`` (or looks ``state["session_id"]`` up in the
    context's dataset), sets the side that runs (``context.language``, docs/dataset.md §2.2),
    rewrites that side's tools float -> number (docs/evaluation.md §2) and sets
    the model name written into the record (``context.candidate.name``) and the scoring mode of the run
    (``context.scoring``, docs/fixed-mode.md §1).
    """
    session = state.get("session") or find_session(runtime.context.dataset, state.get("session_id", ""))
    scoring = scoring_strategy(getattr(runtime.context, "scoring", None)).name
    language = getattr(runtime.context, "language", None) or "en"
    return {
        "session": session,
        "session_id": session["id"],
        "model_name": runtime.context.candidate.name,
        "scoring": scoring,
        "language": language,
        "tools": inference.float_to_number(session[fields_for(language).tools], scoring=scoring),
        "task_idx": 0,
        "requests": 0,
        "results": [],
        "error": None,
        "error_detail": None,
    }


async def start_task(state: EvaluationState) -> Command[Literal["call_candidate", "finish_session"]]:
    """The ``build_prompt`` node: start task ``task_idx`` with the system message, the gold history of earlier
    tasks and the task's user message (docs/evaluation.md §2).

    Replaces ``messages`` and opens a fresh task result. A gold history the
    reference cannot replay (quirk 11) ends the session with an inference error;
    with the inference fixes (``state["scoring"]``) every gold history replays (docs/fixed-mode.md §4).
    """
    task_idx = state["task_idx"]
    annotate_evaluation_node(state, with_step=False)
    try:
        prompt = inference.build_prompt(
            state["session"], task_idx, scoring=state.get("scoring"), language=state.get("language", "en")
        )
    except inference.InferenceError as exc:
        return Command(goto="finish_session", update={"error": str(exc), "error_detail": exc.detail})
    return Command(
        goto="call_candidate",
        update={
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *(to_langchain(m) for m in prompt)],
            "step": 0,
            "prunes": [],
            "response": None,
            "task_result": inference.new_task_result(task_idx, prompt[-1]),
        },
    )
