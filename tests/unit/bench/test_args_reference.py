"""The argument checker against every row of args_cases.jsonl (docs/arguments.md, quirks 21-27)."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import pytest

from wildtoolbench.bench.args import check_arguments

_CASES = (
    Path(os.environ.get("WTB_SHARED_DIR", Path(__file__).resolve().parents[4] / "shared"))
    / "fixtures"
    / "reference"
    / "args_cases.jsonl"
)


@cache
def _load(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# Collected at import time only for readable test ids; the test itself reads the
# file through the ``reference_dir`` fixture, which skips (or fails in CI) when
# ../shared is absent.
_IDS = [f"{index:03d}-{row['category']}" for index, row in enumerate(_load(_CASES))] if _CASES.is_file() else []


def test_row_count(reference_dir):
    assert len(_load(reference_dir / "args_cases.jsonl")) == 100


@pytest.mark.parametrize("index", range(len(_IDS)) if _IDS else [pytest.param(None, id="missing")], ids=_IDS or None)
def test_reference_row(reference_dir, index):
    rows = _load(reference_dir / "args_cases.jsonl")
    assert index is not None
    row = rows[index]
    got = check_arguments(row["tools"], row["name"], row["predict_arguments"], row["answer_arguments"])
    assert got == row["expected"], (row["category"], row["predict_arguments"], row["answer_arguments"])
