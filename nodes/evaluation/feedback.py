"""Feed the step's outcome back into the conversation (docs/evaluation.md §3)."""

from __future__ import annotations

from typing import Any

from graphs.evaluation_state import EvaluationState
from models.messages import to_langchain
from nodes.tracing import annotate_evaluation_node


async def feed_back(state: EvaluationState) -> dict[str, Any]:
    """Append the candidate's reply and the gold tool observations (or the gold user reply); next step (docs/evaluation.md §3)."""
    annotate_evaluation_node(state)
    return {
        "messages": [to_langchain(m) for m in state.get("feedback", [])],
        "feedback": [],
        "step": state["step"] + 1,
    }
