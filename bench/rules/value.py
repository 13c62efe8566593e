"""Value rules: argument values and user details that nothing in the conversation supports (docs/generation.md §2, §11)."""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, STANDARD, Rule

_DOC = "docs/generation.md §2"
_QDOC = "docs/generation.md §10"

VALUE_RULES = (
    Rule("value.not_in_context", "value", ("planner", "session"), SMALL,
         "an argument value said nowhere in the conversation (literal matching, docs/audit.md §5.2)",
         "generation_checks.context_errors", _DOC),
    Rule("value.invented", "value", ("planner", "session"), STANDARD,
         "an id, number or date that nothing in the conversation says or derives (docs/audit.md §5.2)",
         "generation_checks.context_errors", _DOC),
    Rule("value.date_misplaced", "value", ("planner", "session"), SMALL_STANDARD,
         "a date given to a parameter about no date or time", "generation_quality.date_misplaced", _DOC),
    Rule("value.shared", "value", ("planner", "session"), SMALL,
         "one text value given to two parameters of a call", "generation_quality.shared_value_errors", _DOC),
    Rule("value.placeholder", "value", ("user", "session"), SMALL_STANDARD,
         "a placeholder value (example, string, <city>, your_api_key)", "generation_quality.placeholder_problem",
         _QDOC, hints={"user": "placeholder"}),
    Rule("value.copies_description", "value", ("user",), SMALL_STANDARD,
         "a value that copies a tool's or parameter's description", "generation_quality.placeholder_problem",
         _QDOC, hints={"user": "placeholder"}),
    Rule("value.empty", "value", ("user", "session"), SMALL_STANDARD,
         "an empty text value", "nodes.generation.user.message_problems", _QDOC, hints={"user": "placeholder"}),
    Rule("value.unstated", "value", ("user",), SMALL,
         "a user message that does not state the details it was written for",
         "nodes.generation.user.message_problems", _QDOC, hints={"user": "values"}),
    Rule("value.gives_missing", "value", ("user",), SMALL_STANDARD,
         "a clarification task's message that gives the value the assistant must ask for",
         "nodes.generation.user.message_problems", "docs/generation.md §4.3", hints={"user": "missing"}),
    Rule("value.concrete", "value", ("session",), SMALL,
         "a tool task's first message that names no concrete value and is not followed by a question",
         "generation_quality.is_concrete", _QDOC),
)  # fmt: skip
