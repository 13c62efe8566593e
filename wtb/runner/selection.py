"""Which sessions a run evaluates: loading the dataset, selecting by id or count, ordering ids."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable, Mapping, Sequence

from bench.io import iter_jsonl
from bench.schema import load_sessions
from wtb.score_run import natural_id_key

_ID_PATTERN = re.compile(r"^wild_tool_bench_(\d+)$")


def session_sort_key(session_id: str) -> tuple:
    """Order of ids in result files: natural order, the same as ``score.jsonl`` (``wtb.score_run.natural_id_key``)."""
    return natural_id_key(session_id)


def normalise_id(value: str) -> str:
    """``"3"`` -> ``"wild_tool_bench_3"``; a full id is returned unchanged."""
    value = value.strip()
    return f"wild_tool_bench_{value}" if value.isdigit() else value


def load_dataset(path: str | os.PathLike[str], *, tasks: int = 4, language: str = "en") -> list[dict[str, Any]]:
    """Sessions of a dataset JSON Lines file (docs/dataset.md) as plain dicts, validated by ``bench.schema``.

    The lines are validated first (``bench.schema.load_sessions``), then
    returned as parsed from the file: holding the validated models and their
    dumps at once doubled the peak memory of large runs (``python -m benchmarks.perf``).
    ``tasks`` is the number of tasks per session (4 in the benchmark; N for ``wtb generate --layers N``);
    ``language`` the side to be evaluated (``zh`` adds ``bench.schema.language_issues``).

    Raises:
        bench.schema.DatasetError: every malformed line (file, line and field named), a missing or empty file.
    """
    validated = len(load_sessions(path, tasks=tasks, language=language))
    sessions = [json.loads(line) for _, line in iter_jsonl(path)]
    assert len(sessions) == validated
    return sessions


def session_ids(sessions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ids of ``sessions`` (dataset lines, docs/dataset.md), in order."""
    return [session["id"] for session in sessions]


def select_sessions(
    sessions: Sequence[Mapping[str, Any]], ids: Iterable[str] | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """The sessions to run: those named in ``ids`` (``"3"`` or ``"wild_tool_bench_3"``), else all; then the first ``limit``.

    Raises:
        ValueError: an id that is not in the dataset, or a negative limit.
    """
    chosen = list(sessions)
    if ids:
        wanted = [normalise_id(i) for i in ids if i.strip()]
        by_id = {s["id"]: s for s in sessions}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise ValueError(f"session id(s) not in the dataset: {', '.join(missing)}")
        seen: set[str] = set()
        chosen = [by_id[i] for i in wanted if not (i in seen or seen.add(i))]
    if limit is not None:
        if limit < 0:
            raise ValueError(f"--limit must be >= 0, got {limit}")
        chosen = chosen[:limit]
    return [dict(s) for s in chosen]
