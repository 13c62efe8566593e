"""``wildtoolbench.evaluate`` and ``aevaluate``: ``wtb eval`` from Python (docs/guides/scripting.md, docs/cli.md §2).

A call builds the :class:`wildtoolbench.evaluation.options.EvalOptions` the command line would build from the
same settings and runs the same :func:`wildtoolbench.evaluation.command.evaluate`: the same checks, defaults,
outputs, resume and rules; then it reads the scored run folder into an
:class:`wildtoolbench._api.run.EvalRun`. Where the command line exits with a status, the call raises the
exception that status comes from, carrying the lines the command line prints (:func:`cli_errors`).

The model is a spec string (``openai:gpt-4o-mini``, ``replay:FILE#NAME``, ``graph:FILE.py:ATTR`` ...) or a
Python object: a LangChain chat model, a compiled graph or other Runnable, an agent factory
``def make_agent(tools)`` or a graph factory; an object runs as the ``graph:`` candidate of its file would
(:mod:`wildtoolbench.models.providers.objects`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from wildtoolbench._api.run import EvalRun, read_eval_run

SETTING_ALIASES = {"lang": "language"}
"""Keywords named as the command line names them (``lang`` for ``--lang``) and the option they set."""

PATH_SETTINGS = ("cache", "baseline")
"""Settings that are folders (given as ``str`` or ``Path``)."""

DEMO = "demo"
"""The dataset name of the bundled demo (6 sessions), the default of ``wtb eval``."""


def _settings_names() -> list[str]:
    from wildtoolbench.evaluation.options import EvalOptions

    return sorted(
        f.name for f in dataclasses.fields(EvalOptions) if f.name not in ("dataset", "model", "out", "out_temporary")
    )


def _ids(value: Any) -> tuple[str, ...]:
    """``ids`` as the ``--ids`` values: a string (comma-separated ids or numbers) or an iterable of ids / numbers."""
    if value is None:
        return ()
    if isinstance(value, (str, int)):
        return (str(value),)
    return tuple(str(item) for item in value)


def dataset_option(dataset: str | Path | None) -> Path | None:
    """The ``--dataset`` value of ``dataset``: ``None`` and ``"demo"`` are the bundled demo (``None``: the
    command line's default), a name such as ``wildtoolbench`` or a file path as given."""
    if dataset is None:
        return None
    if str(dataset) == DEMO and not Path(DEMO).exists():
        from wildtoolbench.bench.demo_data import bundled_demo_sessions

        return bundled_demo_sessions()
    return Path(dataset)


def model_spec(model: Any, settings: dict[str, Any]) -> str | None:
    """The model spec of ``model``: a string as given, ``None`` for the default, an object registered in this
    process (:func:`wildtoolbench.models.providers.objects.register_object`).

    Raises:
        models.ConfigurationError: an object with ``server`` (the server cannot hold an object of this process)
            or with ``workers`` above 1 (worker processes cannot either).
    """
    if model is None or isinstance(model, str):
        return model
    from wildtoolbench.models import ConfigurationError
    from wildtoolbench.models.providers.objects import object_label, register_object

    if settings.get("server"):
        raise ConfigurationError(
            f"--server runs the model on the server, which cannot be sent the Python object {object_label(model)} "
            "of this process; deploy it in the server's langgraph.json and pass its spec "
            "(graph:PATH.py:ATTR), or drop server= to run it here"
        )
    if (settings.get("workers") or 1) > 1:
        raise ConfigurationError(
            f"--workers > 1 runs the sessions in other processes, which cannot see the Python object "
            f"{object_label(model)}; use workers=1 (and concurrency= for sessions at once), or name its file "
            "(graph:PATH.py:ATTR)"
        )
    return register_object(model)


def eval_options(model: Any, dataset: str | Path | None, out: str | Path | None, settings: dict[str, Any]) -> Any:
    """The :class:`wildtoolbench.evaluation.options.EvalOptions` of an :func:`evaluate` call.

    Raises:
        TypeError: a keyword that is no setting of ``wtb eval`` (the message lists them).
        models.ConfigurationError: see :func:`model_spec`.
    """
    from wildtoolbench.evaluation.options import EvalOptions

    given = {SETTING_ALIASES.get(name, name): value for name, value in settings.items()}
    known = _settings_names()
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(
            f"evaluate() got unknown setting(s) {', '.join(unknown)}; the settings of wtb eval are "
            f"{', '.join(known)} (and lang for language)"
        )
    if "ids" in given:
        given["ids"] = _ids(given["ids"])
    for name in PATH_SETTINGS:
        if given.get(name) is not None:
            given[name] = Path(given[name])
    for name in ("language", "scoring"):
        if given.get(name) is not None:
            given[name] = str(getattr(given[name], "value", given[name])).lower()  # "zh", Lang.zh
    spec = model_spec(model, given)
    return EvalOptions(dataset=dataset_option(dataset), model=spec, out=None if out is None else Path(out), **given)


@contextlib.contextmanager
def cli_errors() -> Iterator[None]:
    """Run a command's body as the command line would, raising where it would exit (docs/cli.md §2).

    Output goes through the project's redaction, as on the command line. A usage error's message becomes
    the line the command line prints (``Invalid value for '--ids': ...``); an interruption (the command
    line's exit status 130) is raised again as ``KeyboardInterrupt`` after its resume hint was printed.
    Every other exception passes unchanged: ``UsageError``, ``ConfigurationError``, ``BadConfiguration``
    (exit status 2), ``DatasetError``, ``BadInput``, ``OSError``, ``ValueError`` (1), ``InfrastructureErrors`` (3).
    """
    import typer

    from wildtoolbench.common.exits import INTERRUPTED, UsageError
    from wildtoolbench.tracing.redaction import redacted_terminal

    with redacted_terminal():
        try:
            yield
        except UsageError as exc:
            exc.message = exc.format_message()
            exc.args = (exc.message,)
            raise
        except typer.Exit as exc:
            if exc.exit_code == INTERRUPTED:
                raise KeyboardInterrupt("interrupted; evaluate again with the same out to resume") from None
            raise RuntimeError(f"the command stopped with exit status {exc.exit_code}") from None


def _run_settings(folder: Path) -> dict[str, Any]:
    from wildtoolbench.common.run_folder import RUN_FILE

    try:
        return json.loads((folder / RUN_FILE).read_text(encoding="utf-8")).get("settings") or {}
    except (OSError, ValueError):
        return {}


def infrastructure_lines(errors: Iterable[dict[str, Any]], out: Path | None) -> list[str]:
    """The message of the ``InfrastructureErrors`` an evaluation raises: how many sessions, where to retry, each one."""
    errors = list(errors)
    where = (
        f"kept in {out}/errors.jsonl; evaluate again with out={str(out)!r} to retry them"
        if out
        else ("out=None kept nothing: give out= to retry only them")
    )
    lines = [f"error: infrastructure errors in {len(errors)} sessions (not scored; {where}):"]
    for entry in errors[:20]:
        trial = f" (trial {entry['trial']})" if entry.get("trial") else ""
        lines.append(f"  {entry.get('id')}{trial}: {entry.get('error')}")
    return lines


def _evaluate_in(options: Any, shown_out: Path | None) -> EvalRun:
    """Run ``options`` (``options.out`` set) and read the run; ``shown_out`` is what :attr:`EvalRun.out` says."""
    from wildtoolbench.common.exits import InfrastructureErrors
    from wildtoolbench.evaluation.command import evaluate
    from wildtoolbench.evaluation.estimate import estimate_text, run_estimate
    from wildtoolbench.evaluation.plan import plan_eval

    if options.dry_run:
        import typer

        plan = plan_eval(options)
        estimate = run_estimate(plan)
        typer.echo(estimate_text(estimate, options, plan.context.candidate.provider))
        return EvalRun(metrics={}, tasks=[], errors=[], out=shown_out, estimate=dataclasses.asdict(estimate))
    failed = False
    try:
        evaluate(options)
    except InfrastructureErrors:
        failed = True
    settings = _run_settings(options.out)
    dataset = Path(settings.get("dataset") or dataset_option(options.dataset) or "")
    run = read_eval_run(
        options.out,
        dataset,
        tasks=int(settings.get("tasks") or 4),
        scoring=settings.get("scoring") or "reference",
        language=settings.get("language") or "en",
        out=shown_out,
    )
    if failed:
        error = InfrastructureErrors(*infrastructure_lines(run.errors, shown_out))
        error.run = run  # type: ignore[attr-defined]  # the sessions that finished, scored
        raise error
    return run


def run_evaluation(model: Any, dataset: str | Path | None, out: str | Path | None, settings: dict[str, Any]) -> EvalRun:
    """The synchronous body of :func:`wildtoolbench.evaluate` (in the calling thread)."""
    with cli_errors():
        options = eval_options(model, dataset, out, settings)
        if options.out is not None:
            return _evaluate_in(options, options.out)
        with tempfile.TemporaryDirectory(prefix="wtb-eval-") as folder:
            # The run's own closing line says the folder is temporary (wildtoolbench.evaluation.run.score_and_print).
            temporary = dataclasses.replace(options, out=Path(folder) / "run", out_temporary=True)
            return _evaluate_in(temporary, None)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def evaluate(
    model: Any = None, dataset: str | Path | None = None, out: str | Path | None = None, **settings: Any
) -> EvalRun:
    """Evaluate ``model`` on the sessions of ``dataset`` as ``wtb eval`` does, and return the scored run.

    Args:
        model: a model spec as ``--model`` takes it (``"openai:gpt-4o-mini"``, ``"replay:FILE#NAME"``,
            ``"graph:my_agent.py:make_agent"``, ``"local"``; ``None``: ``$WTB_MODEL``, else ``local``), or a
            Python object: a LangChain chat model, a compiled graph or other Runnable, an agent factory
            ``def make_agent(tools)``, a graph factory. An object is named ``graph:object:<label>@<digest>``
            in the records (its label is the recorded model name, e.g. ``my_agent:make_agent``; the digest
            follows its source, so a folder resumes only the same code; docs/evaluation.md §8.6).
        dataset: a dataset file (JSON Lines), ``"wildtoolbench"`` (the official data, ``pull=True`` to
            download it), or ``None`` / ``"demo"``: the bundled demo (6 sessions).
        out: the run folder (results, scores, metrics, summary: docs/evaluation.md §5); a folder holding an
            unfinished run of the same settings is resumed, as on the command line. ``None``: a temporary
            folder, removed before the call returns (nothing is left on disk; ``cache=`` still writes its
            cache folder).
        **settings: every option of ``wtb eval`` by its name with ``_`` for ``-`` (``trials``, ``cache``,
            ``scoring``, ``lang`` / ``language``, ``limit``, ``ids``, ``tasks``, ``concurrency``, ``workers``,
            ``server``, ``temperature``, ``base_url``, ``timeout``, ``max_attempts``, ``backoff``,
            ``max_retry_wait``, ``rps``, ``max_steps``, ``price_input``, ``price_output``, ``overwrite``,
            ``progress``, ``preflight``, ``report``, ``no_trace``, ``pull``, ``dry_run``, ``until_decided``,
            ``baseline``, ``max_trials``, ``langsmith_dataset``), with the command line's defaults and
            ``$WTB_*`` variables. ``ids`` takes a string or a list of ids / numbers.

    Returns:
        The :class:`EvalRun` (metrics equal to ``metric.json`` and the printed table). The table and the run's
        lines are printed as the command line prints them (``progress=False`` for no progress lines).

    Raises (the exit status the command line would give in brackets; docs/cli.md §2):
        TypeError: a keyword that is no setting.
        wildtoolbench.UsageError: a setting's value (``Invalid value for '--ids': ...``) (2).
        wildtoolbench.ConfigurationError, wildtoolbench.BadConfiguration: the model spec or the settings;
            a Python object with ``server=`` or ``workers`` > 1 (2).
        wildtoolbench.DatasetError, wildtoolbench.BadInput, OSError, ValueError: an input file's content, a
            folder holding another run (1).
        wildtoolbench.InfrastructureErrors: some sessions hit infrastructure errors; the others are scored
            and the exception's ``run`` holds them (3).
        KeyboardInterrupt: interrupted (Ctrl-C, SIGTERM) after the resume hint (130).
    """
    if _loop_running():  # a notebook cell: the run has its own event loop, in a worker thread
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="wtb-evaluate") as pool:
            return pool.submit(run_evaluation, model, dataset, out, settings).result()
    return run_evaluation(model, dataset, out, settings)


async def aevaluate(
    model: Any = None, dataset: str | Path | None = None, out: str | Path | None = None, **settings: Any
) -> EvalRun:
    """:func:`evaluate` for ``await`` (a notebook, an async application): the run goes on in a worker thread with
    its own event loop, and the caller's loop stays free. Arguments, result and exceptions as :func:`evaluate`."""
    return await asyncio.to_thread(run_evaluation, model, dataset, out, settings)
