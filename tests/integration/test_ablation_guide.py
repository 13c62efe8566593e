"""The Python example of docs/guides/ablation.md runs as the guide says (issue 39): ``wildtoolbench.ablate`` on the
bundled demo with the chat-sensitive test candidate prints the effects the guide quotes, and ``wildtoolbench.report``
of the ablation folder holds the Ablation view. Run from a folder that holds only a link to the repository's
``tests`` (the candidate's file), offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.integration.test_readme_examples import fenced_blocks

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "ablation.md"


def test_the_python_example_prints_what_the_guide_says(tmp_path: Path):
    cells = [body for lang, body in fenced_blocks(GUIDE.read_text(encoding="utf-8")) if lang == "python"]
    assert len(cells) == 1
    (tmp_path / "tests").symlink_to(REPO / "tests")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WTB_", "LANGSMITH_", "OPENAI_"))}
    env.update(WTB_CACHE_DIR=str(tmp_path / "cache"), LANGSMITH_TRACING="false")
    done = subprocess.run(
        [sys.executable, "-c", cells[0]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    quoted = "transitions +1: -95.8 points [-100.0, -85.1], p = 0.031\nFalse\nnames None 24 0.0\ntransitions +1 24 -95.8333\n"
    assert quoted in done.stdout
    assert quoted.splitlines()[0] in GUIDE.read_text(encoding="utf-8")
    page = (tmp_path / "ablate" / "chat-py" / "report" / "index.html").read_text(encoding="utf-8")
    assert '<a href="#ablation" data-view="ablation">Ablation</a>' in page
    assert (tmp_path / "ablate" / "chat-py" / "pairs.jsonl").is_file()
