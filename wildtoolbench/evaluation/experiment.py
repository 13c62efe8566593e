"""``wtb eval --langsmith-dataset NAME``: the evaluation run as a LangSmith experiment (issue 5).

Not a sub-command of its own: :func:`wildtoolbench.evaluation.command.evaluate` calls :func:`run_langsmith_experiment`
when the option is given. The logic lives in :mod:`wildtoolbench.tracing.experiments`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from wildtoolbench.common.exits import InfrastructureErrors
from wildtoolbench.common.files import write_jsonl_atomic
from wildtoolbench.common.table import metric_table
from wildtoolbench.graphs.evaluation import graph
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import ERRORS_FILE, RESULT_FILE, evaluate_session, session_sort_key
from wildtoolbench.runner.identity import candidate_identity
from wildtoolbench.scoring.run import score_run
from wildtoolbench.tracing import context_settings
from wildtoolbench.tracing.experiments import make_experiment_client, run_experiment

_err = Console(stderr=True, highlight=False, soft_wrap=True)


def run_langsmith_experiment(
    sessions: Sequence[Mapping[str, Any]],
    context: EvaluationContext,
    dataset_path: Path,
    out: Path,
    langsmith_dataset: str,
    concurrency: int,
    tasks: int = 4,
) -> Path:
    """Upload ``sessions`` to LangSmith dataset ``langsmith_dataset``, evaluate them there, write the run files.

    Args:
        sessions: selected dataset lines.
        context: the ``EvaluationContext`` (model spec and settings; recorded as experiment metadata).
        dataset_path: the local dataset file (for scoring and metadata).
        out: output folder: ``result.jsonl`` (every selected session with a record, sorted by id),
            ``score.jsonl``, ``metric.json``, and ``errors.jsonl`` for the sessions that hit an
            infrastructure error; written atomically. Unlike a local run, an experiment always runs
            every selected session (it does not resume).
        langsmith_dataset: LangSmith dataset name.
        concurrency: sessions evaluated at once.

    Returns:
        The path of ``result.jsonl``.

    Raises:
        RuntimeError: LangSmith is not configured (no API key) or an API call failed.
        InfrastructureErrors: some sessions hit infrastructure errors (a refused connection, a missing key,
            HTTP 401/403/404, timeouts: the fault rule of docs/guides/faults.md), listed on stderr and in
            ``errors.jsonl``, not scored (exit 3, after the others are written and scored).
    """
    if not (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")):
        raise RuntimeError(
            "--langsmith-dataset needs LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a self-hosted LangSmith)"
        )

    async def run_session(session: dict[str, Any]) -> dict[str, Any]:
        return await evaluate_session(graph, session, context)

    async def main() -> Any:
        client = make_experiment_client()
        try:
            return await run_experiment(
                sessions=list(sessions),
                dataset_name=langsmith_dataset,
                model=context.model,
                run_session=run_session,
                settings={
                    **context_settings(context, exclude=("model", *context.candidate.unapplied_settings)),
                    "dataset_file": str(dataset_path),
                },
                client=client,
                max_concurrency=concurrency,
                candidate=candidate_identity(context),
            )
        finally:
            client.flush()

    try:
        outcome = asyncio.run(main())
    except Exception as exc:  # langsmith raises its own error types; report them as a CLI error
        if isinstance(exc, (OSError, ValueError, RuntimeError)):
            raise
        raise RuntimeError(f"LangSmith experiment failed: {type(exc).__name__}: {exc}") from exc
    out.mkdir(parents=True, exist_ok=True)
    result_path = out / RESULT_FILE
    records = sorted(outcome.records.values(), key=lambda r: session_sort_key(r["id"]))
    write_jsonl_atomic(result_path, records)
    errors = outcome.infrastructure_errors
    if errors:
        write_jsonl_atomic(out / ERRORS_FILE, errors)
    else:
        (out / ERRORS_FILE).unlink(missing_ok=True)
    _err.print(
        f"LangSmith experiment [bold]{outcome.experiment_name}[/bold] on dataset {langsmith_dataset!r}: "
        f"{len(outcome.upload.created)} example(s) uploaded, {len(outcome.upload.existing)} already there; "
        f"{len(records)} session(s) -> {result_path}"
    )
    if records:
        metric = score_run(dataset_path, result_path, out, tasks=tasks)
        Console().print(metric_table(metric))
    if errors:
        lines = [
            f"infrastructure errors in {len(errors)} sessions (not scored, no feedback; kept in {out / ERRORS_FILE}; "
            "run the same command again for a new experiment):"
        ]
        lines += [f"  {entry['id']}: {entry['error']}" for entry in errors[:20]]
        if len(errors) > 20:
            lines.append(f"  ... and {len(errors) - 20} more (see {out / ERRORS_FILE})")
        raise InfrastructureErrors(*lines)
    return result_path
