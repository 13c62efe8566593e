"""Malformed model output (issue 6): every case is a recorded, scored outcome, never a crash.

Cases that can be written in OpenAI wire format go through the real HTTP path:
the loopback stub (``tests/support/openai_stub.py``) serves them as raw JSON, so the
openai SDK and langchain-openai parse them before the harness sees them. The
others (a tool call without an ``id`` key or without ``function``; the step
limit) go through the replay provider. Each case replaces the responses of one
task of a copy of a demo session (``bench/data``); the other tasks get the
oracle's responses and must stay correct.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.openai_stub import ScriptedServer, session_copy
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.bench.harness import ERROR_ACTION_NAME
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset, run_eval
from wildtoolbench.scoring.run import score_run


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _call(name, arguments, call_id="call_x"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _calls(*calls, content=None, reasoning=None):
    return {"content": content, "tool_calls": list(calls), "reasoning_content": reasoning}


def _text(content):
    return {"content": content, "tool_calls": None, "reasoning_content": None}


DEMO = {s["id"]: s for s in load_dataset(SESSIONS_PATH)}
ORACLE = {r["session_id"]: r["responses"] for r in _jsonl(CANDIDATES_PATH) if r["candidate"] == "oracle"}
FLIGHTS = {"origin": "Lisbon", "destination": "Amsterdam", "departure_date": "2025-03-21", "cabin_class": "economy"}
FLIGHTS_JSON = json.dumps(FLIGHTS)
ANSWER_0 = ORACLE["wild_tool_bench_0"][1]  # the gold reply of session 0, task 0
SEARCH_CATALOG = [json.loads(c["function"]["arguments"]) for c in ORACLE["wild_tool_bench_2"][3]["tool_calls"]]


def _oracle_by_task(session_id):
    """The oracle's responses of each task (it follows the gold path: one response per gold step)."""
    responses, tasks, start = ORACLE[session_id], [], 0
    for answer_list in DEMO[session_id]["english_answer_list"]:
        length = len(PathTracker(answer_list).gold_path)
        tasks.append(responses[start : start + length])
        start += length
    return tasks


# name -> (base session, task, responses of that task)
HTTP_CASES = {
    "invalid_json": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", "{origin: Lisbon}")), ANSWER_0]),
    "truncated_json": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", FLIGHTS_JSON[:30])), ANSWER_0]),
    "json_not_object": (
        "wild_tool_bench_0",
        0,
        [_calls(_call("searchFlights", json.dumps(list(FLIGHTS.values())))), ANSWER_0],
    ),
    "empty_string": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", "")), ANSWER_0]),
    "null_arguments": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", None)), ANSWER_0]),
    "dict_arguments": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", FLIGHTS)), ANSWER_0]),
    "double_encoded": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", json.dumps(FLIGHTS_JSON))), ANSWER_0]),
    "null_id": ("wild_tool_bench_0", 0, [_calls(_call("searchFlights", FLIGHTS_JSON, call_id=None)), ANSWER_0]),
    "missing_id_on_the_wire": (
        "wild_tool_bench_0",
        0,
        [_calls({"type": "function", "function": {"name": "searchFlights", "arguments": FLIGHTS_JSON}})],
    ),
    "duplicate_ids": (
        "wild_tool_bench_0",
        2,
        [
            _calls(*[dict(c, id="call_dup") for c in ORACLE["wild_tool_bench_0"][5]["tool_calls"]]),
            ORACLE["wild_tool_bench_0"][6],
        ],
    ),
    "unknown_tool": ("wild_tool_bench_0", 0, [_calls(_call("bookSpaceship", FLIGHTS_JSON))]),
    "content_null_and_reasoning": (
        "wild_tool_bench_0",
        0,
        [_calls(_call("searchFlights", FLIGHTS_JSON), reasoning="The user wants flights."), ANSWER_0],
    ),
    "tool_call_tag_in_text": (
        "wild_tool_bench_0",
        0,
        [_text(f'<tool_call>\n{{"name": "searchFlights", "arguments": {FLIGHTS_JSON}}}\n</tool_call>')],
    ),
    "bare_json_in_text": ("wild_tool_bench_0", 0, [_text(json.dumps({"name": "searchFlights", "arguments": FLIGHTS}))]),
    "json_text_at_answer_step": (
        "wild_tool_bench_0",
        0,
        [
            ORACLE["wild_tool_bench_0"][0],
            {"content": json.dumps({"name": "prepare_to_answer", "arguments": {}}), "tool_calls": []},
        ],
    ),
    "same_name_dict_arguments": (
        "wild_tool_bench_2",
        1,
        [
            _calls(*[_call("searchCatalog", args, f"call_{i}") for i, args in enumerate(reversed(SEARCH_CATALOG))]),
            ORACLE["wild_tool_bench_2"][4],
        ],
    ),
}


def _build(cases, first_number=0):
    """Dataset lines and script of one session copy per case (ids wild_tool_bench_<first_number + i>)."""
    sessions, script, names = [], {}, {}
    for offset, (name, (base, task, responses)) in enumerate(cases.items()):
        session_id = f"wild_tool_bench_{first_number + offset}"
        sessions.append(session_copy(DEMO[base], session_id, name))
        per_task = _oracle_by_task(base)
        per_task[task] = responses
        script[session_id] = [r for task_responses in per_task for r in task_responses] + [_text("SPARE RESPONSE")]
        names[name] = (session_id, task)
    return sessions, script, names


def _steps(task):
    return [task["inference_log"][k] for k in sorted(k for k in task["inference_log"] if k.startswith("step_"))]


@pytest.fixture(scope="module")
def http_run(tmp_path_factory):
    """Every HTTP case in one `arun_eval` against the stub, then scored."""
    out = tmp_path_factory.mktemp("malformed-http")
    sessions, script, names = _build(HTTP_CASES)
    dataset = out / "sessions.jsonl"
    dataset.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    with ScriptedServer(sessions, script) as server:
        context = EvaluationContext(model="openai:malformed", base_url=server.base_url, max_attempts=1)
        summary = asyncio.run(arun_eval(sessions, context, out, concurrency=4, progress=False))
        served = dict(server.served)
    score_run(dataset, out / "result.jsonl", out)
    records = {r["id"]: r for r in _jsonl(out / "result.jsonl")}
    scores = {r["id"]: r["results"] for r in _jsonl(out / "score.jsonl")}
    return names, records, scores, summary, served, script


def _case(http_run, name):
    names, records, scores, *_ = http_run
    session_id, task = names[name]
    return records[session_id]["result"][task], scores[session_id][task], records[session_id], scores[session_id]


def test_every_case_is_a_scored_record_and_the_other_tasks_stay_correct(http_run):
    names, records, scores, summary, served, script = http_run
    assert summary.infrastructure_errors == [] and summary.inference_errors == []
    assert sorted(records) == sorted(session_id for session_id, _ in names.values())
    for name, (session_id, task) in names.items():
        assert served[session_id] == len(script[session_id]) - 1, name  # every response but the spare consumed
        others = [t for i, t in enumerate(scores[session_id]) if i != task]
        assert [t["label"] for t in others] == ["correct"] * 3, name


@pytest.mark.parametrize(
    ("name", "check_result"),
    [
        ("invalid_json", "error: args invalid json format"),
        ("truncated_json", "error: args invalid json format"),
        ("empty_string", "error: args invalid json format"),
        ("json_not_object", "error_schema: args type inconsistent"),
        ("null_arguments", "error_schema: args type inconsistent"),
        ("double_encoded", "error_schema: args type inconsistent"),
    ],
)
def test_bad_arguments_match_by_name_and_fail_the_argument_check(http_run, name, check_result):
    recorded, scored, _, _ = _case(http_run, name)
    sent = HTTP_CASES[name][2][0]["tool_calls"][0]["function"]["arguments"]
    steps = _steps(recorded)
    # inference: the name matches, the gold observation is fed back, the answer ends the task
    assert recorded["action_name_label"] == "correct" and recorded["is_optimal"] is True
    assert steps[0]["inference_output"]["tool_calls"][0]["function"]["arguments"] == sent  # recorded raw
    assert steps[0]["inference_output"]["current_action_name_label"] == "correct"
    # scoring: the argument check fails; the step after it is dropped (quirk 14); the task is wrong
    assert (scored["label"], scored["action_name_label"], scored["action_arguments_label"], scored["is_optimal"]) == (
        "error",
        "correct",
        "error",
        False,
    )
    output = scored["inference_log"]["step_0"]["inference_output"]
    assert output["current_action_arguments_check_result"] == [check_result]
    assert "step_1" not in scored["inference_log"]


def test_arguments_sent_as_an_object_are_checked_as_their_json(http_run):
    recorded, scored, _, _ = _case(http_run, "dict_arguments")
    assert _steps(recorded)[0]["inference_output"]["tool_calls"][0]["function"]["arguments"] == FLIGHTS
    assert (scored["label"], scored["action_arguments_label"]) == ("correct", "correct")
    # same-name parallel calls with object arguments: sorted by their JSON text, paired, all correct
    recorded, scored, _, _ = _case(http_run, "same_name_dict_arguments")
    assert [
        c["function"]["arguments"] for c in _steps(recorded)[0]["inference_output"]["tool_calls"]
    ] == SEARCH_CATALOG[::-1]
    assert (scored["label"], scored["action_arguments_label"]) == ("correct", "correct")
    assert scored["inference_log"]["step_0"]["inference_output"]["current_action_arguments_label"] == "correct"


def test_a_null_call_id_is_matched_and_its_observation_carries_it(http_run):
    recorded, scored, _, _ = _case(http_run, "null_id")
    steps = _steps(recorded)
    assert steps[0]["inference_output"]["tool_calls"][0]["id"] is None
    tool_message = steps[1]["inference_input"]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] is None
    assert scored["label"] == "correct"


def test_a_call_without_an_id_field_cannot_be_read(http_run):
    """The raw reply is recorded as sent (no ``id`` key); reading the call fails like the reference's parse."""
    recorded, scored, _, _ = _case(http_run, "missing_id_on_the_wire")
    (step,) = _steps(recorded)
    assert "id" not in step["inference_output"]["tool_calls"][0]
    assert step["inference_output"]["error_reason"] == "parse tool_calls failed, error: 'id'"
    assert (recorded["action_name_label"], scored["label"]) == ("error", "error")


def test_duplicate_call_ids_are_kept_and_scored(http_run):
    recorded, scored, _, _ = _case(http_run, "duplicate_ids")
    steps = _steps(recorded)
    assert [c["id"] for c in steps[0]["inference_output"]["tool_calls"]] == ["call_dup", "call_dup"]
    assert [m["tool_call_id"] for m in steps[1]["inference_input"]["messages"][-2:]] == ["call_dup", "call_dup"]
    assert scored["label"] == "correct" and recorded["is_optimal"] is True


def test_a_tool_not_in_the_tool_list_is_a_name_error(http_run):
    recorded, scored, _, _ = _case(http_run, "unknown_tool")
    (step,) = _steps(recorded)
    assert step["inference_output"]["error_reason"] == ERROR_ACTION_NAME
    assert list(step["inference_answer"]) == ["candidate_0_answer_function_list"]
    assert (recorded["action_name_label"], scored["label"]) == ("error", "error")
    assert "action_arguments_label" not in scored


def test_null_content_with_calls_and_reasoning_content_are_recorded(http_run):
    recorded, scored, _, _ = _case(http_run, "content_null_and_reasoning")
    steps = _steps(recorded)
    assert steps[0]["inference_output"]["content"] is None
    assert steps[0]["inference_output"]["reasoning_content"] == "The user wants flights."
    assert steps[1]["inference_input"]["messages"][-2]["reasoning_content"] == "The user wants flights."
    assert scored["label"] == "correct"


@pytest.mark.parametrize(("name", "fmt"), [("tool_call_tag_in_text", "tool_call_tag"), ("bare_json_in_text", "json")])
def test_a_tool_call_written_in_the_text_is_a_text_reply_with_a_diagnostic(http_run, name, fmt):
    recorded, scored, _, _ = _case(http_run, name)
    (step,) = _steps(recorded)
    output = step["inference_output"]
    assert output["tool_calls"] is None and output["error_reason"] == ERROR_ACTION_NAME  # reference mode: text
    (diagnostic,) = output["diagnostics"]
    assert (diagnostic["kind"], diagnostic["format"], diagnostic["names"]) == ("text_tool_call", fmt, ["searchFlights"])
    assert "tool-call parser" in diagnostic["message"]
    assert (recorded["action_name_label"], scored["label"]) == ("error", "error")


def test_json_text_at_the_answer_step_counts_as_the_answer_and_is_flagged(http_run):
    recorded, scored, _, _ = _case(http_run, "json_text_at_answer_step")
    steps = _steps(recorded)
    assert steps[1]["inference_output"]["tool_calls"] == []
    assert steps[1]["inference_output"]["diagnostics"][0]["names"] == ["prepare_to_answer"]
    assert "diagnostics" not in steps[0]["inference_output"]
    assert scored["label"] == "correct"  # a text reply where the gold answers in text


# --------------------------------------------------------------------------- replay-only cases


def test_calls_that_cannot_be_read_are_step_errors(tmp_path):
    """A call without an ``id`` key or without ``function`` (not expressible through the SDK)."""
    cases = {
        "no_id_key": (
            "wild_tool_bench_0",
            0,
            [_calls({"type": "function", "function": {"name": "searchFlights", "arguments": "{}"}})],
        ),
        "no_function": ("wild_tool_bench_0", 0, [_calls({"id": "call_1", "type": "function"})]),
    }
    sessions, script, names = _build(cases)
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(
        "".join(
            json.dumps({"session_id": sid, "candidate": "broken", "responses": r}) + "\n" for sid, r in script.items()
        ),
        encoding="utf-8",
    )
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    run_eval(sessions, EvaluationContext(model=f"replay:{candidates}#broken"), tmp_path, progress=False)
    score_run(dataset, tmp_path / "result.jsonl", tmp_path)
    records = {r["id"]: r for r in _jsonl(tmp_path / "result.jsonl")}
    scores = {r["id"]: r["results"] for r in _jsonl(tmp_path / "score.jsonl")}
    expected = {
        "no_id_key": "parse tool_calls failed, error: 'id'",
        "no_function": "parse tool_calls failed, error: 'function'",
    }
    for name, reason in expected.items():
        session_id, task = names[name]
        (step,) = _steps(records[session_id]["result"][task])
        assert step["inference_output"]["error_reason"] == reason
        assert "inference_answer" not in step
        assert [t["label"] for t in scores[session_id]] == ["error", "correct", "correct", "correct"]
