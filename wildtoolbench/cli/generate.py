"""``wtb generate``: new benchmark sessions from real tool lists with the generation graph (docs/generation.md).

The options and their help only: they are parsed into ``wildtoolbench.generation.command.GenerateOptions`` and
:func:`wildtoolbench.generation.command.generate` checks, prepares and runs (docs/cli.md §6), inside
:func:`wildtoolbench.common.exits.exit_on_error`.

Exit status (docs/cli.md §2): 2 for the command line and the run's configuration (a ``--tools`` file that
does not exist, an unknown type path, role or model spec), 1 for a tool-list file whose content is bad
(``file:line: message``), a folder that holds a different run, or no session generated; 130 interrupted.

Long by design: :func:`generate_command` is over 100 lines because it declares every option of ``wtb generate``
with its help (typer); its body only builds the options object and calls the application layer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

import typer

from wildtoolbench.cli import Lang, app
from wildtoolbench.cli.data import pull_option
from wildtoolbench.common.exits import exit_on_error
from wildtoolbench.models.registry import DEFAULT_MODEL

_ROLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def role_values(values: Sequence[str], option: str, *, empty_bare: bool = False) -> list[tuple[str, str]]:
    """Parse ``ROLE=VALUE`` / bare ``VALUE`` option values (``--model``, ``--base-url``; docs/generation.md §8)
    into ``(role, value)`` pairs in order, role ``""`` for a bare value. A value whose text before the
    first ``=`` is not a role name (a spec or URL holding ``=``) is bare.

    Raises:
        typer.BadParameter: an empty value (a bare empty value is allowed with ``empty_bare``).
    """
    pairs: list[tuple[str, str]] = []
    for value in values:
        role, sep, text = value.partition("=")
        if not sep or not _ROLE_NAME.match(role):
            role, text = "", value
        if not text.strip() and (role or not empty_bare):
            what = "model spec" if option == "--model" else "value"
            raise typer.BadParameter(f"empty {what} in {value!r}", param_hint=option)
        pairs.append((role, text))
    return pairs


class AuditPolicy(str, Enum):
    """``--audit`` values: what the audit of a generated set does (docs/generation.md §9)."""

    drop = "drop"
    flag = "flag"
    off = "off"


class RuleProfile(str, Enum):
    """``--rules`` values: the rule profile of generation and of ``wtb audit --rules`` (docs/generation.md §11.2)."""

    small = "small"
    standard = "standard"
    off = "off"


class QualityPolicy(str, Enum):
    """``--quality`` values: what happens to a session that fails the quality check (docs/generation.md §10)."""

    drop = "drop"
    flag = "flag"


def _list_rules(value: bool) -> None:
    if value:
        from wildtoolbench.generation.command import print_rules

        print_rules()
        raise typer.Exit(0)


def _hidden(flag: str, role: str, what: str) -> typer.models.OptionInfo:
    return typer.Option(None, flag, hidden=True, help=f"Same as {what} {role}=VALUE (kept for old command lines).")


@app.command("generate")
def generate_command(
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
        "one per session; SPEC 'none' = no model) or a bare SPEC for every role whose default model is not "
        f"'none' (every built-in role). A role not given uses $WTB_<ROLE>_MODEL, else {DEFAULT_MODEL}. (An added "
        "role may declare another default.)",
    ),
    user_model: list[str] | None = _hidden("--user-model", "user", "--model"),
    planner_model: str | None = _hidden("--planner-model", "planner", "--model"),
    tool_model: str | None = _hidden("--tool-model", "tool", "--model"),
    agent_model: str | None = _hidden("--agent-model", "agent", "--model"),
    checker_model: str | None = _hidden("--checker-model", "checker", "--model"),
    roles: list[str] | None = typer.Option(
        None,
        "--roles",
        help="Module that registers added roles: a dotted module name or a .py file (repeatable); the modules "
        "named in $WTB_ROLES (comma-separated) are loaded too.",
    ),
    base_url: list[str] | None = typer.Option(
        None,
        "--base-url",
        help="OpenAI-compatible base URL: ROLE=URL for one role (repeatable), or a bare URL for every role "
        "without its own.",
    ),
    user_base_url: str | None = _hidden("--user-base-url", "user", "--base-url"),
    planner_base_url: str | None = _hidden("--planner-base-url", "planner", "--base-url"),
    tool_base_url: str | None = _hidden("--tool-base-url", "tool", "--base-url"),
    agent_base_url: str | None = _hidden("--agent-base-url", "agent", "--base-url"),
    checker_base_url: str | None = _hidden("--checker-base-url", "checker", "--base-url"),
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
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        help="Worker processes generating sessions (default 1): each runs the generation graph on its own core; "
        "--concurrency is the sessions in flight over all of them. Not with --server or a role on 'local'/'gguf:'.",
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
    audit: AuditPolicy = typer.Option(
        AuditPolicy.drop,
        "--audit",
        help="What the audit of the generated set does (docs/generation.md §9): drop (default) removes the "
        "sessions with an error finding or that repeat an official session and flags the rest; flag only "
        "lists them; off skips the audit. Findings go to audit.jsonl, coverage and summary to manifest.json.",
    ),
    rules: RuleProfile | None = typer.Option(
        None,
        "--rules",
        case_sensitive=False,
        help="Rule profile (docs/generation.md §11.2): small (every rule, for the bundled small model), standard "
        "(the rules that catch defects of any model) or off (the Checker model, with only the structural rules no "
        "session can be built without). Default: small when every "
        "writing role runs the bundled local model, else standard; recorded in manifest.json.",
    ),
    quality: QualityPolicy = typer.Option(
        QualityPolicy.drop,
        "--quality",
        help="A session that fails the quality check (docs/generation.md §10): drop (default) leaves it out of "
        "sessions.jsonl, with its reasons in quality_dropped.jsonl; flag keeps it, marked in manifest.json.",
    ),
    list_rules: bool = typer.Option(
        False,
        "--list-rules",
        is_eager=True,
        callback=_list_rules,
        help="Print the rule catalog (id, family, profiles, what it rejects) and exit.",
    ),
    audit_reference: Path | None = typer.Option(
        None,
        "--audit-reference",
        exists=True,
        dir_okay=False,
        help="The official dataset file for the coverage comparison and the contamination check (default: the "
        "official dataset when pulled, else the project page's published figures and no contamination check).",
    ),
) -> None:
    """Generate sessions: one per type path, each on one tool list, written to --out.

    Running the same command again on the same --out resumes: sessions that finished (done, or failed
    because of the models' output) are kept; interrupted ones and infrastructure failures run again.
    """
    from wildtoolbench.generation.command import GenerateOptions, generate

    options = GenerateOptions(
        tools=tools,
        out=out,
        layers=layers,
        paths=paths,
        samples=samples,
        seed=seed,
        language=language.value,
        year=year,
        models=role_values(model or [], "--model"),
        model_flags={
            name: value
            for name, value in (
                ("planner", planner_model),
                ("tool", tool_model),
                ("agent", agent_model),
                ("checker", checker_model),
                ("user", ",".join(user_model) if user_model else None),
            )
            if value is not None
        },
        base_urls=role_values(base_url or [], "--base-url", empty_bare=True),
        base_url_flags={
            name: url
            for name, url in (
                ("user", user_base_url),
                ("planner", planner_base_url),
                ("tool", tool_base_url),
                ("agent", agent_base_url),
                ("checker", checker_base_url),
            )
            if url
        },
        roles=list(roles or []),
        temperature=temperature,
        concurrency=concurrency,
        workers=workers,
        max_retries=max_retries,
        max_steps=max_steps,
        vague_rate=vague_rate,
        timeout=timeout,
        max_attempts=max_attempts,
        backoff=backoff,
        rps=rps,
        no_trace=no_trace,
        overwrite=overwrite,
        show_progress=show_progress,
        server=server,
        pull=pull,
        audit=audit.value,
        audit_reference=audit_reference,
        rules=rules.value if rules is not None else None,
        quality=quality.value,
    )
    with exit_on_error():
        generate(options)
