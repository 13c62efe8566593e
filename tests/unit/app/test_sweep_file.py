"""The sweep file's rules (``wildtoolbench.evaluation.sweep_file.SWEEP_RULES``): each id is triggered by one file
and a file that narrowly passes it is read; the worst exit status of a sweep (docs/guides/sweeps.md §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wildtoolbench.evaluation.sweep import worst_status
from wildtoolbench.evaluation.sweep_file import (
    SWEEP_RULES,
    SweepEntry,
    SweepFileError,
    check_unique,
    folder_name,
    read_sweep_file,
)

GOOD = '[[model]]\nmodel = "openai:a"\n'

BROKEN = {
    "sweep.toml": ('[[model]\nmodel = "x"\n', "not TOML"),
    "sweep.models": ('title = "x"\n', "unexpected top-level key 'title'"),
    "sweep.field": (GOOD + 'colour = "red"\n', ":3: model[1].colour: unknown field"),
    "sweep.model": ('[[model]]\nname = "a"\n', "no 'model'"),
    "sweep.type": (GOOD + '[[model]]\nmodel = "openai:b"\ntemperature = "hot"\n', ":5: model[2].temperature"),
    "sweep.name": (GOOD + 'name = "../up"\n', "is not a folder name"),
}
PASSING = {  # each one step inside the rule its key names
    "sweep.toml": GOOD,
    "sweep.models": GOOD,
    "sweep.field": GOOD + 'base_url = "http://127.0.0.1:9/v1"\n',
    "sweep.model": GOOD,
    "sweep.type": GOOD + "temperature = 0\nconcurrency = 1\n",
    "sweep.name": GOOD + 'name = "a_b-1.2"\n',
}


def test_every_rule_has_a_broken_and_a_passing_file():
    assert set(BROKEN) | {"sweep.unique"} == set(SWEEP_RULES) == set(PASSING) | {"sweep.unique"}


@pytest.mark.parametrize("rule", sorted(BROKEN))
def test_a_broken_rule_names_the_file_the_entry_and_its_id(rule, tmp_path):
    text, words = BROKEN[rule]
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SweepFileError) as caught:
        read_sweep_file(path)
    assert caught.value.rule == rule
    assert str(path) in str(caught.value) and words in str(caught.value) and f"[{rule}]" in str(caught.value)


@pytest.mark.parametrize("rule", sorted(PASSING))
def test_a_file_that_narrowly_passes_is_read(rule, tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(PASSING[rule], encoding="utf-8")
    entries = read_sweep_file(path)
    assert [e.model for e in entries] == ["openai:a"]
    if rule == "sweep.type":
        assert entries[0].settings == {"temperature": 0.0, "concurrency": 1}
        assert isinstance(entries[0].settings["temperature"], float)


def test_two_models_in_one_folder_are_refused_and_names_make_them_distinct():
    a, b = SweepEntry("replay:x#m", where="--model replay:x#m"), SweepEntry("replay:y#m", where="--model replay:y#m")
    with pytest.raises(SweepFileError) as caught:
        check_unique([(a, folder_name(a, "m")), (b, folder_name(b, "m"))])
    assert caught.value.rule == "sweep.unique" and "both write to m/" in str(caught.value)
    named = SweepEntry("replay:y#m", name="m-y", where="b")
    check_unique([(a, folder_name(a, "m")), (named, folder_name(named, "m"))])
    assert folder_name(a, "gpt 4o/mini") == "gpt_4o_mini"


def test_the_worst_status_of_a_sweep():
    assert worst_status([]) == 0
    assert worst_status([0, 0]) == 0
    assert worst_status([0, 3, 0]) == 3
    assert worst_status([3, 1, 0]) == 1
    assert worst_status([1, 2, 3]) == 2
    assert worst_status([0, 130]) == 130  # a status outside the table counts as worst


def test_the_sweep_file_in_the_guide_is_valid(tmp_path):
    guide = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "sweeps.md").read_text(encoding="utf-8")
    block = guide.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "sweep.toml"
    path.write_text(block, encoding="utf-8")
    assert len(read_sweep_file(path)) >= 2
