"""The ``transitions`` node of the variant graph (docs/variants.md §3.2, §3.6): mechanical by default;
with a model given for the ``user`` or ``agent`` role, each ``+k`` exchange is written in the session's
domain by the User role's model (the user turn) and the Agent role's model (the reply), and checked by
``wildtoolbench.bench.variants.written.check_exchange``. ``-k`` stays mechanical."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.build import collect_outcome, new_result, run_factor
from wildtoolbench.bench.variants.common import DEFAULT_LEVELS, SKIP_RULES, gold_correct
from wildtoolbench.bench.variants.turns import all_chat_exchanges, parse_transition_level, transition_variants
from wildtoolbench.bench.variants.written import check_exchange, model_transition
from wildtoolbench.nodes.variants.asking import ask_checked, variant_role_model
from wildtoolbench.nodes.variants.state import VariantState
from wildtoolbench.prompts import render

EXCHANGE_ROLES = ("user", "agent")
"""The roles whose models write an inserted exchange: the user turn, then the reply."""
DOMAIN_TOOLS = 12
"""Tools of the session's list shown to the User role's model as the domain (name and description)."""
_NONE = {"en": "(none)", "zh": "（无）"}


def domain_text(session: Mapping[str, Any], language: str) -> str:
    """The session's domain as the User role's model sees it: the first :data:`DOMAIN_TOOLS` tools of the
    ``language`` side's tool list, one ``- name: description`` line each (descriptions cut at 160 characters)."""
    lines = []
    for tool in session[fields_for(language).tools][:DOMAIN_TOOLS]:
        spec = (tool.get("function") or tool) if isinstance(tool, Mapping) else {}
        lines.append(f"- {spec.get('name', '')}: {str(spec.get('description', ''))[:160]}")
    return "\n".join(lines) or _NONE[language]


class _LazyModels(dict):
    """Each role's model built on first use (a run whose levels are all ``-k`` builds none)."""

    def __init__(self, given: Mapping[str, str]) -> None:
        super().__init__()
        self.given = dict(given)

    def __missing__(self, role: str) -> Any:
        self[role] = variant_role_model(self.given, role)
        return self[role]


class _Writer:
    """Writes and checks the exchanges of one target task, one at a time, keeping them for every level."""

    def __init__(self, state: VariantState, models: Any, session: Mapping[str, Any], target: int) -> None:
        self.language = state.get("language", "en")
        self.models = models
        self.session = session
        self.target = target
        self.exchanges: list[tuple[str, str]] = []
        self.problem: tuple[str, str] | None = None

    def _ask(self, role: str, template: str, part: str, written: list[str], **values: str) -> str | None:
        language, session, target = self.language, self.session, self.target
        text, problem = ask_checked(
            self.models[role],
            role,
            f"{session['id']}#t{target}",
            language,
            lambda note: render(template, language, note=note, **values),
            lambda reply, calls: check_exchange(
                session, language, target, reply, part=part, tool_calls=calls, earlier=written
            ),
        )
        self.problem = problem
        return text

    def upto(self, k: int) -> bool:
        """Write exchanges until there are ``k``; ``False`` (with :attr:`problem`) when one never passes."""
        while len(self.exchanges) < k and self.problem is None:
            earlier = "\n".join(f"- {user}" for user, _ in self.exchanges) or _NONE[self.language]
            domain = domain_text(self.session, self.language)
            users = [u for u, _ in self.exchanges]
            user = self._ask("user", "exchange_user.md", "user turn", users, domain=domain, earlier=earlier)
            replies = [r for _, r in self.exchanges] + [user or ""]
            reply = None if user is None else self._ask("agent", "exchange_agent.md", "reply", replies, message=user)
            if user is None or reply is None:
                return False
            self.exchanges.append((user, reply))
        return len(self.exchanges) >= k


def _written(state: VariantState, levels: Sequence[str], models: Any) -> dict[str, Any]:
    language, seed = state.get("language", "en"), int(state.get("seed", 0))
    sessions = state["sessions"]
    exchanges = all_chat_exchanges(sessions)
    removals = [level for level in levels if parse_transition_level(level) < 0]
    inserts = sorted((level for level in levels if parse_transition_level(level) > 0), key=parse_transition_level)
    result = new_result("transitions")
    for session in sessions:
        out = transition_variants(session, sessions, removals, language=language, seed=seed, exchanges=exchanges)
        donors = [record for owner, record in exchanges if owner != session["id"]]
        for target, ok in enumerate(gold_correct(session, language) if inserts else []):
            writer = _Writer(state, models, session, target)
            for level in inserts:
                k = parse_transition_level(level)
                if not ok:
                    out.skipped.append((target, level, "origin_gold_wrong", SKIP_RULES["origin_gold_wrong"]))
                elif len(donors) < k:
                    why = f"{len(donors)} chat exchange(s) in other sessions for the other side, not {k}"
                    out.skipped.append((target, level, "too_few_exchanges", why))
                elif not writer.upto(k):
                    assert writer.problem is not None
                    out.skipped.append((target, level, writer.problem[0], writer.problem[1]))
                else:
                    variant = model_transition(
                        session, language, target, level, writer.exchanges[:k], donors, seed=seed
                    )
                    out.variants.append(variant)
        collect_outcome(result, session, out, language)
    return result


def transitions(state: VariantState) -> dict[str, Any]:
    """The ``transitions`` factor. Without a model for ``user`` or ``agent`` in ``state["models"]``: the
    mechanical variants of :func:`run_factor`. With one: ``-k`` as before; ``+k`` inserts k exchanges
    written by the two roles' models (the one not given: the bundled local model), the same k exchanges
    nested across levels (``+1``'s is the first of ``+2``'s), each text up to ``MODEL_ATTEMPTS`` requests
    (session key ``<origin id>#t<target>``); a level whose exchanges never pass is skipped with the last
    check's rule id (docs/variants.md §3.6, §4).

    Raises:
        VariantError: a malformed level.
    """
    if "transitions" not in state.get("factors", []):
        return {}
    levels = tuple((state.get("levels") or {}).get("transitions") or DEFAULT_LEVELS["transitions"])
    given = state.get("models") or {}
    if not any(role in given for role in EXCHANGE_ROLES):
        sessions = state["sessions"]
        language, seed = state.get("language", "en"), int(state.get("seed", 0))
        return {"results": [run_factor("transitions", sessions, levels=levels, language=language, seed=seed)]}
    return {"results": [_written(state, levels, _LazyModels(given))]}
