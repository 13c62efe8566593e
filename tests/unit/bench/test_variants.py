"""The mechanical factors of docs/variants.md §3 on the reference sessions: each factor's invariants
checked mechanically, every variant valid and its gold correct on its target task (§2), and each
skip/reject rule id triggered and narrowly passed (§4, table 2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from wildtoolbench.bench.schema import MIXED_TASKS, fields_for, session_issues, task_counts
from wildtoolbench.bench.terms import ASK_USER, PSEUDO_TOOLS
from wildtoolbench.bench.variants.build import parse_factors, parse_levels, run_factor, variant_set
from wildtoolbench.bench.variants.common import (
    REJECT_RULES,
    SKIP_RULES,
    VARIANT_FIELDS,
    VariantError,
    check_variant,
    gold_correct,
    implicit_values,
)
from wildtoolbench.bench.variants.tools import is_bijective_renaming, name_map, names_variants, tool_name
from wildtoolbench.bench.variants.turns import (
    depends_on,
    explicit_variants,
    parse_transition_level,
    transition_variants,
)

EN, ZH = fields_for("en"), fields_for("zh")


@pytest.fixture(scope="module")
def sessions(reference_dir: Path) -> list[dict]:
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def results(sessions: list[dict]) -> dict[str, dict]:
    return {f: run_factor(f, sessions) for f in ("names", "distractors", "explicit", "transitions")}


def _by_id(sessions: list[dict]) -> dict[str, dict]:
    return {s["id"]: s for s in sessions}


def _gold_calls(session: dict, side, task: int) -> list:
    return [n["action"] for n in session[side.answer_list][task]]


@pytest.mark.parametrize("factor", ["names", "distractors", "explicit", "transitions"])
def test_every_variant_validates_and_replays_its_gold_on_the_target(results, sessions, factor):
    result = results[factor]
    assert result["variants"], f"{factor} made no variant on the reference sessions"
    assert result["rejected"] == []
    origins = _by_id(sessions)
    for variant in result["variants"]:
        assert set(VARIANT_FIELDS) <= set(variant)
        assert variant["variant_of"] in origins and variant["factor"] == factor
        assert session_issues(variant, tasks=len(variant["english_tasks"])) == []
        assert gold_correct(variant, "en")[variant["target_task"]] is True
        assert check_variant(variant, "en") is None
    assert len(result["pairs"]) == len(result["variants"])


def test_names_is_a_bijective_renaming_of_tools_and_gold(results, sessions):
    origins = _by_id(sessions)
    for variant in results["names"]["variants"]:
        origin = origins[variant["variant_of"]]
        mapping = results["names"]["maps"][origin["id"]]
        assert is_bijective_renaming(origin, variant)
        assert len(set(mapping.values())) == len(mapping)
        for side in (EN, ZH):
            for before, after in zip(origin[side.tools], variant[side.tools], strict=True):
                assert after["function"]["name"] == mapping.get(tool_name(before), tool_name(before))
                assert after["function"]["description"] == before["function"].get("description")
                assert after["function"].get("parameters") == before["function"].get("parameters")
            for task in range(len(origin[side.tasks])):
                for a, b in zip(_gold_calls(origin, side, task), _gold_calls(variant, side, task), strict=True):
                    assert b["name"] == (a["name"] if a["name"] in PSEUDO_TOOLS else mapping[a["name"]])
                    if a["name"] == ASK_USER:
                        assert b["arguments"]["tool_name"] == mapping.get(
                            a["arguments"]["tool_name"], a["arguments"]["tool_name"]
                        )
                    else:
                        assert b["arguments"] == a["arguments"]
            assert variant[side.tasks] == origin[side.tasks]


def test_names_keeps_pseudo_tools_and_skips_a_taken_neutral_name(sessions):
    session = copy.deepcopy(sessions[0])
    session["english_tools"].append({"type": "function", "function": {"name": "prepare_to_answer"}})
    assert "prepare_to_answer" not in name_map(session)
    taken = copy.deepcopy(sessions[0])
    for side in (EN, ZH):  # an unused tool whose name is the neutral name of the second tool
        taken[side.tools].append({"type": "function", "function": {"name": "tool_02", "parameters": {}}})
    out = names_variants(taken)
    assert out.variants == [] and out.skipped[0][2] == "name_taken"
    for side in (EN, ZH):  # not a neutral name: narrowly passes
        taken[side.tools][-1]["function"]["name"] = "tool_2"
    assert names_variants(taken).variants


def test_distractors_add_n_foreign_tools_and_keep_the_gold(results, sessions):
    origins = _by_id(sessions)
    for variant in results["distractors"]["variants"]:
        origin = origins[variant["variant_of"]]
        before = [tool_name(t) for t in origin["english_tools"]]
        after = [tool_name(t) for t in variant["english_tools"]]
        added = [name for name in after if name not in before]
        assert len(after) == len(before) + 5 and len(added) == 5 and len(set(added)) == 5
        assert [name for name in after if name in before] == before  # the origin's order is kept
        foreign = {tool_name(t) for other in sessions if other["id"] != origin["id"] for t in other["english_tools"]}
        assert set(added) <= foreign
        for side in (EN, ZH):
            assert variant[side.answer_list] == origin[side.answer_list]
            assert variant[side.tasks] == origin[side.tasks]


def test_distractors_rule_too_few(sessions):
    few = run_factor("distractors", sessions[:2], levels=["500"])
    assert few["variants"] == [] and {s["rule"] for s in few["skipped"]} == {"too_few_distractors"}
    pool = len(
        {tool_name(t) for t in sessions[1]["english_tools"]} - {tool_name(t) for t in sessions[0]["english_tools"]}
    )
    exact = run_factor("distractors", sessions[:2], levels=[str(pool)])
    assert any(v["variant_of"] == sessions[0]["id"] for v in exact["variants"])  # exactly enough: applies


def test_explicit_names_every_value_taken_from_context(results, sessions):
    origins = _by_id(sessions)
    for variant in results["explicit"]["variants"]:
        origin = origins[variant["variant_of"]]
        task = variant["target_task"]
        wanted = implicit_values(origin, EN, task)
        assert wanted and implicit_values(variant, EN, task) == []
        clause = variant["english_tasks"][task][len(origin["english_tasks"][task]) :]
        for name, value in wanted:
            assert f"{name} = {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}" in clause
        for side in (EN, ZH):
            assert variant[side.answer_list] == origin[side.answer_list]
            others = [t for i, t in enumerate(variant[side.tasks]) if i != task]
            assert others == [t for i, t in enumerate(origin[side.tasks]) if i != task]
            assert variant[side.tasks][task].startswith(origin[side.tasks][task])


def test_explicit_rule_no_implicit_value(sessions):
    session = copy.deepcopy(sessions[1])
    out = explicit_variants(session)
    skipped = {task for task, _, rule, _ in out.skipped if rule == "no_implicit_value"}
    made = {v["origin_task"] for v in out.variants}
    assert skipped and made  # both happen on one session
    task = min(made)
    values = implicit_values(session, EN, task)
    session["english_tasks"][task] += " " + " ".join(str(v) for _, v in values)  # now every value is stated
    out2 = explicit_variants(session)
    assert task in {t for t, _, rule, _ in out2.skipped if rule == "no_implicit_value"}


def test_transitions_change_exactly_the_stated_number_of_earlier_tasks(results, sessions):
    origins = _by_id(sessions)
    levels = set()
    for variant in results["transitions"]["variants"]:
        origin = origins[variant["variant_of"]]
        k = parse_transition_level(variant["level"])
        levels.add(variant["level"])
        o, t = variant["origin_task"], variant["target_task"]
        assert t - o == k and len(variant["english_tasks"]) == len(origin["english_tasks"]) + k
        for side in (EN, ZH):
            assert variant[side.tasks][t] == origin[side.tasks][o]
            assert variant[side.answer_list][t] == origin[side.answer_list][o]
            assert variant[side.task_types][t] == origin[side.task_types][o]
            assert variant[side.tasks][t + 1 :] == origin[side.tasks][o + 1 :]
            assert variant["tools"] == origin["tools"] and variant["english_tools"] == origin["english_tools"]
        if k > 0:
            assert variant["english_tasks"][:o] == origin["english_tasks"][:o]
            assert set(variant["english_task_types"][o:t]) == {"Chat"}
        else:
            kept = variant["english_tasks"][:t]
            removed = [i for i, text in enumerate(origin["english_tasks"][:o]) if text not in kept]
            assert len(removed) == -k
            for i in removed:
                assert origin["english_task_types"][i] in ("Chat", "Clarify") and not depends_on(origin, o, i)
    assert levels == {"-1", "+1", "+2", "+3"}


def test_transitions_rules(sessions):
    out = transition_variants(sessions[0], sessions, ["-3"])
    assert out.variants == [] and {r for _, _, r, _ in out.skipped} == {"too_few_removable"}
    alone = transition_variants(sessions[0], [sessions[0]], ["+1"])
    assert alone.variants == [] and {r for _, _, r, _ in alone.skipped} == {"too_few_exchanges"}
    with pytest.raises(VariantError, match="expected -k or \\+k"):
        parse_transition_level("2")


def test_origin_gold_wrong_is_skipped(sessions):
    broken = copy.deepcopy(sessions[0])
    for side in (EN, ZH):  # a gold argument of the wrong type: the gold fails its own tool's schema
        broken[side.answer_list][1][0]["action"]["arguments"]["city"] = 12345
    out = names_variants(broken)
    assert 1 in {t for t, _, rule, _ in out.skipped if rule == "origin_gold_wrong"}
    assert 0 in {v["origin_task"] for v in out.variants}


def test_reject_rules(sessions):
    variant = names_variants(sessions[0]).variants[0]
    assert check_variant(variant, "en") is None
    bad = copy.deepcopy(variant)
    bad["english_task_types"] = bad["english_task_types"][:-1]
    assert check_variant(bad, "en")[0] == "invalid"
    wrong = copy.deepcopy(variant)
    task = wrong["target_task"]
    for side in (EN, ZH):  # valid (a warning only), but the gold call fails its own tool's schema
        wrong[side.answer_list][task][0]["action"]["arguments"]["city"] = 12345
    assert check_variant(wrong, "en")[0] == "gold_not_correct"
    assert set(REJECT_RULES) == {"invalid", "gold_not_correct"}
    assert set(SKIP_RULES) >= {"origin_gold_wrong", "no_implicit_value", "too_few_removable"}


def test_variant_set_mixes_task_counts_and_the_loader_accepts_it(results, sessions, tmp_path):
    written, pairs, manifest = variant_set(sessions, list(results.values()), {"seed": 0})
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in written), encoding="utf-8")
    assert len({len(s["english_tasks"]) for s in written}) > 1
    assert task_counts(path) == (MIXED_TASKS, [])
    assert manifest["pairs"] == len(pairs) and manifest["counts"]["transitions"]["+1"]["variants"] > 0
    # the same file without the variant fields is an ordinary file with mixed counts: rejected as before
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        "".join(json.dumps({k: v for k, v in s.items() if k != "variant_of"}) + "\n" for s in written), encoding="utf-8"
    )
    count, issues = task_counts(plain)
    assert count == 4 and issues


def test_parse_factors_and_levels():
    assert parse_factors("names, transitions,names") == ["names", "transitions"]
    with pytest.raises(VariantError, match="unknown factor 'colour'"):
        parse_factors("colour")
    assert parse_levels(["transitions=-1,+2", "distractors=3"]) == {"transitions": ("-1", "+2"), "distractors": ("3",)}
    for bad in ("names=1", "distractors=0", "transitions=1", "transitions"):
        with pytest.raises(VariantError):
            parse_levels([bad])


def test_the_mixed_model_checks_each_session_against_its_own_count(results):
    variant = next(v for v in results["transitions"]["variants"] if v["level"] == "+2")
    assert len(variant["english_tasks"]) == 6
    assert session_issues(variant, tasks=MIXED_TASKS) == []
    short = copy.deepcopy(variant)
    short["task_types"] = short["task_types"][:-1]  # 5 labels for 6 tasks
    problems = session_issues(short, tasks=MIXED_TASKS)
    assert problems and "task_types: 5 entries, but english_tasks has 6 tasks" in problems[0][1]
    subtypes = copy.deepcopy(variant)
    subtypes["english_turn_subtypes"].append("Partial Information")  # 6 subtypes: one too many
    assert session_issues(subtypes, tasks=MIXED_TASKS)
