"""Small sessions and replay helpers for the fixed-mode tests (docs/fixed-mode.md)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

from wildtoolbench.bench.generation import SPARE_RESPONSE
from wildtoolbench.bench.terms import TASK_TYPE_ZH
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import run_eval
from wildtoolbench.scoring.outputs import score_files
from wildtoolbench.scoring.run import score_run

ASK = "ask_user_for_required_parameters"
ANSWER = "prepare_to_answer"


def _tool(name: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool.",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool("getWeather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"]),
    _tool("bookTable", {"place": {"type": "string"}, "people": {"type": "integer"}}, ["place", "people"]),
    _tool("getNews", {"topic": {"type": "string"}}, ["topic"]),
    _tool(
        "overlayData",
        {
            "data": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "properties": {"type": "object"}},
                },
            },
            "opacity": {"type": ["float", "null"]},
        },
        ["data"],
    ),
]


def node(name: str, arguments: dict, observation: Any = None, deps=(), **extra) -> dict:
    """A gold node."""
    found = {
        "action": {"name": name, "arguments": arguments},
        "observation": observation,
        "dependency_list": list(deps),
    }
    found.update(extra)
    return found


def ask(tool: str, missing: list[str], question: str, reply: str, deps=()) -> dict:
    """An ask node with its gold question and the user's reply."""
    return node(ASK, {"tool_name": tool, "missing_required_parameters": missing}, question, deps, user_input=reply)


def answer(text: str, deps=(), kind: str = "tool") -> dict:
    """A prepare_to_answer node."""
    return node(ANSWER, {"answer_type": kind}, text, deps)


def chat_task(text: str = "You're welcome.") -> list[dict]:
    """A Chat task: one answer node."""
    return [answer(text, kind="chat")]


def make(task_lists: list[list[dict]], types: list[str], session_id: str = "wild_tool_bench_0") -> dict:
    """A valid session from up to 4 answer lists (missing ones are Chat tasks)."""
    task_lists = list(task_lists) + [chat_task() for _ in range(4 - len(task_lists))]
    types = list(types) + ["Chat"] * (4 - len(types))
    return {
        "id": session_id,
        "english_env_info": "2025-03-04 09:00:00 Tuesday",
        "english_tools": copy.deepcopy(TOOLS),
        "english_tasks": [f"Request {i}." for i in range(4)],
        "english_answer_list": task_lists,
        "english_task_types": types,
        "english_turn_subtypes": ["Partial Information", "Coreferential Reference", "Long-Range Dependency"],
        "env_info": "2025-03-04 09:00:00 星期二",
        "tools": copy.deepcopy(TOOLS),
        "tasks": [f"Request {i}." for i in range(4)],
        "answer_list": copy.deepcopy(task_lists),
        "task_types": [TASK_TYPE_ZH[t] for t in types],
        "turn_subtypes": ["省略成分", "指代", "长期记忆"],
    }


def call(call_id: str, name: str, arguments: Any) -> dict:
    """One tool call; ``arguments`` a dict (JSON-encoded) or raw text."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def calls(*items: dict) -> dict:
    """A response with tool calls."""
    return {"content": None, "tool_calls": list(items), "reasoning_content": None}


def text(content: str | None) -> dict:
    """A text response (``None`` or ``""`` for an empty reply)."""
    return {"content": content, "tool_calls": None, "reasoning_content": None}


def jsonl(path: Path) -> list[dict]:
    """The lines of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run(
    tmp_path: Path, sessions: list[dict], responses: dict[str, list[dict]] | list[dict], scoring: str, **context
) -> dict:
    """Replay scripted responses through ``wildtoolbench.runner.run_eval`` and ``wildtoolbench.scoring.run.score_run`` in one mode.

    Args:
        responses: per session id (or, for one session, a list): the responses of the whole
            session queue; a spare response is appended.

    Returns:
        ``{"out", "records", "scores", "metric"}`` (records and score lines in id order).
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    if isinstance(responses, list):
        responses = {sessions[0]["id"]: responses}
    dataset = tmp_path / "sessions.jsonl"
    dataset.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions), encoding="utf-8")
    replay = tmp_path / "candidates.jsonl"
    replay.write_text(
        "".join(
            json.dumps(
                {"session_id": sid, "candidate": "cand", "responses": [*items, dict(SPARE_RESPONSE)]},
                ensure_ascii=False,
            )
            + "\n"
            for sid, items in responses.items()
        ),
        encoding="utf-8",
    )
    out = tmp_path / f"run-{scoring}"
    run_eval(
        sessions,
        EvaluationContext(model=f"replay:{replay}#cand", scoring=scoring, dataset=str(dataset), **context),
        out,
        progress=False,
    )
    metric = score_run(dataset, out / "result.jsonl", out, scoring=scoring)
    score_file, _ = score_files(scoring)
    return {
        "out": out,
        "dataset": dataset,
        "records": jsonl(out / "result.jsonl"),
        "scores": jsonl(out / score_file),
        "metric": metric,
    }


def random_session(rng: random.Random, session_id: str) -> dict:
    """A random valid session: per task 1-6 nodes of getWeather / bookTable / getNews calls and
    independent or chained questions, random dependencies, and an answer node depending on all."""
    task_lists, types = [], []
    for _ in range(4):
        size = rng.randint(0, 5)
        nodes: list[dict] = []
        for i in range(size):
            deps = sorted(rng.sample(range(i), rng.randint(0, min(i, 2)))) if i else []
            kind = rng.random()
            if kind < 0.3:
                nodes.append(ask("bookTable", ["people"], f"Question {i}?", f"Reply {i}.", deps))
            else:
                name = rng.choice(["getWeather", "getWeather", "bookTable", "getNews"])
                arguments = (
                    {"city": rng.choice(["Oslo", "Lima", "Rome", "Kyiv"]), "days": rng.randint(1, 5)}
                    if name == "getWeather"
                    else {"place": rng.choice(["Chez Nous", "Oslo Fish"]), "people": rng.randint(1, 6)}
                    if name == "bookTable"
                    else {"topic": rng.choice(["rain", "markets", "chess"])}
                )
                nodes.append(node(name, arguments, rng.choice(["done", {"ok": True, "n": i}]), deps))
        nodes.append(answer("Here you are.", list(range(size))))
        task_lists.append(nodes)
        types.append(
            rng.choice(["Single-Tool", "Parallel Multi-Tool", "Sequential Multi-Tool", "Mixed Multi-Tool", "Clarify"])
        )
    return make(task_lists, types, session_id)
