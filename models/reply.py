"""The candidate's answer to one model request (docs/evaluation.md §5.3), shared by the candidate and its calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CandidateReply:
    """The candidate's answer to one model request, as the step records it (docs/evaluation.md §5.3).

    Attributes:
        response: the raw response ``{"content", "tool_calls", "reasoning_content"}``.
        input_tokens: prompt tokens reported for the request (0 when none was reported).
        output_tokens: completion tokens reported for the request.
        model: for a graph, Runnable or agent candidate, the model whose reply is the response
            (``None`` when none reported a name, and always for a chat model).
        models: for those candidates, every model seen called for this request, in order of first call.
        cached: the reply came from the request cache (``wildtoolbench.models.cache``, docs/trials.md §8): no request was
            made for it, so its tokens are not counted as paid.
        internal: for an agent candidate, ``(requests, input tokens, output tokens)`` of its internal
            requests since the previous step (handoffs, planning, reports to a supervisor: docs/evaluation.md §8.9).
    """

    response: dict[str, Any]
    input_tokens: int
    output_tokens: int
    model: str | None = None
    models: tuple[str, ...] = ()
    cached: bool = False
    internal: tuple[int, int, int] = (0, 0, 0)
