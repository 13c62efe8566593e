"""``wtb generate``: from the parsed command line to a finished run (docs/generation.md §8, docs/cli.md §6).

The command line (``wildtoolbench/cli/generate.py``) only parses: it turns the options into
:class:`GenerateOptions` and calls :func:`generate` inside :func:`wildtoolbench.common.exits.exit_on_error`,
which maps the errors raised here to exit statuses (docs/cli.md §2). :func:`generate` runs three steps:

1. :func:`prepare_generation`: resolves ``--tools`` (a file, or an official tool-list name), loads the
   tool lists, the role modules and the role models, builds the graph context, plans the sessions
   and checks every model (or the server) before anything is written; it returns a
   :class:`PreparedGeneration`;
2. :func:`run_generation`: runs the batch (:func:`wildtoolbench.runner.generation.run_batch`, or the server's)
   with tracing and the progress bar (:func:`generation_progress`, a
   :class:`wildtoolbench.runner.progress.ProgressBar` of layout ``GENERATION``), inside
   :func:`wildtoolbench.common.exits.resumable_run` (Ctrl-C and SIGTERM: exit 130 with a resume hint);
3. the closing lines (:func:`summary_lines`); exit status 3 when a session failed on infrastructure (a
   model request that failed for good: the same command generates it again), else 1 when no session
   was generated (every session failed on the models' output), else 0 (docs/cli.md §2).

Errors and their exit status: ``--tools`` naming a file that does not exist, or the official dataset
instead of a tool list: :class:`wildtoolbench.common.exits.UsageError` (2); an official tool list not pulled
yet: ``wildtoolbench.data.names.NotPulledError`` (2); the content of the tool-list file:
:class:`wildtoolbench.bench.generation.GenerationInputError` (a ``ValueError``: 1, ``file:line: message``); the
command line and the run's configuration (a tool file that cannot be read, a bad type path, an unknown
role, a bad role module or model spec, a server that cannot serve the run):
:class:`models.ConfigurationError` (2); an output folder holding a different run: ``ValueError`` (1).
Nothing is written before the checks of step 1 passed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from wildtoolbench.bench.generation import SessionPlan
from wildtoolbench.common.concurrency import default_concurrency
from wildtoolbench.common.exits import BadInput, InfrastructureErrors, resumable_run
from wildtoolbench.common.inputs import require_file
from wildtoolbench.data.command import tools_path
from wildtoolbench.models import ConfigurationError
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.registry import role_model_spec
from wildtoolbench.runner.progress import GENERATION, ProgressBar

RoleValue = tuple[str, str]
"""One ``--model`` / ``--base-url`` value as parsed: ``(role, value)``, role ``""`` for a bare value."""


@dataclass
class GenerateOptions:
    """The parsed options of ``wtb generate`` (``None`` = not given: the setting's own rule applies).

    ``tools`` is the ``--tools`` value as given (a file, or an official tool-list name such as
    ``wildtoolbench-en``, downloaded first with ``pull``); ``models`` and ``base_urls`` are the ``--model`` / ``--base-url`` values in order, as
    ``(role, value)`` pairs (role ``""`` for a bare value); ``model_flags`` / ``base_url_flags`` hold
    the per-role aliases (``--planner-model``, ``--user-base-url``, ...) by role name, applied after
    them (the user's several ``--user-model`` values already joined with commas).
    """

    tools: Path
    out: Path
    layers: int = 4
    paths: list[str] | None = None
    samples: int | None = None
    seed: int = 0
    language: str = "en"
    year: int = 2024
    models: list[RoleValue] = field(default_factory=list)
    model_flags: dict[str, str] = field(default_factory=dict)
    base_urls: list[RoleValue] = field(default_factory=list)
    base_url_flags: dict[str, str] = field(default_factory=dict)
    roles: list[str] = field(default_factory=list)
    temperature: float | None = None
    concurrency: int | None = None
    workers: int = 1
    max_retries: int | None = None
    max_steps: int | None = None
    vague_rate: float | None = None
    timeout: float | None = None
    max_attempts: int | None = None
    backoff: float | None = None
    rps: float | None = None
    no_trace: bool = False
    overwrite: bool = False
    show_progress: bool = True
    server: str | None = None
    pull: bool = False
    audit: str = "drop"
    audit_reference: Path | None = None
    rules: str | None = None
    quality: str = "drop"


@dataclass
class PreparedGeneration:
    """A checked run, ready to go: its options (``options.tools`` the resolved tool-list file), context,
    session plans, graph and the settings for the manifest."""

    options: GenerateOptions
    context: Context
    plans: list[SessionPlan]
    concurrency: int
    graph: Any
    settings: dict[str, Any]

    def kept(self) -> str:
        """What an interrupted run leaves on disk, for the resume hint (``"3 of 6 sessions are finished under ..."``)."""
        from wildtoolbench.runner.generation_outcome import OUTCOME_FILE

        sessions = self.options.out / "sessions"
        done = sum(1 for plan in self.plans if (sessions / plan.key / OUTCOME_FILE).exists())
        if not done:
            return f"none of the {len(self.plans)} sessions had finished"
        return f"{done} of {len(self.plans)} sessions are finished under {sessions}"


def role_models(values: Sequence[RoleValue], bare_roles: Sequence[str]) -> dict[str, str]:
    """``--model`` values to a role -> spec mapping (docs/generation.md §8), later values winning.

    Args:
        values: ``(role, spec)`` pairs in command-line order; role ``""`` = a bare spec.
        bare_roles: the roles a bare spec sets (``wildtoolbench.nodes.generation.registry.default_model_roles()``:
            every role whose default model is not ``none``).

    Returns:
        ``{role: spec}``; several ``user=`` values are joined with commas (one is used per session).
    """
    mapping: dict[str, str] = {}
    for role, spec in values:
        for name in [role] if role else bare_roles:
            if name == "user" and role and "user" in mapping:
                mapping["user"] = f"{mapping['user']},{spec}"
            else:
                mapping[name] = spec
    return mapping


def role_base_urls(values: Sequence[RoleValue]) -> tuple[str | None, dict[str, str]]:
    """``--base-url`` values to ``(shared base URL, {role: URL})``; later values win, empty ones are dropped."""
    shared: str | None = None
    per_role: dict[str, str] = {}
    for role, url in values:
        if role:
            per_role[role] = url
        else:
            shared = url
    return shared, {role: url for role, url in per_role.items() if url}


def role_specs(context: Context, roles: Sequence[str]) -> list[str]:
    """The model spec of every role of ``roles`` with a model (the user's: each of ``context.user_models``), in order."""
    return [*context.user_models, *(role_model_spec(context, role) for role in roles if role != "user")]


def _check_role_names(option: str, names: Sequence[str], active: Sequence[str]) -> None:
    unknown = sorted(set(names) - set(active))
    if unknown:
        raise ConfigurationError(
            f"{option} names unknown role(s) {', '.join(unknown)}; roles with a model: {', '.join(active)} "
            "(add roles with --roles MODULE)"
        )


def build_context(options: GenerateOptions) -> Context:
    """The graph context of the run: role models and base URLs from the options, with the registered roles.

    Raises:
        models.ConfigurationError: ``--model`` or ``--base-url`` names a role that is not registered with
            a model (the role modules must be loaded first).
    """
    from wildtoolbench.nodes.generation.registry import default_model_roles, model_roles

    mapping = role_models(options.models, default_model_roles())
    mapping.update(options.model_flags)
    base_url, base_urls = role_base_urls(options.base_urls)
    base_urls.update({role: url for role, url in options.base_url_flags.items() if url})
    active = model_roles()
    _check_role_names("--model", list(mapping), active)
    _check_role_names("--base-url", list(base_urls), active)
    return Context(
        models=mapping,
        base_urls=base_urls,
        base_url=base_url,
        temperature=options.temperature,
        max_retries=options.max_retries,
        max_steps=options.max_steps,
        vague_answer_rate=options.vague_rate,
        request_timeout=options.timeout,
        max_attempts=options.max_attempts,
        backoff=options.backoff,
        rps=options.rps,
        rules=options.rules,
    )


def check_models(context: Context, roles: Sequence[str], server: str | None) -> None:
    """Check every role's model spec before the first session: locally (``models.check_model``), or on the
    LangGraph Server at ``server`` (``wildtoolbench.remote.check_server``, which also asks the server whether it
    accepts the run's context: a refused one is exit 2 before any session).

    Raises:
        models.ConfigurationError: a spec that cannot work, or a server that cannot serve the run.
    """
    from wildtoolbench.models import ModelSettings, check_model

    if server:
        from wildtoolbench.remote import check_server

        specs = role_specs(context, roles)
        check_server(server, "generation", specs, ModelSettings(timeout=context.request_timeout), context=context)
        return
    for role in roles:
        specs = context.user_models if role == "user" else [role_model_spec(context, role)]
        for spec in filter(None, specs):
            check_model(spec, ModelSettings(base_url=context.role_base_url(role), timeout=context.request_timeout))


def check_generation_workers(context: Context, roles: Sequence[str], server: str | None) -> None:
    """``wtb generate --workers N`` (N > 1) runs the generation graph in local processes against shared endpoints
    (docs/generation.md §12).

    Raises:
        models.ConfigurationError: combined with ``--server``, or a role on a local llama.cpp server (``local``,
            ``gguf:``: every worker process would start its own copy).
    """
    if server:
        raise ConfigurationError("--workers > 1 runs the graph in local processes; --server runs it on the server")
    for spec in role_specs(context, roles):
        if spec and spec.split(":", 1)[0] in ("local", "gguf"):
            raise ConfigurationError(
                f"--workers > 1: {spec!r} is served by one local server and every worker process would start its "
                "own copy of it; use --workers 1 (and --concurrency for sessions at once)"
            )


def prepare_generation(options: GenerateOptions) -> PreparedGeneration:
    """Everything ``wtb generate`` does before the first session (module doc); nothing is written.

    Returns:
        A :class:`PreparedGeneration`.

    Raises:
        wildtoolbench.common.exits.UsageError: ``--tools`` names no file, or the official dataset.
        wildtoolbench.data.names.NotPulledError: ``--tools`` names an official tool list not pulled yet.
        wildtoolbench.bench.generation.GenerationInputError: the tool-list file's content (``file:line: message``).
        models.ConfigurationError: the command line or the run's configuration (module doc).
    """
    from wildtoolbench.bench.generation import load_tool_lists, plan_sessions, select_type_paths
    from wildtoolbench.graphs.generation import compile_graph
    from wildtoolbench.nodes.generation.registry import added_roles, load_role_modules, model_roles

    options = dataclasses.replace(options, tools=require_file(tools_path(options.tools, options.pull), "--tools"))
    try:
        tool_lists = load_tool_lists(options.tools)
    except OSError as exc:  # the file named by --tools cannot be read
        raise ConfigurationError(f"{options.tools}: cannot read: {exc.strerror or exc}") from None
    try:
        load_role_modules(options.roles)
        context = build_context(options)
        active = model_roles()
        type_paths = select_type_paths(options.layers, options.paths, options.samples, options.seed)
        plans = plan_sessions(
            tool_lists,
            type_paths,
            seed=options.seed,
            language=options.language,
            year=options.year,
            user_models=len(context.user_models),
        )
        if options.server and options.roles:
            raise ConfigurationError(
                "--roles cannot be used with --server: the deployed graph has the roles it was deployed with"
            )
        if options.workers > 1:  # before the models' checks: no server or model is asked for a refused run
            check_generation_workers(context, active, options.server)
        check_models(context, active, options.server)
        concurrency = (
            options.concurrency
            if options.concurrency is not None
            else default_concurrency(*role_specs(context, active))
        )
        graph = compile_graph() if added_roles() else None  # the default graph has no added roles
    except ConfigurationError:
        raise
    except (OSError, ValueError) as exc:  # a type path, a role module, a setting: the configuration
        raise ConfigurationError(str(exc)) from exc
    settings = {
        "tools": str(options.tools),
        "layers": options.layers,
        "paths": options.paths,
        "samples": options.samples,
        "seed": options.seed,
        "language": options.language,
        "year": options.year,
        "concurrency": concurrency,
    }
    return PreparedGeneration(options, context, plans, concurrency, graph, settings)


def outcome_line(outcome: Any) -> str:
    """The line printed when a session finishes (or is kept from an earlier run), e.g.
    ``"session_0001 CC-CC-MT-ST done"`` or ``"<key> <path> failed: <reason> (kept from an earlier run)"``.

    Args:
        outcome: a :class:`wildtoolbench.runner.generation.GenerationOutcome`.
    """
    path = "-".join(outcome.plan.type_path)
    detail = "" if outcome.status == "done" else f": {outcome.reason}"
    kept_note = " (kept from an earlier run)" if outcome.reused else ""
    return f"{outcome.plan.key} {path} {outcome.status}{detail}{kept_note}"


@contextmanager
def generation_progress(total: int, enabled: bool = True) -> Iterator[Callable[[Any], None]]:
    """The progress display of ``wtb generate`` on stderr, around the run: a
    :class:`wildtoolbench.runner.progress.ProgressBar` of layout ``GENERATION`` (sessions finished of ``total``,
    and which role of which session is being asked, ``"<key> task <n>: <role> (request <count>)"``; only on
    a terminal and with ``enabled``), and one :func:`outcome_line` per finished session either way.

    Yields:
        The batch's ``on_done(outcome)``: prints the session's line and advances the bar. While open,
        every role-model request is heard through ``wildtoolbench.nodes.generation.registry.ROLE_REQUEST_LISTENER``.
    """
    from wildtoolbench.nodes.generation.registry import ROLE_REQUEST_LISTENER

    requests = 0
    with ProgressBar(GENERATION, total=total, label="starting", enabled=enabled) as bar:

        def on_request(session_id: str, role: str, task_index: int) -> None:
            nonlocal requests
            requests += 1
            bar.describe(f"{session_id} task {task_index + 1}: {role} (request {requests})")

        def on_done(outcome: Any) -> None:
            bar.note(outcome_line(outcome))
            bar.advance()

        token = ROLE_REQUEST_LISTENER.set(on_request)
        try:
            yield on_done
        finally:
            ROLE_REQUEST_LISTENER.reset(token)


def run_generation(run: PreparedGeneration) -> Any:
    """Generate the prepared sessions (locally, or on ``--server``) with tracing and the progress display
    (:func:`generation_progress`, shown with ``--progress``).

    Args:
        run: from :func:`prepare_generation`.

    Returns:
        The :class:`wildtoolbench.runner.generation.GenerationSummary`.

    Raises:
        ValueError: the output folder holds a different run (``--overwrite`` or another ``--out``).
        KeyboardInterrupt: interrupted (the finished sessions are on disk, :meth:`PreparedGeneration.kept`).
    """
    from wildtoolbench.runner.generation import run_batch
    from wildtoolbench.runner.loop import run as run_loop
    from wildtoolbench.tracing import tracing_scope

    options = run.options
    batch: Callable[..., Any] = run_batch
    if options.server:
        from wildtoolbench.remote import run_batch_remote

        batch = functools.partial(run_batch_remote, server=options.server, no_trace=options.no_trace)
    elif options.workers > 1:
        from wildtoolbench.runner.generation_processes import run_batch_processes

        batch = functools.partial(
            run_batch_processes, workers=options.workers, no_trace=options.no_trace, roles=options.roles
        )
    with (
        tracing_scope(no_trace=options.no_trace),
        generation_progress(len(run.plans), enabled=options.show_progress) as on_done,
    ):
        return run_loop(
            batch(
                run.plans,
                run.context,
                options.out,
                concurrency=run.concurrency,
                settings=run.settings,
                on_done=on_done,
                graph=run.graph,
                overwrite=options.overwrite,
                quality_policy=options.quality,
            )
        )


def summary_lines(summary: Any) -> list[tuple[str, bool]]:
    """The closing lines of a run as ``(text, to_stderr)``: resumed sessions, the yield table per role
    (docs/generation.md §7.1), the model calls, tokens and wall time per valid session, the quality
    check's totals (§9), the counts and files, retries."""
    from wildtoolbench.bench.generation_yield import yield_lines

    lines: list[tuple[str, bool]] = []
    if summary.reused:
        lines.append(
            (f"resumed: kept {summary.reused} session(s) finished by an earlier run (--overwrite redoes them)", True)
        )
    if summary.yields:
        lines.append(("yield per role (also in manifest.json):", False))
        lines += [(f"  {line}", False) for line in yield_lines(summary.yields)]
    generated = summary.succeeded + summary.failed - summary.reused
    totals = (
        f"{summary.requests} calls, {summary.tokens} tokens, {summary.seconds:.1f} s over {generated} session(s) "
        f"generated now{' and ' + str(summary.reused) + ' kept' if summary.reused else ''}"
    )
    if summary.succeeded:
        valid = summary.succeeded
        lines.append(
            (
                f"per valid session: {summary.requests / valid:.1f} model calls, {summary.tokens / valid:.0f} tokens, "
                f"{summary.seconds / valid:.1f} s wall ({totals})",
                False,
            )
        )
    else:
        lines.append((f"no valid session ({totals})", False))
    if summary.quality.get("sessions"):
        q = summary.quality
        lines.append(
            (
                f"quality check: {q['passing']} of {q['sessions']} session(s) pass (problems: user voice in "
                f"{q['voice']}, values not in the conversation in {q['values']}, no concrete request in "
                f"{q['concrete']}, repeated or copied calls in {q.get('calls', 0)}, assistant repeating the "
                f"request in {q.get('assistant', 0)}; per session in manifest.json)"
                + (f"; {q['dropped']} dropped (--quality flag keeps them)" if q.get("dropped") else ""),
                False,
            )
        )
    lines.append(
        (
            f"generated {summary.succeeded} session(s), {summary.failed} failed -> {summary.sessions_file} "
            f"(failures: {summary.failures_file}, oracle replay: {summary.replay_file})",
            False,
        )
    )
    if summary.retried_requests:
        lines.append(
            (
                f"model requests {summary.requests} ({summary.attempts} tries); retried requests: "
                f"{len(summary.retried_requests)} (listed in manifest.json)",
                True,
            )
        )
    return lines


def print_rules() -> None:
    """``wtb generate --list-rules``: the rule catalog, one line per rule (id, family, profiles, what it
    rejects; docs/generation.md §11)."""
    from wildtoolbench.bench.rules import catalog_lines

    for line in catalog_lines():
        typer.echo(line)


def generate(options: GenerateOptions) -> None:
    """``wtb generate``: prepare, run (Ctrl-C or SIGTERM: exit 130 with a resume hint), print the closing
    lines (module doc). Run it inside :func:`wildtoolbench.common.exits.exit_on_error`.

    After the run the generated set is audited by ``options.audit`` (:func:`wildtoolbench.generation.audit.audit_generation`,
    docs/generation.md §9) and its line printed.

    Raises:
        wildtoolbench.common.exits.InfrastructureErrors: a session failed on infrastructure (exit 3; the closing
            lines say how many and that the same command generates them again).
        wildtoolbench.common.exits.BadInput: no session was generated, none on infrastructure, or the audit dropped them all (exit 1; the
            closing lines are printed).
        Exception: as :func:`prepare_generation` and :func:`run_generation`.
        typer.Exit: 130 after an interruption.
    """
    run = prepare_generation(options)
    with resumable_run(run.kept):
        summary = run_generation(run)
    for text, to_stderr in summary_lines(summary):
        typer.echo(text, err=to_stderr)
    if summary.infrastructure_failures:
        raise InfrastructureErrors(
            f"{summary.infrastructure_failures} session(s) failed on infrastructure (a model request failed "
            "after its retries, listed in failures.jsonl); run the same command again to generate them"
        )
    if summary.succeeded == 0:
        raise BadInput()
    from wildtoolbench.generation.audit import audit_generation, closing_line

    audited = audit_generation(options.out, policy=options.audit, reference=options.audit_reference)
    typer.echo(closing_line(audited))
    if options.audit == "drop" and audited.kept == 0:
        raise BadInput("the audit dropped every generated session (see dropped.jsonl)")
