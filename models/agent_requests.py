"""Which model requests of an agent are one logical request (docs/evaluation.md §8.11; rule ``concurrent-requests``, §8.8).

A wrapper model calls another model inside its own request: a custom ``BaseChatModel`` whose ``_agenerate``
awaits an inner chat model, a router that delegates to one of several models. The inner call is part of
the outer request: its reply is the outer model's to return, so it is neither a step of its own nor a
second request of the step. LangChain ties the inner call to the outer one only when the wrapper passes
its run manager on (``parent_run_id``); a wrapper that simply calls ``inner.ainvoke(messages)`` gets the
calling node's config, so its request looks like a sibling of the outer one.

:class:`RequestScope` tells them apart by where a request starts: it is a synchronous callback handler
run inline, so at each model request's start it records the request in the *calling* context (a context
variable). Code that runs inside that request (the model's ``_agenerate``, in a task or a thread that
copies the context) sees the outer request as enclosing it; two requests started side by side
(``asyncio.gather(model.ainvoke(a), model.ainvoke(b))``) each see only themselves. The step gate
(:class:`wildtoolbench.models.agent_loop.StepGate`) treats a request whose enclosing request is still
under way as part of it, and flags only requests with none.
"""

from __future__ import annotations

import contextvars
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

_KEPT = 32
"""How many enclosing requests a context remembers (the newest; older ones have long ended)."""

_enclosing: contextvars.ContextVar[tuple[UUID, ...]] = contextvars.ContextVar("wtb_model_requests", default=())


def enclosing_requests() -> tuple[UUID, ...]:
    """The run ids of the model requests started in the current context, oldest first (the request whose
    start is being handled last): those still under way enclose the current code."""
    return _enclosing.get()


class RequestScope(BaseCallbackHandler):
    """Records each model request's run id in the context it starts in (see the module doc).

    Synchronous and ``run_inline`` so that LangChain calls it directly in the caller's context, both in
    an asynchronous callback manager and in a synchronous one (a node run in a worker thread), before the
    gathered handlers (the step gate) run in copies of that context.
    """

    run_inline = True
    raise_error = False

    def _enter(self, run_id: UUID) -> None:
        _enclosing.set((*_enclosing.get()[-(_KEPT - 1) :], run_id))

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the request (inputs: LangChain's ``on_chat_model_start`` arguments; raises nothing)."""
        self._enter(run_id)

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """As :meth:`on_chat_model_start`, for a completion model."""
        self._enter(run_id)


__all__ = ["RequestScope", "enclosing_requests"]
