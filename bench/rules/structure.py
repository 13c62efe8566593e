"""Structural rules: without them no session can be built, so every profile keeps them (docs/generation.md §11)."""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import ALL, Rule

_DOC = "docs/generation.md §2"
_CHECKS = "rules.decision.decision_errors"

STRUCTURE_RULES = (
    Rule("structure.unreadable", "structure", ("planner", "tool"), ALL,
         "the output is no readable JSON of the expected shape", "nodes.generation.checker.output_problems", _DOC),
    Rule("structure.no_action", "structure", ("planner",), ALL, "a decision without an action", _CHECKS, _DOC),
    Rule("structure.not_alone", "structure", ("planner",), ALL,
         "a question or the answer shares its step with another action", _CHECKS, _DOC),
    Rule("structure.too_many_calls", "structure", ("planner",), ALL,
         "more tool calls in one step than a gold DAG can hold (6)", _CHECKS, _DOC),
    Rule("structure.arguments_object", "structure", ("planner",), ALL,
         "an action's arguments are no JSON object", _CHECKS, _DOC),
    Rule("structure.depends_on", "structure", ("planner",), ALL,
         "depends_on names no earlier action of the task", _CHECKS, _DOC),
    Rule("structure.unknown_tool", "structure", ("planner", "session"), ALL,
         "a call of a tool that is not in the tool list", _CHECKS, _DOC),
    Rule("structure.result_count", "structure", ("tool",), ALL,
         "the tool output is no list with one result per call", "rules.result.results_errors", _DOC),
    Rule("structure.empty_text", "structure", ("user", "agent"), ALL,
         "an empty user message or assistant text", "nodes.generation.user.message_problems", "docs/generation.md §10",
         hints={"user": "empty"}),
)  # fmt: skip
