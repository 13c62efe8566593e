"""Batch layer of ``wtb eval``: many sessions through the evaluation graph, checkpointed per session.

Layers (as in tau2-bench): the evaluation graph runs one session
(``graphs/evaluation.py``); :func:`evaluate_session` turns one graph run into
one SPEC 3.4 record and never raises for a failing model; :func:`arun_eval`
owns concurrency, the result file, resume and the progress bar.

Result file ``DIR/result.jsonl`` (:class:`ResultFile`):

- one line per session, appended as soon as the session finishes, in a single
  ``write`` of the whole line followed by ``flush`` + ``fsync``;
- on start, a torn last line (no final newline, left by a crash) is dropped
  and its session runs again; sessions already in the file are skipped;
- at the end the file is rewritten sorted by id (atomically: temp file + rename).

A second run on the same directory while one is active is refused (lock file
``DIR/.wtb-eval.lock``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from filelock import FileLock, Timeout

from bench.inference import error_record
from bench.io import atomic_write_text, dumps_line
from bench.schema import load_sessions
from bench.score_run import natural_id_key
from bench.tracing import context_settings, redact_record, session_run_config

RESULT_FILE = "result.jsonl"
LOCK_FILE = ".wtb-eval.lock"
_ID_PATTERN = re.compile(r"^wild_tool_bench_(\d+)$")


def session_sort_key(session_id: str) -> tuple:
    """Order of ids in result files: natural order, the same as ``score.jsonl`` (``bench.score_run.natural_id_key``)."""
    return natural_id_key(session_id)


def normalise_id(value: str) -> str:
    """``"3"`` -> ``"wild_tool_bench_3"``; a full id is returned unchanged."""
    value = value.strip()
    return f"wild_tool_bench_{value}" if value.isdigit() else value


# --------------------------------------------------------------------------- sessions


def load_dataset(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Sessions of a dataset JSON Lines file (SPEC 2) as plain dicts, validated by ``bench.schema``.

    Raises:
        bench.schema.DatasetError: every malformed line (file, line and field named), a missing or empty file.
    """
    return [session.to_dict() for session in load_sessions(path)]


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


# --------------------------------------------------------------------------- result file


class ResultFile:
    """``DIR/result.jsonl``: per-session append with fsync, torn-tail recovery, sorted final rewrite."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def load(self) -> dict[str, dict[str, Any]]:
        """Records already in the file, by id (first occurrence wins).

        A last line without its final newline is a torn write from a crash: it
        is cut off the file (atomically) and its session is not counted as done.

        Raises:
            ValueError: a complete line that is not a JSON object with an ``id``
                (file and line named); the file is then left untouched.
        """
        if not self.path.exists():
            return {}
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]
            atomic_write_text(self.path, text)
        records: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{self.path}, line {number}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise ValueError(f"{self.path}, line {number}: field 'id' missing or not a string")
            records.setdefault(record["id"], record)
        return records

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record as one line: a single write, then flush and fsync."""
        data = (dumps_line(record) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:  # one write(2) for the whole line unless the kernel takes less
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def finalize(self) -> list[dict[str, Any]]:
        """Rewrite the file atomically with one record per id, sorted by id; returns the records."""
        records = sorted(self.load().values(), key=lambda r: session_sort_key(r["id"]))
        atomic_write_text(self.path, "".join(dumps_line(r) + "\n" for r in records))
        return records


# --------------------------------------------------------------------------- one session


def recorded_model_name(context: Any) -> str:
    """The ``model_name`` that records of ``context`` carry."""
    from nodes.candidate import model_name_for

    return context.model_name or model_name_for(context.model)


async def evaluate_session(graph: Any, session: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Run one session through the evaluation graph; return its SPEC 3.4 record.

    Args:
        graph: the compiled evaluation graph (``graphs.evaluation.graph``).
        session: a dataset line.
        context: an ``EvaluationContext``.

    Returns:
        ``{"id", "model_name", "result"}``. If the graph raises (a model
        request failing after the client's retries, a bad replay script ...),
        ``result`` is ``"Error during inference: <message>"`` and
        ``error_detail`` names the exception; the exception is not re-raised.
        ``asyncio.CancelledError`` and ``KeyboardInterrupt`` propagate.
    """
    config = session_run_config(
        kind="eval",
        session_id=session["id"],
        dataset=context.dataset or None,
        model=context.model,
        language="en",
        settings=context_settings(context, exclude=("model", "dataset")),
    )
    try:
        output = await graph.ainvoke({"session": dict(session)}, context=context, config=config)
        return redact_record(output["record"])
    except Exception as exc:  # noqa: BLE001 - any failure of one session is recorded, the run goes on
        record = error_record(session["id"], recorded_model_name(context), str(exc))
        record["error_detail"] = f"{type(exc).__name__}: {exc}"
        return redact_record(record)


# --------------------------------------------------------------------------- the run


@dataclass
class RunSummary:
    """What :func:`arun_eval` did.

    Attributes:
        result_path: the result file.
        selected: sessions asked for.
        skipped: of those, already in the result file (resume).
        evaluated: sessions run now.
        inference_errors: ids whose record is ``"Error during inference: ..."`` (this run and earlier ones).
        tasks / tasks_correct: tasks in the selected sessions' records and how many are action-name correct.
        wall_time: seconds.
    """

    result_path: Path
    selected: int = 0
    skipped: int = 0
    evaluated: int = 0
    inference_errors: list[str] = field(default_factory=list)
    tasks: int = 0
    tasks_correct: int = 0
    wall_time: float = 0.0


def _task_counts(record: Mapping[str, Any]) -> tuple[int, int]:
    result = record.get("result")
    if not isinstance(result, list):
        return 0, 0
    return len(result), sum(1 for task in result if task.get("action_name_label") == "correct")


class _Progress:
    """Rich progress bar: sessions done, tasks correct so far, elapsed / remaining time."""

    def __init__(self, enabled: bool, total: int, done: int, tasks: int, correct: int, label: str):
        self.enabled = enabled
        self.tasks, self.correct = tasks, correct
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("sessions"),
            TextColumn("tasks correct {task.fields[correct]}/{task.fields[tasks]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task(label, total=total, completed=done, correct=correct, tasks=tasks)

    def __enter__(self) -> "_Progress":
        if self.enabled:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            self._progress.stop()

    def advance(self, tasks: int, correct: int) -> None:
        self.tasks += tasks
        self.correct += correct
        if self.enabled:
            self._progress.update(self._task, advance=1, tasks=self.tasks, correct=self.correct)


async def arun_eval(
    sessions: Sequence[Mapping[str, Any]],
    context: Any,
    out_dir: str | os.PathLike[str],
    *,
    concurrency: int = 4,
    overwrite: bool = False,
    progress: bool = True,
    graph: Any = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> RunSummary:
    """Evaluate ``sessions`` with ``context``'s model into ``out_dir/result.jsonl``.

    Args:
        sessions: dataset lines to evaluate (see :func:`select_sessions`).
        context: an ``EvaluationContext`` (model spec and settings).
        out_dir: output directory (created).
        concurrency: sessions in flight at once (>= 1).
        overwrite: delete an existing ``result.jsonl`` first instead of resuming.
        progress: show the progress bar (on stderr).
        graph: the compiled evaluation graph (default ``graphs.evaluation.graph``).
        on_record: called with each new record after it is written.

    Returns:
        A :class:`RunSummary`.

    Raises:
        ValueError: ``concurrency < 1``; a malformed existing result file; an
            existing result file written for another model (use ``--overwrite``
            or another directory).
        RuntimeError: another run holds the directory's lock.
    """
    if concurrency < 1:
        raise ValueError(f"--concurrency must be >= 1, got {concurrency}")
    if graph is None:
        from graphs.evaluation import graph as default_graph

        graph = default_graph
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RuntimeError(f"another `wtb eval` is writing to {out} (lock {out / LOCK_FILE}); wait for it or use another --out") from None
    try:
        return await _run_locked(sessions, context, out, concurrency, overwrite, progress, graph, on_record)
    finally:
        lock.release()


async def _run_locked(sessions, context, out, concurrency, overwrite, progress, graph, on_record) -> RunSummary:
    started = time.perf_counter()
    results = ResultFile(out / RESULT_FILE)
    if overwrite and results.path.exists():
        results.path.unlink()
    done = results.load()
    model_name = recorded_model_name(context)
    others = sorted({r.get("model_name") for r in done.values() if r.get("model_name") not in (None, model_name)})
    if others:
        raise ValueError(
            f"{results.path} holds results of model {', '.join(map(str, others))}, not {model_name!r}; "
            "use --overwrite or another --out directory"
        )

    summary = RunSummary(result_path=results.path, selected=len(sessions))
    todo = [s for s in sessions if s["id"] not in done]
    summary.skipped = len(sessions) - len(todo)
    for session in sessions:
        record = done.get(session["id"])
        if record is not None:
            tasks, correct = _task_counts(record)
            summary.tasks += tasks
            summary.tasks_correct += correct
            if isinstance(record.get("result"), str):
                summary.inference_errors.append(record["id"])

    queue: asyncio.Queue[Mapping[str, Any]] = asyncio.Queue()
    for session in todo:
        queue.put_nowait(session)

    with _Progress(progress, len(sessions), summary.skipped, summary.tasks, summary.tasks_correct, model_name) as bar:

        async def worker() -> None:
            while True:
                try:
                    session = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                record = await evaluate_session(graph, session, context)
                results.append(record)
                tasks, correct = _task_counts(record)
                summary.evaluated += 1
                summary.tasks += tasks
                summary.tasks_correct += correct
                if isinstance(record.get("result"), str):
                    summary.inference_errors.append(record["id"])
                bar.advance(tasks, correct)
                if on_record is not None:
                    on_record(record)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(todo)) or 1)))

    results.finalize()
    summary.inference_errors.sort(key=session_sort_key)
    summary.wall_time = time.perf_counter() - started
    return summary


def run_eval(*args: Any, **kwargs: Any) -> RunSummary:
    """Synchronous wrapper of :func:`arun_eval` (runs its own event loop)."""
    return asyncio.run(arun_eval(*args, **kwargs))
