"""LangSmith tracing for ``wtb eval`` / ``wtb generate``: run names, metadata, secret redaction.

Tracing uses the standard LangSmith variables (``LANGSMITH_TRACING``, ``LANGSMITH_API_KEY``,
``LANGSMITH_ENDPOINT``, ``LANGSMITH_PROJECT``; the older ``LANGCHAIN_*`` names work too). LangGraph
and LangChain already trace every graph node and model call; this module adds what the benchmark
needs on top:

- :func:`tracing_scope` wraps one CLI run: it turns tracing on or off for the run (``--no-trace``),
  installs a LangSmith ``Client`` whose ``anonymizer`` is :func:`redact` (applied by the SDK to run
  inputs, outputs, metadata and errors before upload), and flushes the client at the end.
- :func:`session_run_config` gives the ``run_name`` / ``metadata`` / ``tags`` of a session's root
  run (dataset, session id, model spec, language, project version).
- :func:`task_metadata` / :func:`step_metadata` build the task and step metadata (task index, task
  type, turn subtype, step index, step label), and :func:`annotate_current_run` attaches them to the
  run of the graph node that is executing.
- :func:`redact`, :func:`redact_text` and :func:`redact_record` remove API keys, ``Authorization``
  headers and credentials in URLs (``https://user:pass@host``, ``?api_key=...``) from traced data and
  from result files.

Nothing here imports LangGraph; ``langsmith`` is imported lazily so that scoring stays light.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

REDACTED = "[REDACTED]"

# Keys whose string values are secrets wherever they appear (compared lower-cased, "-" -> "_").
SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "openai_api_key",
        "langsmith_api_key",
        "langchain_api_key",
        "deepseek_api_key",
        "anthropic_api_key",
        "x_api_key",
        "authorization",
        "proxy_authorization",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
        "auth_token",
        "bearer_token",
    }
)

# Environment variables whose values are secrets: "*_API_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD".
_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values ("x", "EMPTY") are placeholders and would mangle ordinary text

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:pass@host  ->  scheme://[REDACTED]@host
    (re.compile(r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s@\"'<>]+@"), r"\g<keep>" + REDACTED + "@"),
    # ?api_key=...&token=...  (query parameters that carry credentials)
    (
        re.compile(
            r"(?P<keep>[?&](?:api[_-]?key|key|access[_-]?token|token|auth|secret|password|sig|signature)=)"
            r"[^&#\s\"'<>]+",
            re.IGNORECASE,
        ),
        r"\g<keep>" + REDACTED,
    ),
    # Authorization: Bearer xxx / 'x-api-key': 'xxx' / api_key="xxx" in reprs and logs
    (
        re.compile(
            r"(?P<keep>\b(?:proxy-)?authorization|\bx-api-key|\bapi[_-]?key)(?P<sep>[\"']?\s*[:=]\s*[\"']?)"
            r"(?P<scheme>(?:bearer|basic|token)\s+)?[^\s\"',;}&#]+",
            re.IGNORECASE,
        ),
        r"\g<keep>\g<sep>\g<scheme>" + REDACTED,
    ),
    (re.compile(r"(?P<keep>\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE), r"\g<keep>" + REDACTED),
    # well-known key shapes: OpenAI / DeepSeek "sk-...", LangSmith "lsv2_...", Hugging Face, Google
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"\blsv2_[A-Za-z0-9_]{8,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), REDACTED),
)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking environment variables (``*_API_KEY``, ``*_TOKEN``, ...), longest first.

    Args:
        environ: mapping to read (default ``os.environ``).

    Returns:
        Distinct values at least 6 characters long, longest first (so a secret that contains
        another is replaced whole).
    """
    env = os.environ if environ is None else environ
    values = {v for k, v in env.items() if _SECRET_ENV.search(k) and v and len(v) >= _MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


# Cheap pre-check: a string that matches none of these cannot match any pattern in _PATTERNS.
_TRIGGER = re.compile(r"@|[?&][A-Za-z_\-]+=|authorization|api[_-]?key|bearer|sk-|lsv2_|hf_|AIza", re.IGNORECASE)


def redact_text(text: str, secrets: list[str] | None = None) -> str:
    """Replace credentials inside ``text`` with ``[REDACTED]``.

    Removes, in order: the exact values in ``secrets`` (default :func:`secret_values`), user
    information in URLs, credential query parameters (``api_key=``, ``token=``, ...),
    ``Authorization`` / ``x-api-key`` header values, bearer tokens and well-known key shapes
    (``sk-...``, ``lsv2_...``).

    Args:
        text: any string.
        secrets: exact secret strings to remove; ``None`` reads them from the environment.

    Returns:
        The text with every match replaced; unchanged text is returned as is.
    """
    return _redact_text_cached(text, tuple(secret_values() if secrets is None else secrets))


@functools.lru_cache(maxsize=65536)
def _redact_text_cached(text: str, secrets: tuple[str, ...]) -> str:
    # Traced graph state repeats the same strings (tools, messages) in every node run: cache.
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    if not _TRIGGER.search(text):
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _is_secret_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower().replace("-", "_") in SECRET_KEYS


def redact(value: Any, secrets: list[str] | None = None) -> Any:
    """Return a copy of ``value`` (JSON-like data) with every credential replaced by ``[REDACTED]``.

    Dict entries whose key names a secret (``api_key``, ``authorization``, ``x-api-key``,
    ``password``, ...; see :data:`SECRET_KEYS`) lose their value; every string is passed through
    :func:`redact_text`. Lists, tuples and dicts are walked recursively; other values are kept.
    This is the ``anonymizer`` of the LangSmith client built by :func:`make_client`.

    Args:
        value: dicts / lists / strings / scalars (as the LangSmith SDK hands over run data).
        secrets: exact secret strings; ``None`` reads them once from the environment.

    Returns:
        The redacted copy (same shape).
    """
    if secrets is None:
        secrets = secret_values()
    if isinstance(value, str):
        return _redact_text_cached(value, tuple(secrets)) if len(value) >= 6 else value
    if isinstance(value, dict):
        return {
            k: (REDACTED if _is_secret_key(k) and isinstance(v, str) and v else redact(v, secrets))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v, secrets) for v in value)
    return value


def redact_record(record: Any, secrets: list[str] | None = None) -> Any:
    """Redact a result record (SPEC 3.4) or session before it is written to a result file.

    Benchmark content (tool arguments, observations, replies) must stay byte-identical to what
    the model produced, so only two things are touched: the exact secret values of the environment
    (anywhere), and every credential pattern of :func:`redact_text` inside error strings (the
    session-level ``"Error during inference: ..."`` result and the steps' ``error_reason``), which
    is where an HTTP client's message could carry a URL or header.

    Args:
        record: a JSON-like value, typically one line of ``result.jsonl``.
        secrets: exact secret strings; ``None`` reads them from the environment.

    Returns:
        The redacted copy.
    """
    if secrets is None:
        secrets = secret_values()

    def walk(value: Any, key: str | None) -> Any:
        if isinstance(value, str):
            if key in ("error_reason", "error") or (key == "result" and value.startswith("Error")):
                return redact_text(value, secrets)
            for secret in secrets:
                if secret in value:
                    value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        return value

    return walk(record, None)


@functools.lru_cache(maxsize=1)
def project_version() -> str:
    """Version of this project: the installed distribution's, else ``pyproject.toml``'s, else ``"0+unknown"``."""
    from importlib import metadata

    try:
        return metadata.version("wildtoolbench-langgraph")
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        import tomllib

        return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, ValueError, ImportError):
        return "0+unknown"


def tracing_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for LangSmith tracing (``LANGSMITH_TRACING`` or ``LANGCHAIN_TRACING_V2`` = true)."""
    env = os.environ if environ is None else environ
    for name in ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        if env.get(name, "").strip().lower() == "true":
            return True
    return False


# Run fields the anonymizer does not cover: the model's constructor arguments ("serialized", which
# holds base URLs) and "extra" (invocation parameters, runtime, metadata).
_RUN_FIELDS_TO_REDACT = ("serialized", "extra", "events", "error")


def redact_run_ops(runs: Any) -> list[dict[str, Any]]:
    """``process_buffered_run_ops`` hook of the LangSmith client: redact the run fields the anonymizer skips.

    Args:
        runs: the buffered run dicts (``post`` and ``patch`` operations) as the SDK is about to send them.

    Returns:
        The same runs, in the same order and with the same ids, with :func:`redact` applied to
        ``serialized``, ``extra``, ``events`` and ``error``.
    """
    secrets = secret_values()
    out = []
    for run in runs:
        run = dict(run)
        for key in _RUN_FIELDS_TO_REDACT:
            if run.get(key) is not None:
                run[key] = redact(run[key], secrets)
        out.append(run)
    return out


def make_client(client_class: type | None = None, **kwargs: Any) -> Any:
    """Build a ``langsmith.Client`` that redacts secrets before anything is uploaded.

    The client reads ``LANGSMITH_ENDPOINT`` / ``LANGSMITH_API_KEY`` as usual. Two SDK hooks redact:

    - ``anonymizer`` = :func:`redact`, applied by the SDK to every run's inputs, outputs, metadata
      and error string (it takes precedence over ``hide_inputs`` / ``hide_outputs``, which cover less);
    - ``process_buffered_run_ops`` = :func:`redact_run_ops` for what the anonymizer does not see
      (a model's serialized constructor arguments with its base URL, invocation parameters). Runs
      are then sent in buffers of ``run_ops_buffer_size`` (default 50) or every
      ``run_ops_buffer_timeout_ms`` (default 1000), and on ``client.flush()``.

    ``client_class`` (a ``langsmith.Client`` subclass) and extra keyword arguments go to the constructor.
    """
    import langsmith

    kwargs.setdefault("anonymizer", redact)
    kwargs.setdefault("process_buffered_run_ops", redact_run_ops)
    kwargs.setdefault("run_ops_buffer_size", 50)
    kwargs.setdefault("run_ops_buffer_timeout_ms", 1000)
    return (client_class or langsmith.Client)(**kwargs)


@contextlib.contextmanager
def tracing_scope(
    *,
    no_trace: bool = False,
    project: str | None = None,
    tags: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    client: Any = None,
) -> Iterator[Any]:
    """Run a block with LangSmith tracing set up for one ``wtb`` command.

    Args:
        no_trace: ``True`` (``--no-trace``) disables tracing for the block whatever the environment says.
        project: LangSmith project (default: ``LANGSMITH_PROJECT``, else the SDK's ``default``).
        tags: tags added to every run of the block.
        metadata: metadata added to every run of the block.
        client: a ``langsmith.Client`` to use; default :func:`make_client` (redacting).

    Yields:
        The client when tracing is on, else ``None``. On exit the client is flushed so that the
        traces are sent before the process ends.
    """
    from langsmith import run_helpers

    if no_trace or not tracing_requested():
        with run_helpers.tracing_context(enabled=False):
            yield None
        return
    client = client or make_client()
    try:
        with run_helpers.tracing_context(
            enabled=True, client=client, project_name=project, tags=tags, metadata=metadata
        ):
            yield client
    finally:
        client.flush()


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


def task_metadata(task_idx: int, task_type: str | None, turn_subtype: str | None) -> dict[str, Any]:
    """Metadata of a task's runs: ``task_idx`` (0-based), ``task_type``, ``turn_subtype`` (``First Turn`` for task 0).

    ``turn_subtype`` is the session's ``english_turn_subtypes[task_idx - 1]`` for later tasks (SPEC 4.3).
    """
    return {
        "task_idx": task_idx,
        "task_type": task_type,
        "turn_subtype": turn_subtype if turn_subtype is not None else ("First Turn" if task_idx == 0 else None),
    }


def turn_subtype_of(session: Mapping[str, Any], task_idx: int, language: str = "en") -> str | None:
    """The turn subtype of task ``task_idx`` of ``session``: ``First Turn`` for task 0, else the stored label."""
    if task_idx == 0:
        return "First Turn"
    subtypes = session.get("english_turn_subtypes" if language == "en" else "turn_subtypes") or []
    return subtypes[task_idx - 1] if task_idx - 1 < len(subtypes) else None


def task_type_of(session: Mapping[str, Any], task_idx: int, language: str = "en") -> str | None:
    """The task type of task ``task_idx`` of ``session`` (``english_task_types`` for ``en``)."""
    types = session.get("english_task_types" if language == "en" else "task_types") or []
    return types[task_idx] if task_idx < len(types) else None


def step_metadata(
    task_idx: int,
    step_idx: int,
    step_label: str | None = None,
    *,
    task_type: str | None = None,
    turn_subtype: str | None = None,
) -> dict[str, Any]:
    """Metadata of a step's runs: task metadata plus ``step_idx`` and ``step_label``.

    ``step_label`` is the step's ``current_action_name_label`` (``correct`` / ``error``) once known,
    or a role label during generation (``planner``, ``checker``...).
    """
    meta = task_metadata(task_idx, task_type, turn_subtype)
    meta["step_idx"] = step_idx
    if step_label is not None:
        meta["step_label"] = step_label
    return meta


def annotate_current_run(metadata: Mapping[str, Any] | None = None, tags: list[str] | None = None) -> bool:
    """Add ``metadata`` / ``tags`` to the LangSmith run of the code that is executing (a graph node).

    Inside a LangGraph node the current run is the node's run; the additions are sent with the
    run's end. Does nothing when tracing is off.

    Returns:
        ``True`` when a run was annotated.
    """
    try:
        from langsmith.run_helpers import get_current_run_tree
    except ImportError:  # pragma: no cover - langsmith is a dependency
        return False
    run = get_current_run_tree()
    if run is None:
        return False
    if metadata:
        run.add_metadata(dict(metadata))
    if tags:
        run.add_tags(list(tags))
    return True


def evaluation_node_metadata(
    state: Mapping[str, Any],
    *,
    with_step: bool = True,
    step_label: str | None = None,
    task_label: str | None = None,
) -> dict[str, Any]:
    """Task / step metadata of an evaluation-graph node run, read from the graph state.

    Args:
        state: the evaluation state (``session``, ``task_idx``, ``step``).
        with_step: include ``step_idx`` (nodes inside the step loop).
        step_label: the step's ``current_action_name_label`` once the matcher has judged it.
        task_label: the task's ``action_name_label`` when the task is finished.

    Returns:
        ``{"task_idx", "task_type", "turn_subtype"[, "step_idx"][, "step_label"][, "task_label"]}``.
    """
    session = state.get("session") or {}
    task_idx = int(state.get("task_idx") or 0)
    meta = task_metadata(task_idx, task_type_of(session, task_idx), turn_subtype_of(session, task_idx))
    if with_step:
        meta["step_idx"] = int(state.get("step") or 0)
    if step_label is not None:
        meta["step_label"] = step_label
    if task_label is not None:
        meta["task_label"] = task_label
    return meta


def annotate_evaluation_node(state: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Attach :func:`evaluation_node_metadata` to the running node's LangSmith run; returns the metadata."""
    meta = evaluation_node_metadata(state, **kwargs)
    annotate_current_run(meta)
    return meta


def context_settings(context: Any, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
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


def generation_node_metadata(state: Any, role: str) -> dict[str, Any]:
    """Task / step metadata of a generation-graph role call, read from the generation state.

    Args:
        state: the generation ``State`` (attributes ``tasks``, ``layer_types``, ``strategies``) or a mapping.
        role: ``user`` / ``planner`` / ``checker`` / ``tool`` / ``agent``; recorded as ``step_label``.

    Returns:
        ``{"task_idx", "task_type" (the layer type: ST/MT/CQ/CC), "turn_subtype" (the implicit-intent
        strategy, ``First Turn`` for task 0), "step_idx" (planner steps already taken in the task),
        "step_label": role}``.
    """

    def get(name: str) -> Any:
        return state.get(name) if isinstance(state, Mapping) else getattr(state, name, None)

    tasks = get("tasks") or []
    task_idx = max(len(tasks) - 1, 0)
    layer_types = get("layer_types") or []
    strategies = get("strategies") or []
    nodes = (tasks[-1].get("nodes") or []) if tasks else []
    steps = {n.get("step") for n in nodes if isinstance(n, Mapping)}
    return step_metadata(
        task_idx,
        len(steps),
        role,
        task_type=layer_types[task_idx] if task_idx < len(layer_types) else None,
        turn_subtype=(strategies[task_idx] or None) if task_idx < len(strategies) and task_idx > 0 else None,
    )
