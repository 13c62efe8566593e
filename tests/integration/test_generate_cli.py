"""``wtb generate`` end to end with scripted role models on 5 real tool lists, en and zh (issue 4 acceptance)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.support.gen_scripts import session_script
from wildtoolbench.bench.generation import load_tool_lists, oracle_candidate, plan_sessions, select_type_paths
from wildtoolbench.bench.schema import validate_file
from wildtoolbench.cli import app
from wildtoolbench.models.providers import scripted

MULTI = {"Parallel Multi-Tool", "Sequential Multi-Tool", "Mixed Multi-Tool"}
SINGLE = {"ST": "Single-Tool", "CQ": "Clarify", "CC": "Chat"}


@pytest.fixture(autouse=True)
def _fresh_scripts():
    scripted.reset()
    yield
    scripted.reset()


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_generate_five_real_tool_lists(shared_dir, tmp_path, language):
    lines = (shared_dir / "data" / f"tools_{language}.jsonl").read_text(encoding="utf-8").splitlines()
    tools = tmp_path / "tools.jsonl"
    tools.write_text("\n".join(lines[10:15]) + "\n", encoding="utf-8")
    # The scripts are written for the sessions that `wtb generate` will plan with the same options.
    options = dict(seed=3, language=language, year=2025)
    paths = select_type_paths(4, None, 5, options["seed"])
    plans = plan_sessions(load_tool_lists(tools), paths, **options)
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    out = tmp_path / "out"
    args = [
        "generate",
        "--tools",
        str(tools),
        "--layers",
        "4",
        "--samples",
        "5",
        "--seed",
        "3",
        "--language",
        language,
        "--year",
        "2025",
        "--out",
        str(out),
        "--vague-rate",
        "0",
        "--concurrency",
        "3",
        "--user-model",
        spec,
        "--planner-model",
        spec,
        "--tool-model",
        spec,
        "--agent-model",
        spec,
        "--checker-model",
        spec,
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "generated 5 session(s), 0 failed" in result.output

    report = validate_file(out / "sessions.jsonl")
    assert report.ok, [str(i) for i in report.issues]
    sessions = _read_jsonl(out / "sessions.jsonl")
    assert [s["id"] for s in sessions] == [f"wild_tool_bench_{i}" for i in range(5)]
    assert _read_jsonl(out / "failures.jsonl") == []
    assert sorted(p.tool_line for p in plans) == [0, 1, 2, 3, 4]  # five different real tool lists
    for plan, session in zip(plans, sessions):
        assert session["english_tools"] == plan.tools and session["english_env_info"] == plan.env_info
        for layer_type, task_type in zip(plan.type_path, session["english_task_types"]):
            assert task_type in MULTI if layer_type == "MT" else task_type == SINGLE[layer_type]
        folder = out / "sessions" / plan.key
        assert json.loads((folder / "session.json").read_text(encoding="utf-8")) == session
        raw = json.loads((folder / "raw_transcript.json").read_text(encoding="utf-8"))
        lean = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
        assert any(e["role"] == "checker" for e in raw) and not any(e["role"] == "checker" for e in lean)
        requests = {
            role: _read_jsonl(folder / "requests" / f"{role}.jsonl")
            for role in ("user", "planner", "checker", "tool", "agent")
        }
        assert all(requests.values())
        assert all(
            set(r)
            == {"role", "task", "model", "request", "response", "seconds", "input_tokens", "output_tokens", "grammar"}
            for r in requests["planner"]
        )
        assert requests["planner"][0]["request"][0]["role"] == "system"
    replays = _read_jsonl(out / "replay.jsonl")
    assert replays == [oracle_candidate(s) for s in sessions]
    assert all(r["responses"][-1]["content"].startswith("SPARE RESPONSE") for r in replays)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["succeeded"] == 5 and manifest["failed"] == 0
    assert [s["key"] for s in manifest["sessions"]] == [p.key for p in plans]


def test_generate_explicit_paths_and_a_failing_session(shared_dir, tmp_path):
    args, plans, out = _two_session_run(shared_dir, tmp_path)  # checker max-retries 2 -> the first session fails
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "generated 1 session(s), 1 failed" in result.output
    failures = _read_jsonl(out / "failures.jsonl")
    assert [f["key"] for f in failures] == [plans[0].key]
    assert failures[0]["reason"].startswith(
        "planner decision rejected 2 times (task 0, step 0): output is not valid JSON"
    )
    assert failures[0]["plan"]["type_path"] == ["ST", "CC", "CC", "CC"]
    assert failures[0]["rules"] == ["structure.unreadable"]  # the rejection's rule ids, end to end
    sessions = _read_jsonl(out / "sessions.jsonl")
    assert [s["english_task_types"] for s in sessions] == [["Chat", "Single-Tool", "Chat", "Chat"]]


def test_generate_reports_bad_input(tmp_path):
    tools = tmp_path / "tools.jsonl"
    tools.write_text('[{"type": "function", "function": {"name": "a"}}]\n{oops\n')
    result = CliRunner().invoke(app, ["generate", "--tools", str(tools), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1  # the file's content (docs/cli.md §2)
    assert f"{tools}:2: not JSON" in result.output
    tools.write_text('[{"type": "function", "function": {"name": "a"}}]\n')
    result = CliRunner().invoke(
        app, ["generate", "--tools", str(tools), "--out", str(tmp_path / "o"), "--paths", "ST,XX,CC,CC"]
    )
    assert result.exit_code == 2 and "unknown layer type(s) ['XX']" in result.output
    assert not (tmp_path / "o").exists()


def _two_session_run(shared_dir, tmp_path):
    """One session that fails on the models' output and one that succeeds, scripted; returns (args, plans, out)."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text((shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n")
    paths = ["ST,CC,CC,CC", "CC-ST-CC-CC"]
    plans = plan_sessions(load_tool_lists(tools), select_type_paths(4, paths), seed=0)
    scripts = {p.key: session_script(p.as_state()) for p in plans}
    scripts[plans[0].key]["planner"] = ["not json at all"] * 2
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": scripts}))
    spec = f"scripted:{script}"
    out = tmp_path / "out"
    args = [
        "generate",
        "--tools",
        str(tools),
        "--out",
        str(out),
        "--paths",
        paths[0],
        "--paths",
        paths[1],
        "--max-retries",
        "2",
        "--checker-model",
        "none",
        "--user-model",
        spec,
        "--planner-model",
        spec,
        "--tool-model",
        spec,
        "--agent-model",
        spec,
        "--concurrency",
        "1",
    ]
    return args, plans, out


def test_generate_resumes_finished_sessions(shared_dir, tmp_path):
    args, plans, out = _two_session_run(shared_dir, tmp_path)
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "resumed" not in first.output
    sessions_before = (out / "sessions.jsonl").read_text(encoding="utf-8")
    failures_before = _read_jsonl(out / "failures.jsonl")
    assert [f["rules"] for f in failures_before] == [["structure.unreadable"]]  # kept on resume (outcome.json)
    outcomes = {
        p.key: json.loads((out / "sessions" / p.key / "outcome.json").read_text(encoding="utf-8")) for p in plans
    }
    assert [outcomes[p.key]["status"] for p in plans] == ["failed", "done"]
    assert outcomes[plans[1].key]["session"]["english_task_types"] == ["Chat", "Single-Tool", "Chat", "Chat"]

    # Same command again: both sessions are kept (the failure came from the models' output), nothing runs.
    scripted.reset()
    (out / "sessions" / plans[1].key / "raw_transcript.json").write_text(
        "[]", encoding="utf-8"
    )  # would be rewritten by a re-run
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "resumed: kept 2 session(s)" in again.output
    assert f"{plans[1].key} CC-ST-CC-CC done (kept from an earlier run)" in again.output
    assert "generated 1 session(s), 1 failed" in again.output
    assert (out / "sessions.jsonl").read_text(encoding="utf-8") == sessions_before
    assert _read_jsonl(out / "failures.jsonl") == failures_before
    assert (out / "sessions" / plans[1].key / "raw_transcript.json").read_text(encoding="utf-8") == "[]"

    # An interrupted session (no outcome.json) runs again; the other one is kept.
    (out / "sessions" / plans[1].key / "outcome.json").unlink()
    scripted.reset()
    third = CliRunner().invoke(app, args)
    assert third.exit_code == 0, third.output
    assert "resumed: kept 1 session(s)" in third.output
    assert (out / "sessions.jsonl").read_text(encoding="utf-8") == sessions_before
    assert json.loads((out / "sessions" / plans[1].key / "raw_transcript.json").read_text(encoding="utf-8"))

    # --overwrite runs everything again.
    scripted.reset()
    fresh = CliRunner().invoke(app, [*args, "--overwrite"])
    assert fresh.exit_code == 0, fresh.output
    assert "resumed" not in fresh.output and "generated 1 session(s), 1 failed" in fresh.output


def test_generate_refuses_to_resume_another_run(shared_dir, tmp_path):
    args, plans, out = _two_session_run(shared_dir, tmp_path)
    assert CliRunner().invoke(app, args).exit_code == 0
    scripted.reset()
    other = CliRunner().invoke(app, [*args, "--seed", "5"])
    assert other.exit_code == 1
    assert (
        f"{out / 'sessions' / plans[0].key / 'outcome.json'}: plan: this folder holds a different run" in other.output
    )
    assert "--overwrite" in other.output

    # The same options on another tool file: the plans match line for line, the tool lists do not.
    tools = out.parent / "tools.jsonl"
    tools.write_text((shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()[1] + "\n")
    scripted.reset()
    swapped = CliRunner().invoke(app, args)
    assert swapped.exit_code == 1 and "this folder holds a different run" in swapped.output


def test_infrastructure_failures_are_generated_again(tmp_path):
    from wildtoolbench.bench.generation import SessionPlan
    from wildtoolbench.runner.generation import GenerationOutcome, load_finished_outcome, write_outcome

    plan = SessionPlan("session_0000", 0, ("ST",), 0, [], "2024-01-01 00:00:00 Monday", ("",), ("",), 7)
    write_outcome(tmp_path, GenerationOutcome(plan, "failed", "ConnectError: refused", infrastructure=True))
    assert load_finished_outcome(tmp_path, plan) is None
    write_outcome(
        tmp_path, GenerationOutcome(plan, "failed", "planner decision rejected 3 times", usage={"requests": 4})
    )
    kept = load_finished_outcome(tmp_path, plan)
    assert (kept.status, kept.reason, kept.usage, kept.session) == (
        "failed",
        "planner decision rejected 3 times",
        {"requests": 4},
        None,
    )
    (tmp_path / "sessions" / plan.key / "outcome.json").write_text(
        '{"plan": ', encoding="utf-8"
    )  # torn by an old crash
    assert load_finished_outcome(tmp_path, plan) is None


def test_generated_two_layer_sessions_evaluate_without_tasks_option(shared_dir, tmp_path):
    """Generation -> evaluation loop for sessions that are not 4 tasks long: the oracle replay scores 100%."""
    tools = tmp_path / "tools.jsonl"
    tools.write_text(
        "\n".join((shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()[20:23]) + "\n"
    )
    paths = ["ST,CC", "MT,ST", "CQ,ST"]
    plans = plan_sessions(load_tool_lists(tools), select_type_paths(2, paths), seed=4)
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    gen = tmp_path / "gen"
    args = [
        "generate",
        "--tools",
        str(tools),
        "--layers",
        "2",
        "--seed",
        "4",
        "--out",
        str(gen),
        "--vague-rate",
        "0",
        "--user-model",
        spec,
        "--planner-model",
        spec,
        "--tool-model",
        spec,
        "--agent-model",
        spec,
        "--checker-model",
        spec,
        "--concurrency",
        "1",
    ]
    for path in paths:
        args += ["--paths", path]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "generated 3 session(s), 0 failed" in result.output

    dataset, oracle = gen / "sessions.jsonl", f"replay:{gen / 'replay.jsonl'}#oracle"
    wrong_depth = CliRunner().invoke(
        app, ["eval", "--dataset", str(dataset), "--tasks", "4", "--model", oracle, "--out", str(tmp_path / "e4")]
    )
    assert wrong_depth.exit_code == 1  # a given --tasks is checked
    assert f"{dataset}:1: english_tasks:" in wrong_depth.output

    run = tmp_path / "eval"  # no --tasks: the sessions' own count (2) is used
    result = CliRunner().invoke(
        app, ["eval", "--dataset", str(dataset), "--model", oracle, "--out", str(run), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    metric = json.loads((run / "metric.json").read_text(encoding="utf-8"))
    assert metric["total_info"] == {
        "task": {"accuracy": 1.0, "correct_count": 6, "total_count": 6},
        "session": {"accuracy": 1.0, "correct_count": 3, "total_count": 3},
    }
    assert set(metric["layer_info"]) == {"0", "1", "2", "3"}
    assert metric["layer_info"]["1"]["total_count"] == 3 and metric["layer_info"]["2"]["total_count"] == 0

    rescored = CliRunner().invoke(
        app,
        [
            "score",
            "--dataset",
            str(dataset),
            "--results",
            str(run / "result.jsonl"),
            "--out",
            str(tmp_path / "rescored"),
            "--tasks",
            "2",
        ],
    )
    assert rescored.exit_code == 0, rescored.output
    assert json.loads((tmp_path / "rescored" / "metric.json").read_text(encoding="utf-8")) == metric
