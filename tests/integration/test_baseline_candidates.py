"""``wtb eval --model baseline:chat`` / ``baseline:first-tool``: the floors of docs/evaluation.md §9.

The expected figures follow from the rules of docs/evaluation.md §3, checked against the data:

- ``baseline:chat`` answers every step in text, so a task ends action-correct when the text reaches
  a ``prepare_to_answer`` node through questions alone: every task whose gold holds only pseudo-tool
  nodes (the Chat tasks), plus any task where quirk 6 lets repeated questions walk the step index
  to a ``prepare_to_answer`` of another path (one Clarify task of the reference fixtures). Every
  other task ends at the first step that needs a call.
- ``baseline:first-tool`` never answers in text, and every task ends with ``prepare_to_answer``:
  no task is ever correct. Its call can still match a gold step (the first tool is the gold call of
  some first steps), which adds requests to the accomplish progress count (AP counts requests,
  docs/metrics.md §4).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.cli import app

PSEUDO_TOOLS = {"ask_user_for_required_parameters", "prepare_to_answer"}
DEMO = Path(__file__).resolve().parents[2] / "bench" / "data" / "demo_sessions.jsonl"


def _jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _eval(out: Path, spec: str, *extra: str) -> dict:
    result = CliRunner().invoke(
        app, ["eval", "--model", spec, "--no-progress", "--no-trace", "--out", str(out), *extra], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return json.loads((out / "metric.json").read_text(encoding="utf-8"))


def _bucket(correct: int, total: int) -> dict:
    return {"accuracy": correct / total if total else 0.0, "correct_count": correct, "total_count": total}


def _progress(complete: int, total: int) -> dict:
    return {"rate": complete / total, "complete_step": complete, "total_step": total}


def _correct_tasks(out: Path) -> set[tuple[str, int]]:
    return {
        (record["id"], index)
        for record in _jsonl(out / "score.jsonl")
        for index, task in enumerate(record["results"])
        if task["label"] == "correct"
    }


def _pseudo_only_tasks(dataset: Path) -> set[tuple[str, int]]:
    return {
        (session["id"], index)
        for session in _jsonl(dataset)
        for index, answer in enumerate(session["english_answer_list"])
        if all(node["action"]["name"] in PSEUDO_TOOLS for node in answer)
    }


def _demo_metric(*, chat: bool) -> dict:
    """metric.json of a baseline on the demo: the 4 Chat tasks (tasks 4, 4, 3, 4 of sessions 0, 2, 3, 4)
    correct for ``chat``, nothing for ``first-tool``; AP 7/24 for both (each of the 4 Sequential and
    3 Mixed tasks ends at its first request, over 24 gold nodes)."""
    c = 1 if chat else 0
    types = {"Single-Tool": 5, "Multi-Tool": 11, "Parallel Multi-Tool": 4, "Sequential Multi-Tool": 4}
    types |= {"Mixed Multi-Tool": 3, "Clarify": 4}
    return {
        "model_name": "baseline:chat" if chat else "baseline:first-tool",
        "total_info": {"task": _bucket(4 * c, 24), "session": _bucket(0, 6)},
        "task_type_info": {name: _bucket(0, total) for name, total in types.items()} | {"Chat": _bucket(4 * c, 4)},
        "layer_info": {"0": _bucket(0, 6), "1": _bucket(0, 6), "2": _bucket(c, 6), "3": _bucket(3 * c, 6)},
        "turn_subtype_info": {
            "First Turn": _bucket(0, 6),
            "Subsequent Turn": _bucket(4 * c, 18),
            "Coreferential Reference": _bucket(0, 6),
            "Partial Information": _bucket(c, 6),
            "Long-Range Dependency": _bucket(3 * c, 6),
        },
        "optimal_info": {
            "Total": _bucket(0, 7),
            "Parallel Multi-Tool": _bucket(0, 4),
            "Mixed Multi-Tool": _bucket(0, 3),
        },
        "progress_info": {
            "Total": _progress(7, 24),
            "Sequential Multi-Tool": _progress(4, 12),
            "Mixed Multi-Tool": _progress(3, 12),
        },
    }


def test_baseline_chat_on_the_demo_scores_the_chat_tasks(tmp_path):
    metric = _eval(tmp_path / "chat", "baseline:chat")
    assert metric == _demo_metric(chat=True)
    chat_tasks = {
        (session["id"], index)
        for session in _jsonl(DEMO)
        for index, kind in enumerate(session["english_task_types"])
        if kind == "Chat"
    }
    assert _correct_tasks(tmp_path / "chat") == chat_tasks == _pseudo_only_tasks(DEMO)
    assert metric["total_info"]["task"]["accuracy"] == len(chat_tasks) / 24
    # every reply is the same text, no call
    for record in _jsonl(tmp_path / "chat" / "result.jsonl"):
        assert record["model_name"] == "baseline:chat"
        assert record["candidate"] == {"kind": "chat_model", "spec": "baseline:chat", "model": "baseline:chat"}
        for task in record["result"]:
            steps = [v for k, v in task["inference_log"].items() if k.startswith("step_")]
            assert {
                (step["inference_output"]["content"], step["inference_output"]["tool_calls"]) for step in steps
            } == {("I can help with that.", None)}


def test_baseline_first_tool_on_the_demo_scores_nothing(tmp_path):
    out = tmp_path / "first-tool"
    assert _eval(out, "baseline:first-tool") == _demo_metric(chat=False)
    assert _correct_tasks(out) == set()
    sessions = {session["id"]: session for session in _jsonl(DEMO)}
    for record in _jsonl(out / "result.jsonl"):
        first_tool = sessions[record["id"]]["english_tools"][0]["function"]["name"]
        for task in record["result"]:
            for key, step in task["inference_log"].items():
                if not key.startswith("step_"):
                    continue
                call = {"name": first_tool, "arguments": "{}"}
                call_id = f"call_baseline_{_assistant_count(step)}"
                assert step["inference_output"]["content"] is None
                assert step["inference_output"]["tool_calls"] == [{"id": call_id, "type": "function", "function": call}]


def _assistant_count(step: dict) -> int:
    return sum(1 for message in step["inference_input"]["messages"] if message["role"] == "assistant")


def test_baselines_give_the_same_records_on_every_run(tmp_path):
    for spec in ("baseline:chat", "baseline:first-tool"):
        first, second = tmp_path / f"{spec}-1", tmp_path / f"{spec}-2"
        assert _eval(first, spec) == _eval(second, spec)
        for name in ("result.jsonl", "score.jsonl"):
            assert _without_timings(_jsonl(first / name)) == _without_timings(_jsonl(second / name))


def _without_timings(records: list[dict]) -> list[dict]:
    for record in records:
        record.pop("usage", None)
        for task in record.get("result") or record.get("results") or []:
            task.pop("latency", None)
    return records


def test_an_unknown_baseline_stops_before_any_session(tmp_path):
    result = CliRunner().invoke(
        app, ["eval", "--model", "baseline:nope", "--no-progress", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
    assert "unknown baseline 'nope' in model spec 'baseline:nope'; valid: baseline:chat, baseline:first-tool" in (
        result.output
    )
    assert not (tmp_path / "x" / "result.jsonl").exists()


@pytest.mark.parametrize("spec", ["baseline:chat", "baseline:first-tool"])
def test_baselines_on_the_reference_fixtures(reference_dir, tmp_path, spec):
    dataset = reference_dir / "sessions.jsonl"
    out = tmp_path / "run"
    metric = _eval(out, spec, "--dataset", str(dataset))
    assert metric["model_name"] == spec
    if spec == "baseline:chat":
        # the 15 pseudo-only (Chat) tasks, and the Clarify task 0 of session 5 through quirk 6
        assert _correct_tasks(out) == _pseudo_only_tasks(dataset) | {("wild_tool_bench_5", 0)}
        assert len(_pseudo_only_tasks(dataset)) == 15
        assert metric["total_info"]["task"] == _bucket(16, 96)
        assert metric["task_type_info"]["Chat"] == _bucket(15, 15)
        assert metric["task_type_info"]["Clarify"] == _bucket(1, 11)
        assert metric["progress_info"]["Total"] == _progress(18, 61)
    else:
        assert _correct_tasks(out) == set()
        assert metric["total_info"]["task"] == _bucket(0, 96)
        assert metric["task_type_info"]["Chat"] == _bucket(0, 15)
        assert metric["progress_info"]["Total"] == _progress(19, 61)
    assert metric["total_info"]["session"] == _bucket(0, 24)
    assert metric["optimal_info"]["Total"] == _bucket(0, 25)


def test_default_out_folder_of_a_baseline_is_a_plain_folder_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["eval", "--model", "baseline:first-tool", "--no-progress", "--no-trace"])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == ["baseline_first-tool"]
    metric = json.loads((tmp_path / "runs" / "baseline_first-tool" / "demo_sessions" / "metric.json").read_text())
    assert metric["model_name"] == "baseline:first-tool"
