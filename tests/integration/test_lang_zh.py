"""``--lang zh``: a run of the Chinese side of the dataset (issue 14 part 2; docs/dataset.md §2.2).

The demo sessions' Chinese side carries Chinese tools and env string but untranslated tasks and the
same gold values as the English side, so the tests first make the two sides differ: Chinese user
messages, and one gold argument per session that only the Chinese answer list holds. A run of one
side must then send that side's text and tools, be judged against that side's gold answers, and be
counted under the English metric buckets.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.integration.test_data_pull import DATASET_PATH, _blob, _Files, _Handler
from wildtoolbench.bench.args import float_to_number
from wildtoolbench.bench.demo_data import SESSIONS_PATH
from wildtoolbench.bench.generation import oracle_responses
from wildtoolbench.bench.metrics import compute_metrics
from wildtoolbench.bench.schema import (
    DatasetError,
    Session,
    bucket_labels,
    fields_for,
    language_issues,
    load_sessions,
    validate_file,
)
from wildtoolbench.bench.scoring import ResultRecordError, score_session, scoring_tools
from wildtoolbench.bench.terms import PSEUDO_TOOLS
from wildtoolbench.graphs.evaluation import graph
from wildtoolbench.nodes.evaluation.context import EvaluationContext

REPO = Path(__file__).resolve().parents[2]
SUFFIX = "（中文）"


def _demo(count: int) -> list[dict]:
    return [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[:count]]


def chinese_side(session: dict) -> dict:
    """``session`` with Chinese user messages and the first string argument of its first real call
    changed on the Chinese side only (``answer_list``); the English side is left as it is."""
    out = copy.deepcopy(session)
    out["tasks"] = [f"第{i + 1}个任务：请帮我处理。{text}" for i, text in enumerate(session["english_tasks"])]
    for nodes in out["answer_list"]:
        for node in nodes:
            if node["action"]["name"] in PSEUDO_TOOLS:
                continue
            for key, value in node["action"]["arguments"].items():
                if isinstance(value, str):
                    node["action"]["arguments"][key] = value + SUFFIX
                    return out
    raise AssertionError("no string argument to change")


def _oracle(session: dict, side: str, candidate: str) -> dict:
    gold = fields_for(side).answer_list
    return {
        "session_id": session["id"],
        "candidate": candidate,
        "responses": oracle_responses({**session, "english_answer_list": session[gold]}),
    }


@pytest.fixture(scope="module")
def sessions() -> list[dict]:
    return [chinese_side(s) for s in _demo(2)]


@pytest.fixture(scope="module")
def replay_file(sessions, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "candidates.jsonl"
    rows = [_oracle(s, side, f"oracle-{side}") for side in ("en", "zh") for s in sessions]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the choice of fields


def test_fields_for_each_side():
    en, zh = fields_for("en"), fields_for("zh")
    assert (en.env_info, en.tools, en.tasks, en.answer_list, en.task_types, en.turn_subtypes) == (
        "english_env_info",
        "english_tools",
        "english_tasks",
        "english_answer_list",
        "english_task_types",
        "english_turn_subtypes",
    )
    assert (zh.env_info, zh.tools, zh.tasks, zh.answer_list, zh.task_types, zh.turn_subtypes) == (
        "env_info",
        "tools",
        "tasks",
        "answer_list",
        "task_types",
        "turn_subtypes",
    )
    with pytest.raises(ValueError, match="language must be one of en, zh, got 'fr'"):
        fields_for("fr")
    with pytest.raises(ValueError, match="got 'fr'"):
        EvaluationContext(language="fr")


def test_chinese_labels_count_under_the_english_buckets():
    session = _demo(2)[1]  # 多工具 x3: Mixed, Parallel, Sequential on the English side
    assert session["task_types"] == ["多工具", "单工具", "多工具", "多工具"]
    types, subtypes = bucket_labels(session, "zh")
    assert types == ["Mixed Multi-Tool", "Single-Tool", "Parallel Multi-Tool", "Sequential Multi-Tool"]
    assert subtypes == session["english_turn_subtypes"]

    # The Chinese label decides where it names one bucket; 多工具 takes its kind from the English label.
    changed = copy.deepcopy(session)
    changed["task_types"][1] = "澄清"
    changed["turn_subtypes"] = ["长期记忆", "指代", "省略成分"]
    assert bucket_labels(changed, "zh") == (
        ["Mixed Multi-Tool", "Clarify", "Parallel Multi-Tool", "Sequential Multi-Tool"],
        ["Long-Range Dependency", "Coreferential Reference", "Partial Information"],
    )
    assert bucket_labels(changed, "en") == (session["english_task_types"], session["english_turn_subtypes"])

    # 多工具 whose English label is not a multi-tool type has no bucket: a problem in zh mode only.
    broken = copy.deepcopy(session)
    broken["english_task_types"][0] = "Chat"
    assert language_issues(broken, "en") == []
    assert language_issues(broken, "zh") == [
        (
            "task_types[0]",
            "多工具 does not say which multi-tool type; english_task_types[0] is 'Chat', not a multi-tool type, "
            "so the task has no bucket",
        )
    ]
    with pytest.raises(ValueError, match=r"task_types\[0\]: 多工具 does not say"):
        bucket_labels(broken, "zh")


def test_a_file_that_cannot_be_bucketed_in_zh_is_rejected_for_zh_only(tmp_path):
    rows = _demo(2)
    rows[1]["english_task_types"][0] = "Chat"
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert len(load_sessions(path)) == 2
    with pytest.raises(DatasetError) as caught:
        load_sessions(path, language="zh")
    assert [(i.line, i.field) for i in caught.value.issues] == [(2, "task_types[0]")]
    assert [(i.line, i.field) for i in validate_file(path, language="zh").issues] == [(2, "task_types[0]")]


def test_metrics_of_a_zh_run_use_the_same_buckets(sessions):
    scored = [(s, [{"label": "correct", "is_optimal": True, "inference_log": {"step_0": {}}}] * 4) for s in sessions]
    en, zh = compute_metrics("m", scored), compute_metrics("m", scored, language="zh")
    assert zh == en
    assert zh["task_type_info"]["Mixed Multi-Tool"]["total_count"] == 1
    assert zh["task_type_info"]["Multi-Tool"]["total_count"] == 4
    assert zh["turn_subtype_info"]["Partial Information"]["total_count"] == 2


# --------------------------------------------------------------------------- what a zh run sends and how it is judged


def _run(session: dict, language: str, candidate: str, replay_file: Path) -> dict:
    context = EvaluationContext(model=f"replay:{replay_file}#{candidate}", language=language)
    return asyncio.run(graph.ainvoke({"session": session}, context=context))["record"]


def test_zh_mode_sends_the_chinese_tasks_env_and_tools(sessions, replay_file):
    session = sessions[0]
    record = _run(session, "zh", "oracle-zh", replay_file)
    assert list(record)[:3] == ["id", "model_name", "language"] and record["language"] == "zh"
    for task_idx, task in enumerate(record["result"]):
        request = task["inference_log"]["step_0"]["inference_input"]
        assert request["messages"][0] == {"role": "system", "content": f"Current Date: {session['env_info']}"}
        assert "星期" in request["messages"][0]["content"]
        assert request["messages"][-1] == {"role": "user", "content": session["tasks"][task_idx]}
        assert request["tools"] == float_to_number(session["tools"])
        assert request["tools"] != float_to_number(session["english_tools"])  # Chinese descriptions
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        # the gold history of that side too (its other user messages are the gold replies to questions)
        assert [c for c in users if c in session["tasks"]] == session["tasks"][: task_idx + 1]
        assert not set(users) & set(session["english_tasks"])
    labels = [t["action_name_label"] for t in record["result"]]
    assert labels == ["correct"] * 4

    english = _run(session, "en", "oracle-en", replay_file)
    assert "language" not in english  # the published shape for English runs
    first = english["result"][0]["inference_log"]["step_0"]["inference_input"]
    assert first["messages"][-1]["content"] == session["english_tasks"][0]
    assert first["tools"] == float_to_number(session["english_tools"])


def test_zh_records_are_scored_against_the_chinese_gold(sessions, replay_file):
    session = sessions[0]
    model = Session.model_validate(session)
    assert scoring_tools(model, "zh") == float_to_number(session["tools"])

    right = score_session(_run(session, "zh", "oracle-zh", replay_file), model)  # language from the record
    assert [t["label"] for t in right] == ["correct"] * 4
    # The English oracle's first call misses the Chinese-only value: its arguments are wrong there.
    wrong = score_session(_run(session, "zh", "oracle-en", replay_file), model)
    assert [t["label"] for t in wrong] == ["error", "correct", "correct", "correct"]
    assert wrong[0]["action_arguments_label"] == "error"
    assert SUFFIX in json.dumps(wrong[0]["inference_log"], ensure_ascii=False)

    with pytest.raises(ResultRecordError, match="made on the zh side, not en"):
        score_session(_run(session, "zh", "oracle-zh", replay_file), model, language="en")


# --------------------------------------------------------------------------- the CLI on a pulled (test) dataset


@pytest.fixture
def pulled(tmp_path, sessions, monkeypatch):
    """A loopback server of the Chinese-side test dataset under the official dataset path, and the
    environment that pins it as ``wildtoolbench``; yields (env, server files)."""
    data = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions).encode("utf-8")
    files = _Files({DATASET_PATH: data})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.files = files  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    watchdog = threading.Timer(300, httpd.shutdown)
    watchdog.daemon = True
    thread.start()
    watchdog.start()
    pins = tmp_path / "pins.json"
    pins.write_text(json.dumps({"wildtoolbench": {"path": DATASET_PATH, "blob": _blob(data)}}), encoding="utf-8")
    values = {
        "WTB_CACHE_DIR": str(tmp_path / "cache"),
        "WTB_DATA_URL": f"http://127.0.0.1:{httpd.server_address[1]}",
        "WTB_DATA_PINS": str(pins),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_"))}
    try:
        yield dict(env, PYTHONPATH=str(REPO), LANGSMITH_TRACING="false", **values), files
    finally:
        watchdog.cancel()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _wtb(env: dict, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_wtb_eval_lang_zh_on_the_pulled_dataset(pulled, replay_file, tmp_path, sessions):
    env, files = pulled
    result = _wtb(
        env,
        "eval",
        "--dataset",
        "wildtoolbench",
        "--lang",
        "zh",
        "--pull",
        "--model",
        f"replay:{replay_file}#oracle-zh",
        "--no-progress",
        "--no-trace",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert files.gets == [DATASET_PATH]
    out = tmp_path / "runs" / "oracle-zh" / "wildtoolbench-zh"  # the default folder names the side
    assert f"outputs in {out.relative_to(tmp_path)}/" in result.stdout
    assert "2 sessions: 2 evaluated, 0 already done; zh side;" in result.stderr
    assert "WildToolBench: oracle-zh (zh)" in result.stdout

    records = _jsonl(out / "result.jsonl")
    assert [(r["id"], r["language"]) for r in records] == [("wild_tool_bench_0", "zh"), ("wild_tool_bench_1", "zh")]
    for record, session in zip(records, sessions):
        asked = [t["inference_log"]["step_0"]["inference_input"]["messages"][-1]["content"] for t in record["result"]]
        assert asked == session["tasks"]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["settings"]["language"] == "zh"
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["settings"]["language"] == "zh"
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert metric["total_info"]["task"] == {"accuracy": 1.0, "correct_count": 8, "total_count": 8}
    assert metric["task_type_info"]["Mixed Multi-Tool"]["total_count"] == 1  # 多工具 counted by its English kind
    readable = json.loads((out / "summary_metrics.json").read_text(encoding="utf-8"))
    assert readable["language"] == "zh" and readable["task_accuracy"] == {"value": 1.0, "correct": 8, "total": 8}

    # Resuming the folder on the other side is refused, nothing is added.
    again = _wtb(
        env,
        "eval",
        "--dataset",
        "wildtoolbench",
        "--lang",
        "en",
        "--out",
        str(out),
        "--model",
        f"replay:{replay_file}#oracle-zh",
        "--no-progress",
        "--no-trace",
        cwd=tmp_path,
    )
    assert again.returncode == 1
    assert "holds results of the zh side of the dataset (--lang zh), not en" in again.stderr
    assert _jsonl(out / "result.jsonl") == records

    # wtb score takes the side from the records; --lang en on them names the line and field.
    score = _wtb(
        env, "score", "--dataset", "wildtoolbench", "--results", str(out / "result.jsonl"), "--out", str(tmp_path / "s")
    )
    assert score.returncode == 0, score.stderr
    assert json.loads((tmp_path / "s" / "metric.json").read_text(encoding="utf-8")) == metric
    mismatch = _wtb(
        env,
        "score",
        "--dataset",
        "wildtoolbench",
        "--lang",
        "en",
        "--results",
        str(out / "result.jsonl"),
        "--out",
        str(tmp_path / "s2"),
    )
    assert mismatch.returncode == 1
    assert f"{out / 'result.jsonl'}:1: language: the record was made on the zh side, not en" in mismatch.stderr
    assert not (tmp_path / "s2").exists()


def test_wtb_lang_env_variable_and_english_default(pulled, replay_file, tmp_path):
    env, _ = pulled
    english = _wtb(
        env,
        "eval",
        "--dataset",
        "wildtoolbench",
        "--pull",
        "--model",
        f"replay:{replay_file}#oracle-en",
        "--out",
        str(tmp_path / "en"),
        "--no-progress",
        "--no-trace",
    )
    assert english.returncode == 0, english.stderr
    assert all("language" not in r for r in _jsonl(tmp_path / "en" / "result.jsonl"))
    assert (
        json.loads((tmp_path / "en" / "metric.json").read_text(encoding="utf-8"))["total_info"]["task"]["correct_count"]
        == 8
    )

    chinese = _wtb(
        dict(env, WTB_LANG="zh"),
        "eval",
        "--dataset",
        "wildtoolbench",
        "--model",
        f"replay:{replay_file}#oracle-en",
        "--out",
        str(tmp_path / "zh"),
        "--no-progress",
        "--no-trace",
    )
    assert chinese.returncode == 0, chinese.stderr
    assert {r["language"] for r in _jsonl(tmp_path / "zh" / "result.jsonl")} == {"zh"}
    metric = json.loads((tmp_path / "zh" / "metric.json").read_text(encoding="utf-8"))
    assert (
        metric["total_info"]["task"]["correct_count"] == 6
    )  # the English values miss one Chinese gold argument per session
