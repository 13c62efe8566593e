"""Result rules: simulated tool results that are no data (docs/generation.md §2, §11)."""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import SMALL_STANDARD, Rule

_DOC = "docs/generation.md §2"
_CHECKS = "generation_checks.results_errors"

RESULT_RULES = (
    Rule("result.empty", "result", ("tool",), SMALL_STANDARD,
         "an empty result (null, \"\", {} or [])", _CHECKS, _DOC),
    Rule("result.copies_definition", "result", ("tool", "session"), SMALL_STANDARD,
         "a result that pastes its tool's definition or descriptions", "generation_quality.copies_definition", _DOC),
    Rule("result.copies_other", "result", ("tool", "session"), SMALL_STANDARD,
         "a result (60+ characters) identical to the result of a different call", _CHECKS, _DOC),
)  # fmt: skip
