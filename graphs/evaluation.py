"""Evaluation graph: one WildToolBench session against a candidate model (docs/evaluation.md §7).

    load_session -> build_prompt -> call_candidate -> match_response --+--> call_candidate  (task goes on)
                        ^                                              |
                        +----------------------------------------------+  (task ended, tasks left)
                                                                       |
                                                                       +--> finish_session -> END  (last task ended)

A model request costs two super-steps: ``call_candidate`` sends the messages
and records the raw reply; ``match_response`` judges it against the gold DAG
and logs the step. When the task goes on, ``match_response`` also appends the
reply and the gold observations (or the gold user reply) to the messages and
moves to the next step; when the task ends, it stores the task's result and
moves to the next task (``build_prompt``) or, after the last one, to
``finish_session``. ``build_prompt`` and ``match_response`` also jump to
``finish_session`` when the reference harness cannot run the session
(quirk 11). Logic lives in ``nodes/`` and ``bench/harness/``; this module only
wires.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from wildtoolbench.graphs.sync_nodes import add_sync_counterparts
from wildtoolbench.models.server_policy import carry_errors
from wildtoolbench.nodes.evaluation.candidate import call_candidate
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.nodes.evaluation.finish import finish_session
from wildtoolbench.nodes.evaluation.match import match_response
from wildtoolbench.nodes.evaluation.prompt import load_session, start_task
from wildtoolbench.nodes.evaluation.state import EvaluationInput, EvaluationOutput, EvaluationState

RECURSION_LIMIT = 10_000
"""Super-steps allowed per session (4 tasks x a few steps x 2 nodes needs far more than LangGraph's default 25)."""


def build_evaluation_graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """Compile the evaluation graph (input: ``EvaluationInput``, output: ``EvaluationOutput``; docs/evaluation.md §7).

    Args:
        config: run config merged into every run of the graph (e.g. ``tags``,
            ``metadata``, ``callbacks``, ``recursion_limit``); the default
            recursion limit is :data:`RECURSION_LIMIT`. This signature also lets
            ``langgraph.json`` point at the factory instead of ``graph``.
    """
    builder = StateGraph(
        EvaluationState,
        context_schema=EvaluationContext,
        input_schema=EvaluationInput,
        output_schema=EvaluationOutput,
    )
    # on a server, a node's error reaches the caller with its message, redacted (docs/settings.md §8)
    builder.add_node("load_session", carry_errors(load_session))
    builder.add_node("build_prompt", carry_errors(start_task))
    builder.add_node("call_candidate", carry_errors(call_candidate))
    builder.add_node("match_response", carry_errors(match_response))
    builder.add_node("finish_session", carry_errors(finish_session))

    builder.add_edge(START, "load_session")
    builder.add_edge("load_session", "build_prompt")
    builder.add_edge("call_candidate", "match_response")
    builder.add_edge("finish_session", END)
    add_sync_counterparts(builder)  # invoke / stream as well as ainvoke / astream
    return builder.compile(name="evaluation").with_config({"recursion_limit": RECURSION_LIMIT, **(config or {})})


graph = build_evaluation_graph()
