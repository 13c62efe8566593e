"""The user-facing documentation as one text: the README before its Development section, then each guide
its "Guides" table lists (docs/guides/), in that order. The README tests read their examples from it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DEVELOPMENT = "## Development"


def guide_paths() -> list[Path]:
    """The guides the README's "Guides" table links to, in table order."""
    text = README.read_text(encoding="utf-8")
    table = text.split("\n## Guides\n", 1)[1].split("\n## ", 1)[0]
    return [REPO / link for link in re.findall(r"\]\((docs/guides/[\w.-]+\.md)\)", table)]


def user_docs_text() -> str:
    """README (before Development) followed by every guide, each starting on its own line."""
    readme = README.read_text(encoding="utf-8").split(f"\n{DEVELOPMENT}\n", 1)[0]
    return "\n".join([readme, *(path.read_text(encoding="utf-8") for path in guide_paths())])
