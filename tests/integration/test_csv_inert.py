"""Every CSV ``wtb report`` writes stays inert for every reader (docs/cli.md §4): the payload list (``=``,
``+``, ``-``, ``@``, tab, CR, LF, full-width ``＝``, leading spaces, each also after an embedded CR, LF or
CRLF) goes into session ids, the model name and the run folder's name; then each CSV is read twice: split
at every CR and LF (a reader that is not quote-aware) and with the ``csv`` module."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from tests.integration.test_outputs_safety import replay_run, wtb
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.reports.escape import FORMULA_STARTS

CSV_FILES = ("leaderboard.csv", "orchestration.csv", "errors.csv", "tasks.csv")
BASES = ["=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1+1", "\r=1+1", "\n=1+1", "\uff1d1+1", "   =1+1", "\u3000@x"]
PAYLOADS = BASES + [f"ok{sep}{base}" for base in BASES for sep in ("\r", "\n", "\r\n")]
FORMULA = tuple(c for c in FORMULA_STARTS if c not in "\t\r\n")


def _lines(path: Path) -> list[str]:
    return re.split(r"\r\n|\r|\n", path.read_bytes().decode("utf-8"))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("payloads")
    demo = [json.loads(line) for line in SESSIONS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    scripts = [json.loads(line) for line in CANDIDATES_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    oracle = {s["session_id"]: s for s in scripts if s["candidate"] == "oracle"}
    sessions, candidates = [], []
    model = '\r=HYPERLINK("http://evil.invalid")'
    for number, payload in enumerate(PAYLOADS):
        session = dict(demo[number % len(demo)])
        source = session["id"]
        session["id"] = f"{payload}#{number}"
        sessions.append(session)
        candidates.append({**oracle[source], "session_id": session["id"], "candidate": model})
    (base / "sessions.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    (base / "candidates.jsonl").write_text("".join(json.dumps(c) + "\n" for c in candidates), encoding="utf-8")
    run = base / "-2+3 run\n=cmd"
    replay_run(base / "sessions.jsonl", base / "candidates.jsonl", run, model)
    wtb("report", run, "--out", base / "report")
    return base / "report"


@pytest.mark.parametrize("name", CSV_FILES)
def test_no_line_split_at_cr_or_lf_starts_a_formula(report, name):
    lines = _lines(report / name)
    assert len(lines) > 2
    bad = [line for line in lines if line.lstrip(" \t\u3000").startswith(FORMULA) or line[:1] == "\t"]
    assert bad == [], name


@pytest.mark.parametrize("name", CSV_FILES)
def test_no_cell_read_with_csv_starts_a_formula(report, name):
    with open(report / name, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    widths = {len(row) for row in rows}
    assert len(widths) == 1, f"{name}: rows of {widths} cells (a line break split a row)"
    for cell in (cell for row in rows for cell in row):
        assert not cell.startswith(("\t", "\r", "\n")), (name, cell)
        if cell.lstrip(" \u3000").startswith(FORMULA):
            assert re.fullmatch(r"-?\d+(\.\d+)?", cell), (name, cell)  # a number, written as a number
        for line in cell.split("\n")[1:]:
            assert not line.lstrip(" \t\u3000").startswith(FORMULA) and line[:1] != "\t", (name, cell)
        assert "\r" not in cell, (name, cell)


def test_every_payload_is_in_tasks_csv_neutralised_and_readable(report):
    with open(report / "tasks.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    ids = {row["session_id"] for row in rows}
    for number, payload in enumerate(PAYLOADS):
        expected = "\n".join(
            ("'" + line if line.lstrip(" \t\u3000").startswith((*FORMULA, "\t")) or line[:1] == "\t" else line)
            for line in re.split(r"\r\n|\r|\n", f"{payload}#{number}")
        )
        if expected.startswith("\n"):
            expected = "'" + expected
        assert expected in ids, (payload, sorted(ids)[:3])
    assert {row["model"] for row in rows} == {"'\n'=HYPERLINK(\"http://evil.invalid\")"}
    assert {row["run"] for row in rows} == {"r0"}  # the folder's name is not exported
