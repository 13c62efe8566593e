"""The one retry loop (nodes/generation/retry.py, docs/generation.md §4.3, §7): its policy, and no role
module with a loop of its own."""

from __future__ import annotations

import ast
from pathlib import Path

from wildtoolbench.bench.rules import Problem
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.retry import accepted_try, exhausted, rejected_try, tries, verdict_entry
from wildtoolbench.nodes.generation.state import State

NODES = Path(__file__).resolve().parents[3] / "nodes" / "generation"


def _state(attempts=0):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    return State(tools=tools, layer_types=("ST",), env_info="2024-05-03 10:12:00 Friday", seed=1, attempts=attempts)


def test_the_policy_counts_tries_and_fails_on_the_last():
    context = Context(max_retries=3)
    assert list(tries(context)) == [0, 1, 2] and list(tries(Context(max_retries=1))) == [0]
    assert [exhausted(n, context) for n in (0, 2, 3, 4)] == [False, False, True, True]
    second = rejected_try(_state(attempts=1), context, feedback="fix it", failure="rejected {attempts} times: x")
    assert second == {"verdict": "reject", "attempts": 2, "feedback": "fix it"}
    last = rejected_try(_state(attempts=2), context, feedback="fix it", failure="rejected {attempts} times: {{x}}",
                        rules=["decision.schema"])  # fmt: skip
    assert last["status"] == "failed" and last["failure_reason"] == "rejected 3 times: {x}"
    assert last["failure_rules"] == ["decision.schema"] and "failure_rules" not in second
    assert accepted_try()["attempts"] == 0 and accepted_try()["feedback"] == ""


def test_a_verdict_entry_carries_the_rule_ids():
    problems = [Problem("unknown tool 'g'", "structure.unknown_tool"), Problem("bad", "decision.schema")]
    entry = verdict_entry(_state(), role="checker", task=0, target="e0001", problems=problems, checked="decision")
    assert list(entry) == ["id", "role", "task", "target", "checked", "verdict", "reason", "reasons", "rules", "source"]
    assert entry["verdict"] == "reject" and entry["rules"] == ["structure.unknown_tool", "decision.schema"]
    assert entry["reason"] == "unknown tool 'g'; bad"
    accepted = verdict_entry(_state(), role="checker", task=0, target="e0001", problems=[], source="model")
    assert accepted["verdict"] == "accept" and accepted["rules"] == [] and "checked" not in accepted


def _loops_on_max_retries(tree: ast.AST) -> list[int]:
    """Lines that compare against, or loop over, ``max_retries``: a retry loop of the module's own."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Compare, ast.For, ast.While)):
            if any(isinstance(n, ast.Attribute) and n.attr == "max_retries" for n in ast.walk(node)):
                lines.append(node.lineno)
    return lines


def test_no_role_module_has_a_retry_loop_of_its_own():
    """Every role's tries are counted by retry.py: the text roles run write_text, the checker and an added
    role's send-back record a rejection with rejected_try (the planner and tool loop runs through the graph)."""
    own = {
        path.name: lines
        for path in sorted(NODES.glob("*.py"))
        if path.name != "retry.py" and (lines := _loops_on_max_retries(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert own == {}
    assert _loops_on_max_retries(ast.parse((NODES / "retry.py").read_text(encoding="utf-8")))
