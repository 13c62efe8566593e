"""``wtb generate``: new benchmark sessions from real tool lists with the generation graph (docs/generation.md).

Exit status (docs/cli.md §2): 2 for the command line and the run's configuration (a ``--tools`` file that
does not exist, an unknown type path, role or model spec), 1 for a tool-list file whose content is bad
(``file:line: message``), a folder that holds a different run, or no session generated.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from models.registry import DEFAULT_MODEL
from wtb.cli import Lang, app, require_file
from wtb.cli.data import named_tools, pull_option

if TYPE_CHECKING:
    from graphs.generation_context import Context


def default_concurrency(context: Context, roles: Sequence[str]) -> int:
    """Sessions in flight when ``--concurrency`` is not given: the lowest concurrency any role's provider
    advertises (``models.max_concurrency``; 1 for a local llama.cpp server), else 4."""
    from models import max_concurrency

    specs = [*context.user_models, *(context.model_spec(r) for r in roles if r != "user")]
    limits = [limit for spec in specs if spec and (limit := max_concurrency(spec)) is not None]
    return min(limits, default=4)


_ROLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def role_models(values: Sequence[str]) -> dict[str, str]:
    """``--model`` values to a role -> spec mapping: ``ROLE=SPEC`` sets one role, a bare ``SPEC`` every
    built-in role (docs/generation.md). Several ``user=`` values are joined with commas (one per session).

    Raises:
        typer.BadParameter: an empty spec.
    """
    from graphs.generation_context import ROLES

    mapping: dict[str, str] = {}
    for value in values:
        role, sep, spec = value.partition("=")
        if not sep or not _ROLE_NAME.match(role):
            role, spec = "", value
        if not spec.strip():
            raise typer.BadParameter(f"empty model spec in {value!r}", param_hint="--model")
        for name in [role] if role else ROLES:
            if name == "user" and role and "user" in mapping:
                mapping["user"] = f"{mapping['user']},{spec}"
            else:
                mapping[name] = spec
    return mapping


@app.command("generate")
def generate(
    tools: Path = typer.Option(
        ...,
        "--tools",
        help="Tool-list file: JSON Lines, one OpenAI tool list per line; or wildtoolbench-en / wildtoolbench-zh (the official lists, see `wtb data pull`).",
    ),
    out: Path = typer.Option(..., "--out", help="Output folder (sessions.jsonl, failures.jsonl, per-session files)."),
    layers: int = typer.Option(4, "--layers", min=1, help="Tasks per session = depth of the task-type tree."),
    paths: list[str] | None = typer.Option(
        None, "--paths", help="Type path to generate, e.g. ST,MT,CQ,CC (repeatable). Default: the whole tree."
    ),
    samples: int | None = typer.Option(
        None, "--samples", min=1, help="Number of sessions: paths sampled from the tree."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of every random choice (paths, tool lists, dates, variants)."),
    language: Lang = typer.Option(Lang.en, "--language", case_sensitive=False, help="Session language: en or zh."),
    year: int = typer.Option(2024, "--year", help="Year of the random environment date."),
    model: list[str] | None = typer.Option(
        None,
        "--model",
        help="Role model: ROLE=SPEC (repeatable; any role, built-in or added with --roles; 'user=' may repeat, "
        "one per session; SPEC 'none' = no model) or a bare SPEC for every built-in role. A role not given "
        f"uses $WTB_<ROLE>_MODEL, else {DEFAULT_MODEL}.",
    ),
    user_model: list[str] | None = typer.Option(None, "--user-model", help="Same as --model user=SPEC (repeatable)."),
    planner_model: str | None = typer.Option(None, "--planner-model", help="Same as --model planner=SPEC."),
    tool_model: str | None = typer.Option(None, "--tool-model", help="Same as --model tool=SPEC."),
    agent_model: str | None = typer.Option(None, "--agent-model", help="Same as --model agent=SPEC."),
    checker_model: str | None = typer.Option(
        None, "--checker-model", help="Same as --model checker=SPEC; 'none' = rule checks only."
    ),
    roles: list[str] | None = typer.Option(
        None, "--roles", help="Module that registers added roles: a dotted module name or a .py file (repeatable)."
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible base URL for every role."),
    user_base_url: str | None = typer.Option(None, "--user-base-url", help="Base URL of the user model."),
    planner_base_url: str | None = typer.Option(None, "--planner-base-url", help="Base URL of the planner model."),
    tool_base_url: str | None = typer.Option(None, "--tool-base-url", help="Base URL of the tool model."),
    agent_base_url: str | None = typer.Option(None, "--agent-base-url", help="Base URL of the agent model."),
    checker_base_url: str | None = typer.Option(None, "--checker-base-url", help="Base URL of the checker model."),
    temperature: float | None = typer.Option(
        None, "--temperature", help="Sampling temperature of every role (default 0.7, or $WTB_GEN_TEMPERATURE)."
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        help="Sessions generated at once. Default: 4, or the lowest limit a role's provider advertises "
        "(1 when a role runs on 'local' or 'gguf:').",
    ),
    max_retries: int | None = typer.Option(
        None,
        "--max-retries",
        min=1,
        help="Tries per planner decision / tool result (default 3, or $WTB_GEN_MAX_RETRIES).",
    ),
    max_steps: int | None = typer.Option(
        None, "--max-steps", min=1, help="Most planner steps per task (default 8, or $WTB_GEN_MAX_STEPS)."
    ),
    vague_rate: float | None = typer.Option(
        None, "--vague-rate", min=0.0, max=1.0, help="Share of vague first answers (default 0.25, or $WTB_VAGUE_RATE)."
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        min=0.001,
        help="Per-request timeout of every role model, seconds (default 120, or $WTB_TIMEOUT).",
    ),
    max_attempts: int | None = typer.Option(
        None,
        "--max-attempts",
        min=1,
        help="Tries per role-model request on HTTP 429/5xx, timeouts, dropped connections (default 5).",
    ),
    backoff: float | None = typer.Option(
        None, "--backoff", min=0.0, help="First retry wait in seconds (doubles, plus jitter; default 1)."
    ),
    rps: float | None = typer.Option(
        None, "--rps", min=0.0, help="Requests per second to each role endpoint (default 0 = no limit)."
    ),
    no_trace: bool = typer.Option(
        False, "--no-trace", help="Do not send LangSmith traces for this run, even with LANGSMITH_TRACING=true."
    ),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Generate every session again instead of keeping the ones an earlier run of this command finished.",
    ),
    show_progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar with the role being asked (on a terminal)."
    ),
    pull: bool = pull_option(),
    server: str | None = typer.Option(
        None,
        "--server",
        help="Generate every session on a LangGraph Server serving this project's graphs (e.g. http://127.0.0.1:2024 "
        "from `langgraph dev`, or a LangGraph Platform deployment URL; API key from $LANGGRAPH_API_KEY or "
        "$LANGSMITH_API_KEY); --concurrency runs in flight. The outputs are written here as for a local run.",
    ),
) -> None:
    """Generate sessions: one per type path, each on one tool list, written to --out.

    Running the same command again on the same --out resumes: sessions that finished (done, or failed
    because of the models' output) are kept; interrupted ones and infrastructure failures run again.
    """
    from bench.generation import GenerationInputError, load_tool_lists, plan_sessions, select_type_paths
    from graphs.generation import compile_graph
    from graphs.generation_context import Context
    from models import ConfigurationError, ModelSettings, check_model
    from nodes.generation.registry import added_roles, load_role_modules, model_roles
    from wtb.generation_runner import run_batch

    language = language.value
    tools = require_file(named_tools(tools, pull), "--tools")
    try:
        tool_lists = load_tool_lists(tools)
    except GenerationInputError as exc:  # the file's content: file:line: message
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except OSError as exc:  # the file named by --tools cannot be read
        typer.echo(f"error: {tools}: cannot read: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    try:
        load_role_modules(roles or [])
        mapping = role_models(model or [])
        for name, value in (
            ("planner", planner_model),
            ("tool", tool_model),
            ("agent", agent_model),
            ("checker", checker_model),
        ):
            if value is not None:
                mapping[name] = value
        if user_model:
            mapping["user"] = ",".join(user_model)
        base_urls = {
            name: url
            for name, url in (
                ("user", user_base_url),
                ("planner", planner_base_url),
                ("tool", tool_base_url),
                ("agent", agent_base_url),
                ("checker", checker_base_url),
            )
            if url
        }
        context = Context(
            models=mapping,
            base_urls=base_urls,
            base_url=base_url,
            temperature=temperature,
            max_retries=max_retries,
            max_steps=max_steps,
            vague_answer_rate=vague_rate,
            request_timeout=timeout,
            max_attempts=max_attempts,
            backoff=backoff,
            rps=rps,
        )
        active = model_roles()
        unknown = sorted(set(mapping) - set(active))
        if unknown:
            raise ConfigurationError(
                f"--model names unknown role(s) {', '.join(unknown)}; roles with a model: {', '.join(active)} "
                "(add roles with --roles MODULE)"
            )
        type_paths = select_type_paths(layers, paths, samples, seed)
        plans = plan_sessions(
            tool_lists, type_paths, seed=seed, language=language, year=year, user_models=len(context.user_models)
        )
        if server:
            from wtb.remote import check_server

            if roles:
                raise ConfigurationError(
                    "--roles cannot be used with --server: the deployed graph has the roles it was deployed with"
                )
            specs = [*context.user_models, *(context.model_spec(role) for role in active if role != "user")]
            check_server(server, "generation", specs, ModelSettings(timeout=context.request_timeout))
        else:
            for role in active:
                specs = context.user_models if role == "user" else [context.model_spec(role)]
                for spec in filter(None, specs):
                    check_model(
                        spec, ModelSettings(base_url=context.role_base_url(role), timeout=context.request_timeout)
                    )
    except (GenerationInputError, OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if concurrency is None:
        concurrency = default_concurrency(context, active)
    graph = compile_graph() if added_roles() else None  # the default graph has no added roles
    settings = {
        "tools": str(tools),
        "layers": layers,
        "paths": paths,
        "samples": samples,
        "seed": seed,
        "language": language,
        "year": year,
        "concurrency": concurrency,
    }

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from nodes.generation._common import ROLE_REQUEST_LISTENER

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not (show_progress and console.is_terminal),
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
            batch = run_batch
            if server:
                from wtb.remote import run_batch_remote

                batch = functools.partial(run_batch_remote, server=server, no_trace=no_trace)
            from wtb.runner.loop import run as run_loop

            summary = run_loop(
                batch(
                    plans,
                    context,
                    out,
                    concurrency=concurrency,
                    settings=settings,
                    on_done=progress,
                    graph=graph,
                    overwrite=overwrite,
                )
            )
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    finally:
        ROLE_REQUEST_LISTENER.reset(listening)
    if summary.reused:
        typer.echo(
            f"resumed: kept {summary.reused} session(s) finished by an earlier run (--overwrite redoes them)", err=True
        )
    typer.echo(
        f"generated {summary.succeeded} session(s), {summary.failed} failed -> {summary.sessions_file} "
        f"(failures: {summary.failures_file}, oracle replay: {summary.replay_file})"
    )
    if summary.retried_requests:
        typer.echo(
            f"model requests {summary.requests} ({summary.attempts} tries); retried requests: "
            f"{len(summary.retried_requests)} (listed in manifest.json)",
            err=True,
        )
    if summary.succeeded == 0:
        raise typer.Exit(1)
