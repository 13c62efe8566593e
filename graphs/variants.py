"""Variant graph (docs/variants.md §5): one node per registered factor, run in registration order.

Wiring only, all of it from the factor registry (``wildtoolbench.nodes.variants.registry``): a factor
not asked for in the input passes. ``langgraph dev`` shows it as ``variants`` (langgraph.json); each
factor's node is a run of its own in LangSmith traces.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from wildtoolbench.nodes.variants.registry import registered_factors
from wildtoolbench.nodes.variants.state import VariantState


def build_graph() -> StateGraph:
    """The uncompiled variant graph: START -> each registered factor in order -> END."""
    builder = StateGraph(VariantState)
    previous = START
    for factor in registered_factors():
        builder.add_node(factor.name, factor.node)
        builder.add_edge(previous, factor.name)
        previous = factor.name
    builder.add_edge(previous, END)
    return builder


graph = build_graph().compile(name="variants")
