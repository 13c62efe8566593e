"""Connection and sampling settings that every provider receives (:class:`ModelSettings`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelSettings:
    """Connection and sampling settings shared by every provider.

    Attributes:
        temperature: sampling temperature (default 0, as for benchmark runs).
        base_url: OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``;
            ``None`` lets the provider use its own default / ``OPENAI_BASE_URL``.
        api_key: secret key; ``None`` lets the provider read its environment variable.
        timeout: per-request timeout in seconds.
        max_retries: transport retries done inside the client.
        extra: provider-specific keyword arguments.
    """

    temperature: float = 0.0
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 2
    extra: dict[str, Any] = field(default_factory=dict)
