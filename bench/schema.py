"""Dataset schema and loader for WildToolBench sessions (docs/dataset.md).

One line of the official ``Wild-Tool-Bench.jsonl`` is one :class:`Session`.
The models are deliberately loose where the benchmark's data is loose: tool
lists are kept as raw dicts (their JSON schemas use the non-standard
``"float"`` type), observations may be any JSON value, and unknown fields are
kept. They are strict where scoring depends on the data: 4 tasks, 4 non-empty
gold answer lists, known task types and turn subtypes, and dependency lists
that form a DAG.

Round trip: ``Session.model_validate(d).model_dump(mode="json") == d`` for a
valid line ``d`` (same keys, same key order inside ``arguments``, ints stay
ints and floats stay floats). The evaluation graph and the scorer work on
those plain dicts.

Pure module: no LangGraph import; the only I/O is reading a dataset file in
:func:`load_sessions` / :func:`validate_file`.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from wildtoolbench.bench.io import iter_jsonl, iter_jsonl_spans, loads_json, read_span
from wildtoolbench.bench.terms import (  # noqa: F401  (re-exported: the schema's vocabulary)
    ASK_USER,
    LANGUAGES,
    MULTI_TOOL_TYPES,
    PREPARE_TO_ANSWER,
    PSEUDO_TOOLS,
    TASK_TYPE_ZH,
    TASK_TYPES,
    TASKS_PER_SESSION,
    TURN_SUBTYPE_ZH,
    TURN_SUBTYPES,
    ChineseTaskType,
    ChineseTurnSubtype,
    TaskType,
    TurnSubtype,
    counted,
)


class Action(BaseModel):
    """A gold tool call: ``{"name": str, "arguments": {...}}`` (argument values kept exactly as parsed)."""

    model_config = ConfigDict(extra="allow")

    name: StrictStr = Field(min_length=1)
    arguments: dict[str, Any]


class Node(BaseModel):
    """One node of a gold answer DAG (docs/terms.md).

    ``dependency_list`` holds indices of nodes of the same answer list that must
    finish first. ``user_input`` exists only on ``ask_user_for_required_parameters``
    nodes (the user's reply the harness feeds back); it is dumped only when the
    input had it, so dumping round-trips.
    """

    model_config = ConfigDict(extra="allow")

    action: Action
    observation: Any
    dependency_list: list[StrictInt]
    user_input: StrictStr | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_user_input(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict) and "user_input" not in self.model_fields_set:
            data.pop("user_input", None)
        return data


AnswerList = list[Node]


class Session(BaseModel):
    """One benchmark session: tool list, environment string and 4 tasks with gold DAGs (docs/dataset.md).

    ``english_*`` fields drive the English evaluation; the unprefixed fields
    are the Chinese side (only ``answer_list`` matters for scoring: it is the
    progress-rate denominator). Unknown extra fields are kept and dumped.
    Structural checks (see :func:`session_structure_issues`) run after the
    field checks and raise one ``session_structure`` error whose
    ``ctx["issues"]`` lists ``(field, message)`` pairs.
    """

    model_config = ConfigDict(extra="allow")

    id: StrictStr = Field(min_length=1)
    english_env_info: StrictStr
    english_tools: list[dict[str, Any]]
    english_tasks: list[StrictStr] = Field(min_length=TASKS_PER_SESSION, max_length=TASKS_PER_SESSION)
    english_answer_list: list[AnswerList] = Field(min_length=TASKS_PER_SESSION, max_length=TASKS_PER_SESSION)
    english_task_types: list[TaskType] = Field(min_length=TASKS_PER_SESSION, max_length=TASKS_PER_SESSION)
    english_turn_subtypes: list[TurnSubtype] = Field(min_length=TASKS_PER_SESSION - 1, max_length=TASKS_PER_SESSION - 1)
    env_info: StrictStr
    tools: list[dict[str, Any]]
    tasks: list[StrictStr] = Field(min_length=TASKS_PER_SESSION, max_length=TASKS_PER_SESSION)
    answer_list: list[AnswerList] = Field(min_length=TASKS_PER_SESSION, max_length=TASKS_PER_SESSION)
    task_types: list[ChineseTaskType] = Field(min_length=TASKS_PER_SESSION, max_length=TASKS_PER_SESSION)
    turn_subtypes: list[ChineseTurnSubtype] = Field(min_length=TASKS_PER_SESSION - 1, max_length=TASKS_PER_SESSION - 1)

    _source: tuple[str, int] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_structure(self) -> Session:
        issues = session_structure_issues(self)
        if issues:
            summary = "; ".join(f"{f}: {m}" for f, m in issues)
            raise PydanticCustomError("session_structure", "{summary}", {"summary": summary, "issues": issues})
        return self

    @property
    def source(self) -> tuple[str, int] | None:
        """``(file, line)`` the session was loaded from, or ``None`` when built in memory."""
        return self._source

    def to_dict(self) -> dict[str, Any]:
        """The session as a plain JSON-ready dict, equal to the input line (``model_dump(mode="json")``; docs/dataset.md)."""
        return self.model_dump(mode="json")


@functools.cache
def session_model(tasks: int = TASKS_PER_SESSION) -> type[Session]:
    """The session model for sessions of ``tasks`` tasks (docs/dataset.md): :class:`Session` itself for the benchmark's 4.

    Other lengths serve generated sessions (``wtb generate --layers N``, checked with
    ``wtb validate --tasks N``): same fields and checks, with the per-task lists holding ``tasks``
    entries and the turn-subtype lists ``tasks - 1``.

    ``tasks`` = :data:`MIXED_TASKS` (0) gives the model of a variant set (docs/variants.md §2): each
    session is checked against its own count (its per-task lists of one length N >= 1, its turn
    subtypes N - 1).

    Raises:
        ValueError: ``tasks`` < 0 ("a session has at least 1 task").
    """
    if tasks == TASKS_PER_SESSION:
        return Session
    if tasks == MIXED_TASKS:
        return _MixedSession
    if tasks < 1:
        raise ValueError(f"a session has at least 1 task, got {tasks}")

    def per_task(kind: Any, count: int = tasks) -> Any:
        return (list[kind], Field(min_length=count, max_length=count))

    return create_model(
        f"Session{tasks}Tasks",
        __base__=Session,
        english_tasks=per_task(StrictStr),
        english_answer_list=per_task(AnswerList),
        english_task_types=per_task(TaskType),
        english_turn_subtypes=per_task(TurnSubtype, tasks - 1),
        tasks=per_task(StrictStr),
        answer_list=per_task(AnswerList),
        task_types=per_task(ChineseTaskType),
        turn_subtypes=per_task(ChineseTurnSubtype, tasks - 1),
    )


MIXED_TASKS = 0
"""The ``tasks`` value of a variant set, whose sessions may have different task counts (docs/dataset.md §6,
docs/variants.md §2): every session is checked against its own count."""
MIXED_TASKS_FIELD = "variant_of"
"""A file may mix task counts when every session whose count differs from the most common one has this field."""
_PER_TASK = ("english_tasks", "english_answer_list", "english_task_types", "tasks", "answer_list", "task_types")


class _MixedSession(Session):
    """A session of any task count N >= 1 (a variant set's; docs/variants.md §2): its per-task lists share
    one length N and its turn-subtype lists hold N - 1 entries."""

    english_tasks: list[StrictStr] = Field(min_length=1)
    english_answer_list: list[AnswerList] = Field(min_length=1)
    english_task_types: list[TaskType] = Field(min_length=1)
    english_turn_subtypes: list[TurnSubtype]
    tasks: list[StrictStr] = Field(min_length=1)
    answer_list: list[AnswerList] = Field(min_length=1)
    task_types: list[ChineseTaskType] = Field(min_length=1)
    turn_subtypes: list[ChineseTurnSubtype]

    @model_validator(mode="before")
    @classmethod
    def _same_lengths(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("english_tasks"), list):
            count = len(data["english_tasks"])
            for name in (*_PER_TASK, "english_turn_subtypes", "turn_subtypes"):
                want = count - 1 if name.endswith("turn_subtypes") else count
                value = data.get(name)
                if isinstance(value, list) and len(value) != want and count:
                    raise PydanticCustomError(
                        "task_count",
                        "{name}: {got} entries, but english_tasks has {count} tasks (expected {want})",
                        {"name": name, "got": len(value), "count": count, "want": want},
                    )
        return data


# --------------------------------------------------------------------------- language sides


@dataclass(frozen=True)
class SessionFields:
    """The dataset field names of one language side (docs/dataset.md §2.1).

    Attributes:
        language: ``"en"`` or ``"zh"``.
        env_info, tools, tasks, answer_list, task_types, turn_subtypes: the names of the fields
            that side reads (``english_*`` for ``en``, unprefixed for ``zh``).
    """

    language: str
    env_info: str
    tools: str
    tasks: str
    answer_list: str
    task_types: str
    turn_subtypes: str


_SIDES = {
    "en": SessionFields(
        "en",
        "english_env_info",
        "english_tools",
        "english_tasks",
        "english_answer_list",
        "english_task_types",
        "english_turn_subtypes",
    ),
    "zh": SessionFields("zh", "env_info", "tools", "tasks", "answer_list", "task_types", "turn_subtypes"),
}


def check_language(language: str) -> str:
    """``language`` itself when it is one of :data:`wildtoolbench.bench.terms.LANGUAGES` (docs/dataset.md §2.2).

    Raises:
        ValueError: any other value; the message lists the accepted ones.
    """
    if language not in _SIDES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    return language


def fields_for(language: str) -> SessionFields:
    """The fields a run in ``language`` reads: the env string, tools, tasks, gold answer lists, task
    types and turn subtypes of that side (docs/dataset.md §2.2).

    Pure: ``fields_for("en").tasks == "english_tasks"``, ``fields_for("zh").tasks == "tasks"``.

    Raises:
        ValueError: ``language`` is not ``"en"`` or ``"zh"``.
    """
    return _SIDES[check_language(language)]


_TASK_TYPE_FROM_ZH = {zh: en for en, zh in TASK_TYPE_ZH.items() if en not in MULTI_TOOL_TYPES}
_TURN_SUBTYPE_FROM_ZH = {zh: en for en, zh in TURN_SUBTYPE_ZH.items()}
_MULTI_TOOL_ZH = TASK_TYPE_ZH[MULTI_TOOL_TYPES[0]]


def _get(session: Session | Mapping[str, Any], name: str) -> Any:
    return getattr(session, name) if isinstance(session, Session) else session[name]


def _buckets(session: Session | Mapping[str, Any], language: str) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    side = fields_for(language)
    english_types = list(_get(session, "english_task_types"))
    english_subtypes = list(_get(session, "english_turn_subtypes"))
    if language == "en":
        return english_types, english_subtypes, []
    issues: list[tuple[str, str]] = []
    types: list[str] = []
    for index, label in enumerate(_get(session, side.task_types)):
        if label == _MULTI_TOOL_ZH:
            kind = english_types[index] if index < len(english_types) else None
            if kind not in MULTI_TOOL_TYPES:
                issues.append(
                    (
                        f"{side.task_types}[{index}]",
                        f"{label} does not say which multi-tool type; english_task_types[{index}] is {kind!r}, "
                        "not a multi-tool type, so the task has no bucket",
                    )
                )
                kind = MULTI_TOOL_TYPES[0]
            types.append(kind)
        elif label in _TASK_TYPE_FROM_ZH:
            types.append(_TASK_TYPE_FROM_ZH[label])
        else:
            issues.append((f"{side.task_types}[{index}]", f"unknown task type {label!r}"))
            types.append(str(label))
    subtypes: list[str] = []
    for index, label in enumerate(_get(session, side.turn_subtypes)):
        if label not in _TURN_SUBTYPE_FROM_ZH:
            issues.append((f"{side.turn_subtypes}[{index}]", f"unknown turn subtype {label!r}"))
        subtypes.append(_TURN_SUBTYPE_FROM_ZH.get(label, str(label)))
    return types, subtypes, issues


def bucket_labels(session: Session | Mapping[str, Any], language: str = "en") -> tuple[list[str], list[str]]:
    """The English task types and turn subtypes the metrics count a session's tasks under (docs/metrics.md §1).

    Args:
        session: a :class:`Session` or its dict.
        language: the side that ran. ``en``: ``english_task_types`` and ``english_turn_subtypes``
            as they are. ``zh``: the Chinese labels mapped to their English buckets (单工具 ->
            Single-Tool, 澄清 -> Clarify, 闲聊 -> Chat, 指代 / 省略成分 / 长期记忆 -> the three turn
            subtypes); 多工具 does not say which multi-tool type it is, so that task takes the
            multi-tool type of its English label (both sides describe the same tasks).

    Returns:
        ``(task_types, turn_subtypes)``, one entry per task / per task after the first.

    Raises:
        ValueError: (``zh``) a 多工具 task whose English label is not a multi-tool type, or an
            unknown label; the message names the field (:func:`language_issues` lists them all).
    """
    types, subtypes, issues = _buckets(session, language)
    if issues:
        raise ValueError("; ".join(f"{f}: {m}" for f, m in issues))
    return types, subtypes


def language_issues(session: Session | Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    """Problems that keep a valid session from being evaluated in ``language``, as ``(field, message)``
    pairs; ``[]`` for every consistent session (docs/dataset.md §2.2, §6, §7.1).

    ``zh``: the Chinese labels that have no metric bucket (:func:`bucket_labels`). Both sides: a gold
    node of a real tool whose name is not in the side's tool list (the argument checker has no schema
    for it, so scoring stops at that step; :func:`gold_tool_issues`).

    Raises:
        ValueError: ``language`` is not ``"en"`` or ``"zh"``.
    """
    return [*_buckets(session, language)[2], *gold_tool_issues(session, language)]


def gold_tool_issues(session: Session | Mapping[str, Any], language: str = "en") -> list[tuple[str, str]]:
    """Gold nodes of ``language``'s side that name a real tool missing from that side's tool list, as
    ``(field, message)`` pairs (docs/dataset.md §7.1): errors, because scoring cannot check the
    arguments of such a step (and the candidate was never offered the tool)."""
    side = fields_for(language)
    tools = _get(session, side.tools)
    known = {name for _, name in _tool_names(tools) if isinstance(name, str)} if isinstance(tools, list) else set()
    issues = []
    for t, nodes in enumerate(_get(session, side.answer_list)):
        for i, node in enumerate(nodes):
            name = node.action.name if isinstance(node, Node) else node["action"]["name"]
            if name not in PSEUDO_TOOLS and name not in known:
                listed = ", ".join(sorted(known)) or "none"
                issues.append(
                    (
                        f"{side.answer_list}[{t}][{i}].action.name",
                        f"gold tool {name!r} is not in {side.tools} (it holds: {listed}); the candidate cannot "
                        "call it and scoring cannot check its arguments",
                    )
                )
    return issues


# --------------------------------------------------------------------------- structural checks


def _tool_names(tools: Sequence[Mapping[str, Any]]) -> list[tuple[int, Any]]:
    names = []
    for index, tool in enumerate(tools):
        function = tool.get("function")
        names.append((index, function.get("name") if isinstance(function, Mapping) else None))
    return names


def answer_list_issues(nodes: Sequence[Node], prefix: str) -> list[tuple[str, str]]:
    """Structural problems of one gold answer list, as ``(field, message)`` pairs (docs/terms.md, docs/dataset.md).

    Checks: non-empty; every dependency index in range and not the node itself;
    no cycle (reported at the first node's dependency entry that leads into it); pseudo-tool argument shapes (``ask_user_for_required_parameters``:
    ``{"tool_name": str, "missing_required_parameters": [str, ...]}`` plus a
    string ``user_input``; ``prepare_to_answer``: ``{"answer_type": "tool"|"chat"}``).
    ``prefix`` names the list in the messages (e.g. ``"english_answer_list[2]"``).
    """
    issues: list[tuple[str, str]] = []
    n = len(nodes)
    if n == 0:
        return [(prefix, "gold answer list is empty")]
    edges_ok = True
    for i, node in enumerate(nodes):
        where = f"{prefix}[{i}]"
        for j, dep in enumerate(node.dependency_list):
            if not 0 <= dep < n:
                issues.append(
                    (f"{where}.dependency_list[{j}]", f"dependency index {dep} out of range (list has {n} nodes)")
                )
                edges_ok = False
            elif dep == i:
                issues.append((f"{where}.dependency_list[{j}]", f"node {i} depends on itself"))
                edges_ok = False
        name = node.action.name
        args = node.action.arguments
        if name == ASK_USER:
            if not isinstance(args.get("tool_name"), str) or not args.get("tool_name"):
                issues.append(
                    (
                        f"{where}.action.arguments.tool_name",
                        "ask_user_for_required_parameters needs a non-empty string tool_name",
                    )
                )
            missing = args.get("missing_required_parameters")
            if not isinstance(missing, list) or not all(isinstance(p, str) for p in missing):
                issues.append(
                    (
                        f"{where}.action.arguments.missing_required_parameters",
                        "ask_user_for_required_parameters needs a list of parameter names",
                    )
                )
            extra = sorted(set(args) - {"tool_name", "missing_required_parameters"})
            if extra:
                issues.append(
                    (f"{where}.action.arguments", f"unexpected keys for ask_user_for_required_parameters: {extra}")
                )
            if "user_input" not in node.model_fields_set or node.user_input is None:
                issues.append(
                    (f"{where}.user_input", "ask_user_for_required_parameters node needs the user's reply (user_input)")
                )
        elif name == PREPARE_TO_ANSWER:
            if args.get("answer_type") not in ("tool", "chat") or set(args) != {"answer_type"}:
                issues.append(
                    (
                        f"{where}.action.arguments",
                        f'prepare_to_answer arguments must be {{"answer_type": "tool"|"chat"}}, got {json.dumps(args, ensure_ascii=False)}',
                    )
                )
    if edges_ok:
        cycle = _find_cycle([node.dependency_list for node in nodes])
        if cycle:
            first, second = cycle[0], cycle[1]
            j = nodes[first].dependency_list.index(second)
            issues.append(
                (
                    f"{prefix}[{first}].dependency_list[{j}]",
                    "dependency cycle (node -> node it depends on): " + " -> ".join(str(i) for i in cycle),
                )
            )
    return issues


def _find_cycle(dependencies: Sequence[Sequence[int]]) -> list[int]:
    """A cycle ``[a, b, ..., a]`` in the "depends on" graph, or ``[]`` when it is acyclic."""
    n = len(dependencies)
    state = [0] * n  # 0 new, 1 on stack, 2 done
    for start in range(n):
        if state[start]:
            continue
        stack: list[tuple[int, int]] = [(start, 0)]
        trail: list[int] = [start]
        state[start] = 1
        while stack:
            node, k = stack[-1]
            deps = dependencies[node]
            if k < len(deps):
                stack[-1] = (node, k + 1)
                nxt = deps[k]
                if state[nxt] == 1:
                    return trail[trail.index(nxt) :] + [nxt]
                if state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    trail.append(nxt)
            else:
                state[node] = 2
                stack.pop()
                trail.pop()
    return []


def session_structure_issues(session: Session) -> list[tuple[str, str]]:
    """Cross-field problems of a session whose fields already type-check, as ``(field, message)`` pairs (docs/dataset.md).

    Covers both answer-list sides (:func:`answer_list_issues`) and tool entries
    without ``function.name``.
    """
    issues: list[tuple[str, str]] = []
    for side in ("english_answer_list", "answer_list"):
        for t, nodes in enumerate(getattr(session, side)):
            issues.extend(answer_list_issues(nodes, f"{side}[{t}]"))
    for side in ("english_tools", "tools"):
        # Repeated tool names are allowed: one of the original tool lists has them.
        for index, name in _tool_names(getattr(session, side)):
            if not isinstance(name, str) or not name:
                issues.append((f"{side}[{index}].function.name", "tool has no function name"))
    return issues


# --------------------------------------------------------------------------- warnings


def _schema_shape_issues(schema: Any, where: str) -> list[tuple[str, str]]:
    """``required`` / ``enum`` entries of a JSON schema (and its nested ``properties`` / ``items``) that
    the argument checker misreads (docs/dataset.md §7.2)."""
    issues: list[tuple[str, str]] = []
    stack = [(where, schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        required = node.get("required")
        properties = node.get("properties")
        if "required" in node and not isinstance(required, list):
            effect = (
                "the argument checker reads a string as the list of its characters"
                if isinstance(required, str)
                else "the argument checker requires nothing here"
            )
            issues.append((f"{path}.required", f"required is {_short(required)}, not a list: {effect}"))
        elif isinstance(required, list) and isinstance(properties, Mapping):
            for index, key in enumerate(required):
                if key not in properties:
                    issues.append(
                        (
                            f"{path}.required[{index}]",
                            f"required names {_short(key)}, which is not in properties: a call needs an argument "
                            "the schema does not declare, so a call with only declared arguments fails the check",
                        )
                    )
        if "enum" in node and not isinstance(node["enum"], list):
            issues.append(
                (
                    f"{path}.enum",
                    f"enum is {_short(node['enum'])}, not a list: the argument checker accepts only that value itself",
                )
            )
        if isinstance(properties, Mapping):
            stack.extend((f"{path}.properties.{key}", value) for key, value in properties.items())
        if "items" in node:
            stack.append((f"{path}.items", node["items"]))
    return issues


def tool_schema_issues(tools: Any, prefix: str) -> list[tuple[str, str]]:
    """Tool entries whose ``parameters`` the published evaluation still reads but misreads, as
    ``(field, message)`` pairs with the effect on scores (docs/dataset.md §7.2): no ``parameters``, a
    ``parameters`` that is not an object, a ``required`` that is not a list or names an undeclared
    key, an ``enum`` that is not a list. ``prefix`` names the list (``"english_tools"``)."""
    issues: list[tuple[str, str]] = []
    if not isinstance(tools, list):
        return issues
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping):
            continue
        where = f"{prefix}[{index}].function"
        if "parameters" not in function:
            issues.append(
                (
                    f"{where}.parameters",
                    "missing: the argument checker treats the tool as declaring no argument, so every argument "
                    "a call gives is undeclared",
                )
            )
            continue
        parameters = function["parameters"]
        if not isinstance(parameters, Mapping):
            issues.append(
                (
                    f"{where}.parameters",
                    f"{_short(parameters)} is not an object: the argument checker treats the tool as declaring no "
                    "argument, so every argument a call gives is undeclared",
                )
            )
            continue
        issues.extend(_schema_shape_issues(parameters, f"{where}.parameters"))
    return issues


def gold_argument_issues(session: Session | Mapping[str, Any], language: str = "en") -> list[tuple[str, str]]:
    """Gold calls whose own arguments fail the argument check against their tool's schema (reference
    scoring, docs/arguments.md), as ``(field, message)`` pairs (docs/dataset.md §7.2): a candidate that
    gives exactly the gold arguments is scored with a parameter error at that step. Gold nodes of a tool
    missing from the list are left to :func:`gold_tool_issues`."""
    from wildtoolbench.bench.args import check_arguments, float_to_number

    side = fields_for(language)
    tools = _get(session, side.tools)
    if not isinstance(tools, list):
        return []
    known = {name for _, name in _tool_names(tools) if isinstance(name, str)}
    checked_tools = None
    issues: list[tuple[str, str]] = []
    for t, nodes in enumerate(_get(session, side.answer_list)):
        for i, node in enumerate(nodes):
            action = node.action if isinstance(node, Node) else Action.model_validate(node["action"])
            if action.name in PSEUDO_TOOLS or action.name not in known:
                continue
            if checked_tools is None:
                checked_tools = float_to_number(tools)
            text = json.dumps(action.arguments, ensure_ascii=False)
            try:
                verdict = check_arguments(checked_tools, action.name, text, text)
            except Exception as exc:  # noqa: BLE001 - a schema the checker cannot read is reported, not raised
                verdict = f"the argument checker fails: {type(exc).__name__}: {exc}"
            if verdict != "correct":
                issues.append(
                    (
                        f"{side.answer_list}[{t}][{i}].action.arguments",
                        f"the gold arguments fail their own tool's schema ({verdict}): a candidate that gives "
                        "exactly these arguments is scored with a parameter error",
                    )
                )
    return issues


def node_count_issues(session: Session | Mapping[str, Any]) -> list[tuple[str, str]]:
    """Tasks whose Chinese ``answer_list`` holds another number of nodes than ``english_answer_list``, as
    ``(field, message)`` pairs (docs/dataset.md §2.2, §7.2): the accomplish progress rate takes its
    denominator from the Chinese side, so such a task changes AP."""
    issues = []
    english, chinese = _get(session, "english_answer_list"), _get(session, "answer_list")
    for t, (en_nodes, zh_nodes) in enumerate(zip(english, chinese)):
        if len(en_nodes) != len(zh_nodes):
            issues.append(
                (
                    f"answer_list[{t}]",
                    f"{len(zh_nodes)} nodes, english_answer_list[{t}] has {len(en_nodes)}: the accomplish progress "
                    f"rate counts {len(zh_nodes)} gold steps for this task",
                )
            )
    return issues


def session_warnings(session: Session | Mapping[str, Any], language: str = "en") -> list[tuple[str, str]]:
    """What the published evaluation still scores but scores differently from the data's intent, as
    ``(field, message)`` pairs with the effect (docs/dataset.md §7.2): :func:`tool_schema_issues` of the
    side's tools, :func:`gold_argument_issues` and :func:`node_count_issues`.

    Raises:
        ValueError: ``language`` is not ``"en"`` or ``"zh"``.
    """
    side = fields_for(language)
    return [
        *tool_schema_issues(_get(session, side.tools), side.tools),
        *gold_argument_issues(session, language),
        *node_count_issues(session),
    ]


# --------------------------------------------------------------------------- loader


@dataclass(frozen=True)
class DatasetIssue:
    """One problem in a dataset file: where it is and what is wrong.

    ``line`` is 1-based (``None`` for file-level problems such as a missing
    file); ``field`` is a path like ``english_answer_list[1][2].dependency_list[0]``
    (``"(json)"`` for a line that is not valid JSON, ``"(line)"`` for one that is not an object,
    ``"(encoding)"`` for one that is not UTF-8, ``None`` for file-level problems). ``warning`` marks
    what does not make the file invalid (docs/dataset.md §7.2).
    """

    file: str
    line: int | None
    field: str | None
    message: str
    warning: bool = False
    """A warning (docs/dataset.md §7.2): the published evaluation scores the line, with the effect the
    message states; it does not make the file invalid."""

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        message = f"warning: {self.message}" if self.warning else self.message
        return f"{where}: {self.field}: {message}" if self.field else f"{where}: {message}"


class DatasetError(Exception):
    """A dataset file has problems; ``.issues`` lists every one (never only the first)."""

    def __init__(self, issues: Sequence[DatasetIssue]):
        self.issues = list(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))


def _loc_to_field(loc: Iterable[Any]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _validation_issues(file: str, line: int, error: ValidationError) -> list[DatasetIssue]:
    issues = []
    for err in error.errors():
        ctx = err.get("ctx") or {}
        if err["type"] == "session_structure" and "issues" in ctx:
            issues.extend(DatasetIssue(file, line, f, m) for f, m in ctx["issues"])
            continue
        field_name = _loc_to_field(err["loc"]) or None
        message = err["msg"]
        if err["type"] not in ("missing",) and "input" in err and not isinstance(err["input"], (dict, list)):
            message += f" (got {_short(err['input'])})"
        issues.append(DatasetIssue(file, line, field_name, message))
    return issues


MAX_DEPTH = 100
"""Deepest nesting of arrays and objects a dataset line may have (docs/dataset.md §7.1); a result line,
which wraps the dataset's values in its own structure, may have twice as many."""


_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
"""A JSON string (to its closing quote, or to the end of an unterminated one) or one bracket."""


def _too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """The nesting of brackets outside strings in ``text`` exceeds ``limit`` (a linear scan, no recursion:
    strings are skipped whole by a regular expression, so a line of long strings costs what its brackets do)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for token in _DEPTH_TOKENS.finditer(text):
        char = text[token.start()]
        if char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return True
        elif char == "]" or char == "}":
            depth -= 1
    return False


def decode_json_line(text: str, max_depth: int = MAX_DEPTH) -> tuple[Any, str | None]:
    """``(value, None)`` for one JSON Lines line, or ``(None, problem)`` when Python cannot hold it as JSON
    (docs/dataset.md §6, §7.1): not JSON (``"invalid JSON: <reason> (column N)"``), arrays / objects
    nested over ``max_depth`` levels, or an integer of more than 4300 digits (Python's limit on
    converting a decimal string). Never raises."""
    deep = f"nested too deeply (over {max_depth} levels of arrays and objects)"
    if _too_deep(text, max_depth):
        return None, deep
    try:
        return loads_json(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return None, deep
    except ValueError as exc:  # int digits limit (sys.set_int_max_str_digits)
        return None, f"a number Python cannot read: {exc}"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogates(text: str, value: Any, limit: int = 5) -> list[tuple[str, str]]:
    """String fields of a decoded line that hold a lone UTF-16 surrogate escape (``"\\ud800"`` not
    followed by its pair), as ``(field, message)`` pairs, at most ``limit`` (docs/dataset.md §7.1).

    Such a string is not Unicode text: it cannot be written as UTF-8, so a run that copies it into a
    result line fails. ``text`` is the line as read (a line without a surrogate escape is not walked).
    """
    if not _SURROGATE_ESCAPE.search(text):
        return []
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack and len(found) < limit:
        path, item = stack.pop()
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                where = f"{path}.{key}" if path else str(key)
                if _has_surrogate(key):
                    found.append((path or "(line)", f"key {key!r} holds a lone surrogate: not Unicode text"))
                stack.append((where, child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
        elif isinstance(item, str) and _has_surrogate(item):
            bad = next(c for c in item if 0xD800 <= ord(c) <= 0xDFFF)
            found.append(
                (
                    path or "(line)",
                    f"holds a lone surrogate \\u{ord(bad):04x}: not Unicode text, cannot be written as UTF-8",
                )
            )
    return found


_NON_FINITE = re.compile(r"NaN|Infinity|[0-9][eE]\+?[0-9]{3,}")
"""What a line must hold for a number of it to be NaN or infinite (``NaN``, ``Infinity``, ``1e999``)."""


def non_finite_numbers(text: str, value: Any, limit: int = 5) -> list[tuple[str, str]]:
    """Fields of a decoded line that hold ``NaN``, ``Infinity``, ``-Infinity`` or a number too large for a
    float (``1e999``, read as infinity), as ``(field, message)`` pairs, at most ``limit``
    (docs/dataset.md §7.1). Python's JSON reader accepts them, but they are not JSON: a tool schema with
    ``"maximum": Infinity`` cannot be sent to a model, a gold value cannot be compared or written back.
    ``text`` is the line as read (a line without such a number is not walked)."""
    if not _NON_FINITE.search(text):
        return []
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack and len(found) < limit:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{path}.{key}" if path else str(key), child) for key, child in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
        elif isinstance(item, float) and not math.isfinite(item):
            found.append((path or "(line)", f"{item!r} is not a JSON number (NaN and infinities are not JSON)"))
    return found


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


T = TypeVar("T")

LineParser = Callable[[str, int, Any], tuple[T | None, list[DatasetIssue]]]


class JsonlScan(Generic[T]):
    """One streaming pass over a JSON Lines file that collects every problem instead of stopping at the
    first (docs/dataset.md §6, docs/evaluation.md §5): :func:`parse_jsonl_file` without keeping the file,
    its lines or the parsed values in memory.

    Iterating yields ``(offset, length, value)`` for each line ``parse_line`` accepted (where the
    line's bytes are, see :func:`wildtoolbench.bench.io.iter_jsonl_spans`), in file order, while :attr:`issues`
    grows: ``"(encoding)"`` for a line that is not UTF-8, ``"(json)"`` for one that is not JSON,
    ``"(json)"`` also for JSON that Python cannot hold (nested over :data:`MAX_DEPTH` levels, an
    integer of more than 4300 digits), a string field holding a lone surrogate (field named, see
    :func:`lone_surrogates`), whatever ``parse_line`` reports (its warnings go to :attr:`warnings`),
    and at the end ``"file not found"`` / ``"cannot read: ..."`` /
    ``empty_message`` for the file as a whole. A read error in the middle of the file replaces the
    issues found so far with the ``"cannot read"`` one and sets :attr:`unreadable` (values already
    yielded are then void). Iterating never raises for bad input; iterate once.

    Args:
        path: the file.
        parse_line: ``(file, line_number, value) -> (parsed or None, issues)``; ``None``
            leaves the line out, ``issues`` are added in order.
        empty_message: the file-level issue for a file without any non-blank line.
        max_depth: deepest nesting accepted (:data:`MAX_DEPTH` for a dataset).

    Attributes:
        file: ``path`` as a string (the issues' ``file``).
        issues: every :class:`DatasetIssue` found so far, in line order (a file-level one last).
        warnings: the warnings ``parse_line`` reported (docs/dataset.md §7.2), in line order.
        unreadable: the file could not be opened or read.
    """

    def __init__(
        self, path: str | os.PathLike[str], parse_line: LineParser, *, empty_message: str, max_depth: int = MAX_DEPTH
    ):
        self.max_depth = max_depth
        self.file = os.fspath(path)
        self.issues: list[DatasetIssue] = []
        self.warnings: list[DatasetIssue] = []
        self.unreadable = False
        self._parse_line = parse_line
        self._empty_message = empty_message

    def __iter__(self) -> Iterator[tuple[int, int, T]]:
        file, issues = self.file, self.issues
        seen = False
        try:
            for number, offset, length, text in iter_jsonl_spans(file):
                seen = True
                if not isinstance(text, str):  # an UndecodableLine (not named: wildtoolbench.bench.io may have been reloaded)
                    issues.append(DatasetIssue(file, number, "(encoding)", text.message))
                    continue
                raw, problem = decode_json_line(text, self.max_depth)
                if problem is not None:
                    issues.append(DatasetIssue(file, number, "(json)", problem))
                    continue
                unicode_issues = [DatasetIssue(file, number, f, m) for f, m in lone_surrogates(text, raw)]
                unicode_issues += [DatasetIssue(file, number, f, m) for f, m in non_finite_numbers(text, raw)]
                del text  # parsed: the line's text is not held while the caller has the value
                if unicode_issues:
                    issues.extend(unicode_issues)
                    continue
                try:
                    value, line_issues = self._parse_line(file, number, raw)
                except RecursionError:  # nesting json accepts but validation cannot walk
                    issues.append(
                        DatasetIssue(file, number, "(json)", f"nested too deeply (over {self.max_depth} levels)")
                    )
                    continue
                for issue in line_issues:
                    (self.warnings if issue.warning else issues).append(issue)
                if value is not None:
                    yield offset, length, value
        except FileNotFoundError:
            self.unreadable = True
            issues[:] = [DatasetIssue(file, None, None, "file not found")]
            return
        except OSError as exc:
            self.unreadable = True
            issues[:] = [DatasetIssue(file, None, None, f"cannot read: {exc.strerror or exc}")]
            return
        if not seen:
            issues.append(DatasetIssue(file, None, None, self._empty_message))


def parse_jsonl_file(
    path: str | os.PathLike[str], parse_line: LineParser, *, empty_message: str, max_depth: int = MAX_DEPTH
) -> tuple[list[T], list[DatasetIssue]]:
    """Read a JSON Lines file, collecting every problem instead of stopping at the first (docs/dataset.md, docs/evaluation.md §5).

    Shared by the dataset loader and the result-file loader. Each non-blank line
    is decoded (UTF-8, then JSON) here; the decoded value goes to ``parse_line``
    (:class:`JsonlScan` is the same pass without keeping the values).

    Args:
        path: the file.
        parse_line: ``(file, line_number, value) -> (parsed or None, issues)``; ``None``
            leaves the line out of the returned values, ``issues`` are added in order.
        empty_message: the file-level issue for a file without any non-blank line.

    Returns:
        ``(values, issues)``: the parsed values in file order, and every
        :class:`DatasetIssue` in line order (a file-level one last): ``"(encoding)"``
        for a line that is not UTF-8, ``"(json)"`` for one that is not JSON, whatever
        ``parse_line`` reports, and ``"file not found"`` / ``"cannot read: ..."`` /
        ``empty_message`` for the file as a whole. Never raises for bad input.
    """
    scan: JsonlScan[T] = JsonlScan(path, parse_line, empty_message=empty_message, max_depth=max_depth)
    values = [value for _, _, value in scan]
    return ([] if scan.unreadable else values), scan.issues


def note_session_id(first_line_of: dict[str, int], file: str, line: int, session_id: str) -> DatasetIssue | None:
    """Remember the first line that holds ``session_id``; the ``id`` issue when an earlier line had it (docs/dataset.md).

    Args:
        first_line_of: session id -> first line number seen so far (updated in place).
        file, line: where ``session_id`` stands now.

    Returns:
        ``None`` the first time, else ``DatasetIssue(file, line, "id", "duplicate id ... (first on line N)")``.
    """
    first = first_line_of.setdefault(session_id, line)
    if first == line:
        return None
    return DatasetIssue(file, line, "id", f"duplicate id {session_id!r} (first on line {first})")


def _session_line_parser(tasks: int, language: str, with_warnings: bool = True) -> LineParser:
    """The dataset loader's ``parse_line``: validate one line as a session of ``tasks`` tasks, plus the
    :func:`language_issues` of ``language``, duplicate ids and (``with_warnings``) the
    :func:`session_warnings` of ``language`` (docs/dataset.md §6, §7)."""
    model = session_model(tasks)
    check_language(language)
    first_line_of: dict[str, int] = {}

    def parse_line(file: str, number: int, raw: Any) -> tuple[Session | None, list[DatasetIssue]]:
        if not isinstance(raw, dict):
            return None, [DatasetIssue(file, number, "(line)", f"expected a JSON object, got {type(raw).__name__}")]
        issues: list[DatasetIssue] = []
        try:
            session = model.model_validate(raw)
        except ValidationError as exc:
            issues.extend(_validation_issues(file, number, exc))
            session = None
            sid = raw.get("id")
        else:
            session._source = (file, number)
            sid = session.id
            issues.extend(DatasetIssue(file, number, f, m) for f, m in language_issues(session, language))
            if with_warnings:
                found = session_warnings(session, language)
                issues.extend(DatasetIssue(file, number, f, m, warning=True) for f, m in found)
        if isinstance(sid, str) and sid:
            duplicate = note_session_id(first_line_of, file, number, sid)
            if duplicate is not None:
                issues.append(duplicate)
        return session, issues

    return parse_line


def _parse_sessions(
    path: str | os.PathLike[str], tasks: int = TASKS_PER_SESSION, language: str = "en"
) -> tuple[list[Session], list[DatasetIssue]]:
    parser = _session_line_parser(tasks, language, with_warnings=False)
    return parse_jsonl_file(path, parser, empty_message="file holds no sessions")


def load_sessions(
    path: str | os.PathLike[str], *, tasks: int = TASKS_PER_SESSION, language: str = "en"
) -> list[Session]:
    """Read a dataset file (JSON Lines, one session per line, blank lines ignored; docs/dataset.md).

    Args:
        path: the dataset file.
        tasks: tasks per session: the benchmark's 4, or N for sessions made by
            ``wtb generate --layers N`` (see :func:`session_model`).
        language: the side to be evaluated (docs/dataset.md §2.2); ``zh`` adds the
            :func:`language_issues` of each session.

    Returns:
        The sessions in file order (each knows its ``(file, line)`` via ``.source``).

    Raises:
        DatasetError: listing EVERY malformed line (bad JSON, field errors,
            structural errors, duplicate ids), plus a missing or empty file.
            Nothing is skipped silently.
    """
    sessions, issues = _parse_sessions(path, tasks, language)
    if issues:
        raise DatasetError(issues)
    return sessions


def sessions_by_id(sessions: Iterable[Session]) -> dict[str, Session]:
    """Index sessions by their ``id`` (never by line position; docs/dataset.md).

    Raises:
        DatasetError: when an id occurs twice (the issue names the second line when known).
    """
    index: dict[str, Session] = {}
    issues: list[DatasetIssue] = []
    for session in sessions:
        if session.id in index:
            file, line = session.source or ("<memory>", None)
            first = index[session.id].source
            where = f" (first on line {first[1]})" if first else ""
            issues.append(DatasetIssue(file, line, "id", f"duplicate id {session.id!r}{where}"))
            continue
        index[session.id] = session
    if issues:
        raise DatasetError(issues)
    return index


class SessionIndex(Mapping[str, dict[str, Any]]):
    """The sessions of a validated dataset file by id, each read and parsed from its line only when it
    is looked up (docs/dataset.md §3, §6): what a scorer needs without holding every :class:`Session`.

    ``index[session_id]`` is the session's line as a plain dict (``json.loads`` of the line, equal to
    ``Session.to_dict()`` of the validated session), a new dict on every lookup. Built by
    :func:`index_sessions`; iterating gives the ids in file order.
    """

    def __init__(
        self,
        file: str,
        spans: dict[str, tuple[int, int, int]],
        side_issues: dict[str, list[DatasetIssue]],
        warnings: Sequence[DatasetIssue] = (),
    ) -> None:
        self.file = file
        self._spans = spans
        self._side_issues = side_issues
        self.warnings = list(warnings)
        """The warnings of the side :func:`index_sessions` was asked for (docs/dataset.md §7.2), in file order."""

    def __getitem__(self, session_id: str) -> dict[str, Any]:
        _, offset, length = self._spans[session_id]
        return loads_json(read_span(self.file, offset, length))

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._spans

    def source(self, session_id: str) -> tuple[str, int]:
        """``(file, line)`` of a session (as :attr:`Session.source`; the line number of docs/dataset.md §6).
        Raises KeyError for an unknown id."""
        return self.file, self._spans[session_id][0]

    def language_issues(self, language: str) -> list[DatasetIssue]:
        """The :func:`language_issues` of every session for the side ``language`` (docs/dataset.md §2.2),
        in file order, each naming the session's line; ``[]`` for ``en``.

        Raises:
            ValueError: ``language`` is not ``"en"`` or ``"zh"``.
        """
        return list(self._side_issues[check_language(language)])


def index_sessions(
    path: str | os.PathLike[str], *, tasks: int = TASKS_PER_SESSION, warnings_for: str | None = None
) -> SessionIndex:
    """Validate a dataset file as :func:`load_sessions` does (``language="en"``) in one streaming pass
    and keep only where each session's line is (docs/dataset.md §6).

    Each line is validated and dropped; the index keeps its id, line number and byte span, and the
    :func:`language_issues` of each side (:meth:`SessionIndex.language_issues`), so memory does not
    grow with the sessions' size.

    Args:
        path: the dataset file.
        tasks: tasks per session (see :func:`session_model`).
        warnings_for: also collect the :func:`session_warnings` of this side (``"en"`` or ``"zh"``) in
            :attr:`SessionIndex.warnings`; ``None`` (scoring) skips them.

    Returns:
        A :class:`SessionIndex` of the file's sessions.

    Raises:
        DatasetError: the issues :func:`load_sessions` raises for the file, in the same order.
    """
    parse_session = _session_line_parser(tasks, "en", with_warnings=False)
    side_issues: dict[str, list[DatasetIssue]] = {language: [] for language in _SIDES}
    if warnings_for is not None:
        check_language(warnings_for)

    def parse_line(file: str, number: int, raw: Any) -> tuple[tuple[str, int] | None, list[DatasetIssue]]:
        session, issues = parse_session(file, number, raw)
        if session is None:
            return None, issues
        for language, found in side_issues.items():
            if language != "en":  # the English side's are among the line's issues already
                found.extend(DatasetIssue(file, number, f, m) for f, m in language_issues(session, language))
        if warnings_for is not None:
            found_warnings = session_warnings(session, warnings_for)
            issues = [*issues, *(DatasetIssue(file, number, f, m, warning=True) for f, m in found_warnings)]
        return (session.id, number), issues

    scan: JsonlScan[tuple[str, int]] = JsonlScan(path, parse_line, empty_message="file holds no sessions")
    spans = {session_id: (number, offset, length) for offset, length, (session_id, number) in scan}
    if scan.issues:
        raise DatasetError(scan.issues)
    return SessionIndex(scan.file, spans, side_issues, scan.warnings)


@dataclass
class ValidationReport:
    """Outcome of :func:`validate_file`: counts over the valid sessions and every issue found."""

    path: str
    sessions: int = 0
    task_types: Counter = field(default_factory=Counter)
    turn_subtypes: Counter = field(default_factory=Counter)
    issues: list[DatasetIssue] = field(default_factory=list)
    warnings: list[DatasetIssue] = field(default_factory=list)
    """What the evaluation still scores, with the effect (docs/dataset.md §7.2); does not make ``ok`` False."""

    @property
    def ok(self) -> bool:
        """True when the file has no issue (warnings do not count)."""
        return not self.issues

    def summary(self) -> str:
        """One line: session count, tasks per type, turn subtypes (fixed label order; docs/dataset.md)."""
        types = ", ".join(f"{t} {self.task_types.get(t, 0)}" for t in TASK_TYPES)
        subtypes = ", ".join(f"{s} {self.turn_subtypes.get(s, 0)}" for s in TURN_SUBTYPES)
        tasks = sum(self.task_types.values())
        return (
            f"{self.path}: {counted(self.sessions, 'session')}, {counted(tasks, 'task')} ({types}); "
            f"turn subtypes: {subtypes}"
        )


def validate_file(
    path: str | os.PathLike[str], *, tasks: int = TASKS_PER_SESSION, language: str = "en"
) -> ValidationReport:
    """Check a dataset file without raising: every issue, plus counts over the sessions that parsed (docs/dataset.md §6).

    Args:
        path: the dataset file.
        tasks: tasks per session (the benchmark's 4; see :func:`session_model`).
        language: the side to be evaluated (docs/dataset.md §2.2): ``zh`` also reports the
            :func:`language_issues` and counts the tasks under the buckets of :func:`bucket_labels`.

    Returns:
        A :class:`ValidationReport`; ``report.ok`` is False when any issue was found; the
        :func:`session_warnings` of ``language`` are in ``report.warnings`` (docs/dataset.md §7.2).
    """
    scan: JsonlScan[Session] = JsonlScan(
        path, _session_line_parser(tasks, language), empty_message="file holds no sessions"
    )
    sessions = [session for _, _, session in scan]
    if scan.unreadable:
        sessions = []
    report = ValidationReport(path=os.fspath(path), sessions=len(sessions), issues=scan.issues, warnings=scan.warnings)
    for session in sessions:
        types, subtypes, _ = _buckets(session, language)
        report.task_types.update(types)
        report.turn_subtypes.update(subtypes)
    return report


def session_issues(raw: Any, *, tasks: int = TASKS_PER_SESSION, language: str = "en") -> list[tuple[str, str]]:
    """The loader's problems with one session held in memory, as ``(field, message)`` pairs, exactly as
    :func:`validate_file` reports them for a line holding it (docs/dataset.md §6): field errors,
    structural errors and the :func:`language_issues` of ``language``; warnings are not included.
    Empty when the session is valid. Used to re-validate a session edited in review (docs/review.md §5).

    Raises:
        ValueError: ``language`` is not ``"en"`` or ``"zh"``; ``tasks`` < 1.
    """
    _, issues = _session_line_parser(tasks, language, with_warnings=False)("<memory>", 1, raw)
    return [(issue.field or "(line)", issue.message) for issue in issues]


def task_counts(path: str | os.PathLike[str]) -> tuple[int, list[DatasetIssue]]:
    """The number of tasks the sessions of a dataset file share, and the lines that differ (docs/dataset.md §6).

    A session's count is the length of its ``english_tasks`` list. Lines that are not JSON objects
    holding such a list are not counted, and a file that cannot be read counts nothing: the loader
    reports those.

    A variant set (docs/variants.md §2), where every line whose count differs from the most common one
    has the field ``variant_of``, gets :data:`MIXED_TASKS` (0) and no issue.

    Returns:
        ``(count, issues)``: the most common count (the first line's on a tie;
        :data:`TASKS_PER_SESSION`, 4, when no line has a non-empty list), and one issue (field
        ``english_tasks``) per line whose count differs from it, saying both counts, in line order.
    """
    file = os.fspath(path)
    counts: dict[int, list[int]] = {}
    variant_lines: set[int] = set()
    try:
        for number, text in iter_jsonl(file):  # one line at a time: the file is never held whole
            if not isinstance(text, str):  # an UndecodableLine
                continue
            raw, problem = decode_json_line(text)  # never raises: a line it cannot read is the loader's
            if problem is None and isinstance(raw, dict) and isinstance(raw.get("english_tasks"), list):
                if raw.get(MIXED_TASKS_FIELD) is not None:
                    variant_lines.add(number)
                if raw["english_tasks"]:  # a session of no task is the loader's to report (at least 1 task)
                    counts.setdefault(len(raw["english_tasks"]), []).append(number)
    except OSError:
        return TASKS_PER_SESSION, []
    if not counts:
        return TASKS_PER_SESSION, []
    common = max(counts, key=lambda n: (len(counts[n]), -counts[n][0]))
    if len(counts) > 1 and all(
        number in variant_lines for n, lines in counts.items() if n != common for number in lines
    ):
        return MIXED_TASKS, []  # a variant set (docs/variants.md §2): each session checked against its own count
    issues = [
        DatasetIssue(
            file,
            line,
            "english_tasks",
            f"{count} tasks, but {len(counts[common])} other session(s) have {common} (first on line "
            f"{counts[common][0]}); every session of a file needs the same number of tasks (--tasks N "
            "checks them all against N)",
        )
        for count, lines_of in counts.items()
        if count != common
        for line in lines_of
    ]
    return common, sorted(issues, key=lambda issue: issue.line or 0)


def infer_task_count(path: str | os.PathLike[str]) -> int:
    """Tasks per session of a dataset file, when every session has the same number (docs/dataset.md §6).

    Returns:
        The count of :func:`task_counts` (4 when nothing could be counted; the loader then reports why).

    Raises:
        DatasetError: the sessions have different counts; its issues name each line whose count
            differs from the most common one.
    """
    count, issues = task_counts(path)
    if issues:
        raise DatasetError(issues)
    return count
