"""The Checker model's verdicts, counted like rules (docs/generation.md §7.1, §11)."""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import ALL, Rule

_DOC = "docs/generation.md §2"

MODEL_RULES = (
    Rule("model.rejected", "model", ("checker",), ALL, "the Checker model rejected the output",
         "nodes.generation.checker.model_verdict_problems", _DOC),
    Rule("model.unreadable", "model", ("checker",), ALL, "the Checker model's verdict could not be read",
         "nodes.generation.checker.model_verdict_problems", _DOC),
)  # fmt: skip
