"""Public functions are documented; those of the scoring core and the evaluation graph cite the rule
they implement in the project's own docs (``docs/*.md``), and every cited section exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

RULE_MODULES = [
    "bench/args.py",
    "bench/harness/prompt.py",
    "bench/harness/matching.py",
    "bench/harness/record.py",
    "bench/metrics.py",
    "bench/paths.py",
    "bench/paths_fixed.py",
    "bench/pairing.py",
    "bench/compare.py",
    "bench/harness/outcome.py",
    "bench/schema.py",
    "bench/scoring.py",
    "bench/text_calls.py",
    "wildtoolbench/common/table.py",
    "wildtoolbench/scoring/outputs.py",
    "wildtoolbench/scoring/results.py",
    "wildtoolbench/scoring/run.py",
    "wildtoolbench/scoring/sorted_file.py",
    "wildtoolbench/scoring/stream.py",
    "graphs/evaluation.py",
    "models/messages.py",
    "nodes/evaluation/candidate.py",
    "nodes/evaluation/finish.py",
    "nodes/evaluation/match.py",
    "nodes/evaluation/prompt.py",
]
NO_RULE = {
    "bench/schema.py:Session.source",  # where a session was read from: bookkeeping, no benchmark rule
    "bench/schema.py:ValidationReport.ok",
    "nodes/evaluation/candidate.py:model_settings",  # provider connection settings: no benchmark rule
}
CITATION = re.compile(r"docs/([a-z_-]+\.md)(?: §(\d+(?:\.\d+)?))?")


def _public_functions(path: Path):
    def walk(body, prefix=""):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                yield prefix + node.name, ast.get_docstring(node)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield from walk(node.body, f"{node.name}.")

    yield from walk(ast.parse(path.read_text(encoding="utf-8")).body)


def test_every_public_function_has_a_docstring():
    files = [
        p
        for folder in ("bench", "graphs", "nodes", "models", "wildtoolbench")
        for p in sorted((REPO / folder).rglob("*.py"))
    ]
    assert len(files) > 30
    missing = [f"{p.relative_to(REPO)}:{name}" for p in files for name, doc in _public_functions(p) if not doc]
    assert missing == []


def test_scoring_core_and_evaluation_nodes_cite_the_rules_in_docs():
    missing = []
    for module in RULE_MODULES:
        for name, doc in _public_functions(REPO / module):
            key = f"{module}:{name}"
            if key not in NO_RULE and not CITATION.search(doc or ""):
                missing.append(key)
    assert missing == []


def _sections(markdown: str) -> set[str]:
    return set(re.findall(r"^#+ (\d+(?:\.\d+)?)\.? ", markdown, flags=re.M))


def test_every_citation_names_an_existing_docs_file_and_section():
    files = [
        p
        for folder in ("bench", "graphs", "nodes", "models", "wildtoolbench")
        for p in sorted((REPO / folder).rglob("*.py"))
    ]
    files.append(REPO / "README.md")
    files.extend(sorted((REPO / "docs" / "guides").glob("*.md")))
    broken = []
    for path in files:
        for match in CITATION.finditer(path.read_text(encoding="utf-8")):
            doc = REPO / "docs" / match.group(1)
            if not doc.is_file():
                broken.append(f"{path.relative_to(REPO)}: {match.group(0)} (no such file)")
            elif match.group(2) and match.group(2) not in _sections(doc.read_text(encoding="utf-8")):
                broken.append(f"{path.relative_to(REPO)}: {match.group(0)} (no such section)")
    assert broken == []
    spec_citation = re.compile(r"SPEC(?:\.md| section)? ?\d")
    assert not [p for p in files if spec_citation.search(p.read_text(encoding="utf-8"))], "cite docs/, not SPEC"
