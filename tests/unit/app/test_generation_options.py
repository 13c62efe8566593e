"""``wtb generate`` options (docs/generation.md §8.2): ``--model ROLE=SPEC`` / ``--base-url ROLE=URL`` parsed by the
command line, expanded by the application; the old per-role flags are hidden aliases with the same effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.support.session_factory import make_session
from wildtoolbench.cli import app
from wildtoolbench.cli.generate import role_values
from wildtoolbench.generation.command import role_base_urls, role_models

BUILT_IN = ("user", "planner", "checker", "tool", "agent")


def test_role_values_split_role_from_value_only_at_a_role_name():
    assert role_values(["planner=openai:gpt-4o", "scripted:/tmp/a=b.json", "local"], "--model") == [
        ("planner", "openai:gpt-4o"),
        ("", "scripted:/tmp/a=b.json"),
        ("", "local"),
    ]
    assert role_values(["http://h:1/v1?key=x", "tool=http://t/v1"], "--base-url") == [
        ("", "http://h:1/v1?key=x"),
        ("tool", "http://t/v1"),
    ]
    with pytest.raises(typer.BadParameter, match="empty model spec in 'planner='"):
        role_values(["planner="], "--model")
    with pytest.raises(typer.BadParameter, match="empty model spec in ''"):
        role_values([""], "--model")
    assert role_values([""], "--base-url", empty_bare=True) == [("", "")]


def test_a_bare_spec_sets_the_given_roles_and_later_values_win():
    pairs = [("", "a"), ("planner", "b"), ("user", "u1"), ("user", "u2")]
    assert role_models(pairs, BUILT_IN) == {
        "user": "a,u1,u2",
        "planner": "b",
        "checker": "a",
        "tool": "a",
        "agent": "a",
    }
    assert role_models([("planner", "b"), ("", "a")], BUILT_IN)["planner"] == "a"
    assert role_models([("", "a")], ("planner",)) == {"planner": "a"}
    assert role_base_urls([("", "http://a"), ("tool", "http://t"), ("", "http://b"), ("agent", "")]) == (
        "http://b",
        {"tool": "http://t"},
    )


def _manifest_context(tmp_path: Path, name: str, *options: str) -> dict:
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    out = tmp_path / name
    result = CliRunner().invoke(
        app,
        ["generate", "--tools", str(tools), "--out", str(out), "--layers", "1", "--paths", "CC", "--no-progress"]
        + ["--no-trace", *options],
    )
    # An empty script: every session's first request fails for good (an infrastructure failure: exit 3,
    # docs/cli.md §2), but the manifest records the context.
    assert result.exit_code == 3, result.output
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))["context"]


def test_the_old_per_role_flags_are_hidden_aliases_with_the_same_effect(tmp_path, monkeypatch):
    for role in BUILT_IN:
        monkeypatch.delenv(f"WTB_{role.upper()}_MODEL", raising=False)
    missing = tmp_path / "none.json"
    missing.write_text("{}", encoding="utf-8")
    spec = f"scripted:{missing}"
    new = _manifest_context(
        tmp_path,
        "new",
        *("--model", f"planner={spec}", "--model", f"tool={spec}", "--model", f"agent={spec}"),
        *("--model", "checker=none", "--model", f"user={spec}", "--model", f"user={spec}"),
        *("--base-url", "http://shared/v1", "--base-url", "planner=http://p/v1"),
    )
    old = _manifest_context(
        tmp_path,
        "old",
        *("--planner-model", spec, "--tool-model", spec, "--agent-model", spec),
        *("--checker-model", "none", "--user-model", spec, "--user-model", spec),
        *("--base-url", "http://shared/v1", "--planner-base-url", "http://p/v1"),
    )
    two_users = f"{spec},{spec}"
    expected = {"user": two_users, "planner": spec, "checker": "none", "tool": spec, "agent": spec}
    assert new["models"] == old["models"] == expected
    assert new["base_urls"] == old["base_urls"]
    assert new["base_urls"]["planner"] == "http://p/v1" and new["base_urls"]["tool"] == "http://shared/v1"
    shown = CliRunner().invoke(app, ["generate", "--help"]).output
    assert "--model" in shown and "--base-url" in shown
    for flag in ("--planner-model", "--user-model", "--checker-base-url", "--tool-base-url"):
        assert flag not in shown


def test_an_unknown_role_in_base_url_is_a_configuration_error(tmp_path):
    tools = tmp_path / "tools.jsonl"
    tools.write_text(json.dumps(make_session()["english_tools"]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["generate", "--tools", str(tools), "--out", str(tmp_path / "o"), "--base-url", "critic=http://c/v1"]
    )
    assert result.exit_code == 2
    assert "--base-url names unknown role(s) critic; roles with a model: user, planner, checker, tool, agent" in (
        result.output
    )
    assert not (tmp_path / "o").exists()
