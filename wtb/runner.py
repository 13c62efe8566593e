"""Batch layer of ``wtb eval``: many sessions through the evaluation graph, checkpointed per session.

Layers (as in tau2-bench): the evaluation graph runs one session
(``graphs/evaluation.py``); :func:`evaluate_session` turns one graph run into
one docs/evaluation.md §5 record and never raises for a failing model; :func:`arun_eval`
owns concurrency, the result file, resume and the progress bar.

Result file ``DIR/result.jsonl`` (:class:`ResultFile`):

- one line per session, appended as soon as the session finishes, in a single
  ``write`` of the whole line followed by ``flush`` + ``fsync``;
- on start, a torn last line (no final newline, left by a crash) is dropped
  and its session runs again; sessions already in the file are skipped;
- at the end the file is rewritten sorted by id (atomically: temp file + rename).

A second run on the same directory while one is active is refused (lock file
``DIR/.wtb-eval.lock``).

Infrastructure errors (issue 6): a model request that still fails after its
retries (``models.transport.ModelRequestError``) leaves nothing to
score, so its session gets no line in ``result.jsonl``; it is appended to
``DIR/errors.jsonl`` instead, listed in the run summary, and run again by the
next resume (at the end of a run ``errors.jsonl`` keeps only the latest entry
of each session still without a result). This differs from the reference
harness on purpose: it scored such sessions as ``"Error during inference"``.
Reference-mode inference failures (quirk 11), a request the provider refused
for its content (HTTP 400/413/422, e.g. the context length of the model
exceeded: re-running cannot change it) and any other exception still give an
``"Error during inference: ..."`` record, which is scored.

Accounting: every session record carries a top-level ``"usage"`` key
(model requests, tries, provider-reported input/output tokens, retried
requests, wall time in seconds, cost in USD when prices are given); scoring
ignores it. ``DIR/summary.json`` holds the run's totals, the retried requests
and the infrastructure errors (:class:`RunSummary`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from filelock import FileLock, Timeout

from bench.harness import error_record
from bench.io import atomic_write_text, dumps_line, iter_jsonl, write_json_atomic
from bench.schema import load_sessions
from wtb.score_run import natural_id_key
from wtb.tracing import context_settings, redact_record, session_run_config

RESULT_FILE = "result.jsonl"
ERRORS_FILE = "errors.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"
"""``{"dataset", "dataset_sha256", "model_name", "scoring"}`` of the results in the directory (resume check)."""
LOCK_FILE = ".wtb-eval.lock"
_ID_PATTERN = re.compile(r"^wild_tool_bench_(\d+)$")


def session_sort_key(session_id: str) -> tuple:
    """Order of ids in result files: natural order, the same as ``score.jsonl`` (``wtb.score_run.natural_id_key``)."""
    return natural_id_key(session_id)


def normalise_id(value: str) -> str:
    """``"3"`` -> ``"wild_tool_bench_3"``; a full id is returned unchanged."""
    value = value.strip()
    return f"wild_tool_bench_{value}" if value.isdigit() else value


# --------------------------------------------------------------------------- sessions


def load_dataset(path: str | os.PathLike[str], *, tasks: int = 4) -> list[dict[str, Any]]:
    """Sessions of a dataset JSON Lines file (docs/dataset.md) as plain dicts, validated by ``bench.schema``.

    The lines are validated first (``bench.schema.load_sessions``), then
    returned as parsed from the file: holding the validated models and their
    dumps at once doubled the peak memory of large runs (``python -m benchmarks.perf``).
    ``tasks`` is the number of tasks per session (4 in the benchmark; N for ``wtb generate --layers N``).

    Raises:
        bench.schema.DatasetError: every malformed line (file, line and field named), a missing or empty file.
    """
    validated = len(load_sessions(path, tasks=tasks))
    sessions = [json.loads(line) for _, line in iter_jsonl(path)]
    assert len(sessions) == validated
    return sessions


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


@dataclass
class RecordInfo:
    """What the runner keeps of one result line (the record itself stays on disk).

    Attributes:
        id / model_name: the record's identity.
        tasks / correct: tasks in the record and how many are action-name correct.
        inference_error: ``result`` is an ``"Error during inference: ..."`` string.
        usage: the record's ``"usage"`` accounting (``{}`` for records written before it existed).
        scoring: the mode that made the record (``"scoring"`` key; ``"reference"`` when absent).
    """

    id: str
    model_name: Any
    tasks: int
    correct: int
    inference_error: bool
    usage: dict[str, Any]
    scoring: str = "reference"

    def __getitem__(self, key: str) -> Any:
        """Record-style access to the kept fields (``info["id"]``, ``info["model_name"]``, ``info["usage"]``)."""
        if key not in ("id", "model_name", "usage"):
            raise KeyError(key)
        return getattr(self, key)

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> "RecordInfo":
        """The info of a parsed record."""
        tasks, correct = _task_counts(record)
        usage = record.get("usage")
        return cls(
            record["id"], record.get("model_name"), tasks, correct, isinstance(record.get("result"), str),
            dict(usage) if isinstance(usage, Mapping) else {}, str(record.get("scoring", "reference")),
        )


class ResultFile:
    """``DIR/result.jsonl``: per-session append with fsync, torn-tail recovery, sorted final rewrite.

    Memory stays small for large runs: the file is read line by line and only
    :class:`RecordInfo` and each line's byte range are kept; the final sorted
    rewrite copies byte ranges (no parsing). The object assumes it is the only
    writer (the run's lock guarantees it).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._lines: list[tuple[str, int, int]] | None = None  # (id, offset, length) in file order
        self._infos: dict[str, RecordInfo] = {}

    def _parse_line(self, raw: bytes, number: int) -> dict[str, Any]:
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ValueError(f"{self.path}, line {number}: not valid JSON ({message})") from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise ValueError(f"{self.path}, line {number}: field 'id' missing or not a string")
        return record

    def scan(self) -> dict[str, RecordInfo]:
        """Index the file; returns the info of each record by id (first occurrence wins).

        A last line without its final newline is a torn write from a crash: it
        is cut off the file (truncated, fsync'd) and its session is not counted as done.

        Raises:
            ValueError: a complete line that is not a JSON object with an ``id``
                (file and line named); the file is then left untouched.
        """
        lines: list[tuple[str, int, int]] = []
        infos: dict[str, RecordInfo] = {}
        torn_at: int | None = None
        if self.path.exists():
            offset = 0
            with open(self.path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if not raw.endswith(b"\n"):
                        torn_at = offset
                        break
                    if raw.strip():
                        record = self._parse_line(raw, number)
                        lines.append((record["id"], offset, len(raw)))
                        if record["id"] not in infos:
                            infos[record["id"]] = RecordInfo.of(record)
                    offset += len(raw)
        if torn_at is not None:
            with open(self.path, "r+b") as handle:
                handle.truncate(torn_at)
                handle.flush()
                os.fsync(handle.fileno())
        self._lines, self._infos = lines, infos
        return dict(infos)

    def load(self) -> dict[str, dict[str, Any]]:
        """The records in the file, parsed, by id (first occurrence wins); cuts a torn last line like :meth:`scan`.

        Reads everything into memory: for tools and tests; the runner uses :meth:`scan`.
        """
        self.scan()
        records: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            with open(self.path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if raw.strip():
                        record = self._parse_line(raw, number)
                        records.setdefault(record["id"], record)
        return records

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record as one line: a single write, then flush and fsync."""
        data = (dumps_line(record) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            offset = os.lseek(fd, 0, os.SEEK_END)
            view = memoryview(data)
            while view:  # one write(2) for the whole line unless the kernel takes less
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if self._lines is not None:
            self._lines.append((record["id"], offset, len(data)))
            self._infos.setdefault(record["id"], RecordInfo.of(record))

    def finalize(self) -> list[RecordInfo]:
        """Rewrite the file atomically with one line per id, sorted by id (skipped when it already is).

        Returns:
            The records' infos in id order.
        """
        if self._lines is None:
            self.scan()
        assert self._lines is not None
        first: dict[str, tuple[str, int, int]] = {}
        for entry in self._lines:
            first.setdefault(entry[0], entry)
        ordered = sorted(first.values(), key=lambda e: session_sort_key(e[0]))
        if ordered != self._lines:
            directory = self.path.parent
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
            try:
                with os.fdopen(fd, "wb") as out, open(self.path, "rb") as source:
                    lines, offset = [], 0
                    for session_id, start, length in ordered:
                        source.seek(start)
                        out.write(source.read(length))
                        lines.append((session_id, offset, length))
                        offset += length
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                raise
            self._lines = lines
        elif not self.path.exists():
            atomic_write_text(self.path, "")
        return [self._infos[session_id] for session_id, _, _ in ordered]


# --------------------------------------------------------------------------- one session


def recorded_model_name(context: Any) -> str:
    """The ``model_name`` that records of ``context`` carry."""
    from models import model_name_for

    return context.model_name or model_name_for(context.model)


@dataclass(frozen=True)
class Prices:
    """Model prices in USD per million tokens (``--price-input`` / ``--price-output``)."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for the given token counts, rounded to 1e-6."""
        return round((input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1e6, 6)


@dataclass
class SessionOutcome:
    """One session run by :func:`run_session`.

    Attributes:
        session_id: the session.
        record: the docs/evaluation.md §5 line with its ``"usage"`` key, or ``None`` after an infrastructure error.
        error: the ``errors.jsonl`` entry after an infrastructure error, else ``None``.
        usage: the session's accounting (see the module doc).
    """

    session_id: str
    record: dict[str, Any] | None
    error: dict[str, Any] | None
    usage: dict[str, Any]


def _graph_config(session: Mapping[str, Any], context: Any) -> dict[str, Any]:
    return session_run_config(
        kind="eval",
        session_id=session["id"],
        dataset=context.dataset or None,
        model=context.model,
        language="en",
        settings=context_settings(context, exclude=("model", "dataset")),
    )


async def run_session(graph: Any, session: Mapping[str, Any], context: Any, *, prices: Prices | None = None) -> SessionOutcome:
    """Run one session through the evaluation graph, with per-session accounting.

    Args:
        graph: the compiled evaluation graph (``graphs.evaluation.graph``).
        session: a dataset line.
        context: an ``EvaluationContext``.
        prices: when given, ``usage`` gets ``cost_usd``.

    Returns:
        A :class:`SessionOutcome`: a record (``{"id", "model_name", "result", "usage"}``),
        where a graph exception other than a failed model request gives
        ``result = "Error during inference: <message>"`` and ``error_detail`` (so does a model
        request the provider refused with HTTP 400/413/422, ``ModelRequestError.rejected``);
        or, when a model request failed for good otherwise (``ModelRequestError``), no
        record and an ``errors.jsonl`` entry ``{"id", "model_name", "error",
        "attempts", "errors", "where", "usage"}``. Never raises for a failing
        model or endpoint; ``asyncio.CancelledError`` and ``KeyboardInterrupt`` propagate.
    """
    from models.transport import ModelRequestError, usage_scope

    started = time.perf_counter()
    record: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    with usage_scope() as counted:
        try:
            output = await graph.ainvoke({"session": dict(session)}, context=context, config=_graph_config(session, context))
            record = dict(output["record"])
        except ModelRequestError as exc:
            if exc.rejected:  # the provider refused this request's content: the model's limit, scored (docs/evaluation.md §5)
                record = error_record(session["id"], recorded_model_name(context), str(exc), scoring=_scoring(context))
                record["error_detail"] = f"{type(exc).__name__}: {exc}"
            else:  # infrastructure: nothing to score, run again on resume
                error = {
                    "id": session["id"],
                    "model_name": recorded_model_name(context),
                    "error": str(exc),
                    "attempts": exc.attempts,
                    "errors": exc.errors,
                    "where": exc.where,
                }
        except Exception as exc:  # noqa: BLE001 - any other failure of one session is recorded, the run goes on
            record = error_record(session["id"], recorded_model_name(context), str(exc), scoring=_scoring(context))
            record["error_detail"] = f"{type(exc).__name__}: {exc}"
    usage = counted.as_dict()
    usage["wall_time"] = round(time.perf_counter() - started, 6)
    if prices is not None:
        usage["cost_usd"] = prices.cost(usage["input_tokens"], usage["output_tokens"])
    if record is not None:
        record["usage"] = usage
        record = redact_record(record)
    else:
        error = redact_record({**error, "usage": usage})
    return SessionOutcome(session["id"], record, error, usage)


async def evaluate_session(graph: Any, session: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Run one session through the evaluation graph; return its docs/evaluation.md §5 record (with ``"usage"``).

    See :func:`run_session`; used where a record is always needed (LangSmith experiments).

    Raises:
        models.transport.ModelRequestError: a model request failed for
            good (an infrastructure error: there is nothing to score).
    """
    from models.transport import ModelRequestError

    outcome = await run_session(graph, session, context)
    if outcome.record is None:
        error = outcome.error or {}
        raise ModelRequestError(error.get("attempts", 0), error.get("errors", []), True, error.get("where", {}))
    return outcome.record


# --------------------------------------------------------------------------- the run


@dataclass
class RunSummary:
    """What :func:`arun_eval` did.

    Attributes:
        result_path: the result file.
        selected: sessions asked for.
        skipped: of those, already in the result file (resume).
        evaluated: sessions run now that got a record.
        inference_errors: ids whose record is ``"Error during inference: ..."`` (this run and earlier ones).
        infrastructure_errors: ``errors.jsonl`` entries of this run (sessions without a record, re-run on resume).
        retried_requests: requests of this run that needed more than one try, each
            ``{"id", "task", "step", "attempts", "errors", "waited", "ok"}``.
        tasks / tasks_correct: tasks in the selected sessions' records and how many are action-name correct.
        requests / attempts / input_tokens / output_tokens: model requests of this run (all sessions run now,
            infrastructure errors included), their tries, and provider-reported tokens.
        cost_usd: cost of this run when prices were given, else ``None``.
        wall_time: seconds.
        summary_path: ``DIR/summary.json``.
    """

    result_path: Path
    selected: int = 0
    skipped: int = 0
    evaluated: int = 0
    inference_errors: list[str] = field(default_factory=list)
    infrastructure_errors: list[dict[str, Any]] = field(default_factory=list)
    retried_requests: list[dict[str, Any]] = field(default_factory=list)
    tasks: int = 0
    tasks_correct: int = 0
    requests: int = 0
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    wall_time: float = 0.0
    summary_path: Path | None = None

    def add_usage(self, session_id: str, usage: Mapping[str, Any]) -> None:
        """Add one session's accounting (this run)."""
        self.requests += int(usage.get("requests", 0))
        self.attempts += int(usage.get("attempts", 0))
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))
        self.retried_requests.extend({"id": session_id, **entry} for entry in usage.get("retried_requests", []))


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
    prices: Prices | None = None,
) -> RunSummary:
    """Evaluate ``sessions`` with ``context``'s model into ``out_dir/result.jsonl``.

    Args:
        sessions: dataset lines to evaluate (see :func:`select_sessions`).
        context: an ``EvaluationContext`` (model spec and settings, retry policy, step limit).
        out_dir: output directory (created).
        concurrency: sessions in flight at once (>= 1).
        overwrite: delete an existing ``result.jsonl`` / ``errors.jsonl`` first instead of resuming.
        progress: show the progress bar (on stderr).
        graph: the compiled evaluation graph (default ``graphs.evaluation.graph``).
        on_record: called with each new record after it is written.
        prices: USD per million input / output tokens; adds ``cost_usd`` to the accounting.

    Returns:
        A :class:`RunSummary`, also written to ``out_dir/summary.json``.

    Raises:
        ValueError: ``concurrency < 1``; a malformed existing result file; an
            existing result file written for another model, or for another dataset
            file or another version of it (``run.json``; use ``--overwrite`` or
            another directory).
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
        raise RuntimeError(
            f"another `wtb eval` is already writing to {out} (lock {out / LOCK_FILE} is held); "
            "wait for it to finish or use another --out"
        ) from None
    try:
        return await _run_locked(sessions, context, out, concurrency, overwrite, progress, graph, on_record, prices)
    finally:
        lock.release()


def dataset_identity(path: str | os.PathLike[str] | None) -> dict[str, str] | None:
    """``{"dataset": absolute path, "dataset_sha256": hex digest of the file}``, or ``None`` without a file.

    Records are matched to sessions by id on resume, and ids repeat across datasets
    (``wild_tool_bench_0`` ...), so the directory remembers which file its results belong to.
    """
    if not path or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"dataset": str(Path(path).resolve()), "dataset_sha256": digest.hexdigest()}


def _scoring(context: Any) -> str:
    """The scoring mode of ``context`` (``reference`` when it has none; docs/fixed-mode.md §1)."""
    return getattr(context, "scoring", "reference") or "reference"


def _mixing_modes_message(where: Path, found: str, wanted: str) -> str:
    return (
        f"{where} holds results of --scoring {found}, not --scoring {wanted}; a run directory never mixes "
        "scoring modes: use another --out directory (or --overwrite to start it again)"
    )


def _check_run_identity(out: Path, context: Any, model_name: str, has_results: bool) -> None:
    """Refuse to resume results made on another dataset or in another scoring mode; record this run's identity in ``RUN_FILE``.

    Raises:
        ValueError: ``out`` holds results whose ``run.json`` names a dataset with other content,
            or another scoring mode.
    """
    path = out / RUN_FILE
    recorded: dict[str, Any] = {}
    if has_results and path.exists():
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(path.read_text(encoding="utf-8"))
            recorded = loaded if isinstance(loaded, dict) else {}
    mode = _scoring(context)
    if has_results and recorded and recorded.get("scoring", "reference") != mode:
        raise ValueError(_mixing_modes_message(out, str(recorded.get("scoring", "reference")), mode))
    identity = dataset_identity(getattr(context, "dataset", None))
    if identity is None:
        return
    if recorded.get("dataset_sha256") not in (None, identity["dataset_sha256"]):
        same_file = recorded.get("dataset") == identity["dataset"]
        raise ValueError(
            f"{out / RESULT_FILE} holds results for "
            + ("an earlier version of " if same_file else "another dataset, ")
            + f"{recorded.get('dataset')} (sha256 {str(recorded['dataset_sha256'])[:12]}...), not "
            f"{identity['dataset']} (sha256 {identity['dataset_sha256'][:12]}...); session ids repeat across "
            "datasets, so resuming would mix them: use --overwrite or another --out directory"
        )
    write_json_atomic(path, {**identity, "model_name": model_name, "scoring": mode})


def _latest_errors(path: Path, done: set[str]) -> list[dict[str, Any]]:
    """Entries of ``errors.jsonl``: the latest per session, only sessions still without a record, sorted by id."""
    if not path.exists():
        return []
    latest: dict[str, dict[str, Any]] = {}
    text = path.read_text(encoding="utf-8")
    for line in text[: text.rfind("\n") + 1].splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"] not in done:
            latest[entry["id"]] = entry
    return sorted(latest.values(), key=lambda e: session_sort_key(e["id"]))


async def _run_locked(sessions, context, out, concurrency, overwrite, progress, graph, on_record, prices) -> RunSummary:
    started = time.perf_counter()
    results = ResultFile(out / RESULT_FILE)
    errors = ResultFile(out / ERRORS_FILE)
    if overwrite:
        for path in (results.path, errors.path):
            if path.exists():
                path.unlink()
    done = results.scan()
    with contextlib.suppress(ValueError):  # errors.jsonl is a log: a bad line there never blocks a run
        errors.scan()  # cuts a torn last line
    model_name = recorded_model_name(context)
    others = sorted({str(r.model_name) for r in done.values() if r.model_name not in (None, model_name)})
    if others:
        raise ValueError(
            f"{results.path} holds results of model {', '.join(map(str, others))}, not {model_name!r}; "
            "use --overwrite or another --out directory"
        )
    modes = sorted({r.scoring for r in done.values() if r.scoring != _scoring(context)})
    if modes:
        raise ValueError(_mixing_modes_message(results.path, ", ".join(modes), _scoring(context)))
    _check_run_identity(out, context, model_name, bool(done) or errors.path.exists())

    summary = RunSummary(result_path=results.path, selected=len(sessions), summary_path=out / SUMMARY_FILE)
    todo = [s for s in sessions if s["id"] not in done]
    summary.skipped = len(sessions) - len(todo)
    for session in sessions:
        info = done.get(session["id"])
        if info is not None:
            summary.tasks += info.tasks
            summary.tasks_correct += info.correct
            if info.inference_error:
                summary.inference_errors.append(info.id)

    queue: asyncio.Queue[Mapping[str, Any]] = asyncio.Queue()
    for session in todo:
        queue.put_nowait(session)

    # Appends (write + fsync) run in a thread so a slow disk never stalls the sessions in flight;
    # the lock keeps one append at a time, in the order the index records them.
    writing = asyncio.Lock()

    async def write(file: ResultFile, line: Mapping[str, Any]) -> None:
        async with writing:
            await asyncio.to_thread(file.append, line)

    with _Progress(progress, len(sessions), summary.skipped, summary.tasks, summary.tasks_correct, model_name) as bar:

        async def worker() -> None:
            while True:
                try:
                    session = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                outcome = await run_session(graph, session, context, prices=prices)
                summary.add_usage(outcome.session_id, outcome.usage)
                if outcome.record is None:
                    await write(errors, outcome.error or {"id": outcome.session_id})
                    summary.infrastructure_errors.append(outcome.error or {"id": outcome.session_id})
                    bar.advance(0, 0)
                    continue
                record = outcome.record
                await write(results, record)
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

    records = results.finalize()
    remaining = _latest_errors(errors.path, {r.id for r in records})
    if errors.path.exists() or remaining:
        atomic_write_text(errors.path, "".join(dumps_line(e) + "\n" for e in remaining))
    summary.inference_errors.sort(key=session_sort_key)
    summary.infrastructure_errors.sort(key=lambda e: session_sort_key(e["id"]))
    summary.retried_requests.sort(key=lambda e: session_sort_key(e["id"]))
    summary.wall_time = time.perf_counter() - started
    if prices is not None:
        summary.cost_usd = prices.cost(summary.input_tokens, summary.output_tokens)
    write_json_atomic(summary.summary_path, summary_json(summary, model_name, records, sessions, prices))
    return summary


def _usage_totals(usages: Iterable[Mapping[str, Any]], prices: Prices | None) -> dict[str, Any]:
    totals = {"sessions": 0, "requests": 0, "attempts": 0, "failed_requests": 0, "input_tokens": 0, "output_tokens": 0}
    for usage in usages:
        totals["sessions"] += 1
        for key in ("requests", "attempts", "failed_requests", "input_tokens", "output_tokens"):
            totals[key] += int(usage.get(key, 0) or 0)
    if prices is not None:
        totals["cost_usd"] = prices.cost(totals["input_tokens"], totals["output_tokens"])
    return totals


def summary_json(
    summary: RunSummary,
    model_name: str,
    records: Sequence[RecordInfo],
    sessions: Sequence[Mapping[str, Any]],
    prices: Prices | None,
) -> dict[str, Any]:
    """The content of ``DIR/summary.json``.

    ``this_run`` counts the sessions run by this invocation (infrastructure
    errors included); ``selected_sessions`` sums the ``usage`` of every record
    of the selected sessions in the result file, earlier runs included (cost at
    this run's prices).
    """
    selected = {s["id"] for s in sessions}
    this_run = {
        "sessions": summary.evaluated + len(summary.infrastructure_errors),
        "requests": summary.requests,
        "attempts": summary.attempts,
        "input_tokens": summary.input_tokens,
        "output_tokens": summary.output_tokens,
    }
    if summary.cost_usd is not None:
        this_run["cost_usd"] = summary.cost_usd
    return {
        "model_name": model_name,
        "result_file": str(summary.result_path),
        "selected": summary.selected,
        "evaluated": summary.evaluated,
        "skipped": summary.skipped,
        "tasks": summary.tasks,
        "tasks_correct": summary.tasks_correct,
        "wall_time": round(summary.wall_time, 3),
        "prices_usd_per_million_tokens": (
            {"input": prices.input_per_million, "output": prices.output_per_million} if prices is not None else None
        ),
        "this_run": this_run,
        "selected_sessions": _usage_totals(
            (r.usage for r in records if r.id in selected), prices
        ),
        "inference_errors": summary.inference_errors,
        "infrastructure_errors": [
            {k: e.get(k) for k in ("id", "error", "attempts", "where")} for e in summary.infrastructure_errors
        ],
        "retried_requests": summary.retried_requests,
    }


def run_eval(*args: Any, **kwargs: Any) -> RunSummary:
    """Synchronous wrapper of :func:`arun_eval` (runs its own event loop)."""
    return asyncio.run(arun_eval(*args, **kwargs))
