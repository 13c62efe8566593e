"""``wtb generate``: new benchmark sessions from real tool lists with the generation graph (SPEC 5)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import List, Optional

import typer

from wtb.cli import app
from wtb.cli.data import named_tools, pull_option
from bench.generation import GenerationInputError, load_tool_lists, plan_sessions, select_type_paths
from models import DEFAULT_MODEL


def default_concurrency(context) -> int:
    """Sessions in flight when ``--concurrency`` is not given: the lowest concurrency any role's provider
    advertises (``models.max_concurrency``; 1 for a local llama.cpp server), else 4."""
    from graphs.generation_context import ROLES
    from models import max_concurrency

    specs = [*context.user_models, *(context.model_spec(r) for r in ROLES if r != "user")]
    limits = [limit for spec in specs if spec and (limit := max_concurrency(spec)) is not None]
    return min(limits, default=4)


@app.command("generate")
def generate(
    tools: Path = typer.Option(..., "--tools", help="Tool-list file: JSON Lines, one OpenAI tool list per line; or wildtoolbench-en / wildtoolbench-zh (the official lists, see `wtb data pull`)."),
    out: Path = typer.Option(..., "--out", help="Output folder (sessions.jsonl, failures.jsonl, per-session files)."),
    layers: int = typer.Option(4, "--layers", min=1, help="Tasks per session = depth of the task-type tree."),
    paths: Optional[List[str]] = typer.Option(
        None, "--paths", help="Type path to generate, e.g. ST,MT,CQ,CC (repeatable). Default: the whole tree."
    ),
    samples: Optional[int] = typer.Option(None, "--samples", min=1, help="Number of sessions: paths sampled from the tree."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random choice (paths, tool lists, dates, variants)."),
    language: str = typer.Option("en", "--language", help="Session language: en or zh."),
    year: int = typer.Option(2024, "--year", help="Year of the random environment date."),
    user_model: Optional[List[str]] = typer.Option(
        None, "--user-model", help=f"User model spec (repeatable; one per session). Default {DEFAULT_MODEL}."
    ),
    planner_model: str = typer.Option(DEFAULT_MODEL, "--planner-model", help="Planner model spec."),
    tool_model: str = typer.Option(DEFAULT_MODEL, "--tool-model", help="Tool-simulator model spec."),
    agent_model: str = typer.Option(DEFAULT_MODEL, "--agent-model", help="Agent model spec."),
    checker_model: str = typer.Option(
        DEFAULT_MODEL, "--checker-model", help="Checker model spec; 'none' = rule checks only."
    ),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible base URL for every role."),
    user_base_url: Optional[str] = typer.Option(None, "--user-base-url", help="Base URL of the user model."),
    planner_base_url: Optional[str] = typer.Option(None, "--planner-base-url", help="Base URL of the planner model."),
    tool_base_url: Optional[str] = typer.Option(None, "--tool-base-url", help="Base URL of the tool model."),
    agent_base_url: Optional[str] = typer.Option(None, "--agent-base-url", help="Base URL of the agent model."),
    checker_base_url: Optional[str] = typer.Option(None, "--checker-base-url", help="Base URL of the checker model."),
    temperature: float = typer.Option(0.7, "--temperature", help="Sampling temperature of every role."),
    concurrency: Optional[int] = typer.Option(
        None,
        "--concurrency",
        min=1,
        help="Sessions generated at once. Default: 4, or the lowest limit a role's provider advertises "
        "(1 when a role runs on 'local' or 'gguf:').",
    ),
    max_retries: int = typer.Option(3, "--max-retries", min=1, help="Tries per planner decision / tool result."),
    max_steps: int = typer.Option(8, "--max-steps", min=1, help="Most planner steps per task."),
    vague_rate: float = typer.Option(0.25, "--vague-rate", min=0.0, max=1.0, help="Share of vague first answers."),
    timeout: float = typer.Option(120.0, "--timeout", min=0.001, help="Per-request timeout of every role model, seconds."),
    max_attempts: int = typer.Option(
        5, "--max-attempts", min=1, help="Tries per role-model request on HTTP 429/5xx, timeouts, dropped connections."
    ),
    backoff: float = typer.Option(1.0, "--backoff", min=0.0, help="First retry wait in seconds (doubles, plus jitter)."),
    rps: float = typer.Option(0.0, "--rps", min=0.0, help="Requests per second to each role endpoint (0 = no limit)."),
    no_trace: bool = typer.Option(
        False, "--no-trace", help="Do not send LangSmith traces for this run, even with LANGSMITH_TRACING=true."
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Generate every session again instead of keeping the ones an earlier run of this command finished."
    ),
    show_progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar with the role being asked (on a terminal)."
    ),
    pull: bool = pull_option(),
) -> None:
    """Generate sessions: one per type path, each on one tool list, written to --out.

    Running the same command again on the same --out resumes: sessions that finished (done, or failed
    because of the models' output) are kept; interrupted ones and infrastructure failures run again.
    """
    from wtb.generation_runner import run_batch
    from graphs.generation_context import Context

    tools = named_tools(tools, pull)
    try:
        tool_lists = load_tool_lists(tools)
        type_paths = select_type_paths(layers, paths, samples, seed)
        users = list(user_model or [DEFAULT_MODEL])
        plans = plan_sessions(tool_lists, type_paths, seed=seed, language=language, year=year, user_models=len(users))
    except (GenerationInputError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    context = Context(
        user_models=users,
        planner_model=planner_model,
        tool_model=tool_model,
        agent_model=agent_model,
        checker_model="" if checker_model.lower() in ("", "none") else checker_model,
        base_url=base_url,
        user_base_url=user_base_url,
        planner_base_url=planner_base_url,
        tool_base_url=tool_base_url,
        agent_base_url=agent_base_url,
        checker_base_url=checker_base_url,
        temperature=temperature,
        max_retries=max_retries,
        max_steps=max_steps,
        vague_answer_rate=vague_rate,
        request_timeout=timeout,
        max_attempts=max_attempts,
        backoff=backoff,
        rps=rps,
    )
    if concurrency is None:
        concurrency = default_concurrency(context)
    settings = {
        "tools": str(tools), "layers": layers, "paths": paths, "samples": samples, "seed": seed,
        "language": language, "year": year, "concurrency": concurrency,
    }

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from nodes._roles import ROLE_REQUEST_LISTENER

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    bar = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, disable=not (show_progress and console.is_terminal),
    )
    bar_task = bar.add_task("starting", total=len(plans))
    requests = {"count": 0}

    def on_request(session_id: str, role: str, task_index: int) -> None:
        requests["count"] += 1
        bar.update(bar_task, description=f"{session_id} task {task_index + 1}: {role} (request {requests['count']})")

    def progress(outcome) -> None:
        path = "-".join(outcome.plan.type_path)
        detail = "" if outcome.status == "done" else f": {outcome.reason}"
        kept_note = " (kept from an earlier run)" if outcome.reused else ""
        console.print(f"{outcome.plan.key} {path} {outcome.status}{detail}{kept_note}", markup=False)
        bar.advance(bar_task)

    from wtb.cli._interrupt import resumable_run
    from wtb.generation_runner import OUTCOME_FILE
    from wtb.tracing import tracing_scope

    def kept() -> str:
        done = sum(1 for plan in plans if (out / "sessions" / plan.key / OUTCOME_FILE).exists())
        if not done:
            return f"none of the {len(plans)} sessions had finished"
        return f"{done} of {len(plans)} sessions are finished under {out / 'sessions'}"

    listening = ROLE_REQUEST_LISTENER.set(on_request)
    try:
        with resumable_run(kept), tracing_scope(no_trace=no_trace), bar:
            summary = asyncio.run(
                run_batch(plans, context, out, concurrency=concurrency, settings=settings, on_done=progress,
                          overwrite=overwrite)
            )
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    finally:
        ROLE_REQUEST_LISTENER.reset(listening)
    if summary.reused:
        typer.echo(f"resumed: kept {summary.reused} session(s) finished by an earlier run (--overwrite redoes them)", err=True)
    typer.echo(
        f"generated {summary.succeeded} session(s), {summary.failed} failed -> {summary.sessions_file} "
        f"(failures: {summary.failures_file}, oracle replay: {summary.replay_file})"
    )
    if summary.retried_requests:
        typer.echo(f"model requests {summary.requests} ({summary.attempts} tries); retried requests: "
                   f"{len(summary.retried_requests)} (listed in manifest.json)", err=True)
    if summary.succeeded == 0:
        raise typer.Exit(1)
