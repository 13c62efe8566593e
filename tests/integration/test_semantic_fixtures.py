"""Semantic scoring over every reference fixture candidate, on both language sides: a task no equivalence rule
touches scores exactly as in fixed mode (docs/semantic-mode.md §3), and every flip names the rule behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wildtoolbench.bench.equivalence import EQUIVALENCE_RULES
from wildtoolbench.bench.schema import load_sessions
from wildtoolbench.bench.scoring import score_session
from wildtoolbench.bench.strategy import FIXED, SEMANTIC
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import run_eval

FIXTURES = Path("/work/shared/fixtures/reference")
if not FIXTURES.is_dir():  # the shared fixtures sit beside the repository
    FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "reference"
pytestmark = pytest.mark.skipif(not (FIXTURES / "candidates.jsonl").is_file(), reason="reference fixtures absent")


def _candidates() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    if (FIXTURES / "candidates.jsonl").is_file():
        for line in (FIXTURES / "candidates.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            found.setdefault(record["candidate"], []).append(record["session_id"])
    return found


CANDIDATES = _candidates()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_semantic_equals_fixed_wherever_no_rule_applies(tmp_path, language):
    sessions = {s.id: s for s in load_sessions(FIXTURES / "sessions.jsonl", tasks=4)}
    flips: dict[str, int] = {}
    touched = 0
    for candidate, ids in sorted(CANDIDATES.items()):
        chosen = [sessions[i].model_dump() for i in ids]
        context = EvaluationContext(
            model=f"replay:{FIXTURES / 'candidates.jsonl'}#{candidate}",
            scoring=FIXED.name,
            language=language,
            dataset=str(FIXTURES / "sessions.jsonl"),
        )
        out = tmp_path / f"{candidate}-{language}"
        run_eval(chosen, context, out, progress=False)
        for line in (out / "result.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            session = sessions[record["id"]]
            fixed = score_session(record, session, scoring=FIXED, language=language)
            semantic = score_session(record, session, scoring=SEMANTIC, language=language)
            for before, after in zip(fixed, semantic):
                rules = after.pop("equivalences")
                if rules:
                    touched += 1
                    assert set(rules) <= set(EQUIVALENCE_RULES)
                    if before["label"] != after["label"]:
                        assert (before["label"], after["label"]) == ("error", "correct")
                        for rule in rules:
                            flips[rule] = flips.get(rule, 0) + 1
                    continue
                for step in after["inference_log"].values():
                    if isinstance(step, dict):
                        assert "current_action_arguments_equivalences" not in step.get("inference_output", {})
                assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True), (candidate, record["id"])
    # the fixtures plant equivalent answers (a float for an int, an int in a string, extra and missing optional keys)
    assert touched > 0 and sum(flips.values()) > 0
