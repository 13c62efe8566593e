"""The generation graph with scripted role models on real tool lists (docs/generation.md; no network)."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest

from tests.support.gen_scripts import ACCEPT, session_script
from wildtoolbench.bench.args import check_arguments, float_to_number
from wildtoolbench.bench.generation import load_tool_lists, oracle_responses, plan_sessions
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.schema import Session
from wildtoolbench.graphs.generation import build, graph
from wildtoolbench.models.providers import scripted
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.runner.generation import generate_session, run_batch

REJECT = {"verdict": "reject", "reason": "the city was never mentioned"}


@pytest.fixture(autouse=True)
def _fresh_scripts():
    scripted.reset()
    yield
    scripted.reset()


@pytest.fixture(scope="module")
def tool_lists_en(shared_dir):
    return load_tool_lists(shared_dir / "data" / "tools_en.jsonl")


@pytest.fixture(scope="module")
def tool_lists_zh(shared_dir):
    return load_tool_lists(shared_dir / "data" / "tools_zh.jsonl")


def scripted_context(path: Path, **overrides) -> Context:
    spec = f"scripted:{path}"
    models = dict.fromkeys(("user", "planner", "tool", "agent", "checker"), spec)
    models.update(overrides.pop("models", {}))
    return Context(models=models, **{"vague_answer_rate": 0.0, "rules": "small", **overrides})


def plan_for(tool_lists, path, *, seed=11, language="en"):
    return plan_sessions(tool_lists, [tuple(path)], seed=seed, language=language)[0]


def run(plan, script, tmp_path, **overrides):
    file = tmp_path / f"script_{plan.key}.json"
    file.write_text(json.dumps(script, ensure_ascii=False), encoding="utf-8")
    return asyncio.run(generate_session(plan, scripted_context(file, **overrides)))


def replay_is_perfect(session: dict) -> bool:
    """Mini step loop (docs/evaluation.md §3 + 4.2) over the oracle responses: every step matches a candidate,
    every argument pair checks correct, and every task ends at its min_length."""
    tools = float_to_number(session["english_tools"])
    responses = iter(oracle_responses(session))
    for answer_list in session["english_answer_list"]:
        tracker = PathTracker(answer_list)
        step = 0
        while True:
            response = next(responses)
            candidates = tracker.candidates(step)
            if response["tool_calls"]:
                names = sorted(c["function"]["name"] for c in response["tool_calls"])
                match = next(c for c in candidates if sorted(answer_list[i]["action"]["name"] for i in c) == names)
                predicted = sorted((c["function"]["name"], c["function"]["arguments"]) for c in response["tool_calls"])
                gold = sorted(
                    (answer_list[i]["action"]["name"], json.dumps(answer_list[i]["action"]["arguments"])) for i in match
                )
                for (name, args), (_, gold_args) in zip(predicted, gold):
                    assert check_arguments(tools, name, args, gold_args) == "correct", (name, args, gold_args)
                tracker.prune(step, match)
            else:
                assert response["content"]
                kinds = [{answer_list[i]["action"]["name"] for i in c} for c in candidates]
                if any("ask_user_for_required_parameters" in k for k in kinds):
                    pass
                else:
                    assert any("prepare_to_answer" in k for k in kinds)
                    assert step == tracker.min_length - 1
                    break
            step += 1
    assert next(responses)["content"].startswith("SPARE RESPONSE")
    return True


def test_graph_draws_five_roles_and_retry_edges():
    drawn = graph.get_graph()
    assert {"user", "planner", "checker", "tool", "agent"} <= set(drawn.nodes)
    edges = {(e.source, e.target): e for e in drawn.edges}
    assert edges[("checker", "planner")].conditional and edges[("checker", "planner")].data == "retry"
    assert edges[("tool_checker", "tool")].conditional and edges[("tool_checker", "tool")].data == "retry"
    assert edges[("checker", "__end__")].data == "fail" and edges[("tool_checker", "__end__")].data == "fail"
    assert edges[("checker", "tool")].data == "run tools" and edges[("checker", "agent")].data == "write"
    assert not edges[("planner", "checker")].conditional and not edges[("tool", "tool_checker")].conditional
    assert "-. &nbsp;retry&nbsp; .-> planner" in drawn.draw_mermaid()


@pytest.mark.parametrize(
    "path, variants",
    [
        (("ST", "MT", "CQ", "CC"), None),
        (("MT", "MT", "MT", "ST"), ("serial_parallel", "parallel", "plain", "")),
        (("CC", "CQ", "ST", "MT"), None),
    ],
)
def test_every_layer_type_gives_valid_sessions(tool_lists_en, tmp_path, path, variants):
    plan = plan_for(tool_lists_en, path)
    if variants:
        plan = type(plan)(**{**plan.__dict__, "mt_variants": variants})
    outcome = run(plan, session_script(plan.as_state()), tmp_path)
    assert outcome.status == "done", outcome.reason
    session = outcome.session
    Session.model_validate(session)  # the dataset schema (docs/dataset.md) accepts it
    expected = {"ST": "Single-Tool", "CQ": "Clarify", "CC": "Chat"}
    for layer_type, variant, task_type in zip(plan.type_path, plan.mt_variants, session["english_task_types"]):
        if layer_type == "MT":
            assert task_type == {"serial_parallel": "Mixed Multi-Tool"}.get(variant, "Parallel Multi-Tool")
        else:
            assert task_type == expected[layer_type]
    labels = {"Coreferential Reference": "指代", "Partial Information": "省略成分", "Long-Range Dependency": "长期记忆"}
    assert [labels[s] for s in session["english_turn_subtypes"]] == session["turn_subtypes"]
    assert session["answer_list"] == session["english_answer_list"]
    for answer_list in session["english_answer_list"]:
        last = answer_list[-1]
        assert last["action"]["name"] == "prepare_to_answer" and last["observation"].startswith("Scripted reply")
        for node in answer_list:
            if node["action"]["name"] == "ask_user_for_required_parameters":
                assert node["observation"].startswith("Which ") and node["user_input"].startswith("Use the usual")
    assert replay_is_perfect(session)


def test_four_layer_session_in_dataset_schema(tool_lists_en, tmp_path):
    plan = plan_for(tool_lists_en, ("CQ", "MT", "ST", "CC"), seed=4)
    plan = type(plan)(**{**plan.__dict__, "mt_variants": ("", "serial_parallel", "", "")})
    outcome = run(plan, session_script(plan.as_state()), tmp_path)
    session = outcome.session
    assert list(session) == [
        "id",
        "english_env_info",
        "english_tools",
        "english_tasks",
        "english_answer_list",
        "english_task_types",
        "english_turn_subtypes",
        "env_info",
        "tools",
        "tasks",
        "answer_list",
        "task_types",
        "turn_subtypes",
    ]
    assert session["english_env_info"] == plan.env_info and session["english_tools"] == plan.tools == session["tools"]
    assert session["env_info"][:19] == plan.env_info[:19] and session["env_info"][20:].startswith("星期")
    assert session["english_tasks"] == session["tasks"]
    assert [task.split(" with ")[0].rstrip(".") for task in session["english_tasks"]] == [
        f"Scripted request {i} ({t}) for {plan.tools[0]['function']['name']}" for i, t in enumerate(plan.type_path)
    ]
    assert session["english_task_types"] == ["Clarify", "Mixed Multi-Tool", "Single-Tool", "Chat"]
    assert session["task_types"] == ["澄清", "多工具", "单工具", "闲聊"]
    clarify, mixed, single, chat = session["english_answer_list"]
    assert [n["dependency_list"] for n in clarify] == [[], [0], [0, 1]]
    assert clarify[0]["action"]["arguments"]["missing_required_parameters"]
    assert [n["dependency_list"] for n in mixed] == [[], [], [0, 1], [0, 1, 2]]
    assert mixed[0]["observation"] == {
        "status": "ok",
        "source": plan.tools[0]["function"]["name"],
        "note": "t1.0 result 0",
    }
    assert [n["dependency_list"] for n in single] == [[], [0]]
    assert chat == [
        {
            "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}},
            "observation": "Scripted reply for task 3.",
            "dependency_list": [],
        }
    ]
    expected_subtypes = {
        "coreferential": "Coreferential Reference",
        "partial": "Partial Information",
        "long_range": "Long-Range Dependency",
    }
    assert session["english_turn_subtypes"] == [expected_subtypes[s] for s in plan.strategies[1:]]


def _single_tool_plan(tool_lists):
    return plan_sessions(tool_lists, [("ST",)], seed=21)[0]


def _single_tool_script(plan):
    script = session_script(plan.as_state())
    assert script["checker"] == [ACCEPT, ACCEPT, ACCEPT]  # decision, results, answer
    return script


def test_a_model_rejection_is_fed_back_and_does_not_bar_the_same_decision(tool_lists_en, tmp_path):
    """The checker model rejects once; the planner, shown its rejected actions and the reason, proposes
    the identical decision again, which the rules alone judge (the model judges each step once) and
    accept: a model's veto of a decision the rules pass is no ban (docs/generation.md §2)."""
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    decision = script["planner"][0]
    script["planner"] = [decision, decision, *script["planner"][1:]]
    script["checker"] = [REJECT, *script["checker"][1:]]
    outcome = run(plan, script, tmp_path)
    raw = outcome.state["transcript"]
    verdicts = [(e["verdict"], e["source"], e["reason"]) for e in raw if e["role"] == "checker"]
    assert verdicts[:2] == [("reject", "model", REJECT["reason"]), ("accept", "rules", "")]
    assert [e["rules"] for e in raw if e["role"] == "checker"][:2] == [["model.rejected"], []]
    assert outcome.status == "done", outcome.reason
    planner_calls = [c for c in outcome.state["calls"] if c["role"] == "planner"]
    shown = json.dumps(
        [{"name": a["name"], "arguments": a["arguments"], "depends_on": []} for a in decision["actions"]],
        sort_keys=True,
    )
    feedback = planner_calls[1]["request"][1]["content"].splitlines()[-1]
    assert feedback == f"Your previous output was rejected. Reason: you proposed {shown}; {REJECT['reason']}"
    assert REJECT["reason"] not in planner_calls[0]["request"][1]["content"]
    judged = [c for c in outcome.state["calls"] if c["role"] == "checker"]
    assert len(judged) == 2  # step 0 once (the veto), then the tool results


def test_a_decision_the_rules_rejected_is_refused_again(tool_lists_en, tmp_path):
    """A decision the rules rejected and proposed again is refused by rule (docs/generation.md §2)."""
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    bad = {"thought": "t", "plan": "p", "actions": [{"name": "noSuchTool", "arguments": {}, "depends_on": []}]}
    script["planner"] = [bad, bad, bad]
    outcome = run(plan, script, tmp_path)
    raw = outcome.state["transcript"]
    reasons = [e["reason"] for e in raw if e["role"] == "checker"]
    assert "this is the same decision that was rejected before" in reasons[1]
    assert outcome.status == "failed"


def test_three_rejections_fail_the_session_and_the_run_continues(tool_lists_en, tmp_path):
    plans = plan_sessions(tool_lists_en, [("ST",), ("ST",)], seed=21)
    failing = _single_tool_script(plans[0])
    bad = {"thought": "t", "plan": "p", "actions": [{"name": "noSuchTool", "arguments": {}, "depends_on": []}]}
    failing["planner"] = [bad, bad, bad]  # refused by rule three times
    script = {"sessions": {plans[0].key: failing, plans[1].key: _single_tool_script(plans[1])}}
    file = tmp_path / "script.json"
    file.write_text(json.dumps(script), encoding="utf-8")
    out = tmp_path / "out"
    summary = asyncio.run(run_batch(plans, scripted_context(file), out, concurrency=2))
    assert (summary.succeeded, summary.failed) == (1, 1)
    failures = [json.loads(line) for line in (out / "failures.jsonl").read_text().splitlines()]
    assert failures[0]["key"] == plans[0].key
    same = "this is the same decision that was rejected before; change the tool or the arguments"
    assert failures[0]["reason"] == (
        f"planner decision rejected 3 times (task 0, step 0): unknown tool 'noSuchTool' (not in the tool list); {same}"
    )
    sessions = [json.loads(line) for line in (out / "sessions.jsonl").read_text().splitlines()]
    assert [s["id"] for s in sessions] == ["wild_tool_bench_0"] and sessions[0]["english_tools"] == plans[1].tools
    raw = json.loads((out / "sessions" / plans[0].key / "raw_transcript.json").read_text())
    assert [e["verdict"] for e in raw if e["role"] == "checker"] == ["reject"] * 3
    assert not (out / "sessions" / plans[0].key / "session.json").exists()


def test_model_error_fails_only_that_session(tool_lists_en, tmp_path):
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    script["agent"] = []  # the script runs dry at the final reply
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "failed" and outcome.reason.startswith("ScriptExhausted: script ")
    assert any(e["role"] == "tool" for e in outcome.state["transcript"])  # partial transcript kept


def test_unknown_tool_and_malformed_outputs_are_rejections(tool_lists_en, tmp_path):
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    good = script["planner"][0]
    unknown = {"thought": "x", "plan": "y", "actions": [{"name": "getTheMoon", "arguments": {}, "depends_on": []}]}
    not_object = (
        "```json\n"
        + json.dumps({"actions": [{"name": good["actions"][0]["name"], "arguments": "city=Paris"}]})
        + "\n```"
    )
    script["planner"] = [
        unknown,
        not_object,
        "Sure, here you go:\n```json\n" + json.dumps(good) + "\n```",
        *script["planner"][1:],
    ]
    script["tool"] = ["no idea", *script["tool"]]
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "done", outcome.reason
    checks = [e for e in outcome.state["transcript"] if e["role"] == "checker"]
    assert checks[0]["verdict"] == "reject" and checks[0]["source"] == "rules"
    assert checks[0]["reason"] == "unknown tool 'getTheMoon' (not in the tool list)"
    assert checks[1]["verdict"] == "reject" and "arguments must be a JSON object" in checks[1]["reason"]
    assert checks[2]["verdict"] == "accept" and checks[2]["source"] == "model"
    assert checks[3]["checked"] == "results" and checks[3]["verdict"] == "reject"
    assert "not valid JSON" in checks[3]["reason"]
    assert [c["rules"] for c in checks[:5]] == [
        ["structure.unknown_tool"], ["structure.unreadable"], [], ["structure.unreadable"], []
    ]
    assert checks[4]["checked"] == "results" and checks[4]["verdict"] == "accept"
    assert outcome.session["english_answer_list"][0][0]["action"] == {
        "name": good["actions"][0]["name"],
        "arguments": good["actions"][0]["arguments"],
    }


def test_vague_answer_leads_to_a_second_question(tool_lists_en, tmp_path):
    plan = plan_sessions(tool_lists_en, [("CQ",)], seed=5)[0]
    script = session_script(plan.as_state())
    ask = script["planner"][0]
    script["planner"].insert(1, ask)
    script["checker"].insert(1, ACCEPT)
    script["agent"].insert(1, "Sorry, which exact value do you mean?")
    script["user"].insert(1, "Hmm, the usual one I guess.")
    outcome = run(plan, script, tmp_path, vague_answer_rate=1.0)
    assert outcome.status == "done", outcome.reason
    answers = [e for e in outcome.state["transcript"] if e["role"] == "user" and e["kind"] == "answer"]
    assert [e["vague"] for e in answers] == [True, False]
    user_calls = [c for c in outcome.state["calls"] if c["role"] == "user"]
    assert "Answer vaguely" in user_calls[1]["request"][0]["content"]
    assert "Answer clearly" in user_calls[2]["request"][0]["content"]
    nodes = outcome.session["english_answer_list"][0]
    assert [n["action"]["name"] for n in nodes[:2]] == ["ask_user_for_required_parameters"] * 2
    assert [n["user_input"] for n in nodes[:2]] == [
        "Hmm, the usual one I guess.",
        script["user"][2],
    ]
    assert [n["dependency_list"] for n in nodes] == [
        [],
        [0],
        [0, 1],
        [0, 1, 2],
    ]  # the call named 0 and waits for step 1
    assert outcome.session["english_task_types"] == ["Clarify"]


def test_chinese_session(tool_lists_zh, tmp_path):
    plan = plan_for(tool_lists_zh, ("ST", "CQ", "MT", "CC"), language="zh")
    script = session_script(plan.as_state())
    script["user"] = [f"请求{i}：{text}" for i, text in enumerate(script["user"])]
    script["agent"] = [f"回复{i}：result 正常" for i in range(len(script["agent"]))]  # a reply states the results
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "done", outcome.reason
    session = outcome.session
    Session.model_validate(session)
    assert session["english_tools"] == plan.tools and session["english_tasks"][0].startswith("请求0：")
    assert (
        session["task_types"][0] == "单工具"
        and session["task_types"][1] == "澄清"
        and session["task_types"][3] == "闲聊"
    )
    planner_request = next(c for c in outcome.state["calls"] if c["role"] == "planner")["request"]
    assert "规划者" in planner_request[0]["content"] and "## 工具" in planner_request[1]["content"]
    user_request = outcome.state["calls"][0]["request"][0]["content"]
    assert "用中文" in user_request
    assert replay_is_perfect(session)


def test_rules_only_checker_makes_no_checker_calls(tool_lists_en, tmp_path):
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    script["checker"] = []
    outcome = run(plan, script, tmp_path, models={"checker": "none"})
    assert outcome.status == "done", outcome.reason
    assert not [c for c in outcome.state["calls"] if c["role"] == "checker"]
    assert {e["source"] for e in outcome.state["transcript"] if e["role"] == "checker"} == {"rules"}


def test_a_role_added_by_one_node_and_one_edge(tool_lists_en, tmp_path):
    """The README recipe: a reviewer node between the user and the planner."""
    from langgraph.types import Command

    seen = []

    def reviewer(state):
        seen.append(state.tasks[-1]["user_message"])
        return Command(goto="planner")

    builder = build()
    builder.add_node("reviewer", reviewer, destinations=("planner",))
    builder.edges.discard(("user", "planner"))  # re-point the one edge: user -> reviewer
    builder.add_edge("user", "reviewer")
    custom = builder.compile(name="generation")
    assert ("user", "reviewer") in {(e.source, e.target) for e in custom.get_graph().edges}
    plan = _single_tool_plan(tool_lists_en)
    file = tmp_path / "script.json"
    file.write_text(json.dumps(_single_tool_script(plan)), encoding="utf-8")
    outcome = asyncio.run(generate_session(plan, scripted_context(file), custom.with_config({"recursion_limit": 200})))
    assert outcome.status == "done" and seen == [outcome.session["english_tasks"][0]]


def test_oracle_replay_responses_follow_the_gold_path(tool_lists_en, tmp_path):
    plan = plan_for(tool_lists_en, ("MT", "CQ", "ST", "CC"))
    plan = type(plan)(**{**plan.__dict__, "mt_variants": ("serial_parallel", "", "", "")})
    session = copy.deepcopy(run(plan, session_script(plan.as_state()), tmp_path).session)
    session["id"] = "wild_tool_bench_7"
    responses = oracle_responses(session)
    mixed = session["english_answer_list"][0]
    first = responses[0]["tool_calls"]
    assert [c["id"] for c in first] == ["call_7_0_0_0", "call_7_0_0_1"]
    assert [json.loads(c["function"]["arguments"]) for c in first] == [
        mixed[0]["action"]["arguments"],
        mixed[1]["action"]["arguments"],
    ]
    assert responses[1]["tool_calls"][0]["function"]["name"] == mixed[2]["action"]["name"]
    assert responses[2] == {"content": mixed[3]["observation"], "tool_calls": None, "reasoning_content": None}
    clarify = session["english_answer_list"][1]
    assert responses[3]["content"] == clarify[0]["observation"] and responses[3]["tool_calls"] is None
    # 3 + (ask, call, answer) + (call, answer) + chat answer + spare
    assert len(responses) == 3 + 3 + 2 + 1 + 1
    assert replay_is_perfect(session)


def test_extra_roles_are_inserted_on_plain_edges(tool_lists_en, tmp_path):
    """docs/guides/generating.md "Adding a role": a reviewer after the user can end the session; an observer after the planner sees every decision."""
    from wildtoolbench.graphs.generation import ExtraRole, compile_graph

    plan = plan_for(tool_lists_en, ("ST", "CC"))
    seen: list[tuple[int, int]] = []

    def observer(state, runtime):  # runs after every planner decision, before the checker
        seen.append((len(state.tasks), state.attempts))
        return {}

    def reviewer(state, runtime):  # reads every user message before the planner does
        if len(state.tasks) == 2:
            return {"status": "failed", "failure_reason": "reviewer: the second task is out of scope"}
        return {}

    graph_with_roles = compile_graph(
        [ExtraRole("reviewer", reviewer, after="user"), ExtraRole("observer", observer, after="planner")]
    )
    drawn = graph_with_roles.get_graph()
    edges = {(e.source, e.target) for e in drawn.edges}
    assert {
        ("user", "reviewer"),
        ("reviewer", "planner"),
        ("reviewer", "__end__"),
        ("planner", "observer"),
        ("observer", "checker"),
        ("tool", "tool_checker"),
    } <= edges
    assert ("user", "planner") not in edges and ("planner", "checker") not in edges

    file = tmp_path / "script.json"
    file.write_text(json.dumps(session_script(plan.as_state())), encoding="utf-8")
    outcome = asyncio.run(generate_session(plan, scripted_context(file), graph_with_roles))
    assert (outcome.status, outcome.reason) == ("failed", "reviewer: the second task is out of scope")
    assert len(outcome.state["tasks"]) == 2 and seen and all(tasks == 1 for tasks, _ in seen)

    # The observer alone changes nothing: the session is generated as with the default graph.
    scripted.reset()
    seen.clear()
    observed = asyncio.run(
        generate_session(
            plan, scripted_context(file), compile_graph([ExtraRole("observer", observer, after="planner")])
        )
    )
    scripted.reset()
    default = asyncio.run(generate_session(plan, scripted_context(file)))
    assert observed.status == default.status == "done"
    assert observed.session == default.session
    assert len(seen) == sum(1 for e in default.state["transcript"] if e.get("role") == "planner")

    with pytest.raises(ValueError, match="after='agent'"):
        compile_graph([ExtraRole("late", observer, after="agent")])
    with pytest.raises(ValueError, match="already exists"):
        compile_graph([ExtraRole("checker", observer, after="user")])


def test_user_requests_end_with_a_cue_to_write_the_message(tool_lists_en, tmp_path):
    """Small models continue the last thing they read: the user role's request ends with the instruction."""
    plan = plan_for(tool_lists_en, ("ST", "CC"))
    outcome = run(plan, session_script(plan.as_state()), tmp_path)
    assert outcome.status == "done"
    user_calls = [c for c in outcome.state["calls"] if c["role"] == "user"]
    human = [m["content"] for m in user_calls[0]["request"] if m["role"] in ("user", "human")][-1]
    assert human.endswith("Now write your first message to the assistant (in your own words, as yourself):")
    later = [m["content"] for m in user_calls[-1]["request"] if m["role"] in ("user", "human")][-1]
    assert later.endswith("Now write your next message to the assistant (in your own words, as yourself):")


def test_role_request_listener_sees_every_request(tool_lists_en, tmp_path):
    """``wtb generate``'s progress display: one call per role-model request, with session, role and task."""
    from wildtoolbench.nodes.generation.registry import ROLE_REQUEST_LISTENER

    plan = plan_for(tool_lists_en, ("ST", "CC"))
    heard: list[tuple[str, str, int]] = []
    token = ROLE_REQUEST_LISTENER.set(lambda session_id, role, task: heard.append((session_id, role, task)))
    try:
        outcome = run(plan, session_script(plan.as_state()), tmp_path)
    finally:
        ROLE_REQUEST_LISTENER.reset(token)
    assert outcome.status == "done"
    assert heard[:2] == [(plan.key, "user", 0), (plan.key, "planner", 0)]
    assert [(role, task) for _, role, task in heard] == [(c["role"], c["task"]) for c in outcome.state["calls"]]
    assert {task for _, _, task in heard} == {0, 1}


def test_live_transcript_is_written_as_the_session_runs(tool_lists_en, tmp_path):
    """docs/generation.md §7: an interrupted or failing session leaves its transcript so far, with timings."""
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    script["agent"] = []  # the script runs dry at the final reply: the session stops there
    file = tmp_path / "script.json"
    file.write_text(json.dumps(script), encoding="utf-8")
    live = tmp_path / "transcripts" / f"{plan.key}.jsonl"
    outcome = asyncio.run(generate_session(plan, scripted_context(file), live=live))
    assert outcome.status == "failed"
    lines = [json.loads(line) for line in live.read_text(encoding="utf-8").splitlines()]
    entries = [line for line in lines if line["line"] == "entry"]
    assert [e["role"] for e in entries] == ["user", "planner", "checker", "tool", "checker", "planner", "checker"]
    assert [e["id"] for e in entries] == [e["id"] for e in outcome.state["transcript"]]
    calls = [line for line in lines if line["line"] == "call"]
    assert [c["role"] for c in calls] == [c["role"] for c in outcome.state["calls"]]
    assert all(set(c) == {"line", "t", "role", "task", "seconds", "input_tokens", "output_tokens"} for c in calls)
    assert lines[-1]["line"] == "end" and lines[-1]["status"] == "failed"
    assert lines[-1]["reason"].startswith("ScriptExhausted")
    times = [line["t"] for line in lines]
    assert times == sorted(times)
    # the yield table of the session: one accepted output per role, the last answer decision unjudged by the agent
    assert outcome.yields["planner"]["attempts"] == 2 and outcome.yields["planner"]["accepted"] == 2
    assert outcome.yields["tool_checker"] == {**outcome.yields["tool_checker"], "attempts": 1, "accepted": 1}


def test_manifest_has_the_yield_table_and_the_quality_check(tool_lists_en, tmp_path):
    plans = plan_sessions(tool_lists_en, [("ST",), ("ST",)], seed=21)
    failing = _single_tool_script(plans[0])
    bad = copy.deepcopy(failing["planner"][0])
    bad["actions"][0]["name"] = "getTheMoon"
    failing["planner"] = [bad, *failing["planner"]]
    failing["user"] = ["Thank you for providing the tools.", *failing["user"]]
    script = {"sessions": {plans[0].key: failing, plans[1].key: _single_tool_script(plans[1])}}
    file = tmp_path / "script.json"
    file.write_text(json.dumps(script), encoding="utf-8")
    out = tmp_path / "out"
    summary = asyncio.run(run_batch(plans, scripted_context(file), out, concurrency=1))
    assert (summary.succeeded, summary.failed) == (2, 0)
    manifest = json.loads((out / "manifest.json").read_text())
    table = manifest["yield"]
    assert table["user"]["attempts"] == 3
    assert table["user"]["reasons"] == {"voice.thanks": 1, "voice.meta_tools": 1}
    assert table["planner"]["attempts"] == 5 and table["planner"]["reasons"] == {"structure.unknown_tool": 1}
    assert table["checker"]["reasons"] == {"rules: structure.unknown_tool": 1}
    assert table == summary.yields
    assert manifest["quality"] == summary.quality
    # the scripted messages state every value, in the user's voice
    assert manifest["quality"] == {
        "sessions": 2, "passing": 2, "voice": 0, "values": 0, "concrete": 0, "calls": 0, "assistant": 0,
        "rules": {}, "policy": "flag", "dropped": 0,
    }  # fmt: skip
    assert manifest["context"]["rule_profile"] == "small"
    clean = {"ok": True, "voice": [], "values": [], "concrete": [], "calls": [], "assistant": [], "rules": []}
    assert [s["quality"] for s in manifest["sessions"]] == [clean] * 2
    assert all((out / "transcripts" / f"{p.key}.jsonl").is_file() for p in plans)
    # a resumed run reads each session's yield from outcome.json
    again = asyncio.run(run_batch(plans, scripted_context(file), out, concurrency=1))
    assert again.reused == 2 and again.yields == summary.yields


def test_a_user_message_in_the_assistants_voice_is_written_again_with_the_reason(tool_lists_en, tmp_path):
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    script["user"] = ["Thank you for providing the tools. How can I help you?", *script["user"]]
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "done", outcome.reason
    checks = [e for e in outcome.state["transcript"] if e["role"] == "rule_check"]
    assert checks[0]["reasons"] == [
        'the message "Thank you for providing" thanks the user for information, as the assistant does',
        'the message "How can I help" offers help, as the assistant does',
        'the message "the tools" talks about the tools instead of asking for something',
    ]
    requests = [c["request"][1]["content"] for c in outcome.state["calls"] if c["role"] == "user"]
    # the retry gets the fix for that kind of problem, not the quoted phrases (docs/generation.md §4.3)
    assert requests[1].splitlines()[-1] == (
        "Write it again; the last one was refused because: "
        "write only the person's own request, in the person's words, and stop after it"
    )
    assert outcome.session["english_tasks"][0] == script["user"][1]


def test_a_reply_rejected_every_time_is_written_from_the_results(tool_lists_en, tmp_path):
    """The agent gives the user's request back three times (each rejected by rule); the reply is then
    written from the facts of the task's results, marked as a fallback, and the session is kept
    (docs/generation.md §4.3)."""
    from wildtoolbench.bench.generation_yield import session_yield, yield_lines
    from wildtoolbench.nodes.generation.agent import result_points

    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    request = script["user"][0]
    script["agent"] = [request, request, request]
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "done", outcome.reason
    raw = outcome.state["transcript"]
    replies = [e for e in raw if e["role"] == "agent"]
    assert [e.get("fallback", False) for e in replies] == [False, False, False, True]
    assert [e["attempt"] for e in replies] == [1, 2, 3, 4]
    task = outcome.state["tasks"][0]
    points = result_points(task["nodes"])
    assert points and replies[-1]["content"] == f"Here is what I found: {points}."
    assert task["nodes"][-1]["observation"] == replies[-1]["content"]
    row = session_yield(raw, outcome.state["calls"])["agent"]
    assert (row["attempts"], row["accepted"], row["rejected"], row["fallbacks"], row["calls"]) == (4, 1, 3, 1, 3)
    assert row["reasons"] == {"reply.echo_request": 3}
    assert yield_lines({"agent": row})[-1].strip() == "1 accepted written from the results (fallback)"


def test_a_chat_reply_rejected_every_time_fails_the_session(tool_lists_en, tmp_path):
    """A chat answer has no results to write a reply from: three rejected replies fail the session."""
    plan = plan_sessions(tool_lists_en, [("CC",)], seed=21)[0]
    script = session_script(plan.as_state())
    request = script["user"][0]
    script["agent"] = [request, request, request]
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "failed"
    assert outcome.reason.startswith("agent reply rejected 3 times (task 0): repeats"), outcome.reason


def test_a_pasted_environment_line_is_not_shown_again_and_old_replies_are_not_shown_to_a_reply(tool_lists_en, tmp_path):
    """The agent pastes the environment time into its reply; the retry's system prompt no longer holds
    the environment line (the model cannot paste what it does not see), and a reply's request never
    shows the assistant's earlier final replies (docs/generation.md §4.3)."""
    plan = plan_sessions(tool_lists_en, [("ST", "ST")], seed=21)[0]
    script = session_script(plan.as_state())
    stamp = plan.env_info[:19]
    first_reply = script["agent"][0]
    script["agent"] = [f"{first_reply} Checked at {stamp}.", *script["agent"]]
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "done", outcome.reason
    agent_calls = [c for c in outcome.state["calls"] if c["role"] == "agent"]
    assert len(agent_calls) == 3
    assert plan.env_info in agent_calls[0]["request"][0]["content"]
    assert plan.env_info not in agent_calls[1]["request"][0]["content"]
    assert first_reply not in agent_calls[2]["request"][1]["content"]  # task 1's reply request
    assert outcome.state["tasks"][0]["user_message"] in agent_calls[2]["request"][1]["content"]


def test_a_request_rejected_every_time_is_sent_as_its_draft(tool_lists_en, tmp_path):
    """The user model offers help three times instead of asking; the generator's own draft of the request
    (which states every planned value) is sent instead, marked as a fallback (docs/generation.md §4.3)."""
    from wildtoolbench.bench.generation_yield import session_yield, yield_lines

    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    offer = "I'd be happy to help you with that."
    script["user"] = [offer, offer, offer, *script["user"][1:]]
    outcome = run(plan, script, tmp_path)  # the scripted planner's values are not the draft's: it fails later
    assert "user message rejected" not in (outcome.reason or "")
    users = [e for e in outcome.state["transcript"] if e["role"] == "user" and e.get("kind") == "open"]
    assert [e.get("fallback", False) for e in users] == [False, False, False, True]
    assert [e["attempt"] for e in users] == [1, 2, 3, 4]
    message = outcome.state["tasks"][0]["user_message"]
    assert message == users[-1]["content"] and message.startswith("Can you ") and offer not in message
    row = session_yield(outcome.state["transcript"], outcome.state["calls"])["user"]
    assert (row["rejected"], row["fallbacks"]) == (3, 1)
    assert yield_lines({"user": row})[-1].strip() == "1 accepted sent as the generator's draft (fallback)"


def test_an_answer_rejected_every_time_is_sent_as_its_draft(tool_lists_en, tmp_path):
    """Measured (issue 25): a user's answer to the assistant's question apologised three times and the
    session failed. A clear answer whose tries were all rejected is now sent as its draft ("The city is
    Paris."), marked as a fallback (docs/generation.md §4.3)."""
    plan = plan_sessions(tool_lists_en, [("CQ",)], seed=21)[0]
    script = session_script(plan.as_state())
    sorry = "I'm sorry, but I can't tell you that."
    script["user"] = [script["user"][0], sorry, sorry, sorry, *script["user"][2:]]
    outcome = run(plan, script, tmp_path)
    assert "user message rejected" not in (outcome.reason or ""), outcome.reason
    answers = [e for e in outcome.state["transcript"] if e["role"] == "user" and e.get("kind") == "answer"]
    assert [e.get("fallback", False) for e in answers] == [False, False, False, True]
    ask = next(n for n in outcome.state["tasks"][0]["nodes"] if n["name"] == "ask_user_for_required_parameters")
    assert ask["user_input"] == answers[-1]["content"] and sorry not in ask["user_input"]
    assert ask["user_input"].startswith("The ")


def test_a_session_failing_the_quality_check_is_dropped_with_its_reasons(tool_lists_en, tmp_path):
    """docs/generation.md §10: a reply cut off mid-sentence passes the small profile's generation rules (broken
    text judges the roles' outputs under standard only) but fails the quality check: dropped by default,
    kept and marked with --quality flag."""
    plans = plan_sessions(tool_lists_en, [("ST",), ("ST",)], seed=21)
    broken = _single_tool_script(plans[0])
    broken["agent"] = [str(broken["agent"][0]).rstrip(".!?") + " and the days set to"]
    script = {"sessions": {plans[0].key: broken, plans[1].key: _single_tool_script(plans[1])}}
    file = tmp_path / "script.json"
    file.write_text(json.dumps(script), encoding="utf-8")
    out = tmp_path / "drop"
    summary = asyncio.run(run_batch(plans, scripted_context(file), out, concurrency=1, quality_policy="drop"))
    assert (summary.succeeded, summary.failed) == (1, 0)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["quality"]["dropped"] == 1 and manifest["quality"]["rules"] == {"text.cut_off": 1}
    assert [s["status"] for s in manifest["sessions"]] == ["dropped", "done"]
    (dropped,) = [json.loads(line) for line in (out / "quality_dropped.jsonl").read_text().splitlines()]
    assert dropped["key"] == plans[0].key and dropped["reasons"][0].startswith("task 0 reply 1: ends mid-sentence")
    sessions = [json.loads(line) for line in (out / "sessions.jsonl").read_text().splitlines()]
    assert [s["id"] for s in sessions] == ["wild_tool_bench_0"]
    again = tmp_path / "script_again.json"  # a scripted model is read once per file
    again.write_text(json.dumps(script), encoding="utf-8")
    flagged = asyncio.run(run_batch(plans, scripted_context(again), tmp_path / "flag", concurrency=1))
    assert (flagged.succeeded, flagged.quality["passing"], flagged.quality["dropped"]) == (2, 1, 0)


@pytest.mark.parametrize("profile", ["standard", "off"])
def test_a_session_generates_under_every_rule_profile(tool_lists_en, tmp_path, profile):
    """The standard and off profiles run the same graph (docs/generation.md §11.2): a user message in the
    assistant's voice with a code quote is retried under standard only for the rules standard keeps."""
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    users = list(script["user"])
    first = users[0]
    script["user"] = [f"You can use `the tool`: {first}", *users[1:]]
    outcome = run(plan, script, tmp_path, rules=profile)
    assert outcome.status == "done", outcome.reason
    checks = [e for e in outcome.state["transcript"] if e["role"] == "rule_check"]
    assert checks == []  # voice.explains_how and voice.code_quote are small-only: the first message stands
    assert outcome.state["tasks"][0]["user_message"] == f"You can use `the tool`: {first}"
    (tmp_path / "s").mkdir()
    small = run(plan, {**script, "user": [f"You can use `the tool`: {first}", *users]}, tmp_path / "s",
                rules="small")  # fmt: skip
    rejected = [e["rules"] for e in small.state["transcript"] if e["role"] == "rule_check"]
    assert rejected == [["voice.explains_how", "voice.code_quote"]] and small.status == "done"


def test_an_unreadable_checker_verdict_is_counted_as_its_rule(tool_lists_en, tmp_path):
    plan = _single_tool_plan(tool_lists_en)
    script = _single_tool_script(plan)
    decision = script["planner"][0]
    script["planner"] = [decision, decision, *script["planner"][1:]]
    script["checker"] = ["no verdict here", *script["checker"][1:]]
    outcome = run(plan, script, tmp_path)
    assert outcome.status == "done", outcome.reason
    checks = [e for e in outcome.state["transcript"] if e["role"] == "checker"]
    assert (checks[0]["source"], checks[0]["rules"]) == ("model", ["model.unreadable"])
    assert outcome.yields["checker"]["reasons"] == {"model: model.unreadable": 1}
