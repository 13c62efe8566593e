"""A ``graph:`` candidate's resume identity covers its own helper modules (docs/evaluation.md §8.6): an agent
file that imports ``prompts.py`` and ``models.py`` from its folder is another candidate once either is edited,
and a ``replay:`` model inside it is named by the candidate it answers as, so a run folder never resumes the
results of other code (found by a new user: an edited ``prompts.py`` and a switched replay candidate were
both resumed silently)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from wildtoolbench.runner.identity import local_imports, source_digest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "bench" / "data" / "demo_candidates.jsonl"

AGENT = """from langchain.agents import create_agent

from models import get_model
from prompts import SYSTEM_PROMPT


def make_agent(tools):
    return create_agent(get_model(), tools, system_prompt=SYSTEM_PROMPT)
"""


def _folder(tmp_path: Path, prompt: str = "Be brief.", candidate: str = "demo-model") -> Path:
    folder = tmp_path / "agent"
    folder.mkdir(exist_ok=True)
    (folder / "my_agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "prompts.py").write_text(f"SYSTEM_PROMPT = {prompt!r}\n", encoding="utf-8")
    (folder / "models.py").write_text(
        "import wildtoolbench as wtb\n\n\ndef get_model():\n"
        f"    return wtb.chat_model({f'replay:{DEMO}#{candidate}'!r})\n",
        encoding="utf-8",
    )
    return folder


def _eval(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wildtoolbench", "eval", "--model", "graph:my_agent.py:make_agent", "--limit", "1",
         "--out", "run", "--no-progress", "--no-trace"],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )


def test_the_helper_modules_of_the_folder_are_part_of_the_digest(tmp_path):
    folder = _folder(tmp_path)
    (folder / "unused.py").write_text("X = 1\n", encoding="utf-8")  # in the folder, imported by nobody
    pkg = folder / "wtb"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .tools import helper\n", encoding="utf-8")
    (pkg / "tools.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    (folder / "prompts.py").write_text("import wtb\nSYSTEM_PROMPT = 'x'\n", encoding="utf-8")
    agent = folder / "my_agent.py"
    assert [p.relative_to(folder.resolve()).as_posix() for p in local_imports(agent.resolve())] == [
        "models.py", "prompts.py", "wtb/__init__.py", "wtb/tools.py"
    ]
    before = source_digest(agent)
    (folder / "unused.py").write_text("X = 2\n", encoding="utf-8")
    assert source_digest(agent) == before  # a module nothing imports is not the candidate's code
    (pkg / "tools.py").write_text("def helper():\n    return 2\n", encoding="utf-8")
    assert source_digest(agent) != before  # reached through prompts.py -> wtb -> .tools


def test_a_file_without_helpers_keeps_the_digest_of_its_bytes(tmp_path):
    import hashlib

    lone = tmp_path / "lone.py"
    lone.write_text("import json\nfrom langchain.agents import create_agent\n", encoding="utf-8")
    assert source_digest(lone) == hashlib.sha256(lone.read_bytes()).hexdigest()


def test_the_digest_reads_each_file_once_and_keeps_its_formula(tmp_path, monkeypatch):
    """The candidate's file and each helper module are read once (their bytes are both parsed and hashed);
    the digest is the file's bytes, then per helper in path order ``NUL name NUL sha256(bytes)``."""
    import collections
    import hashlib

    folder = _folder(tmp_path)
    agent = (folder / "my_agent.py").resolve()
    expected = hashlib.sha256(agent.read_bytes())
    for name in ("models.py", "prompts.py"):
        expected.update(b"\0" + name.encode() + b"\0" + hashlib.sha256((folder / name).read_bytes()).digest())
    reads: collections.Counter[str] = collections.Counter()
    read_bytes = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads[self.name] += 1
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    assert source_digest(folder / "my_agent.py") == expected.hexdigest()
    assert reads == {"my_agent.py": 1, "models.py": 1, "prompts.py": 1}


def test_an_edited_helper_module_or_another_replay_candidate_is_not_resumed(tmp_path):
    folder = _folder(tmp_path)
    first = _eval(folder)
    assert first.returncode == 0, first.stderr
    run = json.loads((folder / "run" / "run.json").read_text(encoding="utf-8"))
    assert any("candidate=demo-model" in spec for spec in run["candidate"]["model_specs"])

    _folder(tmp_path, prompt="Be thorough.")  # prompts.py edited
    edited = _eval(folder)
    assert edited.returncode == 1
    assert "another version of the candidate" in edited.stderr and "source_sha256" in edited.stderr

    _folder(tmp_path, candidate="oracle")  # prompts.py as first, models.py now answers as #oracle
    switched = _eval(folder)
    assert switched.returncode == 1
    assert "another version of the candidate" in switched.stderr

    _folder(tmp_path)  # the code of the first run again: it resumes
    again = _eval(folder)
    assert again.returncode == 0, again.stderr
    assert "1 already done" in again.stderr + again.stdout
