"""The dataset audit: checks that tell a defect in the data from a model's failure (docs/audit.md).

:func:`audit_sessions` runs every check of docs/audit.md §2 over session dicts and returns
:class:`Finding` s, one per defect, each naming the session, the task (``None`` for the whole
session), the kind, a severity and a message. The checks read the data defensively: a session that
breaks the schema of docs/dataset.md is audited as far as its fields allow (its validation problems
are findings too, :func:`validation_findings`), never refused.

Pure module: no I/O. The modules beside it hold the parts: :mod:`wildtoolbench.bench.audit_schema` (a plain
JSON-schema reading of the tools), :mod:`wildtoolbench.bench.audit_context` (what a model has seen),
:mod:`wildtoolbench.bench.audit_duplicates` (exact and near-duplicate sessions), :mod:`wildtoolbench.bench.audit_oracle` (the
gold replayed and scored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wildtoolbench.bench.audit_context import as_text, env_date, has_cjk, leaves, normalise
from wildtoolbench.bench.audit_duplicates import NEAR_DUPLICATE_THRESHOLD, duplicate_pairs, tool_names
from wildtoolbench.bench.audit_schema import json_equal, schema_problems, tool_parameters
from wildtoolbench.bench.rules.derived import DerivedContext
from wildtoolbench.bench.schema import DatasetIssue, fields_for
from wildtoolbench.bench.strategy import FIXED, REFERENCE
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS

INVALID_SESSION = "invalid_session"
SCHEMA_VIOLATION = "schema_violation"
UNKNOWN_TOOL = "unknown_tool"
DUPLICATE_SESSION = "duplicate_session"
VALUE_NOT_IN_CONTEXT = "value_not_in_context"
OBSERVATION_MISMATCH = "observation_mismatch"
SCORER_SENSITIVE = "scorer_sensitive"
FAILED_BY_ALL = "failed_by_all"

FINDING_KINDS: tuple[str, ...] = (
    INVALID_SESSION,
    SCHEMA_VIOLATION,
    UNKNOWN_TOOL,
    DUPLICATE_SESSION,
    VALUE_NOT_IN_CONTEXT,
    OBSERVATION_MISMATCH,
    SCORER_SENSITIVE,
    FAILED_BY_ALL,
)
"""Every finding kind, in report order (docs/audit.md §2)."""

SEVERITY_ERROR = "error"
SEVERITY_WARNING = "warning"
SEVERITIES: tuple[str, ...] = (SEVERITY_ERROR, SEVERITY_WARNING)
"""``error``: the data is wrong as it stands; ``warning``: probably wrong, to be reviewed (docs/audit.md §2)."""

OUTPUT_SCHEMA_KEYS: tuple[str, ...] = ("output_schema", "outputSchema", "response", "returns", "output")
"""Keys of a tool's ``function`` entry read as its declared output schema (docs/audit.md §6)."""

_OPTIMAL_TYPES = ("Parallel Multi-Tool", "Mixed Multi-Tool")

OUTCOME_KEYS: frozenset[str] = frozenset({"status", "state", "result", "message", "error", "success", "ok", "code"})
"""Observation keys that report a call's outcome, not its input: never compared with a parameter of the
same name (docs/audit.md §6)."""


@dataclass
class Finding:
    """One defect found by the audit (docs/audit.md §2).

    Attributes:
        id: the session id (``None`` for a line without one).
        task: 0-based task index, ``None`` for the whole session.
        kind: one of :data:`FINDING_KINDS`.
        severity: one of :data:`SEVERITIES`.
        message: what is wrong, in words.
        field: the dataset field at fault (``english_answer_list[1][0].action.arguments.city``), or
            ``None``; not part of :meth:`to_json`, used to draft errata.
        correction: a suggested correction (docs/audit.md §9.4): ``None`` for none, ``{}`` for "leave as it is".
        line: the dataset line of the session (1-based), when known.
    """

    id: str | None
    task: int | None
    kind: str
    severity: str
    message: str
    field: str | None = None
    correction: dict[str, Any] | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding's line of ``wtb audit --json``: exactly ``{"id", "task", "kind", "severity", "message"}`` (docs/audit.md §1)."""
        return {"id": self.id, "task": self.task, "kind": self.kind, "severity": self.severity, "message": self.message}


# --------------------------------------------------------------------------- reading the data defensively


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _nodes(answer_list: Any) -> list[tuple[int, Mapping[str, Any], str | None, Any]]:
    """``(index, node, action name, arguments)`` of every node that is a mapping."""
    out = []
    for index, node in enumerate(_list(answer_list)):
        if not isinstance(node, Mapping):
            continue
        action = node.get("action") if isinstance(node.get("action"), Mapping) else {}
        name = action.get("name") if isinstance(action.get("name"), str) else None
        out.append((index, node, name, action.get("arguments")))
    return out


def _ancestors(answer_list: Any, index: int) -> list[int]:
    """Indices of the nodes ``index`` depends on, directly or not, in ascending order (malformed lists tolerated)."""
    nodes = _list(answer_list)
    seen: set[int] = set()
    todo = [index]
    while todo:
        node = nodes[todo.pop()] if 0 <= todo[-1] < len(nodes) else None
        deps = node.get("dependency_list") if isinstance(node, Mapping) else None
        for dep in _list(deps):
            if isinstance(dep, int) and not isinstance(dep, bool) and 0 <= dep < len(nodes) and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    seen.discard(index)
    return sorted(seen)


def _function(tools: Any, name: str) -> Mapping[str, Any] | None:
    found = None
    for tool in _list(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and function.get("name") == name:
            found = function
    return found


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- the checks


def tool_findings(session: Mapping[str, Any], language: str = "en") -> list[Finding]:
    """``unknown_tool`` and ``schema_violation`` findings of one session (docs/audit.md §3).

    ``unknown_tool``: a gold call, or the ``tool_name`` of a gold question, names a tool that is not
    in the side's tool list. ``schema_violation``: a gold call's arguments break its tool's parameter
    schema read as JSON Schema (:func:`wildtoolbench.bench.audit_schema.schema_problems`: type, enum, required,
    unknown keys, ...), one finding per problem; a gold question lists a missing parameter its tool
    does not declare. Both are errors.
    """
    side = fields_for(language)
    session_id = session.get("id") if isinstance(session.get("id"), str) else None
    tools = session.get(side.tools)
    known = set(tool_names(tools))
    out: list[Finding] = []
    for task, answer_list in enumerate(_list(session.get(side.answer_list))):
        for index, _node, name, arguments in _nodes(answer_list):
            where = f"{side.answer_list}[{task}][{index}]"
            if name is None or name == PREPARE_TO_ANSWER:
                continue
            if name == ASK_USER:
                out.extend(_question_findings(session_id, task, where, arguments, tools, known))
                continue
            if name not in known:
                out.append(
                    Finding(
                        session_id, task, UNKNOWN_TOOL, SEVERITY_ERROR,
                        f"{where}: gold call to {name!r}, which is not in {side.tools} ({_names(known)})",
                        field=f"{where}.action.name", correction={"exclude": True},
                    )
                )  # fmt: skip
                continue
            schema = tool_parameters(tools, name) or {}
            for path, message in schema_problems(arguments, schema, root=True):
                out.append(
                    Finding(
                        session_id, task, SCHEMA_VIOLATION, SEVERITY_ERROR, f"{where} {name}: {path}: {message}",
                        field=f"{where}.action.arguments" + ("" if path == "arguments" else f".{path}"),
                        correction=_schema_correction(where, path, message),
                    )
                )  # fmt: skip
    return out


def _names(known: Iterable[str]) -> str:
    names = sorted(known)
    listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    return f"tools: {listed}" if names else "no tools"


def _schema_correction(where: str, path: str, message: str) -> dict[str, Any] | None:
    if message.startswith("unknown key") and path != "arguments":
        return {"path": f"{where}.action.arguments.{path}", "delete": True}
    return None


def _question_findings(
    session_id: str | None, task: int, where: str, arguments: Any, tools: Any, known: set[str]
) -> list[Finding]:
    if not isinstance(arguments, Mapping) or not isinstance(arguments.get("tool_name"), str):
        return []  # the loader reports a malformed question (invalid_session)
    tool = arguments["tool_name"]
    if tool not in known:
        return [
            Finding(
                session_id, task, UNKNOWN_TOOL, SEVERITY_ERROR,
                f"{where}: the gold question asks for parameters of {tool!r}, which is not in the tools ({_names(known)})",
                field=f"{where}.action.arguments.tool_name", correction={"exclude": True},
            )
        ]  # fmt: skip
    properties = (tool_parameters(tools, tool) or {}).get("properties")
    declared = set(properties) if isinstance(properties, Mapping) else set()
    return [
        Finding(
            session_id, task, SCHEMA_VIOLATION, SEVERITY_ERROR,
            f"{where}: the gold question lists {name!r} as a missing parameter of {tool}, which declares "
            f"{', '.join(sorted(declared)) or 'none'}",
            field=f"{where}.action.arguments.missing_required_parameters",
        )
        for name in _list(arguments.get("missing_required_parameters"))
        if isinstance(name, str) and name not in declared
    ]  # fmt: skip


def _seen_texts(node: Mapping[str, Any], *, with_call: bool) -> list[str]:
    texts = []
    if "observation" in node:
        texts.append(as_text(node["observation"]))
    if isinstance(node.get("user_input"), str):
        texts.append(node["user_input"])
    action = node.get("action")
    if with_call and isinstance(action, Mapping) and action.get("name") not in PSEUDO_TOOLS:
        texts.append(as_text(action.get("arguments")))
    return texts


def context_findings(session: Mapping[str, Any], language: str = "en") -> list[Finding]:
    """``value_not_in_context`` findings of one session (docs/audit.md §5), warnings.

    For every scalar argument value of every gold call (pseudo-tools excepted) the context is what
    the model has seen before that call (docs/audit.md §5.1): the environment string, the user
    messages of this and the earlier tasks, everything of the earlier tasks' gold (calls,
    observations, questions, the user's replies, answers), the same of the nodes this call depends on
    in its own task, and the called tool's spec. A value that
    :meth:`wildtoolbench.bench.rules.derived.DerivedContext.knows` neither finds nor derives (docs/audit.md §5.2,
    §5.3) is a finding.
    """
    side = fields_for(language)
    session_id = session.get("id") if isinstance(session.get("id"), str) else None
    env = session.get(side.env_info) if isinstance(session.get(side.env_info), str) else ""
    messages = [m if isinstance(m, str) else "" for m in _list(session.get(side.tasks))]
    tools = session.get(side.tools)
    today = env_date(env)
    history: list[str] = [env]
    out: list[Finding] = []
    for task, answer_list in enumerate(_list(session.get(side.answer_list))):
        if task < len(messages):
            history.append(messages[task])
        nodes = _nodes(answer_list)
        for index, _node, name, arguments in nodes:
            if name is None or name in PSEUDO_TOOLS or not isinstance(arguments, (Mapping, list)):
                continue
            own = [text for i in _ancestors(answer_list, index) for text in _seen_texts(answer_list[i], with_call=True)]
            function = _function(tools, name)
            spec = [json.dumps(function, ensure_ascii=False)] if function is not None else []
            context = DerivedContext([*history, *own, *spec], today=today)
            for path, value in leaves(arguments):
                if context.knows(value):
                    continue
                where = f"{side.answer_list}[{task}][{index}]"
                out.append(
                    Finding(
                        session_id, task, VALUE_NOT_IN_CONTEXT, SEVERITY_WARNING,
                        f"{where} {name}: {path} = {_short(value)} appears in no user message, environment "
                        "string, earlier observation or gold history of the session",
                        field=f"{where}.action.arguments.{path}",
                    )
                )  # fmt: skip
        for _index, node, _name, _arguments in nodes:
            history.extend(_seen_texts(node, with_call=True))
    return out


def _declared_output(function: Mapping[str, Any] | None) -> Any:
    for key in OUTPUT_SCHEMA_KEYS:
        if function is not None and isinstance(function.get(key), Mapping):
            return function[key]
    return None


def _decoded(observation: Any) -> Any:
    if isinstance(observation, str) and observation.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(observation)
        except ValueError:
            return observation
    return observation


def _contradicts(asked: Any, observed: Any) -> bool:
    if isinstance(asked, str) and isinstance(observed, str):
        if has_cjk(asked) != has_cjk(observed):
            return False  # another script: a translation, not comparable (docs/audit.md §6)
        return normalise(asked) != normalise(observed)
    if isinstance(asked, bool) or isinstance(observed, bool):
        return isinstance(asked, bool) and isinstance(observed, bool) and asked != observed
    if isinstance(asked, (int, float)) and isinstance(observed, (int, float)):
        return asked != observed
    return False


def observation_findings(session: Mapping[str, Any], language: str = "en") -> list[Finding]:
    """``observation_mismatch`` findings of one session (docs/audit.md §6).

    Errors: a real tool's observation breaks the output schema its tool declares (one of
    :data:`OUTPUT_SCHEMA_KEYS`); a question's or answer's observation is not a non-empty string.
    Warnings: a real tool's observation is empty (``null``, ``""``, ``{}``, ``[]``); an observation
    object echoes a parameter of the call (same key as a declared parameter) with another scalar
    value than the call gave, or with a value outside that parameter's ``enum`` when the call did not
    give it.
    """
    side = fields_for(language)
    session_id = session.get("id") if isinstance(session.get("id"), str) else None
    tools = session.get(side.tools)
    out: list[Finding] = []
    for task, answer_list in enumerate(_list(session.get(side.answer_list))):
        for index, node, name, arguments in _nodes(answer_list):
            where = f"{side.answer_list}[{task}][{index}]"
            if name is None or "observation" not in node:
                continue
            observation = node["observation"]

            def finding(severity: str, message: str, _where: str = where, _task: int = task) -> Finding:
                return Finding(
                    session_id, _task, OBSERVATION_MISMATCH, severity, message, field=f"{_where}.observation"
                )

            if name in PSEUDO_TOOLS:
                if not isinstance(observation, str) or not observation.strip():
                    out.append(
                        finding(
                            SEVERITY_ERROR,
                            f"{where} {name}: the observation must be the gold text, got {_short(observation)}",
                        )
                    )
                continue
            function = _function(tools, name)
            if function is None:
                continue  # unknown_tool
            if observation in (None, "", {}, []):
                out.append(
                    finding(
                        SEVERITY_WARNING,
                        f"{where} {name}: empty observation {_short(observation)}: the model learns nothing",
                    )
                )
                continue
            decoded = _decoded(observation)
            declared = _declared_output(function)
            if declared is not None:
                for path, message in schema_problems(decoded, declared, "observation"):
                    out.append(
                        finding(SEVERITY_ERROR, f"{where} {name}: {path}: {message} (the tool's declared output)")
                    )
            if not isinstance(decoded, Mapping):
                continue
            properties = (tool_parameters(tools, name) or {}).get("properties")
            properties = properties if isinstance(properties, Mapping) else {}
            asked_args = arguments if isinstance(arguments, Mapping) else {}
            for key, observed in decoded.items():
                if key not in properties or key.casefold() in OUTCOME_KEYS:
                    continue
                if key in asked_args and _contradicts(asked_args[key], observed):
                    out.append(
                        finding(
                            SEVERITY_WARNING,
                            f"{where} {name}: the observation says {key} = {_short(observed)} but the call asked "
                            f"for {key} = {_short(asked_args[key])}",
                        )
                    )
                enum = properties[key].get("enum") if isinstance(properties[key], Mapping) else None
                if key not in asked_args and isinstance(enum, list) and not isinstance(observed, (dict, list)):
                    if not any(json_equal(observed, m) or _same_text(observed, m) for m in enum):
                        out.append(
                            finding(
                                SEVERITY_WARNING,
                                f"{where} {name}: the observation says {key} = {_short(observed)}, not one of its enum values",
                            )
                        )
    return out


def _same_text(a: Any, b: Any) -> bool:
    return isinstance(a, str) and isinstance(b, str) and normalise(a) == normalise(b)


def scorer_findings(session: Mapping[str, Any], language: str = "en") -> list[Finding]:
    """``scorer_sensitive`` findings of one valid session (docs/audit.md §7).

    The gold is replayed as a model's run and scored, in reference and in fixed mode
    (:func:`wildtoolbench.bench.audit_oracle.gold_labels`). An error: the gold of a task does not score correct
    under the reference scorer (a perfect model fails it). A warning: the gold scores correct under
    the reference but not under fixed scoring, or the gold of a Parallel or Mixed Multi-Tool task is
    not optimal under the reference (a perfect model lowers the optimal path rate). A session the
    scorer cannot check at all (a gold call to an unknown tool) gives no finding here.
    """
    from wildtoolbench.bench.audit_oracle import ScoringError, gold_labels

    side = fields_for(language)
    session_id = session["id"]
    try:
        reference = gold_labels(session, scoring=REFERENCE, language=language)
        fixed = gold_labels(session, scoring=FIXED, language=language)
    except (ScoringError, LookupError, ValueError, TypeError):
        return []
    types = _list(session.get("english_task_types"))
    out: list[Finding] = []
    for task, (ref, fix) in enumerate(zip(reference, fixed)):
        if ref.label != "correct":
            then = "and under fixed scoring too" if fix.label != "correct" else "but correct under fixed scoring"
            out.append(
                Finding(
                    session_id, task, SCORER_SENSITIVE, SEVERITY_ERROR,
                    f"the gold itself scores {ref.label} under the reference scorer ({ref.reason}), {then}"
                    + (f" ({fix.reason})" if fix.reason and fix.label != "correct" else ""),
                    field=f"{side.answer_list}[{task}]",
                )
            )  # fmt: skip
        elif fix.label != "correct":
            out.append(
                Finding(
                    session_id, task, SCORER_SENSITIVE, SEVERITY_WARNING,
                    f"the gold scores correct under the reference scorer but {fix.label} under fixed scoring ({fix.reason})",
                    field=f"{side.answer_list}[{task}]",
                )
            )  # fmt: skip
        elif task < len(types) and types[task] in _OPTIMAL_TYPES and not ref.optimal:
            out.append(
                Finding(
                    session_id, task, SCORER_SENSITIVE, SEVERITY_WARNING,
                    "the gold path is not optimal under the reference (is_optimal false): a perfect model lowers "
                    "the optimal path rate",
                    field=f"{side.answer_list}[{task}]",
                )
            )  # fmt: skip
    return out


def duplicate_findings(
    sessions: Sequence[Mapping[str, Any]], language: str = "en", *, threshold: float = NEAR_DUPLICATE_THRESHOLD
) -> list[Finding]:
    """``duplicate_session`` findings (docs/audit.md §4): for each duplicate pair, one finding on each
    of the two sessions naming the other; an exact duplicate (same user messages and tool names) is an
    error, a near duplicate (shingle Jaccard similarity >= ``threshold``) a warning. The later session
    of a pair gets the suggested correction "exclude" (docs/audit.md §9)."""
    return [finding for _, finding in _duplicate_findings(sessions, language, threshold)]


def _duplicate_findings(
    sessions: Sequence[Mapping[str, Any]], language: str, threshold: float
) -> list[tuple[int, Finding]]:
    side = fields_for(language)
    out: list[tuple[int, Finding]] = []
    for i, j, similarity, exact in duplicate_pairs(
        sessions, tasks_field=side.tasks, tools_field=side.tools, threshold=threshold
    ):
        for a, b in ((i, j), (j, i)):
            this, other = sessions[a].get("id"), sessions[b].get("id")
            message = (
                f"same user messages and tools as {other}"
                if exact
                else f"near duplicate of {other} (similarity {similarity:.2f} >= {threshold})"
            )
            out.append(
                (
                    a,
                    Finding(
                        this if isinstance(this, str) else None, None, DUPLICATE_SESSION, SEVERITY_ERROR if exact else SEVERITY_WARNING,
                        message, correction=({"exclude": True} if a == j else {}) if exact else None,
                    ),
                )
            )  # fmt: skip
    return out


_TASK_FIELD = re.compile(r"^(?:english_)?(answer_list|tasks|task_types|turn_subtypes)\[(\d+)\]")


def validation_findings(issues: Iterable[DatasetIssue], ids_by_line: Mapping[int, str]) -> list[Finding]:
    """``invalid_session`` findings (errors) from the loader's problems (docs/audit.md §2, docs/dataset.md §6).

    Args:
        issues: the problems :func:`wildtoolbench.bench.schema.validate_file` reports.
        ids_by_line: the session id of each line that has one.

    Returns:
        One finding per problem, on the session of its line, with the task its field names (a turn
        subtype ``[i]`` belongs to task ``i + 1``) or ``None``; the message is the problem as the
        loader words it (``line N: field: message``).
    """
    out = []
    for issue in issues:
        task = None
        match = _TASK_FIELD.match(issue.field or "")
        if match:
            task = int(match.group(2)) + (1 if match.group(1) == "turn_subtypes" else 0)
        where = f"line {issue.line}: " if issue.line is not None else ""
        what = f"{issue.field}: {issue.message}" if issue.field else issue.message
        out.append(
            Finding(
                ids_by_line.get(issue.line or 0),
                task,
                INVALID_SESSION,
                SEVERITY_ERROR,
                where + what,
                field=issue.field,
                line=issue.line,
            )
        )
    return out


def drop_covered(invalid: Iterable[Finding], found: Iterable[Finding]) -> list[Finding]:
    """The ``invalid_session`` findings that no finding of a specific kind already reports (docs/audit.md §2).

    The loader rejects some defects that an audit check names more precisely (a gold call to a tool the
    session lacks is both a loader problem and ``unknown_tool``); the specific finding is kept and the
    loader's copy dropped, so one defect gives one finding (and one drafted erratum). Two findings are
    the same defect when they are on the same session and one's field path is the other's or starts it.

    Args:
        invalid: :func:`validation_findings` of the dataset.
        found: the findings of the audit's own checks.

    Returns:
        ``invalid`` without the covered findings, in their order.
    """
    covered: dict[str | None, list[str]] = {}
    for finding in found:
        if finding.field:
            covered.setdefault(finding.id, []).append(finding.field)

    def same_field(a: str, b: str) -> bool:
        return a == b or a.startswith(b + ".") or b.startswith(a + ".")

    return [
        finding
        for finding in invalid
        if not (finding.field and any(same_field(finding.field, f) for f in covered.get(finding.id, ())))
    ]


@dataclass
class RunTasks:
    """One run's scored tasks for the ``failed_by_all`` check (docs/audit.md §8).

    Attributes:
        name: how the run is named in messages (its model name or folder).
        tasks: session id -> the scored tasks of that session (``wildtoolbench.bench.scoring.score_session``).
    """

    name: str
    tasks: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)


def failed_by_all_findings(sessions: Sequence[Mapping[str, Any]], runs: Sequence[RunTasks]) -> list[Finding]:
    """``failed_by_all`` findings (warnings, docs/audit.md §8): a task that every given run has a scored
    result for and every run failed, with the first failing step of each run. No runs, no findings."""
    from wildtoolbench.bench.audit_oracle import first_failure

    out: list[Finding] = []
    if not runs:
        return out
    for session in sessions:
        session_id = session.get("id")
        scored = [run.tasks.get(session_id) for run in runs]
        if any(tasks is None for tasks in scored):
            continue
        for task in range(min(len(tasks) for tasks in scored)):  # type: ignore[arg-type]
            results = [tasks[task] for tasks in scored]  # type: ignore[index]
            if any(result.get("label") == "correct" for result in results):
                continue
            steps = "; ".join(f"{run.name}: {first_failure(result)}" for run, result in zip(runs, results))
            out.append(
                Finding(session_id, task, FAILED_BY_ALL, SEVERITY_WARNING, f"failed by all {len(runs)} run(s): {steps}")
            )
    return out


def audit_sessions(
    sessions: Sequence[Mapping[str, Any]],
    *,
    language: str = "en",
    valid: Sequence[bool] | None = None,
    runs: Sequence[RunTasks] = (),
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    lines: Sequence[int | None] | None = None,
) -> list[Finding]:
    """Every finding of docs/audit.md §2 over a dataset's sessions (validation problems excepted:
    :func:`validation_findings`).

    Args:
        sessions: session dicts in file order (each a JSON object; malformed fields are tolerated).
        language: the side audited, ``en`` or ``zh`` (docs/dataset.md §2.2).
        valid: per session, whether it passed the loader (docs/dataset.md §6); the gold is replayed
            only for valid sessions. Default: all valid.
        runs: scored runs for ``failed_by_all`` (none: no such findings).
        threshold: the near-duplicate threshold (docs/audit.md §4).
        lines: per session, its dataset line, copied into the findings.

    Returns:
        The findings, ordered by session (file order), then task (session-wide first), then kind
        (:data:`FINDING_KINDS` order).

    Raises:
        ValueError: ``language`` is not ``en`` or ``zh``.
    """
    fields_for(language)
    valid = list(valid) if valid is not None else [True] * len(sessions)
    per_session: list[list[Finding]] = [[] for _ in sessions]
    for index, session in enumerate(sessions):
        per_session[index].extend(tool_findings(session, language))
        per_session[index].extend(context_findings(session, language))
        per_session[index].extend(observation_findings(session, language))
        if valid[index]:
            per_session[index].extend(scorer_findings(session, language))
    by_id = {session.get("id"): index for index, session in enumerate(sessions) if isinstance(session.get("id"), str)}
    for index, finding in _duplicate_findings(sessions, language, threshold):
        per_session[index].append(finding)
    for finding in failed_by_all_findings(sessions, runs):
        per_session[by_id[finding.id]].append(finding)
    out: list[Finding] = []
    for index, found in enumerate(per_session):
        if lines is not None:
            for finding in found:
                finding.line = lines[index]
        out.extend(sort_findings(found))
    return out


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings of one session ordered by task (session-wide first) then kind (:data:`FINDING_KINDS` order), stably."""
    rank = {kind: i for i, kind in enumerate(FINDING_KINDS)}
    return sorted(findings, key=lambda f: (-1 if f.task is None else f.task, rank.get(f.kind, len(FINDING_KINDS))))


__all__ = [
    "FINDING_KINDS",
    "SEVERITIES",
    "Finding",
    "RunTasks",
    "audit_sessions",
    "context_findings",
    "duplicate_findings",
    "failed_by_all_findings",
    "observation_findings",
    "scorer_findings",
    "sort_findings",
    "tool_findings",
    "validation_findings",
    "drop_covered",
]
