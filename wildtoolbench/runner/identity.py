"""Resume identity of a run directory (``run.json``): the dataset file and content it belongs to,
the model name and the run's resolved settings, so that a resume never mixes results of different runs."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wildtoolbench.bench.strategy import REFERENCE, scoring_strategy
from wildtoolbench.common.files import write_json_atomic
from wildtoolbench.models.settings import resolved_settings
from wildtoolbench.runner.store import RESULT_FILE, RUN_FILE
from wildtoolbench.tracing import project_version, redact

if TYPE_CHECKING:
    from wildtoolbench.nodes.evaluation.context import EvaluationContext


def dataset_identity(path: str | os.PathLike[str] | None) -> dict[str, str] | None:
    """``{"dataset": absolute path, "dataset_sha256": hex digest of the file}``, or ``None`` without a file.

    Records are matched to sessions by id on resume, and ids repeat across datasets
    (``wild_tool_bench_0`` ...), so the directory remembers which file its results belong to.
    """
    if not path or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"dataset": str(Path(path).resolve()), "dataset_sha256": digest.hexdigest()}


def run_settings(context: EvaluationContext, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The resolved settings of a run, for ``run.json`` and ``summary.json`` (docs/settings.md).

    Args:
        context: the run's context (every field resolved: explicit value, ``WTB_*`` variable or default).
        extra: settings of the batch layer (``concurrency``, ``tasks``...), added as they are.

    Returns:
        ``{context fields..., extra..., "project_version"}`` with credentials redacted (an API key in a
        base URL, a secret-looking value); no API key is ever part of a context. The per-model settings
        the candidate is not built with (``models.Candidate.unapplied_settings``: ``temperature`` and
        ``base_url`` of a ``graph:`` candidate) are left out: the file records what applied
        (docs/settings.md §7.8).
    """
    unapplied = _unapplied(context)
    applied = {k: v for k, v in resolved_settings(context).items() if k not in unapplied}
    return redact({**applied, **dict(extra or {}), "project_version": project_version()})


def _unapplied(context: EvaluationContext) -> tuple[str, ...]:
    """The context fields whose setting the run's candidate does not use (none when the spec cannot be resolved)."""
    try:
        return tuple(context.candidate.unapplied_settings)
    except (ValueError, ImportError):
        return ()


def candidate_identity(context: EvaluationContext) -> dict[str, Any] | None:
    """What the results of a ``graph:`` candidate depend on beyond its spec (docs/evaluation.md §8.6).

    Returns:
        ``{"spec", "source_sha256", "models", "model_specs", "declared_model", "context"?}``: the digest
        of the file the spec names (``graph:PATH.py:ATTR``) or of the imported module's file; the names
        of the chat models reachable from the graph (an agent factory's graph built around a stand-in
        tool: :func:`wildtoolbench.models.providers.graph.chat_models_in`) and their resolved specs (class, name,
        sampling fields: :func:`wildtoolbench.models.providers.graph.chat_model_specs`); the module's
        ``CANDIDATE_MODEL``; the repr of the graph's default context. So an edited agent, or one whose
        model an environment variable changed, never resumes the results of another. ``None`` for other
        providers, or when the source cannot be read. (A model built inside a node at run time is not
        reachable: the models the records saw it call guard that case, :func:`check_models_seen`.)
    """
    candidate = context.candidate
    if candidate.provider != "graph":
        return None
    try:
        from wildtoolbench.models.providers import graph

        loaded = graph.load(candidate.target)
        source = getattr(loaded.module, "__file__", None)
        if not source:
            return None
        digest = source_digest(Path(source))
        built = loaded.runnable.probe() if isinstance(loaded.runnable, graph.AgentFactory) else loaded.runnable
        from wildtoolbench.models.graph_contract import default_context

        context_default = default_context(built)
    except (OSError, ValueError, ImportError):
        return None
    identity: dict[str, Any] = {
        "spec": candidate.spec,
        "source_sha256": digest,
        "models": graph.chat_models_in(built),
        "model_specs": graph.chat_model_specs(built),
        "declared_model": loaded.declared_model,
    }
    if context_default is not None:
        identity["context"] = redact(repr(context_default))
    return identity


def source_digest(source: Path) -> str:
    """The SHA-256 of a ``graph:`` candidate's code: the file and every module of its own folder that it
    imports, directly or through those modules (the user's ``prompts.py``, ``models.py``, a ``wtb/``
    package beside it ..., docs/evaluation.md §8.6), so editing a helper module is a change of the
    candidate as much as editing the file is. The imports are read from the source (:func:`local_imports`),
    never from what happens to be loaded, so every process computes the same digest. A file that imports
    no module of its folder gives the digest of its bytes alone, as before helper modules were counted.

    Raises:
        OSError: ``source`` cannot be read.
    """
    source = source.resolve()
    contents = _local_files(source)  # each file read once: its bytes are parsed and hashed
    digest = hashlib.sha256(contents.pop(source))
    if not contents:
        return digest.hexdigest()
    for path in sorted(contents):
        name = path.relative_to(source.parent).as_posix()
        digest.update(b"\0" + name.encode("utf-8") + b"\0" + hashlib.sha256(contents[path]).digest())
    return digest.hexdigest()


def local_imports(source: Path, limit: int = 500) -> list[Path]:
    """The ``.py`` files of ``source``'s folder that ``source`` imports, directly or through each other
    (absolute imports resolved against that folder, relative ones against the importing file's package),
    sorted; ``source`` itself is not listed. A file that does not parse adds its bytes but no imports;
    at most ``limit`` files are followed.

    Raises:
        OSError: ``source`` or one of the files it imports cannot be read.
    """
    source = source.resolve()
    return sorted(path for path in _local_files(source, limit) if path != source)


def _local_files(source: Path, limit: int = 500) -> dict[Path, bytes]:
    """``source`` (resolved) and the files of :func:`local_imports`, each with its bytes, each file read once."""
    import ast

    folder = source.parent
    contents: dict[Path, bytes] = {source: source.read_bytes()}
    queue = [source]
    while queue and len(contents) <= limit:
        current = queue.pop()
        try:
            tree = ast.parse(contents[current])
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names: list[tuple[int, str]] = []
            if isinstance(node, ast.Import):
                names = [(0, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                names = [(node.level, base)] + [
                    (node.level, f"{base}.{a.name}" if base else a.name) for a in node.names
                ]
            for level, dotted in names:
                root = folder if level == 0 else current.parents[level - 1]
                for path in _module_files(root, dotted):
                    if path not in contents and folder in path.parents:
                        contents[path] = path.read_bytes()
                        queue.append(path)
    return contents


def _module_files(root: Path, dotted: str) -> list[Path]:
    """The files under ``root`` that importing ``dotted`` runs: each package's ``__init__.py`` on the way and
    the module's own file (none when the name is not a module of ``root``)."""
    files: list[Path] = []
    here = root
    for part in [p for p in dotted.split(".") if p]:
        if (here / part / "__init__.py").is_file():
            here = here / part
            files.append(here / "__init__.py")
        elif (here / f"{part}.py").is_file():
            files.append(here / f"{part}.py")
            break
        else:
            break
    return [f.resolve() for f in files]


IDENTITY_KEYS = ("spec", "source_sha256", "models", "model_specs", "declared_model", "context")
"""The keys of :func:`candidate_identity` compared on resume."""
LATER_KEYS = ("model_specs",)
"""Identity keys that ``run.json`` files of earlier versions lack: compared only when the file has them."""

_models_before: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "wtb_models_seen_before", default=None
)


def models_seen(result_path: Path) -> frozenset[str]:
    """Every model the records of ``result_path`` say their ``graph:`` candidate was seen calling
    (``candidate.models``, docs/evaluation.md §5.5); unreadable lines are skipped."""
    seen: set[str] = set()
    with contextlib.suppress(OSError), open(result_path, encoding="utf-8") as handle:
        for line in handle:
            if '"models"' not in line:
                continue
            with contextlib.suppress(ValueError):
                candidate = json.loads(line).get("candidate")
                models = candidate.get("models") if isinstance(candidate, dict) else None
                if isinstance(models, list):
                    seen.update(str(m) for m in models)
    return frozenset(seen)


def check_models_seen(record: Mapping[str, Any], where: Path | None = None) -> None:
    """Refuse a new record of a resumed ``graph:`` run whose candidate called none of the models the folder's
    earlier records saw it call (docs/evaluation.md §8.6): its model changed in a way the identity of
    :func:`candidate_identity` cannot see (a model built inside a node from an environment variable).
    A candidate that calls some models only for some sessions shares at least one with the earlier records.

    Runs in the session workers of a run whose identity check (:func:`_check_run_identity`) found earlier
    records (it sets what they saw, for the tasks it starts); elsewhere it does nothing.

    Raises:
        ValueError: naming the models then and now; the run stops (exit 1), this record is not written.
    """
    before = _models_before.get()
    candidate = record.get("candidate")
    now = candidate.get("models") if isinstance(candidate, Mapping) else None
    if not before or not isinstance(now, list) or not now or before & {str(m) for m in now}:
        return
    folder = f"{where} holds" if where is not None else "the run folder holds"
    raise ValueError(
        f"{folder} results of the candidate {candidate.get('spec')} calling {', '.join(sorted(before))}, but it now "
        f"calls {', '.join(map(str, now))} (session {record.get('id')}); resuming would mix them: use --overwrite "
        "or another --out directory"
    )


def _shown(identity: Mapping[str, Any], keys: list[str]) -> str:
    parts = []
    for key in keys:
        value = identity.get(key)
        text = value[:12] + "..." if key == "source_sha256" and isinstance(value, str) else json.dumps(value)
        parts.append(f"{key} {text}")
    return ", ".join(parts)


def scoring_mode(context: EvaluationContext) -> str:
    """The scoring mode name of ``context`` (``reference`` when it has none; docs/fixed-mode.md §1)."""
    return scoring_strategy(getattr(context, "scoring", None) or None).name


def mixing_modes_message(where: Path, found: str, wanted: str) -> str:
    """The error text for a run directory that would mix scoring modes."""
    return (
        f"{where} holds results of --scoring {found}, not --scoring {wanted}; a run directory never mixes "
        "scoring modes: use another --out directory (or --overwrite to start it again)"
    )


def _check_run_identity(
    out: Path, context: EvaluationContext, model_name: str, has_results: bool, settings: Mapping[str, Any]
) -> None:
    """Refuse to resume results made on another dataset, in another scoring mode, on another language
    side or by another version of a ``graph:`` candidate's source (:func:`candidate_identity`); record
    this run's identity and settings in ``RUN_FILE``.

    Raises:
        ValueError: ``out`` holds results whose ``run.json`` names a dataset with other content,
            another scoring mode, another ``language`` (a ``run.json`` without one is an ``en`` run), or
            another source of the ``graph:`` candidate.
    """
    path = out / RUN_FILE
    recorded: dict[str, Any] = {}
    if has_results and path.exists():
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(path.read_text(encoding="utf-8"))
            recorded = loaded if isinstance(loaded, dict) else {}
    mode = scoring_mode(context)
    recorded_mode = str(recorded.get("scoring", REFERENCE.name))
    if has_results and recorded and recorded_mode != mode:
        raise ValueError(mixing_modes_message(out, recorded_mode, mode))
    language = getattr(context, "language", None) or "en"
    recorded_settings = recorded.get("settings") if isinstance(recorded.get("settings"), dict) else {}
    recorded_language = recorded_settings.get("language") or "en"
    if recorded and recorded_language != language:
        raise ValueError(
            f"{out / RESULT_FILE} holds results of the {recorded_language} side of the dataset (--lang "
            f"{recorded_language}), not {language}; resuming would mix them: use --lang {recorded_language}, "
            "--overwrite or another --out directory"
        )
    candidate = candidate_identity(context)
    known = recorded.get("candidate") if isinstance(recorded.get("candidate"), dict) else None
    _models_before.set(models_seen(out / RESULT_FILE) if has_results and candidate else None)
    if has_results and known and candidate:
        changed = [
            key
            for key in IDENTITY_KEYS
            if (key in known or key not in LATER_KEYS) and known.get(key) != candidate.get(key)
        ]
        if changed:
            raise ValueError(
                f"{out / RESULT_FILE} holds results of another version of the candidate {candidate['spec']} "
                f"(changed: {', '.join(changed)}; {_shown(known, changed)} then, {_shown(candidate, changed)} now); "
                "resuming would mix them: use --overwrite or another --out directory"
            )
    extra = {"candidate": candidate} if candidate else {}
    identity = dataset_identity(getattr(context, "dataset", None))
    if identity is None:
        write_json_atomic(
            path, {"dataset": None, "model_name": model_name, "scoring": mode, "settings": dict(settings), **extra}
        )
        return
    if recorded.get("dataset_sha256") not in (None, identity["dataset_sha256"]):
        same_file = recorded.get("dataset") == identity["dataset"]
        raise ValueError(
            f"{out / RESULT_FILE} holds results for "
            + ("an earlier version of " if same_file else "another dataset, ")
            + f"{recorded.get('dataset')} (sha256 {str(recorded['dataset_sha256'])[:12]}...), not "
            f"{identity['dataset']} (sha256 {identity['dataset_sha256'][:12]}...); session ids repeat across "
            "datasets, so resuming would mix them: use --overwrite or another --out directory"
        )
    write_json_atomic(
        path, {**identity, "model_name": model_name, "scoring": mode, "settings": dict(settings), **extra}
    )
