"""The live transcript of one generated session (docs/generation.md §7): ``transcripts/<key>.jsonl``,
appended as the generation graph runs (:func:`wildtoolbench.runner.generation.generate_session`)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wildtoolbench.tracing import redact_record


class LiveTranscript:
    """The live transcript of one session (docs/generation.md §7): JSON Lines appended as the session runs.

    Lines: ``{...entry, "line": "entry", "t"}`` per transcript entry (role output, verdict),
    ``{"line": "call", "t", "role", "task", "seconds", "input_tokens", "output_tokens"}`` per model
    request, and a last ``{"line": "end", "t", "status", "reason"}``; ``t`` is seconds since the
    session started. Each batch of lines is one ``write`` on a file opened for appending, so a
    reader (or a crash) sees whole lines only; the text is redacted like every output.

    Args:
        path: the file; created with its folder, emptied when it exists (the session starts over).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")
        self.started = time.monotonic()
        self.entries = 0
        self.calls = 0

    def _append(self, records: Sequence[dict[str, Any]]) -> None:
        if not records:
            return
        data = "".join(json.dumps(redact_record(r), ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def update(self, values: dict[str, Any]) -> None:
        """Append what is new in ``values`` (a state snapshot of the graph) since the last update."""
        t = round(time.monotonic() - self.started, 3)
        transcript = list(values.get("transcript") or [])
        calls = list(values.get("calls") or [])
        records = [{**e, "line": "entry", "t": t} for e in transcript[self.entries :]]
        records += [
            {
                "line": "call",
                "t": t,
                "role": c.get("role"),
                "task": c.get("task"),
                "seconds": c.get("seconds"),
                "input_tokens": c.get("input_tokens"),
                "output_tokens": c.get("output_tokens"),
            }
            for c in calls[self.calls :]
        ]
        self.entries, self.calls = max(self.entries, len(transcript)), max(self.calls, len(calls))
        self._append(records)

    def close(self, status: str, reason: str) -> None:
        """Append the closing line: the session's ``status`` and failure ``reason``."""
        t = round(time.monotonic() - self.started, 3)
        self._append([{"line": "end", "t": t, "status": status, "reason": reason}])
