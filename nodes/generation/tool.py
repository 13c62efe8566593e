"""Tool role (docs/generation.md): simulates the result of each call of the accepted step from the tool's schema
and the arguments, consistent with earlier results of the session. The results wait in ``pending``
for the checker; unreadable output is kept as a parse error, which the checker rejects."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from wildtoolbench.bench.generation_checks import extract_json
from wildtoolbench.nodes.generation._common import ask_model, dumps, entry_id, labels, section, session_results
from wildtoolbench.nodes.generation.checker import pending_calls
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.role_schemas import tool_results_schema
from wildtoolbench.nodes.generation.state import State, ToolResults
from wildtoolbench.prompts import render


def signature(spec: Any) -> str:
    """A tool as one line, ``getCurrentPlayerRoster(teamId: integer)``: its name and top-level
    parameters with their types, no description and no JSON object a small model could mirror; what
    the retry of a result that pasted the definition is shown (docs/generation.md §2)."""
    spec = spec if isinstance(spec, dict) else {}
    parameters = spec.get("parameters") if isinstance(spec.get("parameters"), dict) else {}
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), dict) else {}
    shown = []
    for name, schema in properties.items():
        kind = schema.get("type") if isinstance(schema, dict) else None
        shown.append(f"{name}: {kind}" if isinstance(kind, str) else str(name))
    return f"{spec.get('name', '?')}({', '.join(shown)})"


def retry_codes(state: State) -> set[str]:
    """Rule ids (``wildtoolbench.bench.rules``) of the rejection this tool request
    retries: the reasons of the last checker verdict when it rejected results and ``state.feedback``
    still holds it; the empty set on a first try (docs/generation.md §2, §7.1).

    The roles pick their retry fix by these ids, never by words of the joined feedback text.
    """
    if not state.feedback:
        return set()
    for entry in reversed(state.transcript):
        if entry.get("role") != "checker":
            continue
        if entry.get("checked") != "results" or entry.get("verdict") != "reject":
            return set()
        return {str(rule) for rule in entry.get("rules") or []}
    return set()


def tool_request(state: State, calls: list[dict[str, Any]]) -> tuple[str, str]:
    """System and human messages of the tool role for ``calls`` (call nodes of the current step; docs/generation.md §2):
    the tools' specs (as signature lines on the retry of a pasted definition), the session's earlier
    results of these tools (none on the retry of a copied result) and the calls."""
    names = labels(state)
    used = {c["name"] for c in calls}
    specs = [t.get("function", t) for t in state.tools if t.get("function", t).get("name") in used]
    codes = retry_codes(state)
    shown: Any = dumps(specs)
    if "result.copies_definition" in codes:
        # A retry after a pasted definition sees each tool as a signature line: no description, and no
        # object with "name" and "parameters" to copy (docs/generation.md §2).
        shown = [signature(spec) for spec in specs]
    system = render("tool.md", state.language, env_info=state.env_info)
    # A retry after a copied result does not see the result it pasted (docs/generation.md §2).
    earlier = [] if "result.copies_other" in codes else session_results(state, used)
    parts = [
        section(names["tools"], shown, names["none"]),
        section(names["earlier_results"], earlier, names["none"]),
        section(
            names["calls"], [f"{i}: {c['name']}({dumps(c['arguments'])})" for i, c in enumerate(calls)], names["none"]
        ),
    ]
    if state.feedback:
        parts.append(f"{names['feedback']}: {state.feedback}\n")
    return system, "\n".join(parts)


def parse_results(text: str, count: int) -> tuple[list[Any] | None, str | None]:
    """Results from the tool model's text: ``{"results": [...]}`` or a bare list; for a single call a
    bare JSON object is taken as its result. Returns ``(results, None)`` or ``(None, reason)``."""
    parsed, error = ToolResults.parse(text)
    if parsed is not None:
        return parsed.results, None
    if count == 1:
        try:
            value = extract_json(text)
        except ValueError:
            value = None
        if isinstance(value, dict) and value:
            return [value], None
    return None, error


async def tool(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Simulate the results of the current step's calls and leave them in ``pending`` for the checker (docs/generation.md).

    Returns:
        State update with ``pending = {"kind": "results", "id", "results" | None, "error" | None}``,
        a transcript entry and the captured call.
    """
    if state.status != "running":
        return {}
    calls = pending_calls(state.tasks[-1])
    system, human = tool_request(state, calls)
    text, record = await ask_model("tool", state, runtime, system, human, json_schema=tool_results_schema(len(calls)))
    results, error = parse_results(text, len(calls))
    eid = entry_id(state)
    entry = {
        "id": eid,
        "role": "tool",
        "task": len(state.tasks) - 1,
        "step": calls[0]["step"] if calls else None,
        "attempt": state.attempts + 1,
        "content": text,
        "results": results,
        "error": error,
    }
    pending = {"kind": "results", "id": eid, "results": results, "error": error}
    return {"pending": pending, "transcript": [entry], "calls": [record]}
