"""Gaps found by auditing issues 2 and 3 from the command line (`wtb validate`, `wtb score`, `wtb eval`).

Every bad input must give `file:line: field: message` (or `file: message`) on stderr, exit code 1 and no
traceback; outputs are ordinary files; `wtb eval` passes its sampling / endpoint options to the model.
"""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.session_factory import make_session
from wildtoolbench.bench.schema import load_sessions, sessions_by_id
from wildtoolbench.cli import app
from wildtoolbench.graphs.evaluation import RECURSION_LIMIT, build_evaluation_graph
from wildtoolbench.runner import ResultFile, session_sort_key
from wildtoolbench.scoring.results import natural_id_key
from wildtoolbench.scoring.stream import score_records


def _line(row) -> str:
    return row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)


def _invoke(*args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result


# --------------------------------------------------------------------------- wtb validate


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"", "{path}: file holds no sessions"),
        (b"\n  \n\n", "{path}: file holds no sessions"),
        (b'{"id": "caf\xe9"}\n', "{path}:1: (encoding): not UTF-8 text (byte 12 of the line is 0xe9)"),
        (b"[1, 2]\n", "{path}:1: (line): expected a JSON object, got list"),
    ],
)
def test_validate_file_level_and_encoding_problems(tmp_path, content, expected):
    path = tmp_path / "data.jsonl"
    path.write_bytes(content)
    result = _invoke("validate", path)
    assert result.exit_code == 1
    assert expected.format(path=path) in result.output.splitlines()


def test_validate_directory_and_missing_file(tmp_path):
    """A path that is no file is a command-line mistake: click's usage error, exit 2 (docs/cli.md §2)."""
    result = _invoke("validate", tmp_path)
    assert result.exit_code == 2 and f"Invalid value for 'path': File '{tmp_path}' is a directory." in result.output
    result = _invoke("validate", tmp_path / "nope.jsonl")
    assert (
        result.exit_code == 2
        and f"Invalid value for 'path': File '{tmp_path / 'nope.jsonl'}' does not exist." in result.output
    )


def test_a_bad_byte_spoils_only_its_line(tmp_path):
    """Lines after a non-UTF-8 line are still read and checked; CRLF line ends are fine."""
    good = [make_session(f"wild_tool_bench_{i}") for i in range(3)]
    broken = copy.deepcopy(good[2])
    broken["english_task_types"][1] = "Multi-Tool"
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        _line(good[0]).encode()
        + b"\r\n"
        + b'{"id": "\xff"}\n'
        + _line(good[1]).encode()
        + b"\r\n"
        + _line(broken).encode()
        + b"\n"
    )
    result = _invoke("validate", path)
    assert result.exit_code == 1
    problems = [text for text in result.output.splitlines() if text.startswith(f"{path}:")]
    assert problems[0] == f"{path}:2: (encoding): not UTF-8 text (byte 9 of the line is 0xff)"
    assert problems[1].startswith(f"{path}:4: english_task_types[1]: Input should be")
    assert len(problems) == 2 and result.output.splitlines()[-1] == f"error: {path}: 2 problem(s) found"
    path.write_bytes(_line(good[0]).encode() + b"\r\n" + _line(good[1]).encode() + b"\r\n")
    result = _invoke("validate", path)
    assert result.exit_code == 0 and "2 sessions, 8 tasks" in result.output


def test_validate_names_the_dependency_that_closes_a_cycle(tmp_path):
    session = make_session()
    session["english_answer_list"][3][0]["dependency_list"] = [2]  # 0 -> 2 -> 1 -> 0
    path = tmp_path / "cycle.jsonl"
    path.write_text(_line(session) + "\n", encoding="utf-8")
    result = _invoke("validate", path)
    assert result.exit_code == 1
    assert (
        f"{path}:1: english_answer_list[3][0].dependency_list[0]: dependency cycle (node -> node it depends on): 0 -> 2 -> 1 -> 0"
        in result.output.splitlines()
    )


# --------------------------------------------------------------------------- wtb score


def _one_session_run(tmp_path: Path) -> tuple[Path, dict]:
    """A dataset of one session and a well-formed result record for it (every task answered in text)."""
    session = make_session("wild_tool_bench_0")
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text(_line(session) + "\n", encoding="utf-8")
    task = {
        "action_name_label": "error",
        "is_optimal": False,
        "inference_log": {
            "task_idx": 0,
            "step_0": {
                "inference_output": {
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "getWeather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                    "current_action_name_label": "correct",
                },
                "inference_answer": {
                    "candidate_0_answer_function_list": {
                        "action": [{"name": "getWeather", "arguments": '{"city": "Paris"}'}]
                    }
                },
            },
            "step_1": {
                "inference_output": {
                    "content": "?",
                    "tool_calls": None,
                    "current_action_name_label": "error",
                    "error_reason": "x",
                }
            },
        },
        "latency": [0.0, 0.0],
        "input_token_count": [0, 0],
        "output_token_count": [0, 0],
    }
    record = {"id": "wild_tool_bench_0", "model_name": "m", "result": [copy.deepcopy(task) for _ in range(4)]}
    return dataset, record


def test_score_reports_bad_result_fields(tmp_path):
    dataset, record = _one_session_run(tmp_path)
    results = tmp_path / "r.jsonl"
    results.write_text(_line(record) + "\n", encoding="utf-8")
    assert _invoke("score", "--dataset", dataset, "--results", results, "--out", tmp_path / "ok").exit_code == 0

    cases = [
        (
            lambda r: r["result"][1].__setitem__("is_optimal", "yes"),
            "result[1].is_optimal: expected true or false, got 'yes'",
        ),
        (
            lambda r: r["result"][2].__setitem__("action_name_label", "maybe"),
            "result[2].action_name_label: expected 'correct' or 'error', got 'maybe'",
        ),
        (
            lambda r: r["result"][0]["inference_log"]["step_0"]["inference_output"].__setitem__(
                "tool_calls", "getWeather"
            ),
            "result[0].inference_log.step_0.inference_output.tool_calls: expected a list of calls",
        ),
        (
            lambda r: r["result"][0]["inference_log"]["step_0"]["inference_output"].__setitem__(
                "tool_calls", [{"id": "c"}]
            ),
            "result[0].inference_log.step_0.inference_output.tool_calls: expected a list of calls",
        ),
    ]
    for change, message in cases:
        broken = copy.deepcopy(record)
        change(broken)
        results.write_text(_line(broken) + "\n", encoding="utf-8")
        out = tmp_path / "out"
        result = _invoke("score", "--dataset", dataset, "--results", results, "--out", out)
        assert result.exit_code == 1, message
        assert any(text.startswith(f"{results}:1: {message}") for text in result.output.splitlines()), result.output
        assert not out.exists()


def test_score_names_an_undecodable_result_line(tmp_path):
    dataset, record = _one_session_run(tmp_path)
    results = tmp_path / "r.jsonl"
    results.write_bytes(b"\xfe\n" + _line(record).encode() + b"\n")
    result = _invoke("score", "--dataset", dataset, "--results", results, "--out", tmp_path / "out")
    assert result.exit_code == 1
    assert f"{results}:1: (encoding): not UTF-8 text (byte 1 of the line is 0xfe)" in result.output.splitlines()


def test_outputs_are_ordinary_files(tmp_path):
    """Atomic writes must not leave the owner-only mode of a temp file on score.jsonl / metric.json."""
    dataset, record = _one_session_run(tmp_path)
    results = tmp_path / "r.jsonl"
    results.write_text(_line(record) + "\n", encoding="utf-8")
    old = os.umask(0o022)
    try:
        import importlib

        import wildtoolbench.common.files

        importlib.reload(wildtoolbench.common.files)  # the module reads the umask once, at import
        assert _invoke("score", "--dataset", dataset, "--results", results, "--out", tmp_path / "out").exit_code == 0
    finally:
        os.umask(old)
        importlib.reload(wildtoolbench.common.files)
    for name in ("score.jsonl", "metric.json"):
        assert stat.S_IMODE((tmp_path / "out" / name).stat().st_mode) == 0o644, name


# --------------------------------------------------------------------------- result.jsonl and score.jsonl order


def test_result_and_score_files_share_the_natural_id_order(tmp_path):
    ids = ["s10", "wild_tool_bench_10", "s2", "abc", "wild_tool_bench_9", "wild_tool_bench_100"]
    expected = ["abc", "s2", "s10", "wild_tool_bench_9", "wild_tool_bench_10", "wild_tool_bench_100"]
    assert sorted(ids, key=session_sort_key) == sorted(ids, key=natural_id_key) == expected

    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text("".join(_line(make_session(i)) + "\n" for i in ids), encoding="utf-8")
    results = ResultFile(tmp_path / "result.jsonl")
    for session_id in ids:
        results.append({"id": session_id, "model_name": "m", "result": "Error during inference: boom"})
    finalized = [r["id"] for r in results.finalize()]
    on_disk = [json.loads(line)["id"] for line in (tmp_path / "result.jsonl").read_text(encoding="utf-8").splitlines()]
    records = [
        (n, json.loads(line))
        for n, line in enumerate((tmp_path / "result.jsonl").read_text(encoding="utf-8").splitlines(), 1)
    ]
    _, lines, metric = score_records(sessions_by_id(load_sessions(dataset)), records)
    assert finalized == on_disk == [line["id"] for line in lines] == expected
    assert metric["total_info"]["task"] == {"accuracy": 0.0, "correct_count": 0, "total_count": 24}


# --------------------------------------------------------------------------- the graph factory


def test_graph_factory_merges_the_run_config():
    default = build_evaluation_graph()
    assert default.config["recursion_limit"] == RECURSION_LIMIT
    custom = build_evaluation_graph({"recursion_limit": 55, "tags": ["audit"], "metadata": {"k": "v"}})
    assert (custom.config["recursion_limit"], custom.config["tags"], custom.config["metadata"]) == (
        55,
        ["audit"],
        {"k": "v"},
    )
    with open(Path(__file__).resolve().parents[2] / "langgraph.json", encoding="utf-8") as handle:
        registered = json.load(handle)["graphs"]["evaluation"]
    module, _, attribute = registered.partition(":")
    assert module == "./graphs/evaluation.py" and attribute in ("graph", "build_evaluation_graph")


# --------------------------------------------------------------------------- wtb eval options over HTTP


@pytest.mark.shared
def test_eval_sends_temperature_and_uses_base_url_or_env(reference_dir, tmp_path, monkeypatch):
    """`--temperature` reaches the request body; `--base-url` or else $OPENAI_BASE_URL picks the server."""
    from tests.support.openai_stub import ScriptedServer

    sessions = [s.to_dict() for s in load_sessions(reference_dir / "sessions.jsonl")]
    rows = [json.loads(line) for line in (reference_dir / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    script = {
        r["session_id"]: r["responses"]
        for r in rows
        if r["candidate"] == "oracle" and r["session_id"] in ("wild_tool_bench_0", "wild_tool_bench_1")
    }
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    for name in ("WTB_TEMPERATURE", "WTB_BASE_URL", "WTB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with ScriptedServer(sessions, script) as server:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        common = [
            "eval",
            "--dataset",
            reference_dir / "sessions.jsonl",
            "--model",
            "openai:oracle",
            "--no-progress",
            "--no-trace",
        ]
        result = _invoke(
            *common, "--out", tmp_path / "a", "--ids", "0", "--temperature", "0.7", "--base-url", server.base_url
        )
        assert result.exit_code == 0, result.output
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = _invoke(*common, "--out", tmp_path / "b", "--ids", " wild_tool_bench_1 ")
        assert result.exit_code == 0, result.output
    assert server.requests["wild_tool_bench_0"] and {
        body["temperature"] for body in server.requests["wild_tool_bench_0"]
    } == {0.7}
    assert server.requests["wild_tool_bench_1"] and {
        body["temperature"] for body in server.requests["wild_tool_bench_1"]
    } == {0.0}
    assert server.served["wild_tool_bench_1"] == len(script["wild_tool_bench_1"]) - 1
    for folder, session_id in (("a", "wild_tool_bench_0"), ("b", "wild_tool_bench_1")):
        records = [
            json.loads(line) for line in (tmp_path / folder / "result.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        assert [r["id"] for r in records] == [session_id]
        assert [t["action_name_label"] for t in records[0]["result"]] == ["correct"] * 4


def test_context_settings_reach_the_openai_client(monkeypatch):
    """`--temperature`, `--timeout`, `--base-url` and the retry count end up on the ChatOpenAI client."""
    from wildtoolbench.models import resolve_model
    from wildtoolbench.nodes.evaluation.context import EvaluationContext, model_settings

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    context = EvaluationContext(
        model="openai:some-model", temperature=0.3, timeout=7.5, base_url="http://127.0.0.1:9/v1", max_retries=1
    )
    model = resolve_model(context.model, model_settings(context))
    assert (model.model_name, model.temperature, model.request_timeout, model.openai_api_base, model.max_retries) == (
        "some-model",
        0.3,
        7.5,
        "http://127.0.0.1:9/v1",
        1,
    )
    assert model.openai_api_key.get_secret_value() == "not-needed"  # a loopback server needs no key
