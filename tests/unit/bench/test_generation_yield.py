"""The per-role yield table of generation (bench/generation_yield.py, docs/generation.md §7.1) on a
hand-made raw transcript."""

from __future__ import annotations

from wildtoolbench.bench.generation_yield import entry_rules, merge_yields, session_yield, yield_lines

TRANSCRIPT = [
    {"id": "e0000", "role": "user", "task": 0, "content": "Thank you for providing the tools."},
    {
        "id": "e0001",
        "role": "rule_check",
        "target": "e0000",
        "verdict": "reject",
        "reason": '"Thank you for providing" thanks the user for information, as the assistant does',
        "rules": ["voice.thanks"],
        "source": "rules",
    },
    {"id": "e0002", "role": "user", "task": 0, "content": "What does 'apple' mean?"},
    {"id": "e0003", "role": "planner", "task": 0, "content": "{}"},
    {
        "id": "e0004",
        "role": "checker",
        "target": "e0003",
        "checked": "decision",
        "verdict": "reject",
        "reason": "x",
        "reasons": [
            'action 0 (getWordDefinitions): word = "example" appears nowhere in the conversation; use the value the user gave',
            "unknown tool 'getTheMoon' (not in the tool list)",
        ],
        "rules": ["value.not_in_context", "structure.unknown_tool"],
        "source": "rules",
    },
    {"id": "e0005", "role": "planner", "task": 0, "content": "{}"},
    {
        "id": "e0006",
        "role": "checker",
        "target": "e0005",
        "checked": "decision",
        "verdict": "reject",
        "reason": "The request does not involve any tool calls.",
        "source": "model",
    },
    {"id": "e0007", "role": "planner", "task": 0, "content": "{}"},
    {
        "id": "e0008",
        "role": "checker",
        "target": "e0007",
        "checked": "decision",
        "verdict": "accept",
        "source": "rules",
    },
    {"id": "e0009", "role": "tool", "task": 0, "content": "{}"},
    {
        "id": "e0010",
        "role": "checker",
        "target": "e0009",
        "checked": "results",
        "verdict": "reject",
        "reason": "expected 1 results (one per call), got 2",
        "rules": ["structure.result_count"],
        "source": "rules",
    },
    {"id": "e0011", "role": "tool", "task": 0, "content": "{}"},
]
CALLS = [
    {"role": "user", "seconds": 2.5, "input_tokens": 100, "output_tokens": 20},
    {"role": "user", "seconds": 1.5, "input_tokens": 110, "output_tokens": 10},
    {"role": "planner", "seconds": 4.0, "input_tokens": 900, "output_tokens": 50},
    {"role": "checker", "seconds": 1.0, "input_tokens": 700, "output_tokens": 15},
]


def test_session_yield_counts_every_role_and_reason():
    table = session_yield(TRANSCRIPT, CALLS)
    assert table["user"] == {
        "attempts": 2,
        "accepted": 1,
        "rejected": 1,
        "unjudged": 0,
        "fallbacks": 0,
        "reasons": {"voice.thanks": 1},
        "calls": 2,
        "input_tokens": 210,
        "output_tokens": 30,
        "seconds": 4.0,
    }
    assert table["planner"]["attempts"] == 3 and table["planner"]["accepted"] == 1
    assert table["planner"]["reasons"] == {
        "value.not_in_context": 1,
        "structure.unknown_tool": 1,
        "model.rejected": 1,
    }
    assert table["checker"]["attempts"] == 3 and table["checker"]["rejected"] == 2
    assert table["checker"]["reasons"] == {
        "rules: value.not_in_context": 1,
        "rules: structure.unknown_tool": 1,
        "model: model.rejected": 1,
    }
    assert table["checker"]["calls"] == 1
    assert table["tool_checker"]["attempts"] == 1 and table["tool_checker"]["reasons"] == {"rules: structure.result_count": 1}
    # the last tool result got no verdict: the session ended before it was judged
    assert (table["tool"]["attempts"], table["tool"]["rejected"], table["tool"]["unjudged"]) == (2, 1, 1)


def test_merge_and_print():
    one = session_yield(TRANSCRIPT, CALLS)
    total = merge_yields([one, one])
    assert total["planner"]["attempts"] == 6 and total["planner"]["reasons"]["structure.unknown_tool"] == 2
    assert total["user"]["seconds"] == 8.0
    lines = yield_lines(total)
    assert lines[0].split() == ["role", "attempts", "accepted", "rejected", "calls", "tokens", "in/out", "model", "s"]
    assert lines[1].split() == ["user", "4", "2", "2", "4", "420/60", "8.0"]
    assert lines[2].split() == ["2", "x", "voice.thanks"]
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == [
        "role",
        "user",
        "planner",
        "checker",
        "tool",
        "tool_checker",
    ]


def test_rejections_count_by_the_rule_ids_the_checks_attach():
    """The ids come from the checks themselves (docs/generation.md §11), never from the reasons' words: a
    reworded reason counts under the same id, and a verdict written before the catalog counts as unclassified."""
    from wildtoolbench.bench.rules import rule_ids
    from wildtoolbench.bench.rules.decision import decision_errors, repetition_errors

    tools = {"f": {"name": "f", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
    nodes = [{"name": "f", "arguments": {"city": "Oslo"}, "step": 0}]
    decision = {"actions": [{"name": "f", "arguments": {"city": "Oslo"}}, {"name": "g", "arguments": {}}]}
    problems = decision_errors(decision, tools=tools, layer_type="MT", nodes=nodes)
    problems += repetition_errors(decision, nodes=nodes)
    assert rule_ids(problems) == ["structure.unknown_tool", "decision.repeated_call"]
    verdict = {"id": "e1", "role": "checker", "target": "e0", "checked": "decision", "verdict": "reject",
               "reasons": ["reworded"] * 2, "rules": rule_ids(problems), "source": "rules"}  # fmt: skip
    table = session_yield([{"id": "e0", "role": "planner"}, verdict])
    assert table["planner"]["reasons"] == {"structure.unknown_tool": 1, "decision.repeated_call": 1}
    assert entry_rules({"reasons": ["old prose"], "source": "rules"}) == ["unclassified"]
    assert entry_rules({"reason": "too late", "source": "model"}) == ["model.rejected"]
