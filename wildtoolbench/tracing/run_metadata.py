"""Names and metadata of a session's root run, and the run's resolved settings (no secrets)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wildtoolbench.tracing.redaction import redact


@functools.lru_cache(maxsize=1)
def project_version() -> str:
    """Version of this project: the installed distribution's, else ``pyproject.toml``'s, else ``"0+unknown"``."""
    from importlib import metadata

    try:
        return metadata.version("wildtoolbench-langgraph")
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        import tomllib

        return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, ValueError, ImportError):
        return "0+unknown"


def session_run_name(kind: str, session_id: str) -> str:
    """Name of a session's root run, e.g. ``"wtb eval wild_tool_bench_3"`` (``kind``: ``eval``/``generate``)."""
    return f"wtb {kind} {session_id}"


def session_metadata(
    *,
    session_id: str,
    dataset: str | os.PathLike[str] | None,
    model: str | Mapping[str, str],
    language: str = "en",
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Metadata of a session's root run (issue 5): dataset, session id, model spec, language, project version.

    Args:
        session_id: the session's ``id`` (e.g. ``wild_tool_bench_0``).
        dataset: dataset path or LangSmith dataset name.
        model: the candidate's model spec (``openai:gpt-4o``), or a role -> spec mapping for generation.
        language: ``en`` or ``zh``.
        settings: other run settings (temperature, base URL, retry limits...); redacted.

    Returns:
        A flat dict (nested only for ``model`` mappings and ``settings``) with keys ``dataset``,
        ``session_id``, ``model``, ``language``, ``project_version`` and ``settings`` when given.
    """
    meta: dict[str, Any] = {
        "dataset": None if dataset is None else str(dataset),
        "session_id": session_id,
        "model": dict(model) if isinstance(model, Mapping) else model,
        "language": language,
        "project_version": project_version(),
    }
    if settings:
        meta["settings"] = redact(dict(settings))
    return meta


def session_run_config(
    *,
    kind: str,
    session_id: str,
    dataset: str | os.PathLike[str] | None,
    model: str | Mapping[str, str],
    language: str = "en",
    settings: Mapping[str, Any] | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """The ``RunnableConfig`` fragment for one session's graph run: ``run_name``, ``metadata``, ``tags``.

    Merge it into the config passed to ``graph.ainvoke``; LangGraph copies the metadata onto every
    node run below the root as well. Arguments as in :func:`session_metadata`; ``kind`` is ``eval``
    or ``generate``.
    """
    return {
        "run_name": session_run_name(kind, session_id),
        "metadata": session_metadata(
            session_id=session_id, dataset=dataset, model=model, language=language, settings=settings
        ),
        "tags": ["wildtoolbench", f"wtb-{kind}", *(tags or [])],
    }


def context_settings(context: object, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of a graph context (a dataclass such as ``EvaluationContext``) as a redacted dict.

    Args:
        context: a dataclass instance, a mapping, or ``None``.
        exclude: field names to leave out (e.g. ``model``, already recorded on its own).

    Returns:
        ``{field: value}`` with credentials redacted (:func:`redact`); ``{}`` for ``None``.
    """
    import dataclasses

    if context is None:
        return {}
    if dataclasses.is_dataclass(context) and not isinstance(context, type):
        values = {f.name: getattr(context, f.name) for f in dataclasses.fields(context)}
    else:
        values = dict(context)
    return redact({k: v for k, v in values.items() if k not in exclude})
