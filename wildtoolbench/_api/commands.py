"""``wildtoolbench.generate``, ``score``, ``report``, ``load_dataset`` and ``chat_model``: thin wrappers over
``wtb generate``, ``wtb score``, ``wtb report``, the dataset reader and the model providers
(docs/guides/scripting.md). Each takes the command's options as keywords, with its defaults, and raises
where the command exits (:func:`wildtoolbench._api.evaluate.cli_errors`, docs/cli.md §2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wildtoolbench._api.evaluate import cli_errors, dataset_option


def chat_model(spec: str = "local", **settings: Any) -> Any:
    """The LangChain chat model of a model spec, to build an agent on (docs/guides/agents.md).

    Args:
        spec: ``local`` (the bundled local model: no key, no network; needs the ``local`` extra),
            ``gguf:PATH``, ``openai:MODEL``, ``langchain:PROVIDER:MODEL``, ``replay:FILE#CANDIDATE``,
            ``scripted:...``, or a plug-in provider's spec.
        **settings: the connection and sampling settings of :class:`wildtoolbench.models.ModelSettings`
            (``temperature``, ``base_url``, ``api_key``, ``timeout``, ``max_retries``).

    Returns:
        A new ``BaseChatModel`` (a ``graph:`` spec gives its graph).

    Raises:
        wildtoolbench.ConfigurationError: a malformed spec, an unknown provider, or what the provider refuses
            (a missing key or package).
    """
    from wildtoolbench.models import ModelSettings, resolve_model

    return resolve_model(spec, ModelSettings(**settings))


def load_dataset(
    dataset: str | Path | None = None, *, tasks: int | None = None, lang: str = "en", pull: bool = False
) -> list[Any]:
    """Read and check a dataset's sessions, as ``wtb validate`` and ``wtb eval`` read them (docs/dataset.md).

    Args:
        dataset: a JSON Lines file, ``"wildtoolbench"`` (the official data; ``pull=True`` downloads it), or
            ``None`` / ``"demo"``: the bundled demo (6 sessions).
        tasks: tasks per session (default: the count the sessions share, docs/dataset.md §6).
        lang: the side to check (``en`` or ``zh``).
        pull: download the official data when it is not in the cache.

    Returns:
        The sessions (``wildtoolbench.bench.schema.Session``; ``.to_dict()`` gives the JSON line, the input of
        ``evaluation_graph``).

    Raises:
        wildtoolbench.DatasetError: every problem of the file (``file:line: field: message``).
        wildtoolbench.UsageError, wildtoolbench.ConfigurationError: a name that is no dataset, an official
            dataset not downloaded.
    """
    from wildtoolbench.bench.demo_data import bundled_demo_sessions
    from wildtoolbench.bench.schema import load_sessions
    from wildtoolbench.common.inputs import require_file
    from wildtoolbench.data.command import dataset_path, task_count

    with cli_errors():
        path = dataset_path(dataset_option(dataset), pull) or bundled_demo_sessions()
        require_file(path, "--dataset")
        return load_sessions(path, tasks=task_count(path, tasks), language=lang)


def score(
    dataset: str | Path,
    results: str | Path,
    out: str | Path,
    *,
    tasks: int | None = None,
    scoring: str = "reference",
    lang: str | None = None,
    pull: bool = False,
    model_name: str | None = None,
    errata: str | Path | None = None,
) -> dict[str, Any]:
    """``wtb score``: score a result file against its dataset into ``out`` (docs/scoring.md) and print the table.

    Args:
        dataset, results, out, tasks, scoring, lang, pull, model_name, errata: as the options of ``wtb score``
            (``--scoring fixed`` writes ``score.fixed.jsonl`` and ``metric.fixed.json``).

    Returns:
        The metric file written (``metric.json`` or ``metric.fixed.json``) as a dict.

    Raises:
        As :func:`wildtoolbench.evaluate`: ``DatasetError``, ``BadInput``, ``OSError`` (a bad file),
        ``UsageError``, ``ConfigurationError`` (a bad option).
    """
    import json

    from wildtoolbench.scoring.command import score_results
    from wildtoolbench.scoring.outputs import score_files

    with cli_errors():
        score_results(
            dataset_option(dataset),
            Path(results),
            Path(out),
            tasks,
            scoring,
            lang,
            pull,
            model_name,
            None if errata is None else Path(errata),
        )
        return json.loads((Path(out) / score_files(scoring)[1]).read_text(encoding="utf-8"))


def report(
    runs: str | Path | Sequence[str | Path],
    out: str | Path,
    *,
    dataset: str | Path | None = None,
    seed: int = 0,
    resamples: int = 2000,
    audit: bool = False,
    errata: str | Path | None = None,
) -> Path:
    """``wtb report``: a report of one or more run folders into ``out`` (``index.html``, ``report.md``, CSV
    tables; docs/guides/reports.md).

    Returns:
        ``out/index.html``.

    Raises:
        wildtoolbench.UsageError: a run folder given twice; ``ReportError``, ``BadInput``: a folder or dataset
            that cannot be reported on, an output folder that cannot be written.
    """
    from wildtoolbench.reports.command import report as write

    folders = [Path(runs)] if isinstance(runs, (str, Path)) else [Path(run) for run in runs]
    with cli_errors():
        write(
            folders,
            Path(out),
            dataset=None if dataset is None else Path(dataset),
            seed=seed,
            resamples=resamples,
            audit=audit,
            errata=None if errata is None else Path(errata),
        )
    return Path(out) / "index.html"


def _role_values(value: str | Mapping[str, str] | None) -> list[tuple[str, str]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [("", value)]
    return [(str(role), str(spec)) for role, spec in value.items()]


def generate(
    tools: str | Path,
    out: str | Path,
    *,
    model: str | Mapping[str, str] | None = None,
    base_url: str | Mapping[str, str] | None = None,
    lang: str = "en",
    progress: bool = True,
    **settings: Any,
) -> Path:
    """``wtb generate``: generate sessions on the tool lists of ``tools`` into ``out`` (docs/generation.md),
    resuming a run of the same command in ``out``.

    Args:
        tools: a tool-list file (JSON Lines) or an official tool-list name (``wildtoolbench-en``).
        out: the output folder (``sessions.jsonl``, ``manifest.json`` ...).
        model: one spec for every role, or ``{role: spec}`` (``{"user": "openai:gpt-4o", "tool": "local"}``);
            ``None``: ``$WTB_MODEL``, else ``local``.
        base_url: one endpoint for every role, or ``{role: url}``.
        lang: ``en`` or ``zh``.
        progress: show the progress bar (``--progress``).
        **settings: the other options of ``wtb generate`` by name (``layers``, ``paths``, ``samples``, ``seed``,
            ``year``, ``roles``, ``temperature``, ``concurrency``, ``max_retries``, ``max_steps``, ``vague_rate``,
            ``timeout``, ``max_attempts``, ``backoff``, ``rps``, ``no_trace``, ``overwrite``, ``server``,
            ``pull``, ``audit``, ``audit_reference``).

    Returns:
        ``out/sessions.jsonl``, the generated sessions.

    Raises:
        TypeError: a keyword that is no option. As the command otherwise: ``InfrastructureErrors`` (some
        sessions failed on infrastructure), ``BadInput`` (none generated), ``ConfigurationError``,
        ``UsageError``.
    """
    import dataclasses

    from wildtoolbench.generation.command import GenerateOptions
    from wildtoolbench.generation.command import generate as run

    known = {f.name for f in dataclasses.fields(GenerateOptions)} - {
        "tools", "out", "models", "model_flags", "base_urls", "base_url_flags", "language", "show_progress"
    }  # fmt: skip
    unknown = sorted(set(settings) - known)
    if unknown:
        raise TypeError(
            f"generate() got unknown setting(s) {', '.join(unknown)}; the settings are {', '.join(sorted(known))}"
        )
    for name in ("audit_reference",):
        if settings.get(name) is not None:
            settings[name] = Path(settings[name])
    options = GenerateOptions(
        tools=Path(tools),
        out=Path(out),
        models=_role_values(model),
        base_urls=_role_values(base_url),
        language=lang,
        show_progress=progress,
        **settings,
    )
    with cli_errors():
        run(options)
    return Path(out) / "sessions.jsonl"
