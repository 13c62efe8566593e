"""Helpers of the report tests: fixture runs made with the real CLI, shared by tests/test_report*.py.

The two runs (``oracle`` and ``noisy`` replayed on the public fixture sessions) and their report are
made once per pytest session in a folder under the session's base temp dir and reused by every test file.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = ("oracle", "noisy")


def run_cli(*args: object, cwd: Path = REPO_ROOT, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python -m wildtoolbench.cli ARGS`` with this worktree first on the path; returns the finished process."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("LANGSMITH_TRACING", None)
    result = subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"wtb {' '.join(map(str, args))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
        )
    return result


def fixture_runs(base: Path, reference_dir: Path) -> dict[str, Path]:
    """``{candidate: run folder}`` for the oracle and noisy replays of the public fixture sessions (made once)."""
    runs = {}
    for candidate in CANDIDATES:
        out = base / "runs" / candidate
        if not (out / "metric.json").is_file():
            run_cli(
                "eval",
                "--dataset",
                reference_dir / "sessions.jsonl",
                "--model",
                f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}",
                "--out",
                out,
                "--no-progress",
                "--no-trace",
            )
        runs[candidate] = out
    return runs


def fixture_report(base: Path, reference_dir: Path) -> Path:
    """The report of the two fixture runs (``wtb report oracle noisy --out ...``), made once."""
    runs = fixture_runs(base, reference_dir)
    out = base / "report"
    if not (out / "index.html").is_file():
        run_cli("report", runs["oracle"], runs["noisy"], "--out", out)
    return out


def official_pins(dataset: Path, folder: Path) -> Path:
    """A ``WTB_DATA_PINS`` file that pins ``dataset`` as the official dataset (``wildtoolbench``), so that a
    report treats runs of all its sessions as rankable among the paper's models; returns its path."""
    from wildtoolbench.data.official import OFFICIAL_PINS, git_blob_id

    pin = next(p for p in OFFICIAL_PINS if p.name == "wildtoolbench")
    path = Path(folder) / "pins.json"
    path.write_text(json.dumps({pin.name: {"path": pin.path, "blob": git_blob_id(Path(dataset))}}), encoding="utf-8")
    return path


def extra_runs(base: Path, reference_dir: Path) -> dict[str, Path]:
    """More fixture runs for the report's views (made once): ``oracle_zh`` (``--lang zh``), ``noisy_fixed``
    (``--scoring fixed``), ``wrong_name`` and ``over_ask``."""
    specs = {
        "oracle_zh": ("oracle", ["--lang", "zh"]),
        "noisy_fixed": ("noisy", ["--scoring", "fixed"]),
        "wrong_name": ("wrong_name", []),
        "over_ask": ("over_ask", []),
    }
    runs = {}
    for name, (candidate, more) in specs.items():
        out = base / "runs" / name
        if not (out / "run.json").is_file() or not any(out.glob("metric*.json")):
            run_cli(
                "eval",
                "--dataset",
                reference_dir / "sessions.jsonl",
                "--model",
                f"replay:{reference_dir / 'candidates.jsonl'}#{candidate}",
                "--out",
                out,
                "--no-progress",
                "--no-trace",
                *more,
            )
        runs[name] = out
    return runs


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV file as dicts (header = keys)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def read_json(path: Path) -> dict:
    """A JSON file."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
