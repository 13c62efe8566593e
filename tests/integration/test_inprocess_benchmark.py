"""benchmarks/inprocess.py: the figures ``benchmarks.perf`` reads (no timing is asserted)."""

from __future__ import annotations

import json
import shutil

from benchmarks import inprocess
from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH


def test_measure_in_process_on_the_demo_sessions(tmp_path, monkeypatch):
    folder = tmp_path / "fixtures"
    folder.mkdir()
    shutil.copy(SESSIONS_PATH, folder / "sessions.jsonl")
    shutil.copy(CANDIDATES_PATH, folder / "candidates.jsonl")
    figures = inprocess.measure_in_process(folder, repeat=2)
    assert figures["source"] == str(folder) and figures["repeat"] == 2
    assert (
        figures["sessions"],
        figures["requests"],
        figures["infrastructure_errors"],
    ) == (12, 114, 0)  # 57 oracle requests x 2
    assert figures["cpu_s"] > 0 and figures["wall_s"] > 0 and figures["peak_rss_mb"] > 0
    assert figures["cpu_ms_per_request"] == 1000.0 * figures["cpu_s"] / 114
    # copies under fresh ids, the oracle's responses for each
    dataset, script = inprocess.write_copies(folder / "sessions.jsonl", folder / "candidates.jsonl", 2, tmp_path)
    ids = [json.loads(line)["id"] for line in dataset.read_text(encoding="utf-8").splitlines()]
    assert ids == [f"wild_tool_bench_{n}" for n in range(12)]
    assert [json.loads(line)["session_id"] for line in script.read_text(encoding="utf-8").splitlines()] == ids
    # without ../shared beside the repository: the bundled demo
    monkeypatch.setattr(inprocess, "REFERENCE_FIXTURES", tmp_path / "missing")
    assert inprocess.source_files(None) == ("demo", SESSIONS_PATH, CANDIDATES_PATH)
