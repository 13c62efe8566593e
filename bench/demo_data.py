"""Scripted candidates for the bundled demo sessions.

The demo sessions (``bench/data/demo_sessions.jsonl``, dataset schema of docs/dataset.md)
are hand-written data. This module derives the two scripted candidates that
ship beside them in ``bench/data/demo_candidates.jsonl`` (format of the
reference ``candidates.jsonl``: ``{"session_id", "candidate", "responses"}``,
one response per model request over the whole session, tasks in order, plus
one spare response that must never be consumed):

- ``oracle`` follows each task's gold path (the first optimal path, docs/paths.md)
  with the exact gold arguments, the gold question at ask steps and the gold
  reply at the final step;
- ``demo-model`` is the oracle with the realistic mistakes listed in
  :data:`DEMO_MODEL_MISTAKES` applied, so the demo report shows a mix of
  numbers.

Regenerate the candidates file after editing the sessions with
``python -m wildtoolbench.bench.demo_data``; ``python -m wildtoolbench.bench.demo_data --check`` exits with
status 1 when the committed file is out of date.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench.bench.paths import PathTracker
from wildtoolbench.bench.terms import ASK_USER as ASK
from wildtoolbench.bench.terms import PREPARE_TO_ANSWER as ANSWER

DATA_DIR = Path(__file__).resolve().parent / "data"
SESSIONS_PATH = DATA_DIR / "demo_sessions.jsonl"
CANDIDATES_PATH = DATA_DIR / "demo_candidates.jsonl"


def bundled_demo_sessions() -> Path:
    """Path of the bundled demo dataset ``demo_sessions.jsonl`` (package data of ``bench``).

    Located with ``importlib.resources``, so it works from a source tree, an editable install and
    an installed wheel (package data is a real file there; ``wtb eval`` reads it by path).

    Raises:
        FileNotFoundError: the package was installed without its data files.
    """
    from importlib.resources import files

    path = Path(str(files("wildtoolbench.bench").joinpath("data").joinpath("demo_sessions.jsonl")))
    if not path.is_file():
        raise FileNotFoundError(f"bundled demo dataset missing at {path}; reinstall the package with its data files")
    return path


DEMO_SPARE_RESPONSE: dict[str, Any] = {"content": "SPARE RESPONSE", "tool_calls": None, "reasoning_content": None}

Response = dict[str, Any]
TaskEdit = Callable[[list[Response]], list[Response]]


def _text(content: str) -> Response:
    return {"content": content, "tool_calls": None, "reasoning_content": None}


def _calls(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Response:
    return {
        "content": None,
        "tool_calls": [
            {
                "id": "",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
            for name, arguments in calls
        ],
        "reasoning_content": None,
    }


def gold_task_responses(answer_list: Sequence[Mapping[str, Any]]) -> list[Response]:
    """One oracle response per step of the task's gold path (docs/paths.md), call ids left blank.

    Input: one gold answer list (nodes with ``action``, ``observation``, ``dependency_list``).
    Output: a list of responses: a call step gives ``content=None`` and its calls in path order
    with the gold arguments; an ask or answer step gives the node's observation as text.
    Raises ``ValueError`` if a gold step mixes a pseudo-tool node with anything else
    (reference quirk 11: no response can match such a step).
    """
    responses: list[Response] = []
    for step in PathTracker(answer_list).gold_path:
        nodes = [answer_list[i] for i in step]
        names = [node["action"]["name"] for node in nodes]
        if ASK in names or ANSWER in names:
            if len(nodes) != 1:
                raise ValueError(f"gold step {step} mixes {names}: no response can match it")
            responses.append(_text(nodes[0]["observation"]))
        else:
            responses.append(_calls([(n["action"]["name"], n["action"]["arguments"]) for n in nodes]))
    return responses


def _assign_call_ids(responses: list[Response], session_index: int, task_index: int) -> list[Response]:
    for step, response in enumerate(responses):
        for j, tool_call in enumerate(response["tool_calls"] or []):
            tool_call["id"] = f"call_{session_index}_{task_index}_{step}_{j}"
    return responses


def session_index(session: Mapping[str, Any]) -> int:
    """Numeric suffix of a session id ``wild_tool_bench_<N>`` (docs/dataset.md). Raises ``ValueError`` otherwise."""
    prefix, _, number = str(session["id"]).rpartition("_")
    if prefix != "wild_tool_bench" or not number.isdigit():
        raise ValueError(f"session id {session['id']!r} is not of the form wild_tool_bench_<N>")
    return int(number)


def candidate_responses(session: Mapping[str, Any], edits: Mapping[int, TaskEdit] | None = None) -> list[Response]:
    """All responses of one scripted candidate for one session, spare response last.

    ``edits`` maps a task index to a function that rewrites that task's oracle responses
    (see :data:`DEMO_MODEL_MISTAKES`); without it the result is the oracle. Call ids are
    ``call_<session>_<task>_<step>_<j>`` after editing.
    """
    sid = session_index(session)
    out: list[Response] = []
    for task_index, answer_list in enumerate(session["english_answer_list"]):
        responses = gold_task_responses(answer_list)
        if edits and task_index in edits:
            responses = edits[task_index](copy.deepcopy(responses))
        out.extend(_assign_call_ids(responses, sid, task_index))
    out.append(dict(DEMO_SPARE_RESPONSE))
    return out


# --- the demo model's mistakes -------------------------------------------------------------------------


def _edit_arguments(step: int, call: int, change: Callable[[dict[str, Any]], None]) -> TaskEdit:
    def edit(responses: list[Response]) -> list[Response]:
        function = responses[step]["tool_calls"][call]["function"]
        arguments = json.loads(function["arguments"])
        change(arguments)
        function["arguments"] = json.dumps(arguments, ensure_ascii=False)
        return responses

    return edit


def set_argument(step: int, call: int, path: Sequence[str | int], value: Any) -> TaskEdit:
    """Give the argument at ``path`` (keys / list indices) of one call a wrong value; the task goes on."""

    def change(arguments: dict[str, Any]) -> None:
        target: Any = arguments
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return _edit_arguments(step, call, change)


def drop_argument(step: int, call: int, key: str) -> TaskEdit:
    """Leave out a top-level argument of one call; the task goes on."""
    return _edit_arguments(step, call, lambda arguments: arguments.pop(key))


def rename_tool(step: int, call: int, name: str) -> TaskEdit:
    """Call a tool under a wrong name; the harness stops the task at that step."""

    def edit(responses: list[Response]) -> list[Response]:
        responses[step]["tool_calls"][call]["function"]["name"] = name
        return responses[: step + 1]

    return edit


def reply_instead(step: int, text: str) -> TaskEdit:
    """Reply in text at a step that needs a call (a needless question or an answer from memory).

    The harness stops the task there with a name error.
    """

    def edit(responses: list[Response]) -> list[Response]:
        return responses[:step] + [_text(text)]

    return edit


def call_instead(step: int, name: str, arguments: Mapping[str, Any]) -> TaskEdit:
    """Make a call at a step that needs a text reply (e.g. skip a needed question).

    The harness stops the task there with a name error.
    """

    def edit(responses: list[Response]) -> list[Response]:
        return responses[:step] + [_calls([(name, arguments)])]

    return edit


def one_call_per_step(step: int) -> TaskEdit:
    """Issue the calls of one parallel step one per request, in the same order (correct, not optimal)."""

    def edit(responses: list[Response]) -> list[Response]:
        split = [dict(responses[step], tool_calls=[c]) for c in responses[step]["tool_calls"]]
        return responses[:step] + split + responses[step + 1 :]

    return edit


@dataclass(frozen=True)
class Mistake:
    """One scripted mistake of the demo model: where it is, what it does, and the task outcome."""

    session: int
    task: int
    edit: TaskEdit
    description: str


DEMO_MODEL_MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        0,
        1,
        call_instead(0, "bookFlight", {"flight_id": "TP662", "passengers": [], "contact_email": ""}),
        "skips the needed question: books with empty passenger details instead of asking for them",
    ),
    Mistake(
        0,
        2,
        set_argument(0, 0, ["check_out"], "2025-03-23"),
        "wrong argument value: hotel check-out one day early (2025-03-23, gold 2025-03-24)",
    ),
    Mistake(
        1,
        1,
        set_argument(0, 0, ["target_temperature_c"], 17),
        "wrong argument type: target_temperature_c 17 (int) where the gold is 17.0 (float)",
    ),
    Mistake(
        1,
        3,
        drop_argument(1, 0, "postcode"),
        "missing required argument: compareTariffs without the postcode given three turns earlier",
    ),
    Mistake(
        3,
        1,
        set_argument(1, 0, ["items", 2, "unit"], "tablespoons"),
        "nested enum violation: shopping-list unit 'tablespoons' instead of 'tbsp'",
    ),
    Mistake(
        3,
        3,
        reply_instead(
            0,
            "The other recipe was the Warm Roast Pumpkin and Chickpea Salad, which takes "
            "35 minutes. For two people, roast about 300 g of pumpkin with the chickpeas "
            "and toss them with a couple of handfuls of spinach.",
        ),
        "answers from memory in text where a getRecipe call was needed",
    ),
    Mistake(
        4,
        1,
        one_call_per_step(0),
        "calls getWorkoutHistory twice one by one instead of in parallel (correct, not optimal)",
    ),
    Mistake(4, 2, rename_tool(0, 1, "getRaceDetails"), "wrong tool name: getRaceDetails instead of getRaceInfo"),
    Mistake(
        5,
        2,
        reply_instead(0, "Which order do you mean? Could you give me the order number?"),
        "asks for clarification that is not needed (the order id is in the history)",
    ),
)


def demo_model_edits(sid: int) -> dict[int, TaskEdit]:
    """Task index -> edit for the demo model's mistakes in session ``sid``."""
    return {m.task: m.edit for m in DEMO_MODEL_MISTAKES if m.session == sid}


def build_candidates(sessions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Candidate records (``oracle`` then ``demo-model`` for each session, in session order)."""
    records: list[dict[str, Any]] = []
    for session in sessions:
        sid = session_index(session)
        records.append({"session_id": session["id"], "candidate": "oracle", "responses": candidate_responses(session)})
        records.append(
            {
                "session_id": session["id"],
                "candidate": "demo-model",
                "responses": candidate_responses(session, demo_model_edits(sid)),
            }
        )
    return records


def read_demo_sessions(path: Path = SESSIONS_PATH) -> list[dict[str, Any]]:
    """The demo sessions as plain dicts, in file order. Raises ``ValueError`` naming the bad line."""
    sessions = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    sessions.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number}: invalid JSON: {error}") from error
    return sessions


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check`` verify) ``bench/data/demo_candidates.jsonl``. Returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m wildtoolbench.bench.demo_data", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the candidates file is out of date")
    args = parser.parse_args(argv)
    records = build_candidates(read_demo_sessions())
    if args.check:
        current = [json.loads(line) for line in CANDIDATES_PATH.read_text(encoding="utf-8").splitlines() if line]
        if current != records:
            print(f"{CANDIDATES_PATH} is out of date; run python -m wildtoolbench.bench.demo_data", file=sys.stderr)
            return 1
        return 0
    # A developer regenerates a committed file: a plain write (the core writes no run outputs, docs/architecture.md §3.2).
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    CANDIDATES_PATH.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {len(records)} candidate records to {CANDIDATES_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
