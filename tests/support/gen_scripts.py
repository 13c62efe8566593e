"""Test helper: scripted role responses for a planned session (no network, no model).

``session_script(plan_state)`` writes, per role, the responses that take one session through the
generation graph along its type path: valid planner decisions built from the session's real tool
list, simulated results, questions, replies and checker verdicts. Tests then tamper with single
responses (a rejection, an unknown tool, a vague answer) to drive the other branches.
"""

from __future__ import annotations

from typing import Any

from bench.generation_checks import schema_errors

ACCEPT = {"verdict": "accept", "reason": "looks right"}


def example_value(schema: dict[str, Any], name: str) -> Any:
    """A schema-valid value for one parameter (enum -> first value, nested required keys filled)."""
    if "anyOf" in schema:
        return example_value(schema["anyOf"][0], name)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type", "string")
    if kind == "integer":
        return 3
    if kind in ("number", "float"):
        return 2.5
    if kind == "boolean":
        return True
    if kind == "array":
        items = schema.get("items")
        return [example_value(items, name)] if isinstance(items, dict) and items.get("type") in ("string", None) else []
    if kind == "object":
        return example_arguments(schema)
    return f"{name} value"


def example_arguments(parameters: dict[str, Any] | None) -> dict[str, Any]:
    """Arguments giving every required parameter of ``parameters`` (only those)."""
    parameters = parameters or {}
    properties = parameters.get("properties") or {}
    args = {
        key: example_value(properties.get(key, {}), key)
        for key in parameters.get("required") or []
        if key in properties
    }
    assert not schema_errors(args, parameters), (args, schema_errors(args, parameters))
    return args


def _functions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [t["function"] for t in tools]


def _call(function: dict[str, Any], deps: list[int] | None = None) -> dict[str, Any]:
    return {
        "name": function["name"],
        "arguments": example_arguments(function.get("parameters")),
        "depends_on": deps or [],
    }


def _decision(*actions: dict[str, Any]) -> dict[str, Any]:
    return {"thought": "scripted", "plan": "scripted", "actions": list(actions)}


def _answer(kind: str = "tool") -> dict[str, Any]:
    return _decision({"name": "prepare_to_answer", "arguments": {"answer_type": kind}, "depends_on": []})


def _results(functions: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    return {
        "results": [{"status": "ok", "source": f["name"], "note": f"{tag} result {i}"} for i, f in enumerate(functions)]
    }


def session_script(state: dict[str, Any]) -> dict[str, list[Any]]:
    """Per-role responses for the session input ``state`` (``SessionPlan.as_state()``), all accepted.

    Uses the first tools of the list; a CQ task asks for the first required parameter of the first
    tool that has one. Every layer's planner steps match its type (ST one call; MT plain/parallel two
    calls in one step; MT serial_parallel two calls then a dependent one; CQ ask, answer, call; CC chat).
    """
    functions = _functions(state["tools"])
    first = functions[0]
    second = functions[1] if len(functions) > 1 else functions[0]
    with_required = next((f for f in functions if (f.get("parameters") or {}).get("required")), None)
    roles: dict[str, list[Any]] = {"user": [], "planner": [], "checker": [], "tool": [], "agent": []}
    for layer, layer_type in enumerate(state["layer_types"]):
        roles["user"].append(f"Scripted request {layer} ({layer_type}) for {first['name']}.")
        tag = f"t{layer}"
        if layer_type == "ST":
            steps = [[first]]
        elif layer_type == "MT":
            variant = state["mt_variants"][layer]
            steps = [[first, second], [first]] if variant == "serial_parallel" else [[first, second]]
        elif layer_type == "CQ":
            assert with_required is not None, "tool list has no tool with a required parameter"
            missing = [with_required["parameters"]["required"][0]]
            roles["planner"].append(
                _decision(
                    {
                        "name": "ask_user_for_required_parameters",
                        "arguments": {"tool_name": with_required["name"], "missing_required_parameters": missing},
                        "depends_on": [],
                    }
                )
            )
            roles["checker"].append(ACCEPT)
            roles["agent"].append(f"Which {missing[0]} should I use?")
            roles["user"].append(f"Use the usual {missing[0]}.")
            roles["planner"].append(_decision(_call(with_required, [0])))
            roles["checker"] += [ACCEPT, ACCEPT]
            roles["tool"].append(_results([with_required], tag))
            steps = []
        else:
            steps = []
        done = 0
        for step in steps:
            deps = list(range(done)) if done else []
            roles["planner"].append(_decision(*[_call(f, deps) for f in step]))
            roles["checker"] += [ACCEPT, ACCEPT]
            roles["tool"].append(_results(step, tag))
            done += len(step)
        roles["planner"].append(_answer("chat" if layer_type == "CC" else "tool"))
        roles["checker"].append(ACCEPT)
        roles["agent"].append(f"Scripted reply for task {layer}.")
    return roles
