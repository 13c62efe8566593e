"""``wtb validate`` is the gate (docs/dataset.md §6, §7): every bad dataset kind is reported as
``file:line: field: message`` (an error, or a warning naming its effect on scores), never a traceback,
and ``wtb eval`` runs the same checks before its first session."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wildtoolbench.bench.demo_data import CANDIDATES_PATH, SESSIONS_PATH
from wildtoolbench.bench.schema import task_counts, validate_file

REPO = Path(__file__).resolve().parents[3]
BASE = json.loads(SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[0])


def _tool(session: dict, name: str) -> dict:
    return next(t for t in session["english_tools"] if t["function"]["name"] == name)["function"]


def _edit(change) -> str:
    session = copy.deepcopy(BASE)
    change(session)
    return json.dumps(session)


def _drop_search_flights(s):
    s["english_tools"] = [t for t in s["english_tools"] if t["function"]["name"] != "searchFlights"]


def _set(path, value):
    def change(s):
        target = s
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _schema(change):
    return lambda s: change(_tool(s, "searchFlights"))


GOLD = "english_answer_list[0][0]"
PARAMS = "english_tools[0].function.parameters"
BREAKS = "a candidate that gives exactly these arguments is scored with a parameter error"
UNDECLARED = (
    "the argument checker treats the tool as declaring no argument, so every argument a call gives is undeclared"
)

# (id, line text, expected error lines, expected warning lines): field and message exactly
ERRORS = [
    (
        "gold-tool-missing",
        _edit(_drop_search_flights),
        [
            f"{GOLD}.action.name: gold tool 'searchFlights' is not in english_tools (it holds: bookFlight, "
            "getTravelAdvisory, searchHotels); the candidate cannot call it and scoring cannot check its arguments"
        ],
    ),
    (
        "tools-empty",
        _edit(_set(["english_tools"], [])),
        [
            f"english_answer_list[{t}][{i}].action.name: gold tool {name!r} is not in english_tools (it holds: "
            "none); the candidate cannot call it and scoring cannot check its arguments"
            for t, i, name in (
                (0, 0, "searchFlights"),
                (1, 1, "bookFlight"),
                (2, 0, "searchHotels"),
                (2, 1, "getTravelAdvisory"),
            )
        ],
    ),
    (
        "lone-surrogate",
        _edit(_set(["english_tasks", 1], "PLACEHOLDER")).replace("PLACEHOLDER", "ab\\ud800cd"),
        ["english_tasks[1]: holds a lone surrogate \\ud800: not Unicode text, cannot be written as UTF-8"],
    ),
    (
        "lone-surrogate-in-observation",
        _edit(_set(["english_answer_list", 0, 0, "observation"], {"note": "PLACEHOLDER"})).replace(
            "PLACEHOLDER", "\\udfff"
        ),
        [f"{GOLD}.observation.note: holds a lone surrogate \\udfff: not Unicode text, cannot be written as UTF-8"],
    ),
    (
        "deep-nesting",
        _edit(_set(["english_answer_list", 0, 0, "observation"], "PLACEHOLDER")).replace(
            '"PLACEHOLDER"', "[" * 100_000 + "]" * 100_000
        ),
        ["(json): nested too deeply (over 100 levels of arrays and objects)"],
    ),
    (
        "nesting-just-over-the-limit",
        _edit(_set(["english_answer_list", 0, 0, "observation"], "PLACEHOLDER")).replace(
            '"PLACEHOLDER"', "[" * 98 + "]" * 98
        ),
        ["(json): nested too deeply (over 100 levels of arrays and objects)"],
    ),
    (
        "huge-integer",
        _edit(_set(["english_answer_list", 0, 0, "observation"], "PLACEHOLDER")).replace('"PLACEHOLDER"', "7" * 5000),
        [
            "(json): a number Python cannot read: Exceeds the limit (4300 digits) for integer string conversion: "
            "value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit"
        ],
    ),
]

WARNINGS = [
    (
        "no-parameters",
        _edit(_schema(lambda f: f.pop("parameters"))),
        [
            f"{PARAMS}: warning: missing: {UNDECLARED}",
            f"{GOLD}.action.arguments: warning: the gold arguments fail their own tool's schema (error_schema: args "
            f"not defined): {BREAKS}",
        ],
    ),
    (
        "parameters-not-an-object",
        _edit(_schema(lambda f: f.__setitem__("parameters", ["origin"]))),
        [
            f'{PARAMS}: warning: ["origin"] is not an object: {UNDECLARED}',
            f"{GOLD}.action.arguments: warning: the gold arguments fail their own tool's schema (error_schema: args "
            f"not defined): {BREAKS}",
        ],
    ),
    (
        "required-a-string",
        _edit(_schema(lambda f: f["parameters"].__setitem__("required", "origin"))),
        [
            f"{PARAMS}.required: warning: required is 'origin', not a list: the argument checker reads a string as "
            "the list of its characters",
            f"{GOLD}.action.arguments: warning: the gold arguments fail their own tool's schema (error_schema: "
            f"required args missing): {BREAKS}",
        ],
    ),
    (
        "required-names-a-missing-key",
        _edit(_schema(lambda f: f["parameters"]["required"].append("seat"))),
        [
            f"{PARAMS}.required[3]: warning: required names 'seat', which is not in properties: a call needs an "
            "argument the schema does not declare, so a call with only declared arguments fails the check",
            f"{GOLD}.action.arguments: warning: the gold arguments fail their own tool's schema (error_schema: "
            f"required args missing): {BREAKS}",
        ],
    ),
    (
        "enum-a-string",
        _edit(_schema(lambda f: f["parameters"]["properties"]["cabin_class"].__setitem__("enum", "economy"))),
        [
            f"{PARAMS}.properties.cabin_class.enum: warning: enum is 'economy', not a list: the argument checker "
            "accepts only that value itself"
        ],
    ),
    (
        "gold-breaks-its-schema",
        _edit(_set(["english_answer_list", 0, 0, "action", "arguments", "origin"], 5)),
        [
            f"{GOLD}.action.arguments: warning: the gold arguments fail their own tool's schema (error_schema: "
            f"nested args type inconsistent): {BREAKS}"
        ],
    ),
    (
        "chinese-node-count-differs",
        _edit(lambda s: s["answer_list"][0].insert(0, copy.deepcopy(s["answer_list"][0][0]))),
        [
            "answer_list[0]: warning: 3 nodes, english_answer_list[0] has 2: the accomplish progress rate counts 3 "
            "gold steps for this task"
        ],
    ),
]


def _write(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "sessions.jsonl"
    other = SESSIONS_PATH.read_text(encoding="utf-8").splitlines()[1]
    path.write_text(other + "\n" + line + "\n", encoding="utf-8")  # the bad session is on line 2
    return path


def _wtb(*args: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("LANGSMITH_TRACING", None)
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *map(str, args)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(("kind", "line", "expected"), ERRORS, ids=[e[0] for e in ERRORS])
def test_an_error_kind_fails_validate_and_eval_naming_file_line_field(tmp_path, kind, line, expected):
    path = _write(tmp_path, line)
    report = validate_file(path)
    assert [str(issue) for issue in report.issues] == [f"{path}:2: {message}" for message in expected]
    checked = _wtb("validate", path)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert checked.stderr.splitlines() == [f"{path}:2: {m}" for m in expected] + [
        f"error: {path}: {len(expected)} problem(s) found"
    ]
    out = tmp_path / "run"
    evaluated = _wtb("eval", "--dataset", path, "--model", f"replay:{CANDIDATES_PATH}#oracle", "--out", out,
                     "--no-progress", "--no-trace")  # fmt: skip
    assert evaluated.returncode == 1 and "Traceback" not in evaluated.stderr
    assert evaluated.stderr.splitlines() == [f"{path}:2: {m}" for m in expected] + [
        f"error: {path}: {len(expected)} problem(s) found"
    ]
    assert not out.exists()  # nothing written: the check ran before the first session


@pytest.mark.parametrize(("kind", "line", "expected"), WARNINGS, ids=[w[0] for w in WARNINGS])
def test_a_warning_kind_is_reported_and_scored_as_the_reference_does(tmp_path, kind, line, expected):
    path = _write(tmp_path, line)
    report = validate_file(path)
    assert report.ok and report.sessions == 2
    assert [str(issue) for issue in report.warnings] == [f"{path}:2: {message}" for message in expected]
    checked = _wtb("validate", path)
    assert checked.returncode == 0 and "Traceback" not in checked.stderr
    assert checked.stderr.splitlines() == [f"{path}:2: {m}" for m in expected]
    assert checked.stdout.startswith(f"{path}: 2 sessions, 8 tasks")
    out = tmp_path / "run"
    evaluated = _wtb("eval", "--dataset", path, "--model", f"replay:{CANDIDATES_PATH}#oracle", "--out", out,
                     "--no-progress", "--no-trace")  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stderr.splitlines()[: len(expected)] == [f"{path}:2: {m}" for m in expected]
    assert (out / "metric.json").is_file()


def test_a_file_whose_most_common_task_count_is_zero(tmp_path):
    line = _edit(lambda s: s.update(english_tasks=[]))
    path = tmp_path / "sessions.jsonl"
    path.write_text(line + "\n" + line.replace("wild_tool_bench_0", "wild_tool_bench_1") + "\n", encoding="utf-8")
    assert task_counts(path) == (4, [])
    checked = _wtb("validate", path)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert checked.stderr.splitlines() == [
        f"{path}:1: english_tasks: List should have at least 4 items after validation, not 0",
        f"{path}:2: english_tasks: List should have at least 4 items after validation, not 0",
        f"error: {path}: 2 problem(s) found",
    ]
