"""``wtb diff`` and ``wtb gate`` on the ``oracle`` and ``noisy`` replays of the public fixture sessions
(docs/diff.md §4, §6; docs/cli.md §2)."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.support.report_support import fixture_runs, run_cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory, reference_dir) -> dict[str, Path]:
    """The fixture runs the report tests use (made once per pytest session)."""
    return fixture_runs(tmp_path_factory.getbasetemp() / "report-fixture", reference_dir)


def _labels(run: Path) -> dict[tuple[str, int], str]:
    labels = {}
    for line in (run / "score.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for t, task in enumerate(record["results"]):
            labels[record["id"], t] = task["label"]
    return labels


def test_diff_lists_exactly_the_tasks_whose_labels_differ(runs, tmp_path):
    out = tmp_path / "diff.jsonl"
    done = run_cli("diff", runs["oracle"], runs["noisy"], "--json", out, cwd=tmp_path)
    oracle, noisy = _labels(runs["oracle"]), _labels(runs["noisy"])
    expected = {key for key in oracle if oracle[key] != noisy[key]}
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {(line["id"], line["task"]) for line in lines} == expected and len(lines) == len(expected) == 47
    for line in lines:
        assert list(line)[:5] == ["id", "task", "a_label", "b_label", "first_divergent_step"]
        assert (line["a_label"], line["b_label"]) == (oracle[line["id"], line["task"]], noisy[line["id"], line["task"]])
        step = line["first_divergent_step"]
        assert isinstance(step["a"], int) and isinstance(step["b"], int), line
        assert (line["a_step"]["step"], line["b_step"]["step"]) == (step["a"], step["b"])
    by_task = {(line["id"], line["task"]): line for line in lines}
    # three parallel calls in the oracle's step 0; noisy makes the first alone, then a wrong call at its step 1
    first = by_task["wild_tool_bench_0", 1]
    assert first["first_divergent_step"] == {"a": 0, "b": 1}
    assert [call["node"] for call in first["a_step"]["calls"]] == [0, 2, 1]
    assert first["b_step"]["kind"] == "error" and first["b_step"]["calls"][0]["name"] == "getHistoricalCity"
    # an argument error: the same step, the verdict on the noisy side
    wrong = by_task["wild_tool_bench_0", 2]
    assert wrong["first_divergent_step"] == {"a": 0, "b": 0}
    assert wrong["b_step"]["calls"][0]["verdict"] == "error_schema: required args missing"
    printed = done.stdout.splitlines()
    assert (
        printed[3] == "47 tasks flipped: 47 regressed (correct in A, wrong in B), 0 improved (wrong in A, correct in B)"
    )
    assert "wild_tool_bench_0 task 2: correct -> error (regressed); first divergent step: A 1, B 2" in printed


def test_diff_the_other_way_and_filtered_by_kind(runs, tmp_path):
    out = tmp_path / "improved.jsonl"
    done = run_cli("diff", runs["noisy"], runs["oracle"], "--flip", "regressed", "--json", out, cwd=tmp_path)
    assert "47 tasks flipped: 0 regressed" in done.stdout and "task 0:" not in done.stdout
    assert out.read_text(encoding="utf-8") == ""
    run_cli("diff", runs["noisy"], runs["oracle"], "--flip", "improved", "--json", out, cwd=tmp_path)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 47 and {line["flip"] for line in lines} == {"improved"}
    same = run_cli("diff", runs["oracle"], runs["oracle"], cwd=tmp_path)
    assert same.stdout.splitlines()[-1].startswith("0 tasks flipped")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_gate_fails_noisy_against_oracle_and_passes_oracle_against_itself(runs, tmp_path):
    summary = tmp_path / "gate.md"
    failed = run_cli(
        "gate", runs["noisy"], "--baseline", runs["oracle"], "--markdown", summary, cwd=tmp_path, check=False
    )
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.startswith(
        "gate failed: the candidate is worse beyond noise: candidate - baseline -48.96 points"
    )
    out = failed.stdout.splitlines()
    assert out[3].startswith("task accuracy: candidate 50.00%, baseline 98.96%, difference -48.96 points")
    assert "47 tasks flipped: 47 regressed (correct in baseline, wrong in candidate), 0 improved" in failed.stdout
    assert (
        "wild_tool_bench_0 task 2: correct -> error (regressed); first divergent step: baseline 1, candidate 2" in out
    )
    assert out[-1] == "gate: FAIL"  # the reasons are printed once, on stderr
    assert failed.stderr.count("the candidate is worse beyond noise") == 1
    markdown = summary.read_text(encoding="utf-8")
    assert markdown.startswith("### WildToolBench gate: failed\n")
    assert "| wild_tool_bench_0 | 2 | regressed | 1, 2 |" in markdown
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tokens += [child for token in tokens for child in token.children or []]
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
    assert sum(1 for t in tokens if t.type == "tr_open") == (1 + 2) + (1 + 47)  # the accuracy and flipped-task tables

    passed = run_cli("gate", runs["oracle"], "--baseline", runs["oracle"], cwd=tmp_path, check=False)
    assert passed.returncode == 0 and passed.stdout.splitlines()[-1] == "gate: PASS" and passed.stderr == ""
    assert run_cli("gate", runs["oracle"], "--baseline", runs["noisy"], cwd=tmp_path, check=False).returncode == 0


def test_max_drop_fails_a_drop_within_noise(runs, tmp_path):
    # the oracle with one task relabelled wrong: 1.04 points lower, well within noise
    one_less = tmp_path / "one-less"
    shutil.copytree(runs["oracle"], one_less)
    score = one_less / "score.jsonl"
    lines = score.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["results"][0]["label"] = "error"
    score.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    base = ["gate", one_less, "--baseline", runs["oracle"]]
    assert run_cli(*base, cwd=tmp_path, check=False).returncode == 0
    assert run_cli(*base, "--max-drop", "2", cwd=tmp_path, check=False).returncode == 0
    done = run_cli(*base, "--max-drop", "1", "--json", tmp_path / "gate.json", cwd=tmp_path, check=False)
    assert (
        done.returncode == 1
        and done.stderr.strip() == "gate failed: task accuracy dropped 1.04 points, more than the allowed 1"
    )
    report = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert report["decision"]["passed"] is False and report["comparison"]["verdict"] == "within noise"
    # the trajectory did not change, only the label: no divergent step
    assert [(t["id"], t["task"], t["first_divergent_step"]) for t in report["diff"]["flipped"]] == [
        ("wild_tool_bench_0", 0, None)
    ]
    assert "wild_tool_bench_0 task 1: correct -> error (regressed); no divergent step found" in done.stdout
    assert run_cli(*base, "--max-drop", "-1", cwd=tmp_path, check=False).returncode == 2  # click's range check


def test_untrusted_text_in_the_summary_renders_as_text(runs, tmp_path):
    evil = tmp_path / "evil"
    shutil.copytree(runs["noisy"], evil)
    score = evil / "score.jsonl"
    text = score.read_text(encoding="utf-8")
    text = text.replace('"model_name": "noisy"', '"model_name": "<img src=x onerror=alert(1)>"')
    text = text.replace(
        "action name not in candidate_answer_function_list", "<script>alert(1)</script> [x](javascript:1)"
    )
    score.write_text(text, encoding="utf-8")
    summary = tmp_path / "gate.md"
    done = run_cli("gate", evil, "--baseline", runs["oracle"], "--markdown", summary, cwd=tmp_path, check=False)
    assert done.returncode == 1, done.stderr
    html = MarkdownIt("commonmark").enable("table").render(summary.read_text(encoding="utf-8"))
    tags = _Tags()
    tags.feed(html)
    assert set(tags.tags) <= {"h3", "p", "code", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong"}
    assert "&lt;script&gt;" in html and "&lt;img" in html and "<a " not in html


def test_runs_that_cannot_be_paired_or_without_their_dataset_exit_2(runs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(runs["noisy"], other)
    run_json = other / "run.json"
    run = json.loads(run_json.read_text(encoding="utf-8"))
    run["settings"]["language"] = "zh"
    run_json.write_text(json.dumps(run), encoding="utf-8")
    for command in (["diff", runs["oracle"], other], ["gate", other, "--baseline", runs["oracle"]]):
        done = run_cli(*command, cwd=tmp_path, check=False)
        assert done.returncode == 2 and "error: not comparable: language sides differ" in done.stderr, done.stderr
    # a dataset that moved: run.json names a missing file, --dataset finds it
    moved = tmp_path / "moved"
    for name in ("oracle", "noisy"):
        shutil.copytree(runs[name], moved / name)
        path = moved / name / "run.json"
        run = json.loads(path.read_text(encoding="utf-8"))
        dataset = run["dataset"]
        run["dataset"] = str(tmp_path / "gone.jsonl")
        path.write_text(json.dumps(run), encoding="utf-8")
    done = run_cli("diff", moved / "oracle", moved / "noisy", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "cannot find the dataset the runs were made on" in done.stderr
    assert "pass --dataset FILE" in done.stderr
    done = run_cli("diff", moved / "oracle", moved / "noisy", "--dataset", dataset, cwd=tmp_path)
    assert "47 tasks flipped" in done.stdout
    # another file's content is refused
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(Path(dataset).read_text(encoding="utf-8").replace("Seattle", "Tacoma"), encoding="utf-8")
    done = run_cli("diff", moved / "oracle", moved / "noisy", "--dataset", wrong, cwd=tmp_path, check=False)
    assert done.returncode == 2 and "is not the dataset file the runs were made on" in done.stderr


def test_a_bad_score_file_exits_1_naming_the_line(runs, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(runs["noisy"], bad)
    with open(bad / "score.jsonl", "a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    for command in (["diff", runs["oracle"], bad], ["gate", bad, "--baseline", runs["oracle"]]):
        done = run_cli(*command, cwd=tmp_path, check=False)
        assert done.returncode == 1 and f"{bad / 'score.jsonl'}:25: not JSON" in done.stderr, done.stderr
        assert "gate failed" not in done.stderr
