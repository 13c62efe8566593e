"""``wtb eval``: evaluate a model on WildToolBench sessions, then score the run (docs/evaluation.md, docs/scoring.md)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wtb.cli import Lang, Scoring, app, lang_option, require_file, resolve_tasks, tasks_option
from wtb.cli._console import LazyConsole
from wtb.cli.data import named_dataset, pull_option

if TYPE_CHECKING:
    from graphs.evaluation_context import EvaluationContext

_err = LazyConsole(stderr=True, highlight=False, soft_wrap=True)


@app.command("eval")
def eval_command(
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        help="Dataset JSON Lines file (one session per line), or wildtoolbench (the official data, see `wtb data pull`). Default: the bundled demo (6 sessions).",
        dir_okay=False,
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Candidate model spec: 'openai:MODEL' (OpenAI-compatible API), 'langchain:PROVIDER:MODEL' (any "
        "LangChain chat model), 'graph:PATH.py:ATTR' (your LangGraph agent), 'replay:PATH#CANDIDATE', "
        "'gguf:PATH', or 'local' (the bundled local model, the default; $WTB_MODEL overrides the default).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Output directory: result.jsonl, score.jsonl, metric.json, summary_metrics.json. Default: "
        "runs/<model name>/<dataset stem>-<8 hex digits of the dataset's absolute path> (the bundled demo and "
        "wildtoolbench: runs/<model name>/<name>), with -zh added for --lang zh.",
        file_okay=False,
    ),
    ids: list[str] | None = typer.Option(
        None,
        "--ids",
        help="Only these sessions: comma-separated ids or numbers (e.g. '0,3,wild_tool_bench_7'); repeatable.",
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N selected sessions.", min=0),
    tasks: int | None = tasks_option(),
    lang: Lang | None = lang_option(
        "Side of the dataset to evaluate: en, the english_* fields (env info, tools, tasks, gold answers, task "
        "types, turn subtypes), or zh, the Chinese ones. Default: en, or $WTB_LANG."
    ),
    pull: bool = pull_option(),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        help="Sessions in flight at once. Default: 4, or what the provider advertises (1 for 'local' and 'gguf:').",
        min=1,
    ),
    workers: int = typer.Option(
        1,
        "--workers",
        help="Processes that run the sessions (the --concurrency sessions in flight are shared among them). "
        "More than 1 uses more CPU cores when the harness, not the model, is the bottleneck "
        "(a fast endpoint); not with --server, --langsmith-dataset or a local model.",
        min=1,
    ),
    temperature: float | None = typer.Option(
        None, "--temperature", help="Sampling temperature (default 0, or $WTB_TEMPERATURE)."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default $OPENAI_BASE_URL)."
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="Per-request timeout in seconds (default 120)."),
    max_attempts: int | None = typer.Option(
        None,
        "--max-attempts",
        min=1,
        help="Tries per model request on HTTP 429/5xx, timeouts and dropped connections (default 5).",
    ),
    backoff: float | None = typer.Option(
        None,
        "--backoff",
        min=0.0,
        help="First retry wait in seconds; doubles per retry, plus jitter; Retry-After wins if longer (default 1).",
    ),
    rps: float | None = typer.Option(
        None, "--rps", min=0.0, help="Most model requests per second, shared by all sessions (default: no limit)."
    ),
    max_steps: int | None = typer.Option(
        None, "--max-steps", min=1, help="Model requests allowed per task before it ends as an error (default 32)."
    ),
    price_input: float | None = typer.Option(
        None, "--price-input", min=0.0, help="USD per million input tokens (adds cost to the summary)."
    ),
    price_output: float | None = typer.Option(
        None, "--price-output", min=0.0, help="USD per million output tokens (adds cost to the summary)."
    ),
    scoring: Scoring | None = typer.Option(
        None,
        "--scoring",
        case_sensitive=False,
        help="'reference' (default, or $WTB_SCORING) reproduces the published evaluation, quirks included; 'fixed' "
        "runs and scores with the corrections of docs/fixed-mode.md (a separate run: default --out gets a '-fixed' "
        "suffix; scores go to score.fixed.jsonl and metric.fixed.json).",
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Start fresh instead of resuming an existing result.jsonl."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar."),
    report: bool = typer.Option(
        False, "--report", help="After scoring, write a report of the run into OUT/report/ (see `wtb report`)."
    ),
    no_trace: bool = typer.Option(
        False, "--no-trace", help="Do not send LangSmith traces for this run, even with LANGSMITH_TRACING=true."
    ),
    server: str | None = typer.Option(
        None,
        "--server",
        help="Run every session on a LangGraph Server serving this project's graphs (e.g. http://127.0.0.1:2024 "
        "from `langgraph dev`, or a LangGraph Platform deployment URL; API key from $LANGGRAPH_API_KEY or "
        "$LANGSMITH_API_KEY); --concurrency runs in flight. The outputs are written here as for a local run.",
    ),
    langsmith_dataset: str | None = typer.Option(
        None,
        "--langsmith-dataset",
        help="Run as a LangSmith experiment: upload the sessions to this LangSmith dataset (idempotent) and "
        "evaluate them with langsmith.aevaluate (per-task and summary feedback). Needs LANGSMITH_API_KEY.",
    ),
) -> None:
    """Run the model on the sessions (resuming an interrupted run), write DIR/result.jsonl, score it, print the table.

    Exit status 3: some sessions hit infrastructure errors (a model request failed after its retries);
    they are in DIR/errors.jsonl, not scored, and the same command runs them again. Exit status 2: the
    command line or the run's configuration is wrong (e.g. --ids naming a session the dataset does not
    hold), nothing written; 1: a bad input file (see `wtb --help`).
    """
    from bench.demo_data import bundled_demo_sessions
    from bench.schema import DatasetError
    from graphs.evaluation_context import EvaluationContext
    from models import ConfigurationError
    from wtb.runner import Prices, open_dataset, run_eval, select_sessions

    try:
        given = dataset
        dataset = named_dataset(dataset, pull)
        if dataset is None:
            dataset = bundled_demo_sessions()
        require_file(dataset, "--dataset")
        wanted = [part for item in ids or [] for part in item.split(",") if part.strip()]
        if ids and not wanted:
            raise typer.BadParameter("names no session", param_hint="'--ids'")
        try:  # a bad WTB_* setting is the run's configuration too
            context = EvaluationContext(
                model=model,
                base_url=base_url,
                temperature=temperature,
                timeout=timeout,
                max_attempts=max_attempts,
                backoff=backoff,
                rps=rps,
                max_steps=max_steps,
                scoring=scoring.value if scoring else None,
                language=lang.value if lang else None,
                dataset=str(dataset),
            )
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        tasks = resolve_tasks(dataset, tasks)
        loaded = open_dataset(dataset, tasks=tasks, language=context.language)
        for warning in loaded.warnings:  # scored as they are, with the effect each names (docs/dataset.md §7.2)
            _err.print(str(warning), markup=False)
        try:
            sessions = select_sessions(loaded, wanted or None, limit)
        except ValueError as exc:  # an id the dataset does not hold
            raise typer.BadParameter(str(exc), param_hint="'--ids'") from None
        prices = (
            None if price_input is None and price_output is None else Prices(price_input or 0.0, price_output or 0.0)
        )
        if server and langsmith_dataset:
            raise ConfigurationError(
                "--server and --langsmith-dataset cannot be combined (an experiment runs in this process)"
            )
        if workers > 1:
            check_workers(context, server=server, langsmith_dataset=langsmith_dataset)
        if server:  # the server runs the model: it must answer and be able to open the spec's file
            from wtb.remote import check_server

            check_server(server, "evaluation", [context.model])
        else:
            check_configuration(context)
        if out is None:
            out = default_out_dir(context, dataset, name=_official_name(given))
            if context.scoring == "fixed":  # a fixed-mode run is its own run (docs/fixed-mode.md §1)
                out = out.with_name(out.name + "-fixed")
        if concurrency is None:
            concurrency = default_concurrency(context.model)
        if langsmith_dataset:
            if context.scoring == "fixed":
                raise ConfigurationError(
                    "--langsmith-dataset scores in reference mode only; drop it or --scoring fixed"
                )
            from wtb.cli.experiment import run_langsmith_experiment

            run_langsmith_experiment(sessions, context, dataset, out, langsmith_dataset, concurrency, tasks)
            return
        from wtb.cli._interrupt import resumable_run
        from wtb.tracing import tracing_scope

        with resumable_run(lambda: _kept_sessions(out, sessions)), tracing_scope(no_trace=no_trace):
            run = run_eval
            if server:
                from wtb.remote import run_eval_remote

                run = functools.partial(run_eval_remote, server=server, no_trace=no_trace)
            more = {"workers": workers} if workers > 1 else {}
            summary = run(
                sessions,
                context,
                out,
                concurrency=concurrency,
                overwrite=overwrite,
                progress=progress,
                prices=prices,
                settings={"tasks": tasks},
                **more,
            )
    except typer.Exit:  # a click Exit is a RuntimeError: let it through unchanged
        raise
    except DatasetError as exc:
        for issue in exc.issues:
            _err.print(str(issue), markup=False)
        raise typer.Exit(code=1) from None
    except ConfigurationError as exc:  # the run's own configuration: not a model result, nothing written
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(code=2) from None
    except (OSError, ValueError, RuntimeError) as exc:
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(code=1) from None

    _err.print(run_summary_line(summary, context.language), markup=False)
    if summary.inference_errors:
        _err.print(
            f"[yellow]inference errors[/yellow] in {len(summary.inference_errors)} sessions: {', '.join(summary.inference_errors)}"
        )
    _print_accounting(summary)
    if summary.evaluated + summary.skipped:
        _score(dataset, summary.result_path, out, tasks, context.scoring, context.language)
        if report:
            from wtb.cli.report import write_report

            write_report([out], out / "report")
    if summary.infrastructure_errors:
        raise typer.Exit(code=3)


def _kept_sessions(out: Path, sessions: Sequence[Mapping[str, Any]]) -> str:
    """How many of the selected sessions have a record in ``out/result.jsonl`` (for the resume hint)."""
    from wtb.runner import RESULT_FILE, ResultFile, session_ids

    path = out / RESULT_FILE
    try:
        done = ResultFile(path).scan()
    except (OSError, ValueError):
        return f"the finished sessions are in {path}"
    count = sum(1 for session_id in session_ids(sessions) if session_id in done)
    return f"{count} of {len(sessions)} sessions are in {path}"


def _print_accounting(summary: Any, limit: int = 20) -> None:
    """Model requests, tokens, cost, retried requests and infrastructure errors of the run (stderr)."""
    cost = f", cost ${summary.cost_usd:.4f}" if summary.cost_usd is not None else ""
    _err.print(
        f"model requests {summary.requests} ({summary.attempts} tries); tokens in {summary.input_tokens}, "
        f"out {summary.output_tokens}{cost}; summary -> {summary.summary_path}",
        markup=False,
    )
    retried = summary.retried_requests
    if retried:
        _err.print(f"retried requests: {len(retried)}", markup=False)
        for entry in retried[:limit]:
            status = "ok" if entry.get("ok") else "FAILED"
            _err.print(
                f"  {entry['id']} task {entry.get('task')} step {entry.get('step')}: {entry['attempts']} tries, "
                f"{status}; {'; '.join(entry.get('errors', []))}",
                markup=False,
            )
        if len(retried) > limit:
            _err.print(f"  ... and {len(retried) - limit} more (see summary.json)", markup=False)
    errors = summary.infrastructure_errors
    if errors:
        _err.print(
            f"infrastructure errors in {len(errors)} sessions (not scored, kept in errors.jsonl; "
            "run the same command again to retry them):",
            markup=False,
        )
        for entry in errors[:limit]:
            _err.print(f"  {entry['id']}: {entry.get('error')}", markup=False)


def check_configuration(context: EvaluationContext) -> None:
    """Check the run's model spec before any session: provider, files, candidate, credentials, packages.

    A mistake here is the run's configuration, not a model result: ``wtb eval`` exits 2 and writes
    nothing. Errors that only a request can reveal (HTTP 401/403/404) stay infrastructure errors.
    (With ``--server`` the server runs the model: :func:`wtb.remote.check_server` checks instead.)

    Raises:
        models.ConfigurationError: the message names the problem and the fix.
    """
    from models import ModelSettings, check_model

    check_model(context.model, ModelSettings(base_url=context.base_url or None, timeout=context.timeout))


def run_summary_line(summary: Any, language: str | None = "en") -> str:
    """The line ``wtb eval`` prints when the sessions are done: sessions selected, evaluated by this
    run, already done by an earlier one, the dataset side and where the records are, e.g.
    ``"6 sessions: 6 evaluated, 0 already done; en side; 1.2s -> runs/x/result.jsonl"``.

    It holds no score: the table printed next is the one place for accuracy (the count of tasks whose
    actions matched before the argument check, shown here before, read like a second accuracy).
    """
    return (
        f"{summary.selected} sessions: {summary.evaluated} evaluated, {summary.skipped} already done; "
        f"{language or 'en'} side; {summary.wall_time:.1f}s -> {summary.result_path}"
    )


def _official_name(given: Path | None) -> str | None:
    """The official dataset name the user typed (``wildtoolbench``), else ``None``."""
    from wtb.datasets.names import official_names

    if given is None:
        return None
    text = str(given).lower()
    return text if text in official_names("dataset") and not Path(given).is_file() else None


def default_out_dir(context: EvaluationContext, dataset: Path, *, name: str | None = None) -> Path:
    """The output folder of ``wtb eval`` without ``--out``, relative to the working directory.

    ``runs/<model name>/<dataset part>``, where the model name is the one written into the records
    (``local``, ``gpt-4o-mini``, a replay candidate ...) with characters other than letters,
    digits, ``.``, ``_`` and ``-`` made ``_``, and the dataset part is

    - ``name`` when given (the official dataset: ``wildtoolbench``), or ``demo_sessions`` for the
      bundled demo: each names one file;
    - otherwise ``<file stem>-<first 8 hex digits of the sha256 of the absolute path>``, so that
      two datasets with the same file name never share a folder (the same file, however it is
      written, always gets the same one);

    plus ``-zh`` when ``context.language`` is ``zh`` (a run directory holds one language side).
    """
    import hashlib
    import re

    from bench.demo_data import bundled_demo_sessions
    from wtb.runner import recorded_model_name

    model = re.sub(r"[^A-Za-z0-9._-]+", "_", recorded_model_name(context)).strip("._") or "model"
    absolute = Path(dataset).resolve()
    if name:
        part = name
    elif absolute == bundled_demo_sessions().resolve():
        part = absolute.stem
    else:
        part = f"{absolute.stem}-{hashlib.sha256(str(absolute).encode('utf-8')).hexdigest()[:8]}"
    if (context.language or "en") != "en":
        part += f"-{context.language}"
    return Path("runs") / model / part


def check_workers(context: Any, *, server: str | None, langsmith_dataset: str | None) -> None:
    """``--workers`` above 1 needs sessions run by this machine's evaluation graph against a shared endpoint
    (docs/settings.md §2.1).

    Raises:
        ConfigurationError: combined with ``--server`` or ``--langsmith-dataset``, or a model whose
            provider serves one request at a time (``models.max_concurrency`` 1: ``local``, ``gguf:``,
            a llama.cpp server each worker process would start once more); a malformed spec.
    """
    from models import ConfigurationError, max_concurrency

    if server:
        raise ConfigurationError("--workers > 1 runs the graph in local processes; --server runs it on the server")
    if langsmith_dataset:
        raise ConfigurationError(
            "--workers > 1 cannot be combined with --langsmith-dataset (an experiment runs in this process)"
        )
    if max_concurrency(context.model) == 1:
        raise ConfigurationError(
            f"--workers > 1: {context.model!r} serves one request at a time and every worker process would start "
            "its own copy of it; use --workers 1"
        )


def default_concurrency(model: str) -> int:
    """Sessions in flight when ``--concurrency`` is not given: the provider's advertised limit
    (``models.max_concurrency``; 1 for a local llama.cpp server), else 4."""
    from models import max_concurrency

    return max_concurrency(model) or 4


def _score(
    dataset: Path, result_path: Path, out: Path, tasks: int = 4, scoring: str = "reference", language: str | None = "en"
) -> None:
    """Score the run into ``out/score.jsonl``, ``out/metric.json`` and ``out/summary_metrics.json``
    (``score.fixed.jsonl``, ``metric.fixed.json`` and ``summary_metrics.fixed.json`` in fixed mode,
    docs/fixed-mode.md) and print the table (docs/scoring.md)."""
    from rich.console import Console

    from bench.schema import DatasetError
    from wtb.score_run import score_files, score_run, summary_metrics_file
    from wtb.table import metric_table

    SCORE_FILE, METRIC_FILE = score_files(scoring)
    SUMMARY_METRICS_FILE = summary_metrics_file(scoring)
    try:
        metric = score_run(dataset, result_path, out, tasks=tasks, scoring=scoring, language=language or "en")
    except DatasetError as exc:
        for issue in exc.issues:
            _err.print(str(issue), markup=False)
        raise typer.Exit(code=1) from None
    except OSError as exc:  # a full disk, no permission: the error names the file (docs/cli.md §3.4)
        _err.print(f"error: {exc}", markup=False)
        raise typer.Exit(code=1) from None
    Console(highlight=False, soft_wrap=True).print(metric_table(metric, language))
    _err.print(
        f"wrote {result_path}, {out / SCORE_FILE}, {out / METRIC_FILE} and {out / SUMMARY_METRICS_FILE}", markup=False
    )
    typer.echo(f"outputs in {out}/")
