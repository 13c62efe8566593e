"""The variant graph (docs/variants.md §5): one node per registered factor, registered in langgraph.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wildtoolbench.graphs.variants import build_graph, graph
from wildtoolbench.nodes.variants.registry import Factor, register_factor, registered_factors

ROOT = Path(__file__).resolve().parents[3]


def test_every_registered_factor_is_a_node_in_order():
    names = [f.name for f in registered_factors()]
    assert names == ["explicit", "transitions", "names", "distractors", "paraphrase"]
    assert [n for n in graph.get_graph().nodes if not n.startswith("__")] == names
    assert [f.name for f in registered_factors() if f.calls_model] == ["paraphrase"]
    with pytest.raises(ValueError, match="already registered"):
        register_factor(Factor("names", lambda state: {}))


def test_langgraph_json_registers_the_variant_graph():
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert config["graphs"]["variants"] == "./graphs/variants.py:graph"


def test_a_run_makes_only_the_factors_asked_for(reference_dir: Path):
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    state = (
        build_graph()
        .compile()
        .invoke({"sessions": [json.loads(line) for line in lines], "factors": ["names"], "language": "en", "seed": 0})
    )
    assert [r["factor"] for r in state["results"]] == ["names"]
    assert len(state["results"][0]["variants"]) == 8  # 2 sessions x 4 tasks


def test_each_model_role_belongs_to_a_registered_factor():
    roles = {f.name: f.roles for f in registered_factors()}
    assert roles == {
        "explicit": ("explicit",),
        "transitions": ("user", "agent"),
        "names": (),
        "distractors": (),
        "paraphrase": ("paraphrase",),
    }
