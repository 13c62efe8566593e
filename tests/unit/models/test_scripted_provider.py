"""The ``scripted:PATH`` model provider (offline role models)."""

from __future__ import annotations

import json

import pytest

from wildtoolbench.models import resolve_model
from wildtoolbench.models.providers import scripted


@pytest.fixture(autouse=True)
def _fresh():
    scripted.reset()
    yield
    scripted.reset()


def _ask(model, role=None, session=None):
    metadata = {k: v for k, v in (("wtb_role", role), ("wtb_session", session)) if v}
    return model.invoke("hello", config={"metadata": metadata}).content


def test_role_queues_sessions_and_json_values(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "planner": [{"actions": []}, "second"],
                "user": ["hi"],
                "sessions": {"s1": {"planner": ["only s1"]}},
            }
        )
    )
    model = resolve_model(f"scripted:{path}")
    assert _ask(model, "planner") == '{"actions": []}'
    assert _ask(model, "planner", "s1") == "only s1"  # the session's own queue first
    assert _ask(model, "planner", "s1") == "second"  # then the shared role queue
    assert _ask(model, "user", "s2") == "hi"
    with pytest.raises(scripted.ScriptExhausted, match=r"no response left for role 'planner' \(all 2 used\)"):
        _ask(model, "planner")
    with pytest.raises(scripted.ScriptExhausted, match="no queue for role 'tool'"):
        _ask(model, "tool")
    scripted.reset()
    assert _ask(model, "planner") == '{"actions": []}'


def test_fixed_role_and_bare_array_and_jsonl(tmp_path):
    array = tmp_path / "a.json"
    array.write_text(json.dumps(["one", "two"]))
    assert [_ask(resolve_model(f"scripted:{array}"), "agent") for _ in range(2)] == ["one", "two"]
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text(
        '{"role": "agent", "content": "A"}\n\n{"role": "tool", "content": {"results": [1]}}\n'
        '{"session": "k", "role": "agent", "content": "K"}\n'
    )
    fixed = resolve_model(f"scripted:{jsonl}#tool")
    assert _ask(fixed, "agent") == '{"results": [1]}'  # '#tool' wins over the caller's metadata
    model = resolve_model(f"scripted:{jsonl}")
    assert _ask(model, "agent", "k") == "K" and _ask(model, "agent", "k") == "A"


def test_bad_scripts_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "agent", "content": "A"}\n{"role": "agent"}\n')
    with pytest.raises(scripted.ScriptError, match=r"bad.jsonl:2: a JSONL script line needs field 'content'"):
        _ask(resolve_model(f"scripted:{bad}"), "agent")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"agent": "not a list"}))
    with pytest.raises(scripted.ScriptError, match="field 'agent' must be a list"):
        scripted.load_script(wrong)
    with pytest.raises(scripted.ScriptError, match="cannot read script"):
        scripted.load_script(tmp_path / "missing.json")
