"""Decision rules: what a planner decision may hold for the task's type (docs/generation.md §2, §11)."""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import SMALL_STANDARD, Rule

_DOC = "docs/generation.md §2"
_CHECKS = "generation_checks.decision_errors"
_REPEAT = "generation_checks.repetition_errors"

DECISION_RULES = (
    Rule("decision.schema", "decision", ("planner", "session"), SMALL_STANDARD,
         "arguments that break the tool's parameter schema (docs/arguments.md)", "generation_checks.schema_errors",
         _DOC),
    Rule("decision.scorer_schema", "decision", ("planner",), SMALL_STANDARD,
         "arguments the evaluator's own schema check refuses", "generation_checks.scorer_schema_error", _DOC),
    Rule("decision.question_tool", "decision", ("planner",), SMALL_STANDARD,
         "a question about a tool that is not in the tool list", _CHECKS, _DOC),
    Rule("decision.question_parameters", "decision", ("planner",), SMALL_STANDARD,
         "a question whose missing_required_parameters is empty or names no parameter of the tool", _CHECKS, _DOC),
    Rule("decision.question_repeats", "decision", ("planner",), SMALL_STANDARD,
         "a question that asks for one parameter twice", _CHECKS, _DOC),
    Rule("decision.answer_type", "decision", ("planner",), SMALL_STANDARD,
         "an answer_type that is not 'tool' or 'chat', or does not fit the calls made", _CHECKS, _DOC),
    Rule("decision.answer_arguments", "decision", ("planner",), SMALL_STANDARD,
         "an answer with arguments besides answer_type", _CHECKS, _DOC),
    Rule("decision.task_type", "decision", ("planner",), SMALL_STANDARD,
         "a step the task's type does not allow (ST one call, MT several, CQ ask first, CC chat)", _CHECKS,
         "docs/generation.md §3"),
    Rule("decision.repeated_call", "decision", ("planner", "session"), SMALL_STANDARD,
         "a call with the same name and arguments as one made already in the task", _REPEAT, _DOC),
    Rule("decision.repeated_in_step", "decision", ("planner",), SMALL_STANDARD,
         "the same call twice in one step", _REPEAT, _DOC),
    Rule("decision.repeats_rejected", "decision", ("planner",), SMALL_STANDARD,
         "the same decision as one rejected at this step", _REPEAT, _DOC),
)  # fmt: skip
