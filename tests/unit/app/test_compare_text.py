"""What ``wtb compare`` prints under its verdict: a warning when the paired sessions are few (docs/trials.md §6)."""

from __future__ import annotations

from wildtoolbench.bench.trials import FEW_PAIRED_SESSIONS
from wildtoolbench.comparison.runs import comparison_text


def _comparison(sessions: int) -> dict:
    row = {"a": 0.75, "b": 0.5, "value": 0.25, "low": 0.1, "high": 0.4, "mdd": 0.2, "verdict": "A better"}
    return {
        "a": {"model_name": "m1", "path": "runs/a", "trials": [1, 1]},
        "b": {"model_name": "m2", "path": "runs/b", "trials": [1, 1]},
        "sessions": sessions,
        "tasks": sessions * 4,
        "scoring": "reference",
        "language": "en",
        "alpha": 0.05,
        "power": 0.8,
        "task": row,
        "session": row,
        "verdict": "A better",
    }


def test_few_paired_sessions_add_a_note_under_the_verdict():
    lines = comparison_text(_comparison(FEW_PAIRED_SESSIONS - 1)).splitlines()
    assert lines[-2] == "verdict: A better (task accuracy)"
    assert lines[-1] == (
        "note: only 19 paired sessions, fewer than 20: the interval is rough, read the verdict as a hint "
        "(docs/trials.md §6)"
    )


def test_enough_paired_sessions_print_the_verdict_alone():
    lines = comparison_text(_comparison(FEW_PAIRED_SESSIONS)).splitlines()
    assert lines[-1] == "verdict: A better (task accuracy)"
    assert lines[2] == "20 paired sessions, 80 tasks; scoring reference, language en"
