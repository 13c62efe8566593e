"""The per-role yield table of generation (bench/generation_yield.py, docs/generation.md §7.1) on a
hand-made raw transcript."""

from __future__ import annotations

from wildtoolbench.bench.generation_yield import merge_yields, reason_code, session_yield, yield_lines

TRANSCRIPT = [
    {"id": "e0000", "role": "user", "task": 0, "content": "Thank you for providing the tools."},
    {
        "id": "e0001",
        "role": "rule_check",
        "target": "e0000",
        "verdict": "reject",
        "reason": '"Thank you for providing" thanks the user for information, as the assistant does',
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
        "reasons": {"not the user's voice": 1},
        "calls": 2,
        "input_tokens": 210,
        "output_tokens": 30,
        "seconds": 4.0,
    }
    assert table["planner"]["attempts"] == 3 and table["planner"]["accepted"] == 1
    assert table["planner"]["reasons"] == {
        "value not in the conversation": 1,
        "unknown tool": 1,
        "checker model": 1,
    }
    assert table["checker"]["attempts"] == 3 and table["checker"]["rejected"] == 2
    assert table["checker"]["reasons"] == {
        "rules: value not in the conversation": 1,
        "rules: unknown tool": 1,
        "model: checker model": 1,
    }
    assert table["checker"]["calls"] == 1
    assert table["tool_checker"]["attempts"] == 1 and table["tool_checker"]["reasons"] == {"rules: result count": 1}
    # the last tool result got no verdict: the session ended before it was judged
    assert (table["tool"]["attempts"], table["tool"]["rejected"], table["tool"]["unjudged"]) == (2, 1, 1)


def test_merge_and_print():
    one = session_yield(TRANSCRIPT, CALLS)
    total = merge_yields([one, one])
    assert total["planner"]["attempts"] == 6 and total["planner"]["reasons"]["unknown tool"] == 2
    assert total["user"]["seconds"] == 8.0
    lines = yield_lines(total)
    assert lines[0].split() == ["role", "attempts", "accepted", "rejected", "calls", "tokens", "in/out", "model", "s"]
    assert lines[1].split() == ["user", "4", "2", "2", "4", "420/60", "8.0"]
    assert lines[2].split() == ["2", "x", "not", "the", "user's", "voice"]
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == [
        "role",
        "user",
        "planner",
        "checker",
        "tool",
        "tool_checker",
    ]


def test_reason_codes():
    assert reason_code("this is the same decision that was rejected before; change the tool or the arguments") == (
        "repeats a rejected decision"
    )
    assert reason_code("action 0 (f): the same call was made already (action 0) and its result is shown") == (
        "repeats a call"
    )
    assert reason_code("action 0 (f): missing required parameter city") == "argument schema"
    assert reason_code("this task needs exactly one tool call") == "wrong step for the task type"
    assert reason_code("the message does not state word = apple: mention it") == "request lacks its values"
    assert reason_code("anything at all", "model") == "checker model"
    assert reason_code("something new") == "other"
