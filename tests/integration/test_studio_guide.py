"""The Studio guide documents the context fields the served graphs have, and its example input runs
(issue 24 finding 11: the guide listed ``user_models``, ``planner_model`` ..., the schema had ``models``,
``base_urls``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wildtoolbench.graphs.evaluation import graph as evaluation_graph
from wildtoolbench.graphs.generation import graph as generation_graph

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "studio.md"
VALUES = {"reference", "fixed", "semantic", "en", "zh", "none", "answers", "strict", "small", "standard", "off"}
"""Backticked words of a context paragraph that are values of a field, not fields."""


def _paragraph(graph_id: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    match = re.search(rf"\*\*`{graph_id}`\*\*\. Context fields \(`[^`]+`\): (.*?) Input:", text, re.S)
    assert match, f"no context paragraph for {graph_id} in {GUIDE}"
    return match.group(1)


@pytest.mark.parametrize(("graph_id", "graph"), [("evaluation", evaluation_graph), ("generation", generation_graph)])
def test_the_guide_names_every_served_context_field_and_no_other(graph_id, graph):
    served = set(graph.get_context_jsonschema()["properties"])  # what langgraph dev serves to Studio
    named = set(re.findall(r"`([a-z_]+)`", _paragraph(graph_id))) - VALUES
    assert named == served, {"documented, not served": named - served, "served, not documented": served - named}


def test_the_guides_generation_input_is_a_session_plan():
    from wildtoolbench.bench.generation import SessionPlan

    text = GUIDE.read_text(encoding="utf-8")
    example = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))
    plan = SessionPlan(
        key=example["session_id"],
        index=0,
        type_path=tuple(example["layer_types"]),
        tool_line=0,
        tools=example["tools"],
        env_info=example["env_info"],
        mt_variants=tuple(example["mt_variants"]),
        strategies=tuple(example["strategies"]),
        seed=example["seed"],
        language=example["language"],
        user_model_index=example["user_model_index"],
    )
    assert plan.as_state() == example
    assert set(example) <= set(generation_graph.get_input_jsonschema()["properties"])
