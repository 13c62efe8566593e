"""What the model-written factors of the variant graph share (docs/variants.md §3.5, §3.6): each role's
model resolved from the run's ``models`` (default: the bundled local model), one request with the run
metadata a ``scripted:`` model keys its replies by, and the bounded retry of a text that fails its check."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import HumanMessage

from wildtoolbench.bench.variants.common import DEFAULT_ROLE_MODEL, MODEL_ATTEMPTS, SKIP_RULES
from wildtoolbench.bench.variants.written import message_of
from wildtoolbench.models import resolve_model
from wildtoolbench.prompts import render

TextCheck = Callable[[str, int], "tuple[str, str] | None"]
"""A text check: ``(text, tool calls of the reply) -> None`` or ``(rule id, reason)``."""


def variant_role_model(models: Mapping[str, str] | None, role: str) -> Any:
    """The chat model of ``role``: its spec in ``models``, else :data:`DEFAULT_ROLE_MODEL` (the bundled local model).

    Raises:
        wildtoolbench.models.ConfigurationError: a spec that names no model.
    """
    return resolve_model((models or {}).get(role) or DEFAULT_ROLE_MODEL)


def variant_reply_text(reply: Any) -> str:
    """The text of a chat model's reply, without surrounding whitespace or quotes."""
    content = getattr(reply, "content", "")
    if isinstance(content, list):
        content = "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content).strip().strip('"').strip()


def ask_checked(
    model: Any,
    role: str,
    session_key: str,
    language: str,
    prompt: Callable[[str], str],
    check: TextCheck,
) -> tuple[str | None, tuple[str, str] | None]:
    """Ask ``model`` (as ``role``, for ``session_key``) up to :data:`MODEL_ATTEMPTS` times until its text passes
    ``check`` (docs/variants.md §3.6). ``prompt(note)`` renders the request; after a failed check ``note``
    says why (``prompts/<language>/variant_retry.md``). The check reads :func:`message_of` the reply (a
    preface such as ``Sure, here's ...:`` and a trailing comment removed).

    Returns:
        ``(text, None)`` for a text that passed, else ``(None, (rule id, reason))``: the last check's
        rule, or ``model_failed`` when a request raised (not retried: a provider failure is not the text's).
    """
    note = ""
    problem: tuple[str, str] | None = None
    metadata = {"wtb_role": role, "wtb_session": session_key}
    for attempt in range(1, MODEL_ATTEMPTS + 1):
        try:
            reply = model.invoke([HumanMessage(prompt(note))], config={"metadata": metadata, "run_name": role})
        except Exception as exc:  # noqa: BLE001 - any provider failure skips this task, named
            return None, ("model_failed", f"{SKIP_RULES['model_failed']}: {type(exc).__name__}: {exc}")
        text = message_of(variant_reply_text(reply), language)
        problem = check(text, len(getattr(reply, "tool_calls", None) or []))
        if problem is None:
            return text, None
        note = "\n" + render("variant_retry.md", language, reason=problem[1])
        problem = (problem[0], f"{problem[1]} (after {attempt} attempt(s))")
    return None, problem
