"""One line per message: an SDK's log records and error texts cut to their first line, credentials masked
(docs/cli.md §2)."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

_SECRET_IN_TEXT = re.compile(r"(API Key:\s*)\S+", re.IGNORECASE)


def one_line(text: str, limit: int = 400) -> str:
    """The first line of ``text``, an ``API Key: ...`` in it masked, cut to ``limit`` characters."""
    line = _SECRET_IN_TEXT.sub(r"\1[REDACTED]", (text.splitlines() or [""])[0].strip())
    return line if len(line) <= limit else line[:limit] + "..."


class _OneLine(logging.Filter):
    """Log records of logger ``name`` and its children as one line each, without traceback, each text once
    (see :func:`one_line_sdk_logs`); records of other loggers pass unchanged."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.prefix = name
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_wtb_one_line", False):
            return True  # already made one line (by the logger's filter, before a handler's)
        if record.name != self.prefix and not record.name.startswith(self.prefix + "."):
            return True
        text = one_line(record.getMessage())
        if text in self.seen:
            return False
        self.seen.add(text)
        record.msg, record.args, record.exc_info, record.exc_text, record.stack_info = text, (), None, None, None
        record._wtb_one_line = True
        return True


@contextlib.contextmanager
def one_line_sdk_logs(name: str) -> Iterator[None]:
    """While the block runs, what SDK logger ``name`` and its children log is one line per message, without
    traceback or repeats, credentials masked (docs/cli.md §2): also the children the SDK only creates
    inside the block (``langsmith.evaluation`` logs a target's failure with its traceback), through the
    handlers their records reach (the root logger's, or Python's last-resort handler)."""
    logger = logging.getLogger(name)
    only = _OneLine(name)
    loggers = [logger] + [
        logging.getLogger(other) for other in list(logging.root.manager.loggerDict) if other.startswith(name + ".")
    ]
    handlers = [*logging.root.handlers, *([logging.lastResort] if logging.lastResort is not None else [])]
    for each in [*loggers, *handlers]:
        each.addFilter(only)
    try:
        yield
    finally:
        for each in [*loggers, *handlers]:
            each.removeFilter(only)
