"""Re-grading a finished run folder in another scoring mode, without model calls (docs/semantic-mode.md §4,
docs/guides/scoring.md "Re-grading a run folder").

A run's stored replies can be scored in any mode. The labels are exact wherever the mode's harness would
have fed the model the same history as the run's: always when both modes share the inference fixes
(fixed and semantic over a fixed or semantic run; reference over a reference run). Over a reference run
fixed and semantic scoring still label every task, but :func:`tasks_needing_rerun` replays each task's
replies through both harnesses and names those whose history would have differed: only a new run tells
how the model would have answered there. Reference scoring of a fixed-harness run is refused (its replies
answered another history).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wildtoolbench.bench.harness import InferenceError, build_prompt, float_to_number, match_step, tracker_after
from wildtoolbench.bench.schema import DatasetError, DatasetIssue, fields_for
from wildtoolbench.bench.strategy import REFERENCE, ScoringStrategy, record_strategy, scoring_strategy
from wildtoolbench.common.run_folder import RESULT_FILE, RUN_FILE


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_inputs(run_dir: Path, dataset: Path | None = None) -> tuple[Path, Path, str | None, ScoringStrategy]:
    """``(dataset file, result file, language side or None, mode that ran)`` of a run folder, from its
    ``run.json`` (docs/evaluation.md §5).

    Args:
        run_dir: the run folder (``wtb eval --out``).
        dataset: the dataset file when ``run.json`` names none, or names one that moved.

    Raises:
        DatasetError: no ``result.jsonl``, no dataset, a dataset whose content changed since the run, or a
            ``run.json`` naming an unknown scoring mode (each problem names the file).
    """
    results = run_dir / RESULT_FILE
    if not results.is_file():
        raise DatasetError([DatasetIssue(str(results), None, None, "missing: not a finished run folder")])
    info: dict[str, Any] = {}
    info_path = run_dir / RUN_FILE
    if info_path.is_file():
        try:
            loaded = json.loads(info_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DatasetError([DatasetIssue(str(info_path), None, None, f"not JSON: {exc}")]) from None
        info = loaded if isinstance(loaded, dict) else {}
    named = Path(str(info["dataset"])) if info.get("dataset") else None
    if dataset is None and named is not None and named.is_file():
        recorded = info.get("dataset_sha256")
        if recorded and _sha256(named) != recorded:
            raise DatasetError(
                [DatasetIssue(str(info_path), None, "dataset", f"{named} changed since the run (sha256 differs)")]
            )
        dataset = named
    if dataset is None:
        raise DatasetError([DatasetIssue(str(info_path), None, "dataset", "names no dataset file here: pass --dataset")])
    settings = info.get("settings") if isinstance(info.get("settings"), dict) else {}
    try:
        made_by = scoring_strategy(info.get("scoring") or None)
    except ValueError as exc:
        raise DatasetError([DatasetIssue(str(info_path), None, "scoring", str(exc))]) from None
    return dataset, results, settings.get("language"), made_by


def check_regrading(made_by: ScoringStrategy, target: ScoringStrategy, where: Path) -> None:
    """Refuse reference scoring of a run made with the inference fixes (docs/semantic-mode.md §4).

    Raises:
        DatasetError: ``target`` lacks the inference fixes that made the run's history.
    """
    if made_by.inference_fixes and not target.inference_fixes:
        raise DatasetError(
            [
                DatasetIssue(
                    str(where),
                    None,
                    "scoring",
                    f"a --scoring {made_by} run cannot be scored in {target} mode: its replies answered the "
                    f"{made_by} harness's history; run the model again with --scoring {target}",
                )
            ]
        )


def _same_task(session: Mapping[str, Any], task: Mapping[str, Any], t: int, target: ScoringStrategy, language: str) -> bool:
    """Whether task ``t`` would have fed the model the same history under ``target`` as under reference mode:
    the same prompt, and the same messages and verdict after every stored reply."""
    side = fields_for(language)
    try:
        if build_prompt(session, t, scoring=REFERENCE, language=language) != build_prompt(
            session, t, scoring=target, language=language
        ):
            return False
    except InferenceError:
        return False
    answer_list = session[side.answer_list][t]
    tools = float_to_number(session[side.tools], scoring=target)
    log = task.get("inference_log") or {}
    mine: list[tuple[int, list[int]]] = []
    theirs: list[tuple[int, list[int]]] = []
    steps = sorted((int(key[5:]), value) for key, value in log.items() if key.startswith("step_") and key[5:].isdigit())
    for step, entry in steps:
        output = entry.get("inference_output") if isinstance(entry, Mapping) else None
        if not isinstance(output, Mapping):
            return False
        response = {key: output.get(key) for key in ("content", "tool_calls", "reasoning_content")}
        try:
            before = match_step(tracker_after(answer_list, theirs), answer_list, step, json.loads(json.dumps(response)))
            after = match_step(
                tracker_after(answer_list, mine, scoring=target),
                answer_list,
                step,
                json.loads(json.dumps(response)),
                scoring=target,
                tools=tools,
            )
        except (InferenceError, ValueError, KeyError, IndexError, TypeError):
            return False
        if (before.label, before.task_end, before.messages) != (after.label, after.task_end, after.messages):
            return False
        if before.prune is not None:
            theirs.append((step, before.prune))
        if after.prune is not None:
            mine.append((step, after.prune))
    return True


def tasks_needing_rerun(
    sessions: Mapping[str, Any], records: Iterable[Mapping[str, Any]], target: ScoringStrategy, language: str
) -> list[tuple[str, int]]:
    """The ``(session id, task index)`` pairs of a reference run whose history ``target``'s harness would have
    changed (docs/semantic-mode.md §4); ``[]`` when ``target`` has no inference fixes or the records were made
    with them. A session whose whole inference failed needs a re-run for every task.

    Args:
        sessions: the dataset's sessions by id (dicts or :class:`wildtoolbench.bench.schema.Session`).
        records: the run's result records.
        target: the scoring strategy of the re-grading.
        language: the side the run was made on.
    """
    needed: list[tuple[str, int]] = []
    for record in records:
        if not target.inference_fixes or record_strategy(record).inference_fixes:
            continue
        session = sessions.get(str(record.get("id")))
        if session is None:
            continue
        session = session if isinstance(session, Mapping) else session.model_dump()
        result = record.get("result")
        count = len(session[fields_for(language).tasks])
        if not isinstance(result, list):
            needed.extend((session["id"], t) for t in range(count))
            continue
        needed.extend((session["id"], t) for t, task in enumerate(result) if not _same_task(session, task, t, target, language))
    return needed


def rerun_line(needed: list[tuple[str, int]], total: int, target: ScoringStrategy, shown: int = 10) -> str:
    """The line ``wtb score RUN_FOLDER`` prints about the tasks a re-grading cannot stand for (docs/semantic-mode.md §4)."""
    if not needed:
        return f"{target} scoring of the stored replies is exact: every task would have had the same history ({total} tasks)"
    listed = ", ".join(f"{sid}#{t}" for sid, t in needed[:shown]) + (", ..." if len(needed) > shown else "")
    return (
        f"{len(needed)} of {total} tasks need a re-run with --scoring {target}: the {target} harness would have fed "
        f"back another history there ({listed})"
    )
