"""Test helper: scripted role responses for a planned session (no network, no model).

``session_script(plan_state)`` writes, per role, the responses that take one session through the
generation graph along its type path: valid planner decisions built from the session's real tool
list, simulated results, questions, replies and checker verdicts. Tests then tamper with single
responses (a rejection, an unknown tool, a vague answer) to drive the other branches.
"""

from __future__ import annotations

from typing import Any

from wildtoolbench.bench.rules.decision import schema_errors

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


def varied_arguments(parameters: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`example_arguments` with other values (free strings get `` 2``, numbers grow by 1): a second,
    different call of the same tool (a repeated identical call is a rule rejection)."""
    properties = (parameters or {}).get("properties") or {}

    def vary(value: Any, schema: Any) -> Any:
        schema = schema if isinstance(schema, dict) else {}
        if "enum" in schema or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return f"{value} 2"
        if isinstance(value, (int, float)):
            return value + 1
        if isinstance(value, list):
            return [vary(v, schema.get("items")) for v in value]
        if isinstance(value, dict):
            inner = schema.get("properties") or {}
            return {k: vary(v, inner.get(k)) for k, v in value.items()}
        return value

    arguments = {k: vary(v, properties.get(k)) for k, v in example_arguments(parameters).items()}
    if not arguments:  # no required parameter: give the first optional one a value
        for key, schema in properties.items():
            value = example_value(schema if isinstance(schema, dict) else {}, key)
            if not isinstance(value, bool) and not schema_errors({key: value}, parameters):
                return {key: value}
    return arguments


def _call(function: dict[str, Any], deps: list[int] | None = None, *, again: bool = False) -> dict[str, Any]:
    arguments = (varied_arguments if again else example_arguments)(function.get("parameters"))
    return {"name": function["name"], "arguments": arguments, "depends_on": deps or []}


def stated(arguments: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    """The scalar values of ``arguments`` as a user would state them (``"3, Oslo"``), so the rule that
    gold values come from the conversation (docs/generation.md §2) accepts the scripted calls."""
    from wildtoolbench.bench.audit_context import leaves

    values = [
        v for path, v in leaves({k: a for k, a in arguments.items() if k not in skip}) if v not in (None, True, False)
    ]
    return ", ".join(str(v) for v in values)


def _decision(*actions: dict[str, Any]) -> dict[str, Any]:
    return {"thought": "scripted", "plan": "scripted", "actions": list(actions)}


def _answer(kind: str = "tool") -> dict[str, Any]:
    return _decision({"name": "prepare_to_answer", "arguments": {"answer_type": kind}, "depends_on": []})


def _results(functions: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    """One distinct result per call (``tag`` names the step: a result copied from another call is a rule
    rejection)."""
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
        opening = f"Scripted request {layer} ({layer_type}) for {first['name']}"
        roles["user"].append(opening + ".")
        tag = f"t{layer}"
        if layer_type == "ST":
            steps = [[first]]
        elif layer_type == "MT":
            variant = state["mt_variants"][layer]
            steps = [[first, second], ["again"]] if variant == "serial_parallel" else [[first, second]]
        elif layer_type == "CQ":
            assert with_required is not None, "tool list has no tool with a required parameter"
            missing = [with_required["parameters"]["required"][0]]
            arguments = example_arguments(with_required.get("parameters"))
            roles["user"][-1] = f"{opening} with {stated(arguments, skip=tuple(missing))}."
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
            roles["user"].append(f"Use the usual {missing[0]}: {stated({missing[0]: arguments[missing[0]]})}.")
            roles["planner"].append(_decision(_call(with_required, [0])))
            roles["checker"] += [ACCEPT, ACCEPT]
            roles["tool"].append(_results([with_required], tag))
            steps = []
        else:
            steps = []
        if steps:
            values = {
                f"{i}.{k}": v
                for i, f in enumerate(functions[:2])
                for k, v in example_arguments(f.get("parameters")).items()
            }
            if ["again"] in steps:
                values.update({f"again.{k}": v for k, v in varied_arguments(first.get("parameters")).items()})
            roles["user"][-1] = f"{opening} with {stated(values)}."
        done = 0
        for step in steps:
            deps = list(range(done)) if done else []
            if step == ["again"]:  # the dependent call: the first tool again, with other values
                roles["planner"].append(_decision(_call(first, deps, again=True)))
                step = [first]
            else:
                roles["planner"].append(_decision(*[_call(f, deps) for f in step]))
            roles["checker"] += [ACCEPT, ACCEPT]
            roles["tool"].append(_results(step, f"{tag}.{done}"))
            done += len(step)
        roles["planner"].append(_answer("chat" if layer_type == "CC" else "tool"))
        roles["checker"].append(ACCEPT)
        # a reply on tool results states something of them (here the results' "ok" status and "result" note)
        roles["agent"].append(
            f"Scripted reply for task {layer}."
            if layer_type == "CC"
            else f"Scripted reply for task {layer}: the result is ok."
        )
    return roles
