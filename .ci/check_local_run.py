"""Check the outputs of CI's real-model runs (issue 7): exit 1 with the reasons when one is malformed.

Usage:
    python .ci/check_local_run.py eval DIR [--sessions N] [--model-name NAME] [--all-correct]
    python .ci/check_local_run.py generate DIR --sessions N

``eval``: ``DIR/result.jsonl`` holds N result records of the docs/evaluation.md §5 shape (no inference error:
a real local model that fails to answer is a CI failure), ``DIR/score.jsonl`` N lines and
``DIR/metric.json`` the task / session counts of those records; with ``--all-correct`` every task
must be correct (an oracle replay of generated sessions).

``generate``: ``DIR/manifest.json`` accounts for all N planned sessions; every success is a line
of ``DIR/sessions.jsonl`` (validated separately with ``wtb validate --tasks LAYERS``) with its
folder; every failure is a line of ``DIR/failures.jsonl`` with a non-empty reason and a raw
transcript showing what the roles produced; every session the quality check dropped is a line of
``DIR/quality_dropped.jsonl`` with its reasons. Prints one summary line per check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TASK_KEYS = {"action_name_label", "is_optimal", "inference_log", "latency", "input_token_count", "output_token_count"}
OUTPUT_KEYS = {"reasoning_content", "content", "tool_calls", "current_action_name_label"}


def _jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def task_problems(task: Any, where: str) -> list[str]:
    """docs/evaluation.md §5 shape problems of one task result."""
    if not isinstance(task, dict):
        return [f"{where}: not an object"]
    problems = [f"{where}: missing {key}" for key in sorted(TASK_KEYS - set(task))]
    if problems:
        return problems
    if task["action_name_label"] not in ("correct", "error"):
        problems.append(f"{where}.action_name_label: {task['action_name_label']!r}")
    if not isinstance(task["is_optimal"], bool):
        problems.append(f"{where}.is_optimal: not a boolean")
    log = task["inference_log"]
    steps = sorted(k for k in log if k.startswith("step_"))
    if not isinstance(log.get("task_idx"), int) or not isinstance(log.get("begin_of_current_task"), dict) or not steps:
        problems.append(f"{where}.inference_log: needs task_idx, begin_of_current_task and step_<s> entries")
    for key in steps:
        step = log[key]
        inputs, output = step.get("inference_input"), step.get("inference_output")
        if not isinstance(inputs, dict) or not {"messages", "tools"} <= set(inputs):
            problems.append(f"{where}.{key}.inference_input: needs messages and tools")
        if not isinstance(output, dict) or not OUTPUT_KEYS <= set(output):
            problems.append(f"{where}.{key}.inference_output: needs {sorted(OUTPUT_KEYS)}")
            continue
        for i, call in enumerate(output["tool_calls"] or []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("arguments"), str) or not call.get("id"):
                problems.append(f"{where}.{key}.tool_calls[{i}]: needs an id and a raw arguments string")
        if not isinstance(step.get("inference_answer"), dict):
            problems.append(f"{where}.{key}.inference_answer: missing")
    counts = {len(task[k]) for k in ("latency", "input_token_count", "output_token_count")}
    if counts != {len(steps)}:
        problems.append(f"{where}: latency / token lists do not have one entry per step ({len(steps)})")
    elif any(not isinstance(v, (int, float)) or v < 0 for v in task["latency"]):
        problems.append(f"{where}.latency: not non-negative numbers")
    return problems


def check_eval(out: Path, sessions: int, model_name: str, all_correct: bool = False) -> list[str]:
    """Problems of a ``wtb eval`` output folder (empty = well-formed)."""
    problems: list[str] = []
    records = _jsonl(out / "result.jsonl")
    if len(records) != sessions:
        problems.append(f"result.jsonl: {len(records)} records, expected {sessions}")
    tasks = 0
    for n, record in enumerate(records, start=1):
        where = f"result.jsonl:{n}"
        if set(record) - {"error_detail", "usage", "candidate"} != {"id", "model_name", "result"}:
            problems.append(f"{where}: keys {sorted(record)}")
            continue
        if "candidate" in record and not (isinstance(record["candidate"], dict) and record["candidate"].get("kind")):
            problems.append(f"{where}.candidate: {record['candidate']!r}")
        if record["model_name"] != model_name:
            problems.append(f"{where}.model_name: {record['model_name']!r}, expected {model_name!r}")
        if not isinstance(record["result"], list):
            problems.append(f"{where}.result: {str(record['result'])[:300]}")
            continue
        tasks += len(record["result"])
        for t, task in enumerate(record["result"]):
            problems += task_problems(task, f"{where}.result[{t}]")
    scores = _jsonl(out / "score.jsonl")
    if len(scores) != sessions:
        problems.append(f"score.jsonl: {len(scores)} lines, expected {sessions}")
    metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
    total = metric.get("total_info", {})
    if total.get("task", {}).get("total_count") != tasks or total.get("session", {}).get("total_count") != sessions:
        problems.append(f"metric.json: total_info {total} does not count {tasks} tasks in {sessions} sessions")
    if all_correct and total.get("task", {}).get("correct_count") != tasks:
        problems.append(
            f"metric.json: {total.get('task', {}).get('correct_count')} of {tasks} tasks correct, expected all"
        )
    if not problems:
        print(
            f"check: {out}: {sessions} result record(s), {tasks} tasks, task accuracy "
            f"{total['task']['correct_count']}/{tasks}, metric.json and score.jsonl consistent"
        )
    return problems


def check_generate(out: Path, sessions: int) -> list[str]:
    """Problems of a ``wtb generate`` output folder (empty = well-formed)."""
    problems: list[str] = []
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    done, failures = _jsonl(out / "sessions.jsonl"), _jsonl(out / "failures.jsonl")
    # sessions the quality check dropped (docs/generation.md §10): generated, not kept, each with its reasons
    dropped = _jsonl(out / "quality_dropped.jsonl") if (out / "quality_dropped.jsonl").is_file() else []
    if (manifest.get("succeeded"), manifest.get("failed")) != (len(done), len(failures)):
        problems.append(
            f"manifest.json: succeeded/failed {manifest.get('succeeded')}/{manifest.get('failed')} "
            f"but {len(done)} sessions and {len(failures)} failures on file"
        )
    if len(done) + len(failures) + len(dropped) != sessions:
        problems.append(
            f"{len(done)} sessions + {len(failures)} failures + {len(dropped)} dropped by the quality check, "
            f"expected {sessions} planned sessions"
        )
    for entry in dropped:
        if not entry.get("reasons"):
            problems.append(f"quality_dropped.jsonl: {entry.get('key')}: no reason")
    for failure in failures:
        if not isinstance(failure.get("reason"), str) or not failure["reason"].strip():
            problems.append(f"failures.jsonl: {failure.get('key')}: no reason")
        transcript = out / str(failure.get("dir")) / "raw_transcript.json"
        if not transcript.is_file() or not json.loads(transcript.read_text(encoding="utf-8")):
            problems.append(f"failures.jsonl: {failure.get('key')}: no raw transcript at {transcript}")
    for session in done:
        if len(session.get("english_tasks", [])) < 1:
            problems.append(f"sessions.jsonl: {session.get('id')}: no task")
    # The yield table and the live transcripts (docs/generation.md §7, §7.1), the quality totals (§9).
    table = manifest.get("yield") or {}
    if not table.get("user", {}).get("attempts"):
        problems.append("manifest.json: no yield table (yield.user.attempts)")
    if manifest.get("quality", {}).get("sessions") != len(done) + len(dropped):
        problems.append(f"manifest.json: quality.sessions is not {len(done) + len(dropped)}")
    for entry in manifest.get("sessions") or []:
        live = out / "transcripts" / f"{entry.get('key')}.jsonl"
        lines = live.read_text(encoding="utf-8").splitlines() if live.is_file() else []
        if not lines or json.loads(lines[-1]).get("line") != "end":
            problems.append(f"{live}: no live transcript ending with its status line")
    if not problems:
        print(
            f"check: {out}: {len(done)} generated session(s), {len(failures)} recorded failure(s), "
            f"{len(dropped)} dropped by the quality check"
            + "".join(f"\n  failed {f['key']}: {f['reason'][:300]}" for f in failures)
            + "".join(f"\n  dropped {d['key']}: {'; '.join(d['reasons'])[:300]}" for d in dropped)
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("eval", "generate"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--model-name", default="local")
    parser.add_argument("--all-correct", action="store_true", help="every task must be correct (oracle runs)")
    args = parser.parse_args(argv)
    try:
        problems = (
            check_eval(args.out, args.sessions, args.model_name, args.all_correct)
            if args.kind == "eval"
            else check_generate(args.out, args.sessions)
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        problems = [f"{type(exc).__name__}: {exc}"]
    for problem in problems:
        print(f"check: {args.out}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
