"""The ``explicit`` node of the variant graph (docs/variants.md §3.1, §3.6): the mechanical clause by
default; with a model given for the ``explicit`` role, each target user turn rewritten by that model to
state its context values, checked by ``wildtoolbench.bench.variants.written.check_explicit``."""

from __future__ import annotations

from typing import Any

from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.build import collect_outcome, new_result, run_factor
from wildtoolbench.bench.variants.common import SKIP_RULES, Outcome, gold_correct, implicit_values, value_text
from wildtoolbench.bench.variants.written import check_explicit, model_explicit
from wildtoolbench.nodes.variants.asking import ask_checked, variant_role_model
from wildtoolbench.nodes.variants.state import VariantState
from wildtoolbench.prompts import render

SEPARATOR = {"en": "; ", "zh": "；"}
"""Between the ``parameter = value`` items of the prompt's value list, as in its example."""


def explicit(state: VariantState) -> dict[str, Any]:
    """The ``explicit`` factor. Without ``state["models"]["explicit"]``: the mechanical variants of
    :func:`run_factor`. With it: per task whose origin gold scores correct and that has context values on
    the ``language`` side, the model's rewrite of the message (up to ``MODEL_ATTEMPTS`` requests, role
    ``explicit``, session key ``<origin id>#t<task>``); a task whose rewrite never passes is skipped with
    the last check's rule id (docs/variants.md §3.6, §4)."""
    if "explicit" not in state.get("factors", []):
        return {}
    language = state.get("language", "en")
    models = state.get("models") or {}
    if "explicit" not in models:
        return {"results": [run_factor("explicit", state["sessions"], language=language)]}
    model = variant_role_model(models, "explicit")
    side = fields_for(language)
    result = new_result("explicit")
    for session in state["sessions"]:
        out = Outcome()
        for task, ok in enumerate(gold_correct(session, language)):
            values = implicit_values(session, side, task)
            if not ok or not values:
                rule = "origin_gold_wrong" if not ok else "no_implicit_value"
                out.skipped.append((task, "", rule, SKIP_RULES[rule]))
                continue
            listed = SEPARATOR[language].join(f"{name} = {value_text(value)}" for name, value in values)
            message = session[side.tasks][task]
            text, problem = ask_checked(
                model,
                "explicit",
                f"{session['id']}#t{task}",
                language,
                lambda note, m=message, v=listed: render("explicit.md", language, message=m, values=v, note=note),
                lambda reply, calls, s=session, t=task: check_explicit(s, language, t, reply),
            )
            if text is None:
                assert problem is not None
                out.skipped.append((task, "", problem[0], problem[1]))
                continue
            out.variants.append(model_explicit(session, language, task, text))
        collect_outcome(result, session, out, language)
    return {"results": [result]}
