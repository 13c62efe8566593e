"""The per-stage yield table of a generation run (docs/generation.md §7.1): attempts, accepted and rejected
outputs of every role, the rejections counted by rule id (docs/generation.md §11), and each role's model calls, tokens and seconds.

Read from the raw transcripts (every role output and every verdict on it) and the captured model
calls of the sessions; :func:`session_yield` counts one session, :func:`merge_yields` adds sessions
up, :func:`yield_lines` prints the table.

Rows: the roles that produce output (``user``, ``planner``, ``tool``, ``agent``, and added roles),
and the judges: ``checker`` (verdicts on planner decisions) and ``tool_checker`` (verdicts on tool
results); a judge row's rejections are split by who rejected (``rules:`` / ``model:``).

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wildtoolbench.bench.generation import RULE_CHECK
from wildtoolbench.bench.rules import UNCLASSIFIED


def entry_rules(entry: Mapping[str, Any]) -> list[str]:
    """The rule ids of one verdict entry (docs/generation.md §7.1, §11): its ``rules`` field, one id per
    reason; a verdict written without one (before the catalog) counts each reason as
    :data:`wildtoolbench.bench.rules.UNCLASSIFIED`, a model's as ``model.rejected``."""
    rules = entry.get("rules")
    if isinstance(rules, list) and rules:
        return [str(r) for r in rules]
    fallback = "model.rejected" if entry.get("source") == "model" else UNCLASSIFIED
    reasons = entry.get("reasons")
    return [fallback] * (len(reasons) if isinstance(reasons, list) and reasons else 1)


_FALLBACK_WORDS = {"agent": "written from the results", "user": "sent as the generator's draft"}
"""How each role's fallback output was made (docs/generation.md §4.3), for the yield table's lines."""


def _row() -> dict[str, Any]:
    return {
        "attempts": 0,
        "accepted": 0,
        "rejected": 0,
        "unjudged": 0,
        "fallbacks": 0,
        "reasons": {},
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "seconds": 0.0,
    }


def session_yield(
    transcript: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]] = (),
    judges: Iterable[str] = ("checker", "tool_checker"),
) -> dict[str, dict[str, Any]]:
    """The yield table of one session (docs/generation.md §7.1).

    Args:
        transcript: the raw transcript: output entries ``{"id", "role", ...}`` and verdict entries
            ``{"role", "target", "verdict", "reason"[, "reasons"], "source"[, "checked"]}`` (role a
            judge or ``rule_check``).
        calls: captured model calls ``{"role", "seconds"?, "input_tokens"?, "output_tokens"?}``.
        judges: the judging roles (``wildtoolbench.nodes.generation.registry.judging_roles()``).

    Returns:
        ``{role: {"attempts", "accepted", "rejected", "unjudged", "fallbacks", "reasons": {rule id: n},
        "calls", "input_tokens", "output_tokens", "seconds"}}``; ``fallbacks`` counts the accepted
        outputs the generator wrote itself when every try was rejected (an entry with ``"fallback"``:
        the agent's reply from the results' facts, docs/generation.md §4.3). A producing role's output is rejected when a
        verdict rejects it, accepted when one accepts it or no verdict was due (user and agent text
        is judged only when a rule rejects it), unjudged when the session ended first (a planner
        decision or tool result with no verdict). The checker's verdicts on tool results are the
        ``tool_checker`` row. Each rejection counts once per rule id it names (:func:`entry_rules`).
    """
    judge_names = {*judges, RULE_CHECK}
    table: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, Mapping[str, Any]] = {}
    for entry in transcript:
        role = str(entry.get("role"))
        if role not in judge_names or "target" not in entry:
            continue
        verdicts[str(entry["target"])] = entry
        if role == RULE_CHECK:
            continue
        name = "tool_checker" if role == "checker" and entry.get("checked") == "results" else role
        row = table.setdefault(name, _row())
        row["attempts"] += 1
        if entry.get("verdict") == "accept":
            row["accepted"] += 1
        else:
            row["rejected"] += 1
            source = str(entry.get("source") or "rules")
            for code in dict.fromkeys(entry_rules(entry)):
                key = f"{source}: {code}" if source in ("rules", "model") else code
                row["reasons"][key] = row["reasons"].get(key, 0) + 1
    judged_roles = {"planner", "tool"}
    for entry in transcript:
        role = str(entry.get("role"))
        if role in judge_names or "id" not in entry:
            continue
        row = table.setdefault(role, _row())
        row["attempts"] += 1
        if entry.get("fallback"):
            row["fallbacks"] += 1
        verdict = verdicts.get(str(entry["id"]))
        if verdict is None:
            row["unjudged" if role in judged_roles else "accepted"] += 1
        elif verdict.get("verdict") == "accept":
            row["accepted"] += 1
        else:
            row["rejected"] += 1
            for code in dict.fromkeys(entry_rules(verdict)):
                row["reasons"][code] = row["reasons"].get(code, 0) + 1
    for call in calls:
        row = table.setdefault(str(call.get("role")), _row())
        row["calls"] += 1
        row["input_tokens"] += int(call.get("input_tokens") or 0)
        row["output_tokens"] += int(call.get("output_tokens") or 0)
        row["seconds"] = round(row["seconds"] + float(call.get("seconds") or 0.0), 3)
    return table


def merge_yields(tables: Iterable[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The sum of several :func:`session_yield` tables (a run's table), rows in the order first seen."""
    out: dict[str, dict[str, Any]] = {}
    for table in tables:
        for role, row in table.items():
            total = out.setdefault(role, _row())
            for key in (
                "attempts",
                "accepted",
                "rejected",
                "unjudged",
                "fallbacks",
                "calls",
                "input_tokens",
                "output_tokens",
            ):
                total[key] += int(row.get(key) or 0)
            total["seconds"] = round(total["seconds"] + float(row.get("seconds") or 0.0), 3)
            for reason, count in (row.get("reasons") or {}).items():
                total["reasons"][reason] = total["reasons"].get(reason, 0) + int(count)
    return out


ROLE_ORDER = ("user", "planner", "checker", "tool", "tool_checker", "agent")
"""The yield table's row order (added roles follow, in the order first seen)."""


def yield_lines(table: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The yield table as text lines for the end of a run (docs/generation.md §7.1): a header, one row
    per role (attempts, accepted, rejected, model calls, tokens in/out, model seconds) and the
    rejection reasons of each role with their counts, most frequent first."""
    roles = [r for r in ROLE_ORDER if r in table] + [r for r in table if r not in ROLE_ORDER]
    lines = [
        f"{'role':<13}{'attempts':>9}{'accepted':>9}{'rejected':>9}{'calls':>7}{'tokens in/out':>16}{'model s':>9}"
    ]
    for role in roles:
        row = table[role]
        tokens = f"{row.get('input_tokens', 0)}/{row.get('output_tokens', 0)}"
        lines.append(
            f"{role:<13}{row.get('attempts', 0):>9}{row.get('accepted', 0):>9}{row.get('rejected', 0):>9}"
            f"{row.get('calls', 0):>7}{tokens:>16}{float(row.get('seconds', 0.0)):>9.1f}"
        )
        reasons = sorted((row.get("reasons") or {}).items(), key=lambda item: (-item[1], item[0]))
        for reason, count in reasons:
            lines.append(f"{'':<13}  {count:>4} x {reason}")
        if row.get("fallbacks"):
            how = _FALLBACK_WORDS.get(role, "written by the generator")
            lines.append(f"{'':<13}  {row['fallbacks']:>4} accepted {how} (fallback)")
    return lines
