"""Public functions are documented; those of the scoring core and the evaluation graph cite their SPEC section."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SPEC_MODULES = [
    "bench/args.py", "bench/harness/prompt.py", "bench/harness/matching.py", "bench/harness/record.py", "bench/metrics.py", "bench/paths.py", "wtb/table.py",
    "bench/schema.py", "wtb/score_run.py", "bench/scoring.py", "graphs/evaluation.py",
    "nodes/candidate.py", "nodes/feedback.py", "nodes/finish.py", "nodes/matcher.py", "models/messages.py",
    "nodes/prompt.py",
]  # fmt: skip
NO_SPEC_SECTION = {
    "bench/schema.py:Session.source",  # where a session was read from: bookkeeping, no SPEC rule
    "bench/schema.py:ValidationReport.ok",
    "nodes/candidate.py:model_settings",  # provider connection settings: no SPEC rule
}


def _public_functions(path: Path):
    def walk(body, prefix=""):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                yield prefix + node.name, ast.get_docstring(node)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield from walk(node.body, f"{node.name}.")

    yield from walk(ast.parse(path.read_text(encoding="utf-8")).body)


def test_every_public_function_has_a_docstring():
    files = [p for folder in ("bench", "graphs", "nodes", "models", "wtb") for p in sorted((REPO / folder).rglob("*.py"))]
    assert len(files) > 30
    missing = [f"{p.relative_to(REPO)}:{name}" for p in files for name, doc in _public_functions(p) if not doc]
    assert missing == []


def test_scoring_core_and_evaluation_nodes_cite_the_spec():
    missing = []
    for module in SPEC_MODULES:
        for name, doc in _public_functions(REPO / module):
            key = f"{module}:{name}"
            if key not in NO_SPEC_SECTION and "SPEC" not in (doc or ""):
                missing.append(key)
    assert missing == []
