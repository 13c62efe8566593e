"""An added generation role that vetoes, written as a user would: one module plus one registration line.

The critic asks its own model about each planner decision. A reply ``VETO: <why>`` sends the decision
back to the planner with the reason (``send_back``: a ``Command(goto="planner")``, which the planner
sees on the feedback line of its next request); any other reply lets the decision go on to the checker.
"""

from wildtoolbench.nodes.generation.registry import Role, ask_role_model, register_role, send_back


async def critic(state, runtime):
    """Ask the critic's model about the pending planner decision; on ``VETO: <why>`` send it back."""
    text, _call = await ask_role_model(
        "critic", state, runtime, "Answer 'VETO: <why>' if the plan is wrong, else OK.", str(state.pending)
    )
    if text.startswith("VETO:"):
        return send_back(state, runtime, role="critic", reason=text.removeprefix("VETO:").strip())
    return {}


register_role(Role("critic", critic, after="planner", calls_model=True, judges=True, routes=("planner",)))
