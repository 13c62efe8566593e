"""Session generation, pure parts (docs/generation.md): task-type path tree, session plans, dataset assembly.

The generation graph (``graphs/generation.py``) runs the roles; everything here is plain data in,
plain data out, so it is testable without a model:

- the task-type tree: every ``layers``-long sequence over ``ST`` / ``MT`` / ``CQ`` / ``CC``;
- session plans: tool list, environment date, multi-tool variants and implicit-intent strategies,
  all drawn from a seed;
- turning the nodes a session produced into the dataset schema (docs/dataset.md): ``dependency_list`` from
  the planner's step structure, task types and turn subtypes, both language sides;
- the streamlined transcript and an oracle replay candidate that follows each task's gold path.

No LangGraph import, no I/O except :func:`load_tool_lists`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wildtoolbench.bench.audit_context import as_text, leaves
from wildtoolbench.bench.io import json_lines
from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.paths_fixed import tracker_for
from wildtoolbench.bench.strategy import ScoringStrategy
from wildtoolbench.bench.terms import (
    ASK_USER,
    LANGUAGES,
    PREPARE_TO_ANSWER,
    PSEUDO_TOOLS,
    TASK_TYPE_ZH,
    TURN_SUBTYPE_ZH,
    TURN_SUBTYPES,
)

LAYER_TYPES: tuple[str, ...] = ("ST", "MT", "CQ", "CC")
"""Layer types of the task-type tree: single tool, multi tool, clarify (needs a question), casual chat."""

MT_VARIANTS: tuple[str, ...] = ("plain", "parallel", "serial_parallel")
"""Multi-tool variants the user is asked for: any several calls, all independent, or a chain with a parallel part."""

STRATEGIES: tuple[str, ...] = ("coreferential", "partial", "long_range")
"""Implicit-intent strategies for tasks 2..N (docs/terms.md turn subtypes)."""

STRATEGY_LABELS: dict[str, tuple[str, str]] = {
    strategy: (label, TURN_SUBTYPE_ZH[label]) for strategy, label in zip(STRATEGIES, TURN_SUBTYPES)
}


WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAYS_ZH = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")


class GenerationInputError(ValueError):
    """Bad generation input (tool-list file, type path, option); the message names the place at fault."""


# ---------------------------------------------------------------------------------------------
# Task-type tree


def enumerate_type_paths(layers: int) -> list[tuple[str, ...]]:
    """Every ``layers``-long path of the task-type tree, in ``itertools.product`` order (4**layers paths; docs/generation.md).

    Raises:
        GenerationInputError: ``layers`` < 1.
    """
    if layers < 1:
        raise GenerationInputError(f"--layers must be at least 1, got {layers}")
    return list(itertools.product(LAYER_TYPES, repeat=layers))


def parse_type_path(text: str, layers: int) -> tuple[str, ...]:
    """Parse a path such as ``"ST,MT,CQ,CC"`` or ``"ST-MT-CQ-CC"`` (case-insensitive; docs/generation.md).

    Raises:
        GenerationInputError: unknown layer type or a length other than ``layers``.
    """
    parts = [p.strip().upper() for p in text.replace("-", ",").replace(" ", ",").split(",") if p.strip()]
    unknown = [p for p in parts if p not in LAYER_TYPES]
    if unknown:
        raise GenerationInputError(f"path {text!r}: unknown layer type(s) {unknown}; use {', '.join(LAYER_TYPES)}")
    if len(parts) != layers:
        raise GenerationInputError(f"path {text!r} has {len(parts)} layers, expected {layers} (--layers)")
    return tuple(parts)


def select_type_paths(
    layers: int, paths: Sequence[str] | None = None, samples: int | None = None, seed: int = 0
) -> list[tuple[str, ...]]:
    """The type paths to generate: the given ``paths``, else ``samples`` drawn from the tree, else all (docs/generation.md).

    Args:
        layers: tasks per session.
        paths: explicit paths (see :func:`parse_type_path`); kept in order, repeats allowed.
        samples: with ``paths``, cycle through them up to this many sessions; without, draw this many
            paths from the 4**layers tree (without replacement while possible, seeded).
        seed: makes the draw reproducible.

    Returns:
        One tuple of layer types per session to generate.

    Raises:
        GenerationInputError: bad path or ``samples`` < 1.
    """
    if samples is not None and samples < 1:
        raise GenerationInputError(f"--samples must be at least 1, got {samples}")
    if paths:
        chosen = [parse_type_path(p, layers) for p in paths]
        if samples is None:
            return chosen
        return [chosen[i % len(chosen)] for i in range(samples)]
    tree = enumerate_type_paths(layers)
    if samples is None:
        return tree
    rng = random.Random(f"paths:{seed}")
    out: list[tuple[str, ...]] = []
    while len(out) < samples:
        out += rng.sample(tree, min(len(tree), samples - len(out)))
    return out


# ---------------------------------------------------------------------------------------------
# Tool lists and session plans


def load_tool_lists(path: str | Path) -> list[list[dict[str, Any]]]:
    """Read a tool-list file: JSON Lines, one OpenAI-style tool list (a JSON array) per line (docs/generation.md).

    Raises:
        GenerationInputError: unreadable JSON, a line that is not a non-empty list of
            ``{"type": "function", "function": {"name", ...}}`` entries, or no list at all;
            the message names the file, the line and the field.
    """
    lists: list[list[dict[str, Any]]] = []
    for number, value in json_lines(path, GenerationInputError):
        if not isinstance(value, list) or not value:
            raise GenerationInputError(f"{path}:{number}: a line must be a non-empty JSON array of tools")
        for i, tool in enumerate(value):
            function = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise GenerationInputError(f"{path}:{number}: tool [{i}] lacks field function.name")
        lists.append(value)
    if not lists:
        raise GenerationInputError(f"{path}: no tool list found")
    return lists


@dataclass(frozen=True)
class SessionPlan:
    """Everything drawn before a session runs (docs/generation.md), reproducible from the run seed.

    Attributes:
        key: session key used for folders and model scripts, ``session_<index:04d>``.
        index: position in the run.
        type_path: layer types, e.g. ``("ST", "MT", "CQ", "CC")``.
        tool_line: 0-based line of the tool-list file the tools come from.
        tools: the session's tool list.
        env_info: English env string ``"YYYY-MM-DD HH:MM:SS Weekday"``.
        mt_variants: per layer, an MT variant (``MT_VARIANTS``) or ``""``.
        strategies: per layer, an implicit-intent strategy (``STRATEGIES``) or ``""`` for layer 0.
        seed: the session's own seed (vague answers, user-model pick).
        language: ``en`` or ``zh``.
        user_model_index: which ``--user-model`` this session uses.
    """

    key: str
    index: int
    type_path: tuple[str, ...]
    tool_line: int
    tools: list[dict[str, Any]] = field(compare=False)
    env_info: str
    mt_variants: tuple[str, ...]
    strategies: tuple[str, ...]
    seed: int
    language: str = "en"
    user_model_index: int = 0

    def as_state(self) -> dict[str, Any]:
        """Input of the generation graph for this session (keys of ``wildtoolbench.nodes.generation.state.State``)."""
        return {
            "session_id": self.key,
            "language": self.language,
            "tools": self.tools,
            "env_info": self.env_info,
            "layer_types": list(self.type_path),
            "mt_variants": list(self.mt_variants),
            "strategies": list(self.strategies),
            "seed": self.seed,
            "user_model_index": self.user_model_index,
        }

    def summary(self) -> dict[str, Any]:
        """JSON-able description without the tool list (for manifests and failure records)."""
        data = asdict(self)
        data.pop("tools")
        data["type_path"] = list(self.type_path)
        data["mt_variants"] = list(self.mt_variants)
        data["strategies"] = list(self.strategies)
        return data


def random_env_info(rng: random.Random, year: int) -> str:
    """A random date-time in ``year`` with its English weekday: ``"2024-05-03 10:12:00 Friday"`` (docs/generation.md)."""
    start = _dt.datetime(year, 1, 1)
    days = (_dt.datetime(year + 1, 1, 1) - start).days
    moment = start + _dt.timedelta(days=rng.randrange(days), minutes=rng.randrange(24 * 60))
    return f"{moment:%Y-%m-%d %H:%M:00} {WEEKDAYS_EN[moment.weekday()]}"


def chinese_env_info(env_info: str) -> str:
    """The Chinese-side env string: the English weekday of ``env_info`` replaced by 星期X (docs/generation.md)."""
    for en, zh in zip(WEEKDAYS_EN, WEEKDAYS_ZH):
        if env_info.endswith(en):
            return env_info[: -len(en)] + zh
    return env_info


def pick_strategies(rng: random.Random, layers: int) -> tuple[str, ...]:
    """Implicit-intent strategy per layer: ``""`` for layer 0; long-range only from layer 3 on
    (its missing information must lie more than two turns back, docs/terms.md)."""
    out = [""]
    for layer in range(1, layers):
        options = STRATEGIES if layer >= 3 else STRATEGIES[:2]
        out.append(rng.choice(options))
    return tuple(out)


def plan_sessions(
    tool_lists: Sequence[list[dict[str, Any]]],
    type_paths: Sequence[tuple[str, ...]],
    *,
    seed: int = 0,
    language: str = "en",
    year: int = 2024,
    user_models: int = 1,
) -> list[SessionPlan]:
    """One :class:`SessionPlan` per type path, reproducible from ``seed`` (docs/generation.md).

    Tool lists are dealt from a seeded shuffle of the file's lines, so ``k`` sessions on a file of
    at least ``k`` lines use ``k`` different lists. Each session's random choices come from its own
    generator (``seed`` and index), so they do not depend on concurrency.

    Raises:
        GenerationInputError: unknown language, no tool list, or ``user_models`` < 1.
    """
    if language not in LANGUAGES:
        raise GenerationInputError(f"--language must be one of {LANGUAGES}, got {language!r}")
    if not tool_lists:
        raise GenerationInputError("no tool list to draw from")
    if user_models < 1:
        raise GenerationInputError("at least one --user-model is needed")
    order = list(range(len(tool_lists)))
    random.Random(f"tools:{seed}").shuffle(order)
    plans = []
    for index, type_path in enumerate(type_paths):
        rng = random.Random(f"session:{seed}:{index}")
        line = order[index % len(order)]
        plans.append(
            SessionPlan(
                key=f"session_{index:04d}",
                index=index,
                type_path=tuple(type_path),
                tool_line=line,
                tools=tool_lists[line],
                env_info=random_env_info(rng, year),
                mt_variants=tuple(rng.choice(MT_VARIANTS) if t == "MT" else "" for t in type_path),
                strategies=pick_strategies(rng, len(type_path)),
                seed=rng.randrange(2**31),
                language=language,
                user_model_index=rng.randrange(user_models),
            )
        )
    return plans


def should_answer_vaguely(seed: int, task_index: int, ask_index: int, rate: float) -> bool:
    """Whether the user's answer to the ``ask_index``-th question of a task is vague (docs/generation.md).

    Deterministic in its arguments; true for about ``rate`` of (task, ask) pairs. Only a task's
    first answer can be vague, so a vague answer forces exactly one more question.
    """
    if ask_index > 0 or rate <= 0:
        return False
    digest = hashlib.sha256(f"vague:{seed}:{task_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


# ---------------------------------------------------------------------------------------------
# From produced nodes to the dataset schema


def _takes_from(node: Mapping[str, Any], earlier: Mapping[str, Any], known: Sequence[str]) -> bool:
    """Whether a call uses a value of an earlier call's result: an argument value (a string or a
    number of three characters or more) found in that result and in none of the ``known`` texts."""
    observation = earlier.get("observation")
    if observation is None or earlier.get("name") in PSEUDO_TOOLS:
        return False
    result = as_text(observation).lower()
    for _, value in leaves(node.get("arguments") or {}):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        text = str(value).strip().lower()
        if len(text) >= 3 and text in result and not any(text in k for k in known):
            return True
    return False


def dependency_lists(nodes: Sequence[Mapping[str, Any]], known: Sequence[str] = ()) -> list[list[int]]:
    """``dependency_list`` of each node of one task, from what the planner said each call needs
    (docs/generation.md §6.1).

    Args:
        nodes: the task's nodes in order, each ``{"name", "step", "depends_on"}``; ``step`` is the
            planner decision that issued it (0, 1, ...), ``depends_on`` the earlier node indices the
            planner named.
        known: the texts the values of the task could come from without any call (the user's
            messages and answers, earlier tasks' results; :func:`known_texts`).

    Returns:
        Per node, sorted indices. A call keeps the named dependencies that lie in earlier steps,
        depends on an earlier call whose result holds one of its argument values that no ``known``
        text holds (it could not be made before that result), and on every earlier question (``ask_user_for_required_parameters``: its values came with
        the user's answer); a call that names nothing else needs nothing else, even when the planner
        issued it a step later (a candidate that makes two independent calls at once is right, and
        on the optimal path). A question depends on every node of the step before it (it is asked
        about what was done so far). The final ``prepare_to_answer`` node depends on every earlier
        node.
    """
    by_step: dict[int, list[int]] = {}
    for index, node in enumerate(nodes):
        by_step.setdefault(int(node["step"]), []).append(index)
    out: list[list[int]] = []
    for index, node in enumerate(nodes):
        step = int(node["step"])
        if node["name"] == PREPARE_TO_ANSWER:
            out.append(list(range(index)))
            continue
        earlier = {i for s, members in by_step.items() if s < step for i in members}
        named = {d for d in node.get("depends_on") or [] if d in earlier}
        if node["name"] == ASK_USER:
            named |= set(by_step.get(step - 1, []))
        else:
            named |= {i for i in earlier if nodes[i]["name"] == ASK_USER}
            lowered = [k.lower() for k in known]
            named |= {i for i in earlier if _takes_from(node, nodes[i], lowered)}
        out.append(sorted(named))
    return out


def known_texts(tasks: Sequence[Mapping[str, Any]], index: int) -> list[str]:
    """What task ``index``'s values could come from without a call of its own (docs/generation.md
    §6.1): every user message and answer up to and including that task, and the results and
    replies of the tasks before it, as text."""
    out: list[str] = []
    for t, task in enumerate(tasks[: index + 1]):
        out.append(str(task.get("user_message") or ""))
        for node in task.get("nodes") or []:
            if node.get("user_input"):
                out.append(str(node["user_input"]))
            if t < index and node.get("observation") is not None:
                out.append(as_text(node["observation"]))
    return out


def call_depths(nodes: Sequence[Mapping[str, Any]], known: Sequence[str] = ()) -> list[int]:
    """Each node's depth in its task's DAG (:func:`dependency_lists`): 0 for a node that depends on
    nothing, else one more than its deepest dependency (docs/generation.md §6.2)."""
    deps = dependency_lists(nodes, known)
    depths: list[int] = []
    for dep in deps:
        depths.append(1 + max(depths[d] for d in dep) if dep else 0)
    return depths


def derive_task_type(layer_type: str, nodes: Sequence[Mapping[str, Any]], known: Sequence[str] = ()) -> str:
    """English task type of a finished task (docs/terms.md, docs/generation.md §6.2).

    ``CQ`` -> Clarify, ``CC`` -> Chat; otherwise from the real calls' depths in the task's DAG
    (:func:`call_depths`): one call -> Single-Tool; all calls at one depth -> Parallel Multi-Tool;
    one call per depth -> Sequential Multi-Tool; anything else -> Mixed Multi-Tool.
    """
    if layer_type == "CQ":
        return "Clarify"
    if layer_type == "CC":
        return "Chat"
    per_depth: dict[int, int] = {}
    for node, depth in zip(nodes, call_depths(nodes, known)):
        if node["name"] not in PSEUDO_TOOLS:
            per_depth[depth] = per_depth.get(depth, 0) + 1
    calls = sum(per_depth.values())
    if calls <= 1:
        return "Single-Tool"
    if len(per_depth) == 1:
        return "Parallel Multi-Tool"
    if all(count == 1 for count in per_depth.values()):
        return "Sequential Multi-Tool"
    return "Mixed Multi-Tool"


def gold_nodes(nodes: Sequence[Mapping[str, Any]], known: Sequence[str] = ()) -> list[dict[str, Any]]:
    """A task's nodes in the dataset schema (docs/terms.md): ``{"action", "observation", "dependency_list"[, "user_input"]}``
    (``dependency_list`` by :func:`dependency_lists` with the ``known`` texts)."""
    deps = dependency_lists(nodes, known)
    out = []
    for node, dep in zip(nodes, deps):
        item: dict[str, Any] = {
            "action": {"name": node["name"], "arguments": node.get("arguments") or {}},
            "observation": node.get("observation"),
            "dependency_list": dep,
        }
        if node["name"] == ASK_USER:
            item["user_input"] = node.get("user_input", "")
        out.append(item)
    return out


def session_problems(tasks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why finished tasks cannot become a benchmark session (empty list = fine).

    Checks that every task ends with an answered ``prepare_to_answer`` node, every ask node has its
    question and the user's reply, every call has an observation, and the gold path of each task
    (docs/paths.md) has no step that mixes an ask node with other nodes (the evaluator could not replay it).
    """
    problems = []
    for t, task in enumerate(tasks):
        nodes = task.get("nodes") or []
        if not nodes or nodes[-1]["name"] != PREPARE_TO_ANSWER or not nodes[-1].get("observation"):
            problems.append(f"task {t}: does not end with an answered {PREPARE_TO_ANSWER} node")
            continue
        for i, node in enumerate(nodes):
            if node.get("observation") in (None, ""):
                problems.append(f"task {t} node {i} ({node['name']}): no observation")
            if node["name"] == ASK_USER and not node.get("user_input"):
                problems.append(f"task {t} node {i}: question without the user's reply")
        if problems:
            continue
        gold = gold_nodes(nodes, known_texts(tasks, t))
        path = PathTracker(gold).gold_path
        for s, step in enumerate(path):
            names = [gold[i]["action"]["name"] for i in step]
            if ASK_USER in names and len(names) > 1:
                problems.append(f"task {t}: gold step {s} mixes a question with other nodes")
    return problems


def assemble_session(
    session_id: str,
    *,
    env_info: str,
    tools: Sequence[Mapping[str, Any]],
    tasks: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """One session in the dataset schema (docs/dataset.md).

    Args:
        session_id: ``wild_tool_bench_<N>``.
        env_info: English env string (the Chinese side gets 星期X).
        tools: the session's tool list (both language sides carry it).
        tasks: finished tasks, each ``{"layer_type", "strategy", "user_message", "nodes"}`` where
            nodes are ``{"name", "arguments", "step", "depends_on", "observation"[, "user_input"]}``.

    Returns:
        The session dict. ``english_*`` fields hold the generated text in the session's language
        (the evaluator reads them); the Chinese side carries the same tasks and answer lists with
        Chinese labels and env weekday.
    """
    english_types = [derive_task_type(t["layer_type"], t["nodes"], known_texts(tasks, i)) for i, t in enumerate(tasks)]
    strategies = [t.get("strategy") or "" for t in tasks[1:]]
    answer_list = [gold_nodes(t["nodes"], known_texts(tasks, i)) for i, t in enumerate(tasks)]
    user_messages = [t["user_message"] for t in tasks]
    return {
        "id": session_id,
        "english_env_info": env_info,
        "english_tools": list(tools),
        "english_tasks": list(user_messages),
        "english_answer_list": answer_list,
        "english_task_types": english_types,
        "english_turn_subtypes": [STRATEGY_LABELS[s][0] for s in strategies],
        "env_info": chinese_env_info(env_info),
        "tools": list(tools),
        "tasks": list(user_messages),
        "answer_list": json.loads(json.dumps(answer_list, ensure_ascii=False)),
        "task_types": [TASK_TYPE_ZH[t] for t in english_types],
        "turn_subtypes": [STRATEGY_LABELS[s][1] for s in strategies],
    }


def streamline(transcript: Iterable[Mapping[str, Any]], judges: Iterable[str] = ("checker",)) -> list[dict[str, Any]]:
    """The streamlined transcript (docs/generation.md §7): verdicts and rejected attempts removed.

    Args:
        transcript: raw entries ``{"id", "role", ...}``; a verdict entry (role in ``judges``, or
            :data:`RULE_CHECK` for a rule applied inside a role's node, such as an empty user message)
            carries ``"target"`` (the id it judged) and ``"verdict"`` (``accept`` / ``reject``).
        judges: transcript roles that write verdicts: the roles registered with ``judges=True``
            (``wildtoolbench.nodes.generation.registry.judging_roles()``; the benchmark core does not know the registry).

    Returns:
        The remaining entries, in order.
    """
    entries = list(transcript)
    verdicts = {*judges, RULE_CHECK}
    rejected = {e.get("target") for e in entries if e.get("role") in verdicts and e.get("verdict") != "accept"}
    return [dict(e) for e in entries if e.get("role") not in verdicts and e.get("id") not in rejected]


RULE_CHECK = "rule_check"
"""Transcript role of a rule check applied inside another role's node (always a verdict entry)."""


# ---------------------------------------------------------------------------------------------
# Oracle replay (candidate file format of fixtures/reference/candidates.jsonl)

SPARE_RESPONSE = {
    "content": "SPARE RESPONSE - should never be requested",
    "tool_calls": None,
    "reasoning_content": None,
}


def oracle_responses(
    session: Mapping[str, Any], *, sid: str | None = None, scoring: ScoringStrategy | str | None = None
) -> list[dict[str, Any]]:
    """Scripted responses that follow each task's gold path (docs/paths.md) with the gold arguments and texts.

    Args:
        session: a session in the dataset schema (``english_answer_list`` is followed).
        sid: short id used in tool-call ids ``call_<sid>_<task>_<step>_<j>`` (default: the id's number).
        scoring: the :class:`~wildtoolbench.bench.strategy.ScoringStrategy` or its name (default reference);
            with the inference fixes (fixed, semantic) the fixed-mode gold path is followed instead
            (``FixedPathTracker``, docs/fixed-mode.md §4): every step of it can be answered, also where the
            reference gold path mixes a question with another node.

    Returns:
        One response per model request of the evaluation step loop, then one spare response:
        ``{"content", "tool_calls", "reasoning_content"}``. A call step lists its calls in gold-path
        order with arguments as ``json.dumps(..., ensure_ascii=False)`` text (the form the scorer sorts
        the gold side by, so same-name calls pair up identically); an ask step answers with the gold question, the
        final step with the gold reply.
    """
    sid = sid if sid is not None else str(session["id"]).rsplit("_", 1)[-1]
    responses: list[dict[str, Any]] = []
    for t, answer_list in enumerate(session["english_answer_list"]):
        for s, step in enumerate(tracker_for(answer_list, scoring).gold_path):
            names = [answer_list[i]["action"]["name"] for i in step]
            if names[0] in PSEUDO_TOOLS:
                responses.append(
                    {"content": answer_list[step[0]]["observation"], "tool_calls": None, "reasoning_content": None}
                )
                continue
            calls = [
                {
                    "id": f"call_{sid}_{t}_{s}_{j}",
                    "type": "function",
                    "function": {
                        "name": answer_list[i]["action"]["name"],
                        "arguments": json.dumps(answer_list[i]["action"]["arguments"], ensure_ascii=False),
                    },
                }
                for j, i in enumerate(step)
            ]
            responses.append({"content": None, "tool_calls": calls, "reasoning_content": None})
    responses.append(dict(SPARE_RESPONSE))
    return responses


def oracle_candidate(
    session: Mapping[str, Any], candidate: str = "oracle", *, scoring: ScoringStrategy | str | None = None
) -> dict[str, Any]:
    """A replay-candidate record ``{"session_id", "candidate", "responses"}`` for ``session`` (see
    :func:`oracle_responses`); ``wtb eval`` with it should score every task correct (docs/generation.md;
    with the inference fixes of ``scoring``: the fixed-mode gold path, docs/fixed-mode.md §4)."""
    return {
        "session_id": session["id"],
        "candidate": candidate,
        "responses": oracle_responses(session, scoring=scoring),
    }
