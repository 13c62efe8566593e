"""``wtb eval``: evaluate a model on WildToolBench sessions, then score the run (docs/evaluation.md, docs/scoring.md).

The options and their help only: :func:`wildtoolbench.evaluation.command.evaluate` does the work (docs/cli.md §6).
Long by design: :func:`eval_command` is over 100 lines because it declares every option of ``wtb eval`` with its
help (typer); its body only builds the options object and calls the application layer.
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import Lang, Scoring, app, lang_option, tasks_option
from wildtoolbench.cli.data import pull_option
from wildtoolbench.common.exits import exit_on_error


@app.command("eval")
def eval_command(
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        help="Dataset JSON Lines file (one session per line), or wildtoolbench (the official data, see `wtb data pull`). Default: the bundled demo (6 sessions).",
        # No dir_okay=False: the name `wildtoolbench` is also this project's package folder in a clone;
        # the name is resolved first, then require_file refuses a directory with click's own message.
    ),
    model: list[str] | None = typer.Option(
        None,
        "--model",
        help="Candidate model spec: 'openai:MODEL' (OpenAI-compatible API), 'langchain:PROVIDER:MODEL' (any "
        "LangChain chat model), 'graph:PATH.py:ATTR' (your LangGraph agent), 'replay:PATH#CANDIDATE', "
        "'gguf:PATH', or 'local' (the bundled local model, the default; $WTB_MODEL overrides the default). "
        "Repeat it to run several models in one sweep (one folder each under --out; docs/guides/sweeps.md).",
    ),
    sweep: Path | None = typer.Option(
        None,
        "--sweep",
        help="Sweep file (TOML): one [[model]] table per model with its own settings (model, name, base_url, "
        "temperature, price_input, price_output, concurrency, rps, ...); every model runs into OUT/<name>/, "
        "then the combined table and the report over all (docs/guides/sweeps.md).",
        dir_okay=False,
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
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        help="Deadline of one model request in seconds, from the connection to the last byte of the reply; a try "
        "still running then is cancelled and retried as a timeout (default 120; a finite number > 0, at most "
        "1000000: there is no 'no deadline').",
    ),
    max_attempts: int | None = typer.Option(
        None,
        "--max-attempts",
        min=1,
        help="Tries per model request on HTTP 429/5xx, timeouts and dropped connections (default 5).",
    ),
    backoff: float | None = typer.Option(
        None,
        "--backoff",
        help="First retry wait in seconds; doubles per retry, plus jitter; Retry-After wins if longer (default 1).",
    ),
    max_retry_wait: float | None = typer.Option(
        None,
        "--max-retry-wait",
        help="Longest wait in seconds before one retry, a server's Retry-After included; a longer Retry-After is "
        "cut to this, and each such cut is counted in summary.json and on the terminal (default 60).",
    ),
    rps: float | None = typer.Option(
        None, "--rps", help="Most model requests per second, shared by all sessions (default: no limit)."
    ),
    max_steps: int | None = typer.Option(
        None, "--max-steps", min=1, help="Model requests allowed per task before it ends as an error (default 32)."
    ),
    price_input: float | None = typer.Option(
        None, "--price-input", help="USD per million input tokens (adds cost to the summary)."
    ),
    price_output: float | None = typer.Option(
        None, "--price-output", help="USD per million output tokens (adds cost to the summary)."
    ),
    scoring: Scoring | None = typer.Option(
        None,
        "--scoring",
        case_sensitive=False,
        help="'reference' (default, or $WTB_SCORING) reproduces the published evaluation, quirks included; 'fixed' "
        "runs and scores with the corrections of docs/fixed-mode.md (a separate run: default --out gets a '-fixed' "
        "suffix; scores go to score.fixed.jsonl and metric.fixed.json); 'semantic' runs as fixed and also accepts "
        "the equivalent arguments of docs/semantic-mode.md ('-semantic', score.semantic.jsonl, metric.semantic.json).",
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Start fresh instead of resuming an existing result.jsonl."
    ),
    progress: bool = typer.Option(
        True,
        "--progress/--no-progress",
        help="Show progress on stderr: a bar moving per task on a terminal, else one line per finished session.",
    ),
    preflight: bool = typer.Option(
        True,
        "--preflight/--no-preflight",
        help="Before the first session, check once that the model's HTTP endpoint answers (a dead URL exits 3 "
        "at once, naming it, instead of retrying every session).",
    ),
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
    server_threads: bool = typer.Option(
        True,
        "--server-threads/--no-server-threads",
        help="With --server: run each session-trial on a thread of its own that stays on the server with the "
        "session's metadata (default), or on a thread the server deletes when the run ends (an in-memory "
        "`langgraph dev` then keeps nothing and stays as fast at the end of a large sweep as at its start).",
    ),
    trials: int = typer.Option(
        1,
        "--trials",
        min=1,
        help="Evaluate every session K times (independent model calls, the same gold history): trial 1 in "
        "result.jsonl and metric.json, trials 2..K in result.trials.jsonl; trials.json gets pass^k, pass@k and "
        "the flip rate (docs/trials.md). --concurrency counts session-trials.",
    ),
    cache: Path | None = typer.Option(
        None,
        "--cache",
        help="Request cache folder: a reply already paid for (same candidate, settings, messages, tools, session, "
        "request and trial) is read from it instead of asking the model again (off by default; docs/trials.md §8).",
        file_okay=False,
    ),
    cache_trust: bool = typer.Option(
        False,
        "--cache-trust",
        help="Use a --cache folder that belongs to another user or that every user can write (refused by "
        "default: its entries could have been written by them; docs/trials.md §8).",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the estimate (sessions, model requests from the gold path to the step limit, prompt tokens, "
        "cost range with --price-*) and stop before any request.",
    ),
    until_decided: bool = typer.Option(
        False,
        "--until-decided",
        help="Add trials only for the sessions whose verdicts differ between trials until the comparison with "
        "--baseline is decided or --max-trials is spent (a sequential rule with error rate 5%, docs/trials.md §7).",
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="With --until-decided: the finished run folder to compare with.", file_okay=False
    ),
    max_trials: int | None = typer.Option(
        None, "--max-trials", help="With --until-decided: most trials per session (the budget).", min=2
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
    from wildtoolbench.evaluation.sweep import EvalOptions, evaluate_models

    models = list(model or ())
    options = EvalOptions(
        dataset=dataset,
        model=models[0] if len(models) == 1 else None,
        out=out,
        ids=tuple(ids or ()),
        limit=limit,
        tasks=tasks,
        language=lang.value if lang else None,
        pull=pull,
        concurrency=concurrency,
        workers=workers,
        temperature=temperature,
        base_url=base_url,
        timeout=timeout,
        max_attempts=max_attempts,
        backoff=backoff,
        max_retry_wait=max_retry_wait,
        rps=rps,
        max_steps=max_steps,
        price_input=price_input,
        price_output=price_output,
        scoring=scoring.value if scoring else None,
        overwrite=overwrite,
        progress=progress,
        report=report,
        no_trace=no_trace,
        server=server,
        server_threads=server_threads,
        langsmith_dataset=langsmith_dataset,
        preflight=preflight,
        trials=trials,
        cache=cache,
        cache_trust=cache_trust,
        dry_run=dry_run,
        until_decided=until_decided,
        baseline=baseline,
        max_trials=max_trials,
    )
    with exit_on_error():
        evaluate_models(options, models, sweep)
