"""``wtb compare`` on two replay runs of the bundled demo (docs/trials.md §6, docs/cli.md §2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = REPO / "bench" / "data" / "demo_candidates.jsonl"


def _wtb(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "OPENAI_"))}
    env.update(PYTHONPATH=str(REPO), LANGSMITH_TRACING="false", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The demo replayed by ``#oracle`` (24 of 24 tasks) and ``#demo-model`` (16 of 24)."""
    root = tmp_path_factory.mktemp("compare")
    folders = {}
    for candidate in ("oracle", "demo-model"):
        out = root / candidate
        done = _wtb("eval", "--model", f"replay:{CANDIDATES}#{candidate}", "--out", str(out), "--no-progress", cwd=REPO)
        assert done.returncode == 0, done.stderr
        folders[candidate] = out
    return folders


def test_compare_prints_the_paired_difference_and_the_verdict(runs, tmp_path):
    out = tmp_path / "comparison.json"
    done = _wtb("compare", str(runs["oracle"]), str(runs["demo-model"]), "--json", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"A: oracle ({runs['oracle']}, 1 trial)"
    assert lines[2] == "6 paired sessions, 24 tasks; scoring reference, language en"
    assert lines[5].split() == [
        "task",
        "accuracy",
        "100.00%",
        "66.67%",
        "+33.33",
        "[+11.91,",
        "+54.75]",
        "29.08",
        "A",
        "better",
    ]
    assert lines[6].split()[2:] == ["100.00%", "16.67%", "+83.33", "[+40.49,", "+100.00]", "58.17", "A", "better"]
    assert lines[-2] == "verdict: A better (task accuracy)"
    # Six sessions are few: the verdict is printed, with a note that it is only a hint.
    assert lines[-1] == (
        "note: only 6 paired sessions, fewer than 20: the interval is rough, read the verdict as a hint "
        "(docs/trials.md §6)"
    )
    comparison = json.loads(out.read_text(encoding="utf-8"))
    task = comparison["task"]
    # demo-model's correct tasks per session: 2, 2, 4, 2, 3, 3; the oracle's: 4 each. Session differences
    # 2, 2, 0, 2, 1, 1 over 24 tasks: +1/3; cluster SE sqrt(6/5 * 10/3) / 24 = 1/12; t(0.975; 5) = 2.570582
    assert task["value"] == pytest.approx(1 / 3) and task["se"] == pytest.approx(1 / 12)
    assert (task["low"], task["high"]) == pytest.approx((1 / 3 - 2.570582 / 12, 1 / 3 + 2.570582 / 12), abs=1e-6)
    assert task["mdd"] == pytest.approx((2.570582 + 0.919544) / 12, abs=1e-6)
    assert comparison["session"]["value"] == pytest.approx(5 / 6) and comparison["session"]["high"] == 1.0
    assert comparison["verdict"] == "A better" and comparison["a"]["trials"] == [1, 1]

    reverse = _wtb("compare", str(runs["demo-model"]), str(runs["oracle"]), cwd=tmp_path)
    assert reverse.returncode == 0 and reverse.stdout.splitlines()[-2] == "verdict: B better (task accuracy)"
    same = _wtb("compare", str(runs["oracle"]), str(runs["oracle"]), cwd=tmp_path)
    assert same.returncode == 0 and same.stdout.splitlines()[-2] == "verdict: within noise (task accuracy)"


def _copy(run: Path, where: Path) -> Path:
    copy = where / run.name
    shutil.copytree(run, copy)
    return copy


def _edit_run_json(folder: Path, edit) -> None:
    path = folder / "run.json"
    run = json.loads(path.read_text(encoding="utf-8"))
    edit(run)
    path.write_text(json.dumps(run), encoding="utf-8")


def test_runs_that_cannot_be_paired_are_refused_with_exit_2(runs, tmp_path):
    oracle = str(runs["oracle"])
    cases = {
        "language": (lambda run: run["settings"].update(language="zh"), "language sides differ: en"),
        "dataset": (lambda run: run.update(dataset_sha256="0" * 64), "different dataset files"),
        "scoring": (lambda run: run.update(scoring="fixed"), "missing (not a run folder, or not scored in fixed mode)"),
    }
    for name, (edit, message) in cases.items():
        folder = _copy(runs["demo-model"], tmp_path / name)
        _edit_run_json(folder, edit)
        done = _wtb("compare", oracle, str(folder), cwd=tmp_path)
        expected = 1 if name == "scoring" else 2  # a fixed-mode run.json with no score.fixed.jsonl is a bad folder
        assert done.returncode == expected and message in done.stderr, (name, done.stderr)
        assert done.stdout == ""
    # another scoring mode, really scored: the fixed scores of the same records
    fixed = _copy(runs["demo-model"], tmp_path / "fixed")
    scored = _wtb(
        "score", "--dataset", str(REPO / "bench" / "data" / "demo_sessions.jsonl"), "--results",
        str(fixed / "result.jsonl"), "--out", str(fixed), "--scoring", "fixed", cwd=tmp_path,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    _edit_run_json(fixed, lambda run: run.update(scoring="fixed"))
    done = _wtb("compare", oracle, str(fixed), cwd=tmp_path)
    assert done.returncode == 2 and "scoring modes differ: reference" in done.stderr
    assert _wtb("compare", oracle, str(fixed), "--scoring", "fixed", cwd=tmp_path).returncode == 1  # oracle: none
    # other sessions: one session's scores left out
    fewer = _copy(runs["demo-model"], tmp_path / "fewer")
    lines = (fewer / "score.jsonl").read_text(encoding="utf-8").splitlines()
    (fewer / "score.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    done = _wtb("compare", oracle, str(fewer), cwd=tmp_path)
    assert done.returncode == 2 and f"1 session(s) only in {oracle}: wild_tool_bench_5" in done.stderr
    # a folder that does not exist is a usage error too
    assert _wtb("compare", oracle, str(tmp_path / "nowhere"), cwd=tmp_path).returncode == 2


def test_a_malformed_score_file_exits_1_naming_the_line(runs, tmp_path):
    broken = _copy(runs["demo-model"], tmp_path / "broken")
    path = broken / "score.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = "{not json"
    lines[2] = json.dumps({"id": "wild_tool_bench_2", "results": "none"})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _wtb("compare", str(runs["oracle"]), str(broken), cwd=tmp_path)
    assert done.returncode == 1
    problems = done.stderr.splitlines()
    assert problems[0].startswith(f"{path}:2: not JSON:")
    assert problems[1] == f"{path}:3: results: missing or not a list of scored tasks"


def test_the_parent_of_a_run_folder_is_refused_naming_the_run_folders_inside(runs, tmp_path):
    """`wtb eval` writes runs/<model>/<dataset>/: giving runs/<model> names the folders one level down."""
    parent = tmp_path / "demo-model"
    inside = _copy(runs["demo-model"], parent)
    done = _wtb("compare", str(runs["oracle"]), str(parent), cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith(f"error: {parent / 'score.jsonl'}: missing (not a run folder")
    assert line.endswith(f"the run folders are one level down: {inside}")
