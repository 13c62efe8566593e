"""The README's and the guides' examples work from a fresh clone (issue 14 part 3).

Every fenced example of the user-facing documentation is read: README.md outside its "Development"
section, then the guides of its "Guides" table (docs/guides/, ``tests/support/user_docs.py``). None may mention
``../shared`` (the reference fixtures beside this clone; users do not have them). Each shell command
of the ``bash`` blocks is then either run, in README order, in a copy of the repository's files with
no ``../shared`` beside it and an empty cache, or skipped for a reason listed in :data:`SKIP_RULES`
(network, API key, local model, ...); ``pytest -rs`` lists the skipped commands with their reason.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.user_docs import user_docs_text

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DEVELOPMENT = "## Development"

SKIP_RULES: list[tuple[str, str]] = [
    # (regular expression searched in the command, why it does not run here)
    (r"pip install|python3 -m venv", "network: installs packages from PyPI (the Quick start; .ci/run does it)"),
    (r"^source ", "shell set-up for the commands that follow"),
    (r"^export ", "shell set-up for the commands that follow (an API key or LangSmith settings)"),
    (r"openai:", "API key and network: a remote model (or a vLLM / Ollama server on this machine)"),
    (
        r"langchain:",
        "API key and network: a LangChain integration's provider (tests/test_langchain_candidates.py uses fakes)",
    ),
    (
        r"\bwtb data pull\b|\bwildtoolbench(-en|-zh)?\b",
        "network: downloads the official data (tests/integration/test_data_pull.py "
        "and tests/integration/test_lang_zh.py run these commands against a loopback server)",
    ),
    (
        r"^langgraph dev|^pip ",
        "starts the LangGraph API server (tests/integration/test_langgraph_dev.py runs .ci/langgraph-dev-check)",
    ),
    (r"benchmarks\.", "benchmark: minutes of CPU on 2 cores; run by hand"),
    (
        r"^wtb review\b",
        "serves the review app until Ctrl-C, or needs its reviews (tests/integration/test_review_browser.py runs "
        "both, with two reviewers in a browser)",
    ),
    (
        r"--server ",
        "needs a running LangGraph server (tests/integration/test_server_eval.py and tests/integration/test_remote.py run these runs)",
    ),
    (r"(^| )\.\.\.( |$)", "elided example (`...` stands for the options of the command above)"),
    (r"runs/gen(-demo)?/", "needs the output of an example above that needs a model (local or remote)"),
    (
        r"^wtb (eval|generate)\b(?!.*--model \"?(replay|scripted|graph):)",
        "the bundled local model (xllamacpp, the `local` extra; tests/integration/test_local_model.py and .ci/run run it)",
    ),
]


def _sections(text: str) -> str:
    """README text before the Development section."""
    return text.split(f"\n{DEVELOPMENT}\n", 1)[0]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of ``text``, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S)]


def shell_commands(body: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comment lines dropped."""
    commands, current = [], ""
    for line in body.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        commands.append((current + line).strip())
        current = ""
    return commands


def user_commands() -> list[str]:
    """Every shell command of the bash blocks of the user-facing documentation, in reading order."""
    blocks = fenced_blocks(user_docs_text())
    return [c for lang, body in blocks if lang in ("bash", "sh", "") for c in shell_commands(body)]


def skip_reason(command: str) -> str | None:
    """Why ``command`` is not run by this test, or ``None`` when it runs."""
    for pattern, reason in SKIP_RULES:
        if re.search(pattern, command):
            return reason
    return None


COMMANDS = user_commands()


def test_no_user_facing_example_needs_the_fixtures():
    text = user_docs_text()
    assert "../shared" not in text
    blocks = fenced_blocks(text)
    assert len(blocks) >= 10 and any(lang == "python" for lang, _ in blocks)
    # The Development section is where the fixtures are described.
    assert "../shared/fixtures/reference" in README.read_text(encoding="utf-8").split(f"\n{DEVELOPMENT}\n", 1)[1]


def test_the_offline_examples_are_run():
    runnable = [shlex.split(c, comments=True) for c in COMMANDS if skip_reason(c) is None]
    assert runnable == [
        ["wtb", "eval", "--model", "replay:bench/data/demo_candidates.jsonl#demo-model"],
        ["wtb", "eval", "--model", "graph:examples/tool_agent.py:graph"],
        ["wtb", "validate", "bench/data/demo_sessions.jsonl"],
        ["wtb", "eval", "--model", "replay:bench/data/demo_candidates.jsonl#demo-model", "--no-progress"],
        [
            "wtb",
            "score",
            "--dataset",
            "bench/data/demo_sessions.jsonl",
            "--results",
            "runs/demo-model/demo_sessions/result.jsonl",
            "--out",
            "runs/rescored",
        ],
        [
            "wtb",
            "eval",
            "--model",
            "replay:bench/data/demo_candidates.jsonl#demo-model",
            "--scoring",
            "fixed",
            "--out",
            "runs/demo-fixed",
            "--no-progress",
        ],
        ["wtb", "score", "runs/demo-fixed", "--scoring", "semantic"],
        ["wtb", "compare", "runs/demo-fixed", "--scorings", "fixed,semantic", "--json", "flips.json"],
        ["wtb", "audit", "bench/data/demo_sessions.jsonl", "--stats", "--stats-json", "demo-coverage.json"],
        ["wtb", "eval", "--model", "replay:bench/data/demo_candidates.jsonl#demo-model"],
        ["wtb", "eval", "--model", "replay:bench/data/demo_candidates.jsonl#oracle"],
        ["wtb", "report", "runs/demo-model/demo_sessions", "runs/oracle/demo_sessions", "--out", "runs/report"],
        ["wtb", "eval", "--model", "replay:bench/data/demo_candidates.jsonl#oracle", "--report"],
        [
            "wtb",
            "report",
            "runs/demo-model/demo_sessions",
            "runs/oracle/demo_sessions",
            "--out",
            "runs/report-audit",
            "--audit",
        ],
    ]
    skipped = {skip_reason(c) for c in COMMANDS} - {None}
    assert any(reason.startswith("network: downloads") for reason in skipped)
    assert any(reason.startswith("the bundled local model") for reason in skipped)


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The repository's files (tracked and new, not ignored) copied to a folder with no ``../shared``
    beside it, and an environment with an empty cache, no keys and no tracing."""
    root = tmp_path_factory.mktemp("fresh") / "clone"
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    assert not (root.parent / "shared").exists()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WTB_", "LANGSMITH_", "LANGCHAIN_", "OPENAI_")) and k != "PYTHONPATH"
    }
    env.update(PYTHONPATH=str(root), WTB_CACHE_DIR=str(root.parent / "cache"), LANGSMITH_TRACING="false")
    return root, env


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{i:02d}" for i in range(len(COMMANDS))])
def test_readme_command(command, fresh_clone):
    reason = skip_reason(command)
    if reason is not None:
        pytest.skip(f"{command!r}: {reason}")
    root, env = fresh_clone
    argv = shlex.split(command, comments=True)
    assert argv[0] == "wtb", command
    result = subprocess.run(
        [sys.executable, "-m", "wildtoolbench.cli", *argv[1:]],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    assert "../shared" not in result.stdout + result.stderr
    if argv[1] == "eval" and "--scoring" in argv:  # docs/guides/scoring.md: a fixed run into its own folder
        out = root / argv[argv.index("--out") + 1]
        assert f"outputs in {out.relative_to(root)}/" in result.stdout
        assert (out / "metric.fixed.json").is_file() and not (out / "metric.json").exists()
    elif argv[1] == "eval":
        # the default folder of each candidate, and its score on the bundled demo (the graph example
        # replays #demo-model through its own agent loop)
        folder, correct = {
            "replay:bench/data/demo_candidates.jsonl#demo-model": ("demo-model", 16),
            "replay:bench/data/demo_candidates.jsonl#oracle": ("oracle", 24),
            "graph:examples/tool_agent.py:graph": ("tool_agent_graph", 16),
        }[argv[argv.index("--model") + 1]]
        out = root / "runs" / folder / "demo_sessions"
        assert f"outputs in {out.relative_to(root)}/" in result.stdout
        metric = json.loads((out / "metric.json").read_text(encoding="utf-8"))
        assert (
            metric["total_info"]["task"]["correct_count"] == correct
            and metric["total_info"]["task"]["total_count"] == 24
        )
        if "--report" in argv:
            assert (out / "report" / "index.html").is_file()
    elif argv[1] == "report":
        assert (root / "runs" / "report" / "index.html").is_file()
    elif argv[1] == "validate":
        assert "6 sessions, 24 tasks" in result.stdout
    elif argv[1] == "score" and "--dataset" not in argv:  # a run folder re-graded in place (semantic)
        semantic = json.loads((root / argv[2] / "metric.semantic.json").read_text(encoding="utf-8"))
        fixed = json.loads((root / argv[2] / "metric.fixed.json").read_text(encoding="utf-8"))
        assert semantic["total_info"]["task"]["total_count"] == fixed["total_info"]["task"]["total_count"] == 24
    elif argv[1] == "compare":
        assert json.loads((root / "flips.json").read_text(encoding="utf-8"))
    elif argv[1] == "score":
        rescored = json.loads((root / "runs" / "rescored" / "metric.json").read_text(encoding="utf-8"))
        original = json.loads(
            (root / "runs" / "demo-model" / "demo_sessions" / "metric.json").read_text(encoding="utf-8")
        )
        assert rescored == original
        assert json.loads((root / "runs" / "rescored" / "summary_metrics.json").read_text(encoding="utf-8"))[
            "task_accuracy"
        ] == {"value": 16 / 24, "correct": 16, "total": 24}
