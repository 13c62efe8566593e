"""The public Python API (issue 36, docs/guides/scripting.md): ``wildtoolbench.evaluate`` / ``aevaluate`` with a spec
string and with each kind of object, ``EvalRun`` against ``metric.json`` and the fixtures' published values,
``out=None`` leaving nothing on disk, errors raised with the command line's messages, the lazy package root.

The in-process agent factory against a loopback server is tests/integration/test_user_agent_folder.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import types
from collections import Counter
from pathlib import Path

import pytest

import wildtoolbench
from tests.support import candidate_graphs
from tests.support.agent_runs import jsonl
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.bench.demo_data import bundled_demo_sessions

CANDIDATES = ["oracle", "noisy", "wrong_name", "over_ask"]
DEMO = bundled_demo_sessions()
DEMO_ORACLE = f"replay:{DEMO.with_name('demo_candidates.jsonl')}#oracle"


def expected_metric(reference_dir: Path, candidate: str) -> dict:
    return next(
        row["metric"] for row in jsonl(reference_dir / "expected_metrics.jsonl") if row["candidate"] == candidate
    )


def without_name(metric: dict) -> dict:
    return {key: value for key, value in metric.items() if key != "model_name"}


# Where two ways of running must agree with each other, four reference sessions are enough (their labels are
# checked against the published ones); the 24 sessions against the published metric are run once per path.
SUBSET = ["wild_tool_bench_0", "wild_tool_bench_7", "wild_tool_bench_13", "wild_tool_bench_19"]


def published_labels(reference_dir: Path, candidate: str, ids: list[str]) -> list[tuple[str, int, str, bool]]:
    """``(session, task index, label, optimal)`` of the published scores of ``candidate`` on the sessions ``ids``."""
    rows = {r["session_id"]: r for r in jsonl(reference_dir / "expected_scores.jsonl") if r["candidate"] == candidate}
    return [(i, t, task["label"], task["is_optimal"]) for i in ids for t, task in enumerate(rows[i]["results"])]


def labels(run) -> list[tuple[str, int, str, bool]]:
    return [(row.session_id, row.task_index, row.label, row.optimal) for row in run.tasks]


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_spec_string_run_equals_published_metric_and_accessors(reference_dir, tmp_path, candidate):
    out = tmp_path / "run"
    run = wildtoolbench.evaluate(
        f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}",
        reference_dir / "sessions.jsonl",
        out,
        progress=False,
    )
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    assert run.metrics == metric == expected_metric(reference_dir, candidate)
    assert run.out == out and run.model_name == candidate and run.errors == []
    total = metric["total_info"]
    assert run.task_accuracy == total["task"]["accuracy"]
    assert run.session_accuracy == total["session"]["accuracy"]
    assert run.optimal_path_rate == metric["optimal_info"]["Total"]["accuracy"]
    assert run.accomplish_progress_rate == metric["progress_info"]["Total"]["rate"]
    assert run.task_type_accuracy == {k: v["accuracy"] for k, v in metric["task_type_info"].items()}
    assert run.turn_subtype_accuracy == {k: v["accuracy"] for k, v in metric["turn_subtype_info"].items()}
    # the rows count what the metric counts
    assert len(run.tasks) == total["task"]["total_count"]
    assert sum(row.correct for row in run.tasks) == total["task"]["correct_count"]
    by_type = Counter(row.task_type for row in run.tasks)
    for name, bucket in metric["task_type_info"].items():
        if name != "Multi-Tool":
            assert by_type[name] == bucket["total_count"], name
            assert sum(r.correct for r in run.tasks if r.task_type == name) == bucket["correct_count"], name
    subtypes = Counter(row.turn_subtype for row in run.tasks)
    assert subtypes["First Turn"] == metric["turn_subtype_info"]["First Turn"]["total_count"]
    for name in ("Coreferential Reference", "Partial Information", "Long-Range Dependency"):
        assert subtypes[name] == metric["turn_subtype_info"][name]["total_count"], name
    failed = [row for row in run.tasks if not row.correct]
    assert all(row.error_category for row in failed) and not any(r.error_category for r in run.tasks if r.correct)
    scored = jsonl(out / "score.jsonl")
    assert [(r.session_id, r.task_index) for r in run.tasks] == [
        (line["id"], index) for line in scored for index in range(len(line["results"]))
    ]
    assert all(row.steps >= 1 for row in run.tasks)


def test_out_none_leaves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    run = wildtoolbench.evaluate(DEMO_ORACLE, progress=False)
    temporary = capsys.readouterr()
    assert run.out is None
    assert run.metrics["total_info"]["task"] == {"accuracy": 1.0, "correct_count": 24, "total_count": 24}
    assert len(run.tasks) == 24
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]  # no runs/ folder
    assert list(scratch.iterdir()) == []  # the temporary run folder is gone
    # The run's own closing line says the folder was temporary; the API prints nothing of its own: the
    # output is the same run's with out=FOLDER, but for that line.
    wildtoolbench.evaluate(DEMO_ORACLE, out=tmp_path / "kept", progress=False)
    kept = capsys.readouterr()
    lines, kept_lines = temporary.out.splitlines(), kept.out.splitlines()
    assert lines[-1] == "outputs in a temporary folder, removed when the run returns: pass out=FOLDER to keep them"
    assert kept_lines[-1] == f"outputs in {tmp_path / 'kept'}/"
    assert lines[:-1] == kept_lines[:-1]
    assert "│ Overall       │ Task accuracy                 │ 100.00% │       24/24 │" in lines
    assert str(scratch) not in temporary.out
    assert len(temporary.err.splitlines()) == len(kept.err.splitlines()) and "out=None" not in temporary.err


def test_sync_async_and_inside_a_running_loop_agree(reference_dir):
    """The three ways to call agree on four sessions, with the published labels (the 24 sessions against the
    published metric: test_spec_string_run_equals_published_metric_and_accessors)."""
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    dataset = reference_dir / "sessions.jsonl"
    sync = wildtoolbench.evaluate(spec, dataset, ids=SUBSET, progress=False)
    from_async = asyncio.run(wildtoolbench.aevaluate(spec, dataset, ids=SUBSET, progress=False))

    async def notebook_cell():  # a running loop in this thread, as in Jupyter
        return wildtoolbench.evaluate(spec, dataset, ids=SUBSET, progress=False)

    in_loop = asyncio.run(notebook_cell())
    assert sync.metrics == from_async.metrics == in_loop.metrics
    assert sync.metrics["total_info"]["task"]["total_count"] == 16
    assert sync.tasks == from_async.tasks == in_loop.tasks
    assert labels(sync) == published_labels(reference_dir, "noisy", SUBSET)


@pytest.mark.parametrize(
    ("attribute", "kind"),
    [("graph", "graph"), ("runnable", "runnable"), ("make_graph_no_args", "graph"), ("uncompiled", "graph")],
)
def test_object_candidates_equal_their_graph_spec(reference_dir, tmp_path, monkeypatch, attribute, kind):
    """A compiled graph, a Runnable, a graph factory and a StateGraph passed as objects run as the ``graph:`` spec
    of the module that holds them, and the replies score as the published values."""
    candidate = "wrong_name"
    monkeypatch.setenv(candidate_graphs.INNER_MODEL_ENV, f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}")
    dataset = reference_dir / "sessions.jsonl"
    by_object = wildtoolbench.evaluate(getattr(candidate_graphs, attribute), dataset, tmp_path / "o", progress=False)
    assert without_name(by_object.metrics) == without_name(expected_metric(reference_dir, candidate))
    # the spec on four of the sessions: the same rows and records (the spec on all 24 against the published
    # values: tests/integration/test_graph_candidates.py)
    by_spec = wildtoolbench.evaluate(
        f"graph:tests.support.candidate_graphs:{attribute}", dataset, tmp_path / "s", ids=SUBSET, progress=False
    )
    assert by_spec.tasks == [row for row in by_object.tasks if row.session_id in SUBSET]
    assert labels(by_spec) == published_labels(reference_dir, candidate, SUBSET)
    by_id = {r["id"]: normalise(r["result"]) for r in jsonl(tmp_path / "o" / "result.jsonl")}
    spec_records = {r["id"]: normalise(r["result"]) for r in jsonl(tmp_path / "s" / "result.jsonl")}
    assert spec_records == {i: by_id[i] for i in SUBSET}
    record = jsonl(tmp_path / "o" / "result.jsonl")[0]
    assert record["candidate"]["kind"] == kind
    assert record["candidate"]["spec"].startswith("graph:object:")


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_agent_factory_object_on_a_replay_model(reference_dir, candidate):
    """``def make_agent(tools)`` passed as a function, its model a replay candidate (``wildtoolbench.chat_model``):
    the agent's requests take the candidate's replies in order, and the run scores as the published values."""
    from langchain.agents import create_agent

    spec = f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}"

    def make_agent(tools):
        return create_agent(wildtoolbench.chat_model(spec), tools)

    run = wildtoolbench.evaluate(make_agent, reference_dir / "sessions.jsonl", progress=False)
    assert without_name(run.metrics) == without_name(expected_metric(reference_dir, candidate))
    assert run.model_name == "test_python_api:test_agent_factory_object_on_a_replay_model.<locals>.make_agent"


def test_chat_model_object_async(reference_dir):
    spec = f"replay:{reference_dir / 'candidates.jsonl'}#over_ask"
    model = wildtoolbench.chat_model(spec)
    run = asyncio.run(wildtoolbench.aevaluate(model, reference_dir / "sessions.jsonl", progress=False))
    assert without_name(run.metrics) == without_name(expected_metric(reference_dir, "over_ask"))


def test_object_run_resumes_and_refuses_another_object(reference_dir, tmp_path, monkeypatch):
    """The spec of an object follows its source: the same object resumes its folder, another one is refused."""
    monkeypatch.setenv(candidate_graphs.INNER_MODEL_ENV, f"replay:{reference_dir / 'candidates.jsonl'}#oracle")
    dataset = reference_dir / "sessions.jsonl"
    out = tmp_path / "run"
    first = wildtoolbench.evaluate(candidate_graphs.make_graph_no_args, dataset, out, limit=3, progress=False)
    again = wildtoolbench.evaluate(candidate_graphs.make_graph_no_args, dataset, out, limit=3, progress=False)
    assert first.metrics == again.metrics and again.summary["skipped"] == 3 and again.summary["evaluated"] == 0
    with pytest.raises(ValueError) as refused:
        wildtoolbench.evaluate(candidate_graphs.make_graph, dataset, out, limit=3, progress=False)
    assert str(out) in str(refused.value)


def _cli_stderr(*argv: str) -> tuple[int, str]:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("wtb")), "eval", "--no-progress", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LANGSMITH_TRACING": "false"},
    )
    return done.returncode, done.stderr


def test_errors_carry_the_command_lines_messages(tmp_path):
    status, stderr = _cli_stderr("--model", "nosuch:x", "--out", str(tmp_path / "a"))
    with pytest.raises(wildtoolbench.ConfigurationError) as bad_spec:
        wildtoolbench.evaluate("nosuch:x", out=tmp_path / "b")
    # The message, up to the list of known providers (an earlier test of this process may have registered one).
    head = str(bad_spec.value).split(" (known:")[0]
    assert head == "unknown model provider 'nosuch'"
    assert status == 2 and any(line.startswith(f"error: {head} (known: ") for line in stderr.splitlines())

    status, stderr = _cli_stderr("--model", DEMO_ORACLE, "--ids", "no_such_session", "--out", str(tmp_path / "c"))
    with pytest.raises(wildtoolbench.UsageError) as bad_ids:
        wildtoolbench.evaluate(DEMO_ORACLE, ids="no_such_session", out=tmp_path / "d")
    assert status == 2 and str(bad_ids.value).startswith("Invalid value for '--ids'")
    assert str(bad_ids.value) in " ".join(stderr.split())

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(wildtoolbench.DatasetError) as bad_file:
        wildtoolbench.evaluate(DEMO_ORACLE, broken, tmp_path / "e")
    assert f"{broken}:1:" in str(bad_file.value)
    assert not (tmp_path / "b").exists() and not (tmp_path / "d").exists() and not (tmp_path / "e").exists()


def test_object_refused_with_server_and_workers():
    with pytest.raises(wildtoolbench.ConfigurationError, match="cannot be sent the Python object"):
        wildtoolbench.evaluate(candidate_graphs.graph, server="http://127.0.0.1:9")
    with pytest.raises(wildtoolbench.ConfigurationError, match="--workers > 1"):
        wildtoolbench.evaluate(candidate_graphs.graph, workers=2)


def test_unknown_keyword_lists_the_settings():
    with pytest.raises(TypeError, match="unknown setting.*trails.*trials"):
        wildtoolbench.evaluate(DEMO_ORACLE, trails=2)


def test_spec_of_an_object_from_another_process(tmp_path):
    status, stderr = _cli_stderr("--model", "graph:object:my_agent:make_agent@0123456789ab", "--out", str(tmp_path))
    assert status == 2 and "lives only in the process that passed it" in stderr


def test_infrastructure_errors_raise_with_the_run(tmp_path):
    """A model that cannot be reached: each session is an infrastructure error (exit status 3 on the command
    line); the exception lists them and carries the run, whose errors are errors.jsonl."""
    from langchain_openai import ChatOpenAI

    dead = ChatOpenAI(model="nobody", base_url="http://127.0.0.1:9/v1", api_key="test-key", max_retries=0)
    with pytest.raises(wildtoolbench.InfrastructureErrors) as failed:
        wildtoolbench.evaluate(dead, limit=2, out=tmp_path / "run", progress=False, max_attempts=1)
    lines = str(failed.value).splitlines()
    assert lines[0].startswith("error: infrastructure errors in 2 sessions (not scored; kept in ")
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["wild_tool_bench_0", "wild_tool_bench_1"]
    run = failed.value.run
    assert run.metrics == {} and run.tasks == []
    assert [e["id"] for e in run.errors] == [e["id"] for e in jsonl(tmp_path / "run" / "errors.jsonl")]


def test_to_pandas_without_pandas(monkeypatch):
    run = wildtoolbench.evaluate(DEMO_ORACLE, limit=1, progress=False)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        run.to_pandas()
    frames = types.ModuleType("pandas")
    frames.DataFrame = lambda rows: ("frame", rows)  # the call's contract: one row per task
    monkeypatch.setitem(sys.modules, "pandas", frames)
    kind, rows = run.to_pandas()
    assert kind == "frame" and rows == run.rows() and len(rows) == 4
    assert rows[0]["session_id"] == "wild_tool_bench_0" and rows[0]["correct"] is True


def test_load_dataset_names_and_dry_run():
    demo = wildtoolbench.load_dataset()
    assert [s.id for s in demo] == [s.id for s in wildtoolbench.load_dataset("demo")]
    assert len(demo) == 6
    run = wildtoolbench.evaluate(DEMO_ORACLE, dry_run=True)
    assert run.metrics == {} and run.estimate["sessions"] == 6


def test_package_root_is_lazy():
    code = (
        "import sys, wildtoolbench, wildtoolbench.bench.scoring;"
        "assert 'langgraph' not in sys.modules and 'langchain_core' not in sys.modules, sorted(sys.modules);"
        "from wildtoolbench.evaluation.options import EvalOptions;"
        "import wildtoolbench.evaluation.options as options; assert options.EvalOptions is EvalOptions;"
        "import wildtoolbench.scoring.run, wildtoolbench.reports.command, wildtoolbench.generation.command;"
        "assert callable(wildtoolbench.evaluate) and wildtoolbench.evaluate.__module__ == 'wildtoolbench._api.evaluate';"
        "assert wildtoolbench.score.__module__ == wildtoolbench.report.__module__ == 'wildtoolbench._api.commands';"
        "assert sorted(wildtoolbench.__all__) == sorted(n for n in wildtoolbench.__all__ if getattr(wildtoolbench, n) is not None)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_score_and_report_wrappers(tmp_path):
    from typer.testing import CliRunner

    from wildtoolbench.cli import app

    run = wildtoolbench.evaluate(DEMO_ORACLE, out=tmp_path / "run", progress=False, limit=3)
    metric = wildtoolbench.score(DEMO, tmp_path / "run" / "result.jsonl", tmp_path / "api", scoring="fixed")
    done = CliRunner().invoke(
        app,
        ["score", "--dataset", str(DEMO), "--results", str(tmp_path / "run" / "result.jsonl"), "--out", str(tmp_path / "cli"), "--scoring", "fixed"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert metric == json.loads((tmp_path / "cli" / "metric.fixed.json").read_text(encoding="utf-8"))
    assert metric["total_info"]["task"]["total_count"] == len(run.tasks) == 12
    page = wildtoolbench.report(tmp_path / "run", tmp_path / "report", resamples=50)
    assert page == tmp_path / "report" / "index.html" and page.is_file()
    assert (tmp_path / "report" / "report.md").is_file()
    with pytest.raises(wildtoolbench.UsageError, match="given twice"):
        wildtoolbench.report([tmp_path / "run", tmp_path / "run"], tmp_path / "report2")


def test_generate_wrapper_equals_the_command(shared_dir, tmp_path):
    from typer.testing import CliRunner

    from tests.support.gen_scripts import session_script
    from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths
    from wildtoolbench.cli import app
    from wildtoolbench.models.providers import scripted

    lines = (shared_dir / "data" / "tools_en.jsonl").read_text(encoding="utf-8").splitlines()
    tools = tmp_path / "tools.jsonl"
    tools.write_text("\n".join(lines[20:22]) + "\n", encoding="utf-8")
    plans = plan_sessions(load_tool_lists(tools), select_type_paths(4, None, 2, 5), seed=5, language="en", year=2025)
    script = tmp_path / "roles.json"
    script.write_text(json.dumps({"sessions": {p.key: session_script(p.as_state()) for p in plans}}), encoding="utf-8")
    spec = f"scripted:{script}"
    settings = {"samples": 2, "seed": 5, "year": 2025, "vague_rate": 0.0, "concurrency": 1}
    scripted.reset()
    made = wildtoolbench.generate(tools, tmp_path / "api", model=spec, progress=False, **settings)
    scripted.reset()
    done = CliRunner().invoke(
        app,
        ["generate", "--tools", str(tools), "--out", str(tmp_path / "cli"), "--model", spec, "--samples", "2",
         "--seed", "5", "--year", "2025", "--vague-rate", "0", "--concurrency", "1", "--no-progress"],
    )  # fmt: skip
    scripted.reset()
    assert done.exit_code == 0, done.output
    assert made == tmp_path / "api" / "sessions.jsonl"
    assert made.read_text(encoding="utf-8") == (tmp_path / "cli" / "sessions.jsonl").read_text(encoding="utf-8")
    assert len(jsonl(made)) == 2
    with pytest.raises(TypeError, match="sample"):
        wildtoolbench.generate(tools, tmp_path / "x", sample=2)


def test_keywords_are_the_command_lines_options(reference_dir, tmp_path):
    """ids as a list, lang, scoring and trials given as keywords make the run the same options make on the
    command line: the same files, the same numbers."""
    from typer.testing import CliRunner

    from wildtoolbench.cli import app

    spec = f"replay:{reference_dir / 'candidates.jsonl'}#noisy"
    dataset = reference_dir / "sessions.jsonl"
    done = CliRunner().invoke(
        app,
        ["eval", "--model", spec, "--dataset", str(dataset), "--ids", "0,3", "--ids", "wild_tool_bench_5", "--lang", "zh",
         "--scoring", "fixed", "--trials", "2", "--out", str(tmp_path / "cli"), "--no-progress"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    run = wildtoolbench.evaluate(
        spec, dataset, tmp_path / "api", ids=[0, 3, "wild_tool_bench_5"], lang="zh", scoring="fixed", trials=2,
        progress=False,
    )  # fmt: skip
    for name in ("metric.fixed.json", "trials.fixed.json", "summary_metrics.fixed.json"):
        assert (tmp_path / "api" / name).read_text("utf-8") == (tmp_path / "cli" / name).read_text("utf-8"), name
    assert run.metrics == json.loads((tmp_path / "cli" / "metric.fixed.json").read_text("utf-8"))
    assert run.scoring == "fixed" and run.language == "zh" and run.trials is not None
    assert sorted({row.session_id for row in run.tasks}) == [
        "wild_tool_bench_0",
        "wild_tool_bench_3",
        "wild_tool_bench_5",
    ]
    assert run.metrics["total_info"]["session"]["total_count"] == 3
