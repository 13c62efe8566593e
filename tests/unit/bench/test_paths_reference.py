"""Path enumeration against every row of paths.jsonl (docs/paths.md)."""

from __future__ import annotations

import json

from tests.support.paths_reference import enumerate_paths, min_length, split_optimal
from wildtoolbench.bench.paths import PathTracker


def _rows(reference_dir):
    with open(reference_dir / "paths.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_every_reference_row(reference_dir):
    rows = _rows(reference_dir)
    assert len(rows) == 101
    for row in rows:
        paths = enumerate_paths(row["answer_list"])
        optimal, suboptimal = split_optimal(paths)
        where = (row["session_id"], row["task_idx"])
        assert paths == row["all_path_list"], where
        assert optimal == row["optimal_path_list"], where
        assert suboptimal == row["suboptimal_path_list"], where
        assert min_length(paths) == row["min_length"], where


def test_tracker_gold_path_and_min_length(reference_dir):
    for row in _rows(reference_dir):
        tracker = PathTracker(row["answer_list"])
        assert tracker.min_length == row["min_length"]
        assert tracker.gold_path == row["optimal_path_list"][0]
