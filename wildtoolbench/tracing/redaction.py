"""Secret redaction for what a ``wtb`` command writes: the project's one redaction (:mod:`wildtoolbench.models.redaction`),
and the guard that passes the command's terminal output through it (:func:`redacted_terminal`).

:func:`redact`, :func:`redact_text`, :func:`redact_record` and :func:`secret_values` are those of
:mod:`wildtoolbench.models.redaction` (docs/settings.md §8), re-exported here for the application layer.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from wildtoolbench.models.redaction import REDACTED, SECRET_KEYS, redact, redact_record, redact_text, secret_values


class RedactingStream:
    """A text stream that passes every ``write`` through :func:`redact_text` before the wrapped stream.

    Everything else (``flush``, ``isatty``, ``fileno``, ``encoding``, ``buffer`` ...) is the wrapped
    stream's. One ``write`` is redacted as a whole: ``print``, ``click.echo`` and rich write a line (or
    a whole rendering) at once, so a secret is never split across two writes by them.

    Args:
        stream: the stream to write to (``sys.stdout`` or ``sys.stderr``).
        secrets: exact secret values (default: read from the environment at each write).
    """

    def __init__(self, stream: TextIO, secrets: list[str] | None = None):
        self._stream = stream
        self._secrets = secrets

    @property
    def wrapped(self) -> TextIO:
        """The stream written to."""
        return self._stream

    def write(self, text: str) -> int:
        """Write ``text`` redacted; returns ``len(text)`` (what the caller wrote, as ``TextIO.write`` does)."""
        if isinstance(text, str) and text:
            self._stream.write(redact_text(text, self._secrets))
        else:
            self._stream.write(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line redacted."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def redacted_terminal() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` redact every write (docs/settings.md §8).

    What a command prints (results, warnings, the lines of a failure, a traceback, log records of
    handlers that write to ``sys.stderr`` when they emit) goes through :func:`redact_text`. Nested
    blocks do not wrap twice; the streams found on entry are put back on exit. The values of secret
    variables are read once, on entry.
    """
    saved = sys.stdout, sys.stderr
    secrets = secret_values()  # once per command: the environment's secrets do not change during it
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout, secrets)  # type: ignore[assignment]
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr, secrets)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


__all__ = [
    "REDACTED",
    "SECRET_KEYS",
    "RedactingStream",
    "redact",
    "redact_record",
    "redact_text",
    "redacted_terminal",
    "secret_values",
]
