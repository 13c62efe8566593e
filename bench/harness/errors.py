"""What stops the reference harness outright (docs/evaluation.md §6): :class:`InferenceError`."""

from __future__ import annotations

ERROR_PREFIX = "Error during inference: "
"""Prefix of a session's ``result`` string when its inference crashed."""


class InferenceError(Exception):
    """The reference harness cannot run this session at all (quirk 11 and friends).

    ``str(error)`` is what follows ``"Error during inference: "`` in the
    session's result; it is empty where the reference failed on a bare
    ``assert`` (so the recorded string matches the reference), and
    :attr:`detail` explains the cause for people reading logs.
    """

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.detail = detail
