"""Sessions generated in worker processes (``wtb generate --workers N``, docs/generation.md §12).

:class:`GenerationProcesses` is the ``invoke`` hook of :func:`wildtoolbench.runner.generation.run_batch`: it hands
each planned session to one of ``workers`` child processes (``python -m wildtoolbench.runner.generation_processes``),
each running the generation graph on its own event loop with
:func:`~wildtoolbench.runner.generation.generate_session`. The child writes the session's own files
(``sessions/<key>/``: transcripts, captured requests, ``outcome.json``; ``transcripts/<key>.jsonl``) as one
process does, and answers with the outcome without its state (``written``): the calling process keeps the
concurrency, resume (``outcome.json``), the progress display and the run's files (``sessions.jsonl``,
``manifest.json``, ...), so the outputs are those of one process.

Protocol (JSON Lines over the child's stdin / stdout): first ``{"context": {...}, "roles": [...], "out": path,
"no_trace": bool, "concurrency": n}``, then one ``{"n": k, "plan": {...}}`` per session; the child answers
``{"n": k, "status", "reason", "session", "infrastructure", "usage", "seconds", "yields"}`` as each session ends,
in any order, and exits at the end of its stdin. A child that exits leaves its sessions in flight failed as
infrastructure failures (the same command generates them again) and takes no more. A request rate limit
(``rps``) is shared out: each child gets ``rps / workers``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from typing_extensions import Self

from wildtoolbench.bench.generation import SessionPlan
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.runner.generation_outcome import GenerationOutcome

_LINE_LIMIT = 1 << 30
"""Longest protocol line (a plan or an outcome) in bytes."""


def plan_from_json(data: dict[str, Any]) -> SessionPlan:
    """The :class:`SessionPlan` of its JSON form (``dataclasses.asdict``; lists back to tuples)."""
    tuples = ("type_path", "mt_variants", "strategies")
    return SessionPlan(**{k: tuple(v) if k in tuples else v for k, v in data.items()})


def _failed(plan: SessionPlan, reason: str) -> GenerationOutcome:
    """An infrastructure failure for a session no worker process finished (generated again on resume)."""
    return GenerationOutcome(plan, "failed", reason, {}, infrastructure=True, usage={"requests": 0, "attempts": 0})


@dataclasses.dataclass
class _Child:
    process: asyncio.subprocess.Process
    pending: dict[int, tuple[asyncio.Future[GenerationOutcome], SessionPlan]] = dataclasses.field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    alive: bool = True
    exit_reason: str = ""


class GenerationProcesses:
    """Generate sessions in ``workers`` child processes (module doc); use as an async context manager.

    Args:
        workers: child processes (>= 1).
        context: the run's generation context (every session runs with it).
        out_dir: the run's output folder (each child writes its sessions' files there).
        concurrency: sessions in flight over all children.
        roles: ``--roles`` modules each child loads (added roles), as the calling process did.
        no_trace: turn LangSmith tracing off in the children (``--no-trace``).

    Raises:
        ValueError: ``workers < 1``.
    """

    def __init__(
        self,
        workers: int,
        context: Context,
        out_dir: str | os.PathLike[str],
        *,
        concurrency: int,
        roles: list[str] | None = None,
        no_trace: bool = False,
    ):
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        self.workers, self.context, self.out = workers, context, Path(out_dir)
        self.concurrency, self.roles, self.no_trace = concurrency, list(roles or []), no_trace
        self.children: list[_Child] = []
        self._next = 0

    async def __aenter__(self) -> Self:
        fields = {f.name: getattr(self.context, f.name) for f in dataclasses.fields(self.context)}
        if fields.get("rps"):  # the rate limit is the run's: each process keeps its share
            fields["rps"] = fields["rps"] / self.workers
        header = {
            "context": fields,
            "roles": self.roles,
            "out": str(self.out),
            "no_trace": self.no_trace,
            "concurrency": max(1, -(-self.concurrency // self.workers)),
        }
        line = json.dumps(header, ensure_ascii=False).encode() + b"\n"
        try:
            for _ in range(self.workers):
                process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "wildtoolbench.runner.generation_processes",
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    limit=_LINE_LIMIT,
                )
                child = _Child(process)
                self.children.append(child)
                assert process.stdin is not None
                process.stdin.write(line)
                child.reader = asyncio.create_task(self._read(child))
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every child's stdin and wait for the children to exit (killed after 10 s)."""
        for child in self.children:
            stdin = child.process.stdin
            if stdin is not None and not stdin.is_closing():
                stdin.close()
        for child in self.children:
            try:
                await asyncio.wait_for(child.process.wait(), 10)
            except asyncio.TimeoutError:
                child.process.kill()
                await child.process.wait()
            if child.reader is not None:
                child.reader.cancel()
                await asyncio.gather(child.reader, return_exceptions=True)

    async def _read(self, child: _Child) -> None:
        stdout = child.process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                answer = json.loads(line)
                future, plan = child.pending.pop(answer["n"])
                outcome = GenerationOutcome(
                    plan,
                    str(answer["status"]),
                    str(answer.get("reason") or ""),
                    {},
                    answer.get("session"),
                    bool(answer.get("infrastructure")),
                    dict(answer.get("usage") or {}),
                    seconds=float(answer.get("seconds") or 0.0),
                    yields=dict(answer.get("yields") or {}),
                    rules=[str(r) for r in answer.get("rules") or []],
                    written=True,
                )
                if not future.done():
                    future.set_result(outcome)
        except (ValueError, KeyError, TypeError) as exc:
            child.exit_reason = f"bad reply from the worker process: {exc}"
            child.process.kill()  # no longer read: it could block writing its next answer
        finally:
            child.alive = False
            code = await child.process.wait()
            reason = child.exit_reason or f"the worker process exited (status {code})"
            for future, plan in child.pending.values():
                if not future.done():
                    future.set_result(_failed(plan, reason))
            child.pending.clear()

    async def __call__(self, plan: SessionPlan, context: Context) -> GenerationOutcome:
        """Generate ``plan``'s session in the child with the fewest sessions in flight; resolves to its outcome
        (``written``: its files are on disk). ``context`` must be the one given to the constructor."""
        alive = [c for c in self.children if c.alive]
        if not alive:
            return _failed(plan, "every worker process has exited")
        child = min(alive, key=lambda c: len(c.pending))
        self._next += 1
        future: asyncio.Future[GenerationOutcome] = asyncio.get_running_loop().create_future()
        child.pending[self._next] = (future, plan)
        assert child.process.stdin is not None
        request = {"n": self._next, "plan": dataclasses.asdict(plan)}
        child.process.stdin.write(json.dumps(request, ensure_ascii=False).encode() + b"\n")
        try:
            await child.process.stdin.drain()
        except (ConnectionError, RuntimeError):
            pass  # the reader resolves the future when the child is gone
        return await future


# --------------------------------------------------------------------------- the child


async def _child_main(out_stream: Any) -> None:
    from wildtoolbench.models.transport import http_clients
    from wildtoolbench.nodes.generation.registry import added_roles, load_role_modules
    from wildtoolbench.runner.generation import generate_session, write_session_files
    from wildtoolbench.runner.generation_outcome import write_outcome
    from wildtoolbench.tracing import tracing_scope

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    header = json.loads(await reader.readline())
    load_role_modules(header["roles"])
    graph = None
    if added_roles():
        from wildtoolbench.graphs.generation import compile_graph

        graph = compile_graph()
    context, out = Context(**header["context"]), Path(header["out"])
    tasks: set[asyncio.Task[None]] = set()

    async def one(n: int, plan: SessionPlan) -> None:
        try:
            outcome = await generate_session(plan, context, graph, live=out / "transcripts" / f"{plan.key}.jsonl")
            write_session_files(out, outcome)
            write_outcome(out, outcome)
        except Exception as exc:  # noqa: BLE001 - this session's infrastructure failure; the worker goes on
            outcome = _failed(plan, f"worker process: {type(exc).__name__}: {exc}")
        answer = {
            "n": n,
            **{k: getattr(outcome, k) for k in ("status", "reason", "session", "infrastructure", "usage")},
            **{k: getattr(outcome, k) for k in ("seconds", "yields", "rules")},
        }
        out_stream.write(json.dumps(answer, ensure_ascii=False, default=str).encode() + b"\n")
        out_stream.flush()

    with tracing_scope(no_trace=header["no_trace"]):
        async with http_clients(header["concurrency"]):
            while line := await reader.readline():
                request = json.loads(line)
                task = asyncio.create_task(one(request["n"], plan_from_json(request["plan"])))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    """Entry point of a worker process (``python -m wildtoolbench.runner.generation_processes``; started by
    :class:`GenerationProcesses`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it closes our stdin
    out_stream = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else written to stdout goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    from wildtoolbench.runner.loop import run

    run(_child_main(out_stream))


if __name__ == "__main__":
    main()


async def run_batch_processes(
    plans: Any,
    context: Context,
    out_dir: str | Path,
    *,
    workers: int,
    concurrency: int = 4,
    no_trace: bool = False,
    roles: list[str] | None = None,
    **kwargs: Any,
) -> Any:
    """:func:`wildtoolbench.runner.generation.run_batch` with every session generated in one of ``workers`` worker
    processes (:class:`GenerationProcesses`); the outputs, resume and summary are those of one process.

    Args:
        plans / context / out_dir / concurrency: as in :func:`~wildtoolbench.runner.generation.run_batch`
            (``concurrency``: sessions in flight over all the workers).
        workers: worker processes (>= 1).
        no_trace: ``--no-trace`` in the workers.
        roles: ``--roles`` modules (added roles) each worker loads.
        kwargs: the other keyword arguments of ``run_batch`` (``settings``, ``on_done``, ``overwrite``,
            ``quality_policy``; ``graph`` is ignored: each worker compiles its own).

    Returns:
        The :class:`~wildtoolbench.runner.generation.GenerationSummary`.

    Raises:
        As ``run_batch``; ValueError: ``workers < 1``.
    """
    from wildtoolbench.runner.generation import run_batch

    kwargs.pop("graph", None)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    async with GenerationProcesses(
        workers, context, out_dir, concurrency=concurrency, roles=roles, no_trace=no_trace
    ) as invoke:
        return await run_batch(plans, context, out_dir, concurrency=concurrency, invoke=invoke, **kwargs)
