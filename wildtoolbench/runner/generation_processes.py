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
from pathlib import Path
from typing import Any

from wildtoolbench.bench.generation import SessionPlan
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.runner.child_pool import Child, ChildPool, open_stdin, protocol_stdout
from wildtoolbench.runner.generation_outcome import GenerationOutcome


def plan_from_json(data: dict[str, Any]) -> SessionPlan:
    """The :class:`SessionPlan` of its JSON form (``dataclasses.asdict``; lists back to tuples)."""
    tuples = ("type_path", "mt_variants", "strategies")
    return SessionPlan(**{k: tuple(v) if k in tuples else v for k, v in data.items()})


def _failed(plan: SessionPlan, reason: str) -> GenerationOutcome:
    """An infrastructure failure for a session no worker process finished (generated again on resume)."""
    return GenerationOutcome(plan, "failed", reason, {}, infrastructure=True, usage={"requests": 0, "attempts": 0})


class GenerationProcesses(ChildPool):
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

    module = "wildtoolbench.runner.generation_processes"
    bad_reply = (ValueError, KeyError, TypeError)

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
        super().__init__(workers)
        self.context, self.out = context, Path(out_dir)
        self.concurrency, self.roles, self.no_trace = concurrency, list(roles or []), no_trace

    def header(self) -> dict[str, Any]:
        """The run's context (``rps`` shared out), ``--roles``, output folder, ``no_trace``, each child's concurrency."""
        fields = {f.name: getattr(self.context, f.name) for f in dataclasses.fields(self.context)}
        if fields.get("rps"):  # the rate limit is the run's: each process keeps its share
            fields["rps"] = fields["rps"] / self.workers
        return {
            "context": fields,
            "roles": self.roles,
            "out": str(self.out),
            "no_trace": self.no_trace,
            "concurrency": max(1, -(-self.concurrency // self.workers)),
        }

    def result(self, answer: dict[str, Any], key: Any) -> GenerationOutcome:
        """The :class:`GenerationOutcome` (``written``) of the plan ``key`` from its answer line.
        Raises KeyError, ValueError or TypeError for a missing or mistyped field."""
        return GenerationOutcome(
            key,
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

    def lost(self, child: Child, key: Any, reason: str) -> GenerationOutcome:
        """The plan ``key``'s infrastructure failure (generated again on resume)."""
        return _failed(key, reason)

    async def __call__(self, plan: SessionPlan, context: Context) -> GenerationOutcome:
        """Generate ``plan``'s session in the child with the fewest sessions in flight; resolves to its outcome
        (``written``: its files are on disk). ``context`` must be the one given to the constructor."""
        child = self.least_busy()
        if child is None:
            return _failed(plan, "every worker process has exited")
        data = dataclasses.asdict(plan)
        return await self.send(
            child, plan, lambda n: json.dumps({"n": n, "plan": data}, ensure_ascii=False).encode() + b"\n"
        )


# --------------------------------------------------------------------------- the child


async def _child_main(out_stream: Any) -> None:
    from wildtoolbench.models.transport import http_clients
    from wildtoolbench.nodes.generation.registry import added_roles, load_role_modules
    from wildtoolbench.runner.generation import generate_session, write_session_files
    from wildtoolbench.runner.generation_outcome import write_outcome
    from wildtoolbench.tracing import tracing_scope

    reader, header = await open_stdin()
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
    out_stream = protocol_stdout()  # Ctrl-C ignored; any other stdout output goes to stderr
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
