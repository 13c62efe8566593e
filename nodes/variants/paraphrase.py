"""The ``paraphrase`` node of the variant graph (docs/variants.md §3.5): asks the paraphrase model to
reword each target user turn, checks the rewording (``wildtoolbench.bench.variants.paraphrase``) and
keeps the variants that pass."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from wildtoolbench.bench.schema import fields_for
from wildtoolbench.bench.variants.build import collect_outcome, new_result
from wildtoolbench.bench.variants.common import SKIP_RULES, Outcome, gold_correct
from wildtoolbench.bench.variants.paraphrase import check_paraphrase, paraphrase_variant
from wildtoolbench.models import resolve_model
from wildtoolbench.nodes.variants.asking import variant_reply_text
from wildtoolbench.nodes.variants.state import VariantState
from wildtoolbench.prompts import render

PARAPHRASE_MODEL = "local"
"""The paraphrase model when ``--model paraphrase=SPEC`` is not given: the bundled local model."""


def paraphrase(state: VariantState) -> dict[str, Any]:
    """The ``paraphrase`` factor: one variant per task whose origin gold scores correct, with the target
    message reworded by the model of ``state["models"]["paraphrase"]`` (default :data:`PARAPHRASE_MODEL`) on
    the ``language`` side; a rewording that fails :func:`check_paraphrase` or a failed request skips the
    task with its rule id (docs/variants.md §3.5, §4)."""
    if "paraphrase" not in state.get("factors", []):
        return {}
    language = state.get("language", "en")
    model = resolve_model((state.get("models") or {}).get("paraphrase") or PARAPHRASE_MODEL)
    result = new_result("paraphrase")
    side = fields_for(language)
    for session in state["sessions"]:
        out = Outcome()
        for task, ok in enumerate(gold_correct(session, language)):
            if not ok:
                out.skipped.append((task, "", "origin_gold_wrong", SKIP_RULES["origin_gold_wrong"]))
                continue
            prompt = render("paraphrase.md", language, message=session[side.tasks][task])
            metadata = {"wtb_role": "paraphrase", "wtb_session": f"{session['id']}#t{task}"}
            try:
                reply = model.invoke([HumanMessage(prompt)], config={"metadata": metadata, "run_name": "paraphrase"})
            except Exception as exc:  # noqa: BLE001 - any provider failure skips this task, named
                out.skipped.append(
                    (task, "", "model_failed", f"{SKIP_RULES['model_failed']}: {type(exc).__name__}: {exc}")
                )
                continue
            text = variant_reply_text(reply)
            problem = check_paraphrase(session, language, task, text)
            if problem is not None:
                out.skipped.append((task, "", problem[0], problem[1]))
                continue
            out.variants.append(paraphrase_variant(session, language, task, text))
        collect_outcome(result, session, out, language)
    return {"results": [result]}
