"""The model-written forms of ``explicit`` and ``transitions +k`` (docs/variants.md §3.6), run through
``wtb variants`` with ``scripted:`` models whose replies are keyed by role and ``<session id>#t<task>``;
and the one ROLE=SPEC key set of ``wtb variants --model`` and ``wtb ablate --variant-model`` (docs/cli.md §7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.common import implicit_values
from wildtoolbench.cli import app
from wildtoolbench.models.providers import scripted

EXPLICIT = [
    # unchanged first, then a rewrite naming the date: passes on the second attempt
    ("wild_tool_bench_0#t0", "Find me economy flights from Lisbon to Amsterdam on the 21st."),
    ("wild_tool_bench_0#t0", "Find me economy flights from Lisbon to Amsterdam on 2025-03-21."),
    # names every value but adds a city, three times: skipped as explicit_added
    *[
        (
            "wild_tool_bench_0#t2",
            "We'll stay from 2025-03-21 until 2025-03-24. Find us somewhere with breakfast under 180 euros a "
            "night near Utrecht, and check whether there are any travel warnings for the Netherlands.",
        )
    ]
    * 3,
    # leaves the weekdays unnamed, three times: skipped as explicit_missing
    *[("wild_tool_bench_1#t1", "Actually, the bedroom one should drop to 17 at night, from 22:30 to 06:30.")] * 3,
    (
        "wild_tool_bench_1#t2",
        "Give me daily figures: how much electricity have we used each day this week so far, and what did the "
        "panels make today?",
    ),
]
USER = [
    ("wild_tool_bench_1#t0", "What do you think is a comfortable temperature for sleeping?"),
    ("wild_tool_bench_1#t0", "Is a smart home worth the trouble, in your view?"),
    ("wild_tool_bench_1#t1", "Is it better to heat a room all day?"),  # 'heat' is a value task 1 needs
    ("wild_tool_bench_1#t1", "What is your favourite season?"),
]
AGENT = [
    ("wild_tool_bench_1#t0", "Most people sleep best in a slightly cool room, with a warm blanket."),
    ("wild_tool_bench_1#t0", "For many people it is: small comforts add up over a year."),
    ("wild_tool_bench_1#t1", "You could ask listDevices about that."),  # names a tool
    ("wild_tool_bench_1#t1", "I like autumn best: crisp air and long evenings."),
]


def wtb(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def _script(path: Path, role: str, replies) -> Path:
    path.write_text(
        "".join(json.dumps({"role": role, "session": k, "content": v}) + "\n" for k, v in replies), encoding="utf-8"
    )
    return path


def _demo(tmp_path: Path, count: int) -> Path:
    dataset = tmp_path / "demo.jsonl"
    dataset.write_text("\n".join(bundled_demo_sessions().read_text(encoding="utf-8").splitlines()[:count]) + "\n")
    return dataset


def _read(out: Path) -> tuple[dict, dict]:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    lines = (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return manifest, {s["id"]: s for s in map(json.loads, lines)}


@pytest.fixture(autouse=True)
def _rewind_scripts():
    scripted.reset()
    yield
    scripted.reset()


def test_explicit_written_by_a_model_is_checked_retried_and_skipped_with_the_rule(tmp_path):
    spec = f"scripted:{_script(tmp_path / 'explicit.jsonl', 'explicit', EXPLICIT)}"
    out = tmp_path / "variants"
    result = wtb("variants", _demo(tmp_path, 2), "--factors", "explicit", "--out", out, "--model", f"explicit={spec}")
    assert result.exit_code == 0, result.output
    manifest, sessions = _read(out)
    assert manifest["models"] == {"explicit": spec}
    rules = {(e["session"], e["task"]): e["rule"] for e in manifest["skipped"]["explicit"]}
    assert rules[("wild_tool_bench_0", 2)] == "explicit_added"
    assert rules[("wild_tool_bench_1", 1)] == "explicit_missing"
    assert rules[("wild_tool_bench_1", 3)] == "model_failed"  # no reply scripted
    assert rules[("wild_tool_bench_0", 1)] == "no_implicit_value"
    reasons = {(e["session"], e["task"]): e["reason"] for e in manifest["skipped"]["explicit"]}
    assert (
        "'Utrecht'" in reasons[("wild_tool_bench_0", 2)] and "after 3 attempt(s)" in reasons[("wild_tool_bench_0", 2)]
    )
    made = {k: v for k, v in sessions.items() if v.get("factor") == "explicit"}
    assert set(made) == {"wild_tool_bench_0~explicit~t0", "wild_tool_bench_1~explicit~t2"}
    variant = made["wild_tool_bench_0~explicit~t0"]
    assert variant["english_tasks"][0] == EXPLICIT[1][1]
    assert implicit_values(variant, fields_for("en"), 0) == []  # the date is now stated
    assert variant["tasks"][0].endswith("（明确地说：departure_date = 2025-03-21。）")  # the other side: the clause
    assert variant["english_answer_list"] == sessions["wild_tool_bench_0"]["english_answer_list"]


def test_transitions_written_by_the_user_and_agent_models(tmp_path):
    spec_user = f"scripted:{_script(tmp_path / 'user.jsonl', 'user', USER)}"
    spec_agent = f"scripted:{_script(tmp_path / 'agent.jsonl', 'agent', AGENT)}"
    out = tmp_path / "variants"
    result = wtb(
        "variants", _demo(tmp_path, 3), "--factors", "transitions", "--levels", "transitions=+1,+2", "--out", out,
        "--model", f"user={spec_user}", "--model", f"agent={spec_agent}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest, sessions = _read(out)
    assert manifest["models"] == {"user": spec_user, "agent": spec_agent}
    rules = {(e["session"], e["task"], e["level"]): e for e in manifest["skipped"]["transitions"]}
    assert rules[("wild_tool_bench_1", 1, "+2")]["rule"] == "model_failed"  # a third user turn is not scripted
    assert rules[("wild_tool_bench_0", 0, "+2")]["rule"] == "too_few_exchanges"  # one donor for the other side
    assert rules[("wild_tool_bench_0", 0, "+1")]["rule"] == "model_failed"
    one, two = sessions["wild_tool_bench_1~transitions+1~t0"], sessions["wild_tool_bench_1~transitions+2~t0"]
    assert one["english_tasks"][0] == USER[0][1] and two["english_tasks"][:2] == [USER[0][1], USER[1][1]]
    assert two["english_answer_list"][1][0]["observation"] == AGENT[1][1]
    assert two["english_task_types"][:3] == ["Chat", "Chat", "Mixed Multi-Tool"] and two["target_task"] == 2
    assert two["task_types"][:2] == ["闲聊", "闲聊"]  # the other side: donor exchanges, in Chinese
    retried = sessions["wild_tool_bench_1~transitions+1~t1"]  # the leak and the tool name were retried
    assert retried["english_tasks"][1:3] == [USER[3][1], sessions["wild_tool_bench_1"]["english_tasks"][1]]
    assert retried["english_answer_list"][1][0]["observation"] == AGENT[3][1]


@pytest.mark.parametrize(
    "command",
    [
        ("variants", "--factors", "names", "--model", "names=local"),
        ("ablate", "--model", "oracle", "--variant-model", "planner=local"),
    ],
)
def test_both_commands_reject_an_unknown_role_naming_the_known_ones(tmp_path, command):
    result = wtb(*command, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "the roles of the variant graph that call a model: paraphrase, explicit, user, agent" in result.output
    assert not (tmp_path / "out").exists()


def test_the_manifest_names_the_models_each_factor_called():
    from wildtoolbench.variants.command import used_models

    assert used_models(["explicit", "transitions", "names"], {}) == {}  # all mechanical: offline
    assert used_models(["paraphrase"], {}) == {"paraphrase": "local"}
    assert used_models(["transitions"], {"user": "openai:x"}) == {"user": "openai:x", "agent": "local"}
    assert used_models(["explicit"], {"user": "openai:x"}) == {}  # transitions not asked for


@pytest.mark.parametrize("command", ["variants", "ablate"])
def test_help_of_both_commands_names_the_roles_and_the_local_default(command):
    result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
    flat = " ".join(result.output.split())
    assert result.exit_code == 0
    assert "paraphrase (the control; default: local, the bundled local model)" in flat
    assert "user and agent (their models write the +k chat exchanges of transitions" in flat
    assert "the role not given: local" in flat and "Other roles: exit 2" in flat


def test_a_role_whose_factor_is_not_asked_for_is_a_usage_error(tmp_path):
    result = wtb("variants", "--factors", "names,explicit", "--out", tmp_path / "out", "--model", "user=local")
    assert result.exit_code == 2, result.output
    assert "--model gives user, whose factor (transitions) --factors does not name" in " ".join(result.output.split())
    result = wtb("variants", "--factors", "names,transitions", "--out", tmp_path / "out", "--levels", "transitions=-1",
                 "--model", "user=scripted:/nonexistent.jsonl")  # fmt: skip
    assert result.exit_code == 2 and "script file not found" in result.output  # the role's factor is asked for
