"""The published runner's error records ``{"id", "result": "Error during inference: ..."}`` carry no
``model_name``; ``wtb score`` scores them with the model given by ``--model-name`` or named by the file's
other records (issue 24 finding 10, docs/scoring.md §5.1; ``wtb score`` itself:
tests/integration/test_score_published_records.py). Before the fix every such file was refused
(``model_name: missing``), 23 of the 23 published result files."""

from __future__ import annotations

import pytest

from wildtoolbench.bench.scoring import MODEL_NAME_MISSING, ResultRecordError, record_identity, with_model_name

PUBLISHED_ERROR = {"id": "wild_tool_bench_1", "result": "Error during inference: 'parameters'"}


def test_a_record_naming_no_model_gets_the_given_one_after_its_id():
    completed = with_model_name(PUBLISHED_ERROR, "claude-x")
    assert list(completed) == ["id", "model_name", "result"]
    assert record_identity(completed) == ("wild_tool_bench_1", "claude-x")
    assert PUBLISHED_ERROR == {"id": "wild_tool_bench_1", "result": "Error during inference: 'parameters'"}


def test_a_record_naming_a_model_keeps_it_and_none_changes_nothing():
    named = {"id": "a", "model_name": "m", "result": []}
    assert with_model_name(named, "other") is named
    fixture = {"session_id": "a", "candidate": "c", "result": []}
    assert with_model_name(fixture, "other") is fixture
    assert with_model_name(PUBLISHED_ERROR, None) is PUBLISHED_ERROR
    bad = {"id": "a", "model_name": "", "result": []}  # present but empty: still reported
    with pytest.raises(ResultRecordError):
        record_identity(with_model_name(bad, "m"))


def test_without_a_model_the_problem_says_what_to_give():
    with pytest.raises(ResultRecordError) as caught:
        record_identity(PUBLISHED_ERROR)
    assert caught.value.field == "model_name" and caught.value.message == MODEL_NAME_MISSING
    assert "--model-name" in MODEL_NAME_MISSING
