"""LangSmith experiments (issue 5, part 2) against a loopback LangSmith stub.

The dataset upload, the per-task feedback and the summary feedback are checked against the
reference fixtures: per-task labels against ``expected_scores.jsonl`` and the summary metrics
against ``expected_metrics.jsonl`` (the ``noisy`` candidate covers all 24 sessions).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.langsmith_stub import LangSmithStub
from wildtoolbench.tracing.evaluators import metric_feedback
from wildtoolbench.tracing.examples import example_id, session_example, upload_dataset
from wildtoolbench.tracing.experiments import make_experiment_client, run_experiment

FAKE_LANGSMITH_KEY = "lsv2_fake_SECRET123"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture()
def stub():
    with LangSmithStub(lifetime=120) as server:
        yield server


@pytest.fixture()
def client(stub):
    ls_client = make_experiment_client(api_url=stub.url, api_key=FAKE_LANGSMITH_KEY)
    yield ls_client
    ls_client.flush()


def _fixture_runner(reference_dir: Path, candidate: str):
    """A stand-in for the evaluation graph: returns the reference inference records of ``candidate``."""
    records = {
        row["session_id"]: {"id": row["session_id"], "model_name": candidate, "result": row["result"]}
        for row in _jsonl(reference_dir / "expected_results.jsonl")
        if row["candidate"] == candidate
    }

    async def run_session(session: dict) -> dict:
        return records[session["id"]]

    return run_session


def test_example_ids_are_deterministic_and_dataset_scoped():
    first = example_id("wtb-demo", "wild_tool_bench_0")
    assert first == example_id("wtb-demo", "wild_tool_bench_0")
    assert first != example_id("wtb-demo", "wild_tool_bench_1")
    assert first != example_id("other", "wild_tool_bench_0")


def test_upload_is_idempotent(stub, client, reference_dir):
    sessions = _jsonl(reference_dir / "sessions.jsonl")[:3]
    first = upload_dataset(client, "wtb-idem", sessions)
    assert first.dataset_created and len(first.created) == 3 and first.existing == []
    second = upload_dataset(client, "wtb-idem", sessions)
    assert not second.dataset_created and second.created == [] and sorted(second.existing) == sorted(first.created)
    # one more session: only that one is sent
    third = upload_dataset(client, "wtb-idem", _jsonl(reference_dir / "sessions.jsonl")[:4])
    assert third.created == [str(example_id("wtb-idem", "wild_tool_bench_3"))]
    assert len(stub.datasets) == 1
    stored = [e for e in stub.examples.values() if e["dataset_id"] == first.dataset_id]
    assert len(stored) == 4
    by_id = {e["id"]: e for e in stored}
    expected = session_example("wtb-idem", sessions[0])
    assert by_id[expected["id"]]["inputs"]["session"] == sessions[0]
    assert by_id[expected["id"]]["outputs"]["task_types"] == sessions[0]["english_task_types"]


async def test_experiment_feedback_matches_reference_scores(stub, client, reference_dir):
    candidate = "noisy"
    sessions = _jsonl(reference_dir / "sessions.jsonl")
    settings = {"temperature": 0.0, "base_url": "http://user:hunter2pass@127.0.0.1:9/v1"}
    outcome = await run_experiment(
        sessions=sessions,
        dataset_name="wtb-ref",
        model=f"replay:candidates.jsonl#{candidate}",
        run_session=_fixture_runner(reference_dir, candidate),
        settings=settings,
        client=client,
        max_concurrency=4,
    )
    client.flush()

    # one example per session, stored once
    assert len(stub.examples) == len(sessions)
    # the experiment (a tracer session) references the dataset and carries the model and settings
    (experiment,) = [s for s in stub.sessions.values() if s["name"] == outcome.experiment_name]
    assert experiment["reference_dataset_id"] == outcome.upload.dataset_id
    meta = experiment["extra"]["metadata"]
    assert meta["model"] == f"replay:candidates.jsonl#{candidate}"
    assert meta["settings"]["temperature"] == 0.0
    assert "hunter2pass" not in json.dumps(meta)

    # per-task feedback equals the reference scorer's labels
    scores = {
        row["session_id"]: row["results"]
        for row in _jsonl(reference_dir / "expected_scores.jsonl")
        if row["candidate"] == candidate
    }
    root_runs = {r["id"]: r for r in stub.roots()}
    per_run: dict[str, dict[str, dict]] = {}
    summary: dict[str, dict] = {}
    for item in stub.feedback.values():
        if item.get("run_id"):
            per_run.setdefault(str(item["run_id"]), {})[item["key"]] = item
        else:
            assert str(item.get("session_id")) == experiment["id"]
            summary[item["key"]] = item
    assert len(per_run) == len(sessions)
    for run_id, feedback in per_run.items():
        run = root_runs[run_id]
        session_id = run["inputs"]["session"]["id"]
        assert str(run["reference_example_id"]) == str(example_id("wtb-ref", session_id))
        for index, task in enumerate(scores[session_id]):
            n = index + 1
            assert feedback[f"task_{n}_label"]["score"] == int(task["label"] == "correct")
            assert feedback[f"task_{n}_optimal"]["score"] == int(task["is_optimal"])
            args_label = task.get("action_arguments_label")
            expected_args = None if args_label is None else int(args_label == "correct")
            assert feedback[f"task_{n}_argument_label"].get("score") == expected_args
        all_correct = all(t["label"] == "correct" for t in scores[session_id])
        assert feedback["session_correct"]["score"] == int(all_correct)

    # summary feedback equals the reference metric dict
    (reference,) = [row for row in _jsonl(reference_dir / "expected_metrics.jsonl") if row["candidate"] == candidate]
    metric = reference["metric"]
    assert outcome.metric == metric
    for item in metric_feedback(metric):
        assert summary[item["key"]]["score"] == pytest.approx(item["score"], abs=1e-4)  # the SDK rounds to 4 places
    assert summary["task_accuracy"]["score"] == pytest.approx(metric["total_info"]["task"]["accuracy"], abs=1e-4)
    assert summary["accuracy/Mixed Multi-Tool"]["score"] == pytest.approx(
        metric["task_type_info"]["Mixed Multi-Tool"]["accuracy"], abs=1e-4
    )
    assert FAKE_LANGSMITH_KEY not in stub.all_payload_text()

    # re-running the experiment (here on a subset, to keep the test fast) does not duplicate examples
    calls_before = stub.example_create_calls
    again = await run_experiment(
        sessions=sessions[:5],
        dataset_name="wtb-ref",
        model=f"replay:candidates.jsonl#{candidate}",
        run_session=_fixture_runner(reference_dir, candidate),
        client=client,
    )
    client.flush()
    assert again.upload.created == [] and len(again.upload.existing) == 5
    assert stub.example_create_calls == calls_before
    assert len(stub.examples) == len(sessions)
    assert again.experiment_name != outcome.experiment_name


def test_wtb_eval_langsmith_dataset_runs_the_graph_as_experiment(reference_dir, tmp_path):
    """`wtb eval --langsmith-dataset`: the evaluation graph is the aevaluate target; re-running adds no example."""
    from tests.integration.test_tracing import _run_cli

    candidate = "wrong_name"
    dataset = tmp_path / "two_sessions.jsonl"
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sessions = [json.loads(line) for line in lines]
    model = f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}"
    scores = {
        row["session_id"]: row["results"]
        for row in _jsonl(reference_dir / "expected_scores.jsonl")
        if row["candidate"] == candidate
    }
    with LangSmithStub(lifetime=240) as stub:
        args = [
            "eval",
            "--dataset",
            str(dataset),
            "--model",
            model,
            "--out",
            str(tmp_path / "exp"),
            "--no-progress",
            "--langsmith-dataset",
            "wtb-two",
        ]
        proc = _run_cli(args, stub.url, tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert len(stub.examples) == 2
        calls_after_first = stub.example_create_calls

        # the graph ran under the experiment's target run, one per example
        (experiment,) = stub.sessions.values()
        assert experiment["extra"]["metadata"]["model"] == model
        targets = [r for r in stub.roots() if r.get("reference_example_id")]
        assert len(targets) == 2
        for target in targets:
            names = {r["name"] for r in stub.children(target["id"])}
            session_id = target["inputs"]["session"]["id"]
            assert f"wtb eval {session_id}" in names
            feedback = {f["key"]: f for f in stub.feedback.values() if str(f.get("run_id")) == str(target["id"])}
            for index, task in enumerate(scores[session_id]):
                assert feedback[f"task_{index + 1}_label"]["score"] == int(task["label"] == "correct")
        summary = {f["key"]: f for f in stub.feedback.values() if not f.get("run_id")}
        labels = [t["label"] for sid in scores if sid in {s["id"] for s in sessions} for t in scores[sid]]
        assert summary["task_accuracy"]["score"] == pytest.approx(labels.count("correct") / len(labels), abs=1e-4)

        # result files written like a local run
        records = _jsonl(tmp_path / "exp" / "result.jsonl")
        assert [r["id"] for r in records] == [s["id"] for s in sessions]
        assert FAKE_LANGSMITH_KEY not in stub.all_payload_text()

        proc = _run_cli(args, stub.url, tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert len(stub.examples) == 2 and stub.example_create_calls == calls_after_first
        assert len(stub.sessions) == 2  # a second experiment on the same dataset
