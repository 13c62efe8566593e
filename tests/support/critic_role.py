"""An added generation role for the tests, written as a user would: one module plus one registration line.

The critic reads each planner decision, asks its own model for an opinion and changes nothing; its
requests must appear in the captured outputs (``requests/critic.jsonl``) like the built-in roles'.
"""

from wildtoolbench.nodes.generation.registry import Role, ask_role_model, register_role


async def critic(state, runtime):
    """Ask the critic's model about the pending planner decision; no state change."""
    await ask_role_model("critic", state, runtime, "You review one planner decision in a sentence.", str(state.pending))
    return {}


register_role(Role("critic", critic, after="planner", calls_model=True))
