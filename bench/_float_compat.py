"""Temporary stand-in for ``bench.args.float_to_number`` until the argument-checker branch is merged.

Delete this module once ``bench.args`` exists (``bench.inference`` imports from there first).
"""

from __future__ import annotations

import json
from typing import Any


def float_to_number(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copy of ``tools`` with the textual ``"type": "float"`` rewritten to ``"type": "number"`` (SPEC 3.1)."""
    text = json.dumps(tools, ensure_ascii=False).replace('"type": "float"', '"type": "number"')
    return json.loads(text)
