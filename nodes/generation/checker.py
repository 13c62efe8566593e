"""Checker role (docs/generation.md): accepts or rejects each planner decision and each set of simulated tool
results, with a reason.

Rules first, and they are decisive (``wildtoolbench.bench.generation_checks``: parse errors, unknown tools,
argument schema, what the task's layer type allows, argument values nobody said, a call made already,
a decision rejected before). Only output that passes them goes to the checker model (skipped when the
context gives the checker no model, "none"), and only what rules cannot judge: whether the calls fit the
request, whether the results are realistic. The model samples at temperature 0 and judges each step
once: after its first rejection of a step, the retries of that step are judged by the rules alone, so
a noisy model cannot flip verdicts or use up the tries. A rejected output goes back to its role with
the reason as feedback (a planner sees its rejected actions and the reason); after ``max_retries``
rejections of the same output the session fails.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from wildtoolbench.bench.audit_context import env_date
from wildtoolbench.bench.generation_checks import tools_by_name
from wildtoolbench.bench.rules import Problem, rule_ids, select
from wildtoolbench.bench.rules.decision import canonical_actions, decision_errors, repetition_errors
from wildtoolbench.bench.rules.result import results_errors
from wildtoolbench.bench.rules.value import context_errors, shared_value_bans, unknown_values
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS
from wildtoolbench.nodes.generation._common import (
    actions_lines,
    ask_model,
    conversation_texts,
    current_task,
    dumps,
    labels,
    replace_current,
    role_spec,
    rule_profile,
    section,
    tools_block,
)
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.retry import accepted_try, rejected_try, verdict_entry
from wildtoolbench.nodes.generation.role_schemas import CHECKER_SCHEMA
from wildtoolbench.nodes.generation.state import CheckerVerdict, State
from wildtoolbench.prompts import fragments, render


def pending_calls(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Call nodes of the task's last step that still wait for their results."""
    if not task["nodes"]:
        return []
    last = task["nodes"][-1]["step"]
    return [
        n for n in task["nodes"] if n["step"] == last and n["name"] not in PSEUDO_TOOLS and n.get("observation") is None
    ]


def apply_decision(task: dict[str, Any], decision: dict[str, Any], step: int) -> tuple[dict[str, Any], str]:
    """Append an accepted decision's actions to ``task`` as nodes of ``step`` (docs/generation.md).

    Returns:
        ``(task, awaiting)`` with awaiting ``"question"`` (ask), ``"answer"`` (prepare) or ``""`` (calls).
    """
    awaiting = ""
    for action in decision["actions"]:
        task["nodes"].append(
            {
                "name": action["name"],
                "arguments": action.get("arguments") or {},
                "depends_on": list(action.get("depends_on") or []),
                "step": step,
                "observation": None,
            }
        )
        if action["name"] == ASK_USER:
            awaiting = "question"
        elif action["name"] == PREPARE_TO_ANSWER:
            awaiting = "answer"
    return task, awaiting


def _model_request(state: State, pending: dict[str, Any]) -> tuple[str, str]:
    # Only what the model judges (do the calls fit the request, are the results realistic): the tools
    # named in the proposal or the calls, the current request and its actions; the rules have checked
    # everything else, and a short prompt is a fast one on a small local model.
    names = labels(state)
    task = state.tasks[-1]
    rule = fragments(state.language)["planner_rules"][task["layer_type"]]
    if pending["kind"] == "decision":
        used = {a.get("name") for a in (pending.get("decision") or {}).get("actions") or []}
    else:
        used = {n["name"] for n in pending_calls(task)}
    tools = [t for t in state.tools if t.get("function", t).get("name") in used]
    parts = [
        section(names["tools"], tools_block(tools, compact=True), names["none"]),
        section(names["current_request"], task["user_message"], names["none"]),
        section(names["actions"], actions_lines(task["nodes"]), names["none"]),
    ]
    if pending["kind"] == "decision":
        system = render("checker_plan.md", state.language, env_info=state.env_info, task_rule=rule)
        parts.append(section(names["proposal"], dumps(pending["decision"]), names["none"]))
    else:
        system = render("checker_tool.md", state.language, env_info=state.env_info)
        calls = [{"name": n["name"], "arguments": n["arguments"]} for n in pending_calls(task)]
        parts.append(section(names["calls"], dumps(calls), names["none"]))
        parts.append(section(names["results"], dumps(pending["results"]), names["none"]))
    return system, "\n".join(parts)


async def checker(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Judge ``state.pending`` (a planner decision or tool results) and apply it when accepted (docs/generation.md).

    Returns:
        State update: on accept the new nodes (decision) or filled observations (results), ``awaiting``
        and reset retries; on reject ``attempts + 1`` and ``feedback``; after ``max_retries`` rejections
        ``status = "failed"`` with the reason. Always ``checked``, ``verdict`` and a transcript entry.
    """
    pending = state.pending
    if state.status != "running" or not pending:
        return {}
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    task = current_task(state)
    kind = pending["kind"]
    profile = rule_profile(context, state)
    reasons: list[Problem] = output_problems(pending)
    if not reasons and kind == "decision":
        reasons = select(decision_rule_errors(state, pending["decision"], profile), profile, "planner")
    elif not reasons:
        earlier = [n for t in state.tasks for n in t.get("nodes", []) if n.get("observation") is not None]
        found = results_errors(pending["results"], pending_calls(task), earlier, tools_by_name(state.tools))
        reasons = select(found, profile, "tool")
    source, calls = "rules", []
    judges = context.checker_model_judges(role_spec(context, "checker"))
    if not reasons and not state.model_vetoed and judges and _model_judges(pending):
        system, human = _model_request(state, pending)
        text, record = await ask_model(
            "checker", state, runtime, system, human, json_schema=CHECKER_SCHEMA, temperature=0.0
        )
        calls.append(record)
        source = "model"
        reasons = model_verdict_problems(text)
    accepted = not reasons
    reason = "; ".join(reasons)
    entry = verdict_entry(
        state, role="checker", task=len(state.tasks) - 1, target=pending["id"], problems=reasons, source=source,
        checked=kind,
    )  # fmt: skip
    update: dict[str, Any] = {"transcript": [entry], "calls": calls, "checked": kind, "pending": None}
    if accepted:
        awaiting = ""
        if kind == "decision":
            task, awaiting = apply_decision(task, pending["decision"], pending["step"])
        else:
            for node, result in zip(pending_calls(task), pending["results"]):
                node["observation"] = result
        return {**update, "tasks": replace_current(state, task), "awaiting": awaiting, **accepted_try()}
    feedback = reason
    update.update(model_vetoed=state.model_vetoed or source == "model")
    if kind == "decision" and pending.get("decision") is not None:
        shown = canonical_actions(pending["decision"])
        if source == "rules":  # the model judged once: its veto of a decision the rules pass is no ban
            update["rejected"] = [*state.rejected, shown]
        unknown = unknown_values(
            pending["decision"],
            tools=tools_by_name(state.tools),
            texts=conversation_texts(state),
            today=env_date(state.env_info),
            profile=rule_profile(context, state),
        )
        bans = [[name, path.split(".", 1)[0].split("[", 1)[0]] for _i, name, path, _v, _r, _rule in unknown]
        bans += shared_value_bans(pending["decision"], tools_by_name(state.tools))
        update["banned"] = [*state.banned, *(b for b in bans if b not in state.banned)]
        feedback = f"you proposed {shown}; {reason}"
    what = "planner decision" if kind == "decision" else "tool results"
    where = f"task {len(state.tasks) - 1}, step {_step(pending, task)}"
    failure = f"{what} rejected {{attempts}} times ({where}): {reason.replace('{', '{{').replace('}', '}}')}"
    update.update(rejected_try(state, context, feedback=feedback, failure=failure, rules=rule_ids(reasons)))
    return update


def output_problems(pending: dict[str, Any]) -> list[Problem]:
    """``structure.unreadable`` when the role's output in ``pending`` could not be read (its ``error``, set by
    the planner's or the tool's parser); else ``[]`` (docs/generation.md §11)."""
    error = pending.get("error")
    return [Problem(str(error), "structure.unreadable")] if error else []


def model_verdict_problems(text: str) -> list[Problem]:
    """The Checker model's verdict ``text`` as rule problems (docs/generation.md §11): ``model.unreadable``
    when it is no readable verdict, ``model.rejected`` (with the model's reason) for a rejection, ``[]`` for
    an acceptance."""
    verdict, error = CheckerVerdict.parse(text)
    if verdict is None:
        return [Problem(f"checker output unreadable ({error})", "model.unreadable")]
    if verdict.verdict == "reject":
        return [Problem(verdict.reason or "rejected without a reason", "model.rejected")]
    return []


def decision_rule_errors(state: State, decision: dict[str, Any], profile: str = "small") -> list[Problem]:
    """Every rule problem of a planner ``decision`` for the session's current task (docs/generation.md §2):
    ``wildtoolbench.bench.rules.decision.decision_errors`` (tools, schema, the layer type), then
    ``repetition_errors`` (a call made already, a decision rejected at this step before) and
    ``context_errors`` (argument values nobody said). Empty list = the rules accept it."""
    task = state.tasks[-1]
    tools = tools_by_name(state.tools)
    errors = decision_errors(decision, tools=tools, layer_type=task["layer_type"], nodes=task["nodes"])
    errors += repetition_errors(decision, nodes=task["nodes"], rejected=state.rejected)
    errors += context_errors(
        decision,
        tools=tools,
        texts=conversation_texts(state),
        today=env_date(state.env_info),
        can_ask=task["layer_type"] == "CQ",
        profile=profile,
    )
    return errors


def _model_judges(pending: dict[str, Any]) -> bool:
    """The checker model judges tool results and decisions with calls; a question or the answer is the
    rules' call alone (the layer type decides when they come)."""
    if pending["kind"] != "decision":
        return True
    return any(a.get("name") not in PSEUDO_TOOLS for a in (pending.get("decision") or {}).get("actions") or [])


def _step(pending: dict[str, Any], task: dict[str, Any]) -> int:
    if "step" in pending:
        return pending["step"]
    return task["nodes"][-1]["step"] if task["nodes"] else 0


def route_after_plan_check(state: State) -> Literal["run tools", "write", "retry", "fail"]:
    """After a planner decision was judged: the tool (calls), the agent (question or answer), the
    planner again (rejected, tries left), or the end (the session failed; docs/generation.md)."""
    if state.status != "running":
        return "fail"
    if state.verdict == "reject":
        return "retry"
    return "write" if state.awaiting in ("question", "answer") else "run tools"


def route_after_result_check(state: State) -> Literal["next step", "retry", "fail"]:
    """After tool results were judged: the planner's next step, the tool again (rejected, tries
    left), or the end (the session failed; docs/generation.md)."""
    if state.status != "running":
        return "fail"
    return "retry" if state.verdict == "reject" else "next step"
