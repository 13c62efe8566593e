"""`wtb --help` and every sub-command's `--help` import no heavy module (docs/cli.md §1).

Start-up time is measured in `benchmarks/`, not here: these tests check the cause instead, in a
fresh interpreter per command, so that a module-level import added to a CLI module shows up as a
named module rather than as a slower clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

HEAVY = (
    "langgraph",
    "langgraph_sdk",
    "langchain",
    "langchain_core",
    "langchain_openai",
    "langsmith",
    "openai",
    "httpx",
    "requests",
    "pydantic",
    "pydantic_core",
    "matplotlib",
    "numpy",
    "rich",
    "asyncio",
    "importlib.metadata",
    "filelock",
    "bench",
    "graphs",
    "nodes",
    "prompts",
    "wildtoolbench.runner",
    "wildtoolbench.scoring",
    "wildtoolbench.common.table",
    "wildtoolbench.tracing",
    "wildtoolbench.reports",
    "wildtoolbench.data",
    "wildtoolbench.remote",
    "wildtoolbench.tracing.experiments",
)
"""Modules (and their sub-modules) a `--help` must not import: the frameworks, the scoring core, rich."""

COMMANDS = [
    [],
    ["eval"],
    ["score"],
    ["validate"],
    ["generate"],
    ["report"],
    ["compare"],
    ["audit"],
    ["diff"],
    ["gate"],
    ["review"],
    ["data"],
    ["data", "pull"],
]

_PROBE = """
import json, sys
sys.argv = ["wtb", *json.loads(sys.argv[1]), "--help"]
from wildtoolbench.cli import main
code = None
try:
    main()
except SystemExit as exit:
    code = exit.code
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _help(command: list[str]) -> tuple[str, dict]:
    """Run ``wtb COMMAND --help`` the way the console script does, in a fresh interpreter."""
    done = _python(_PROBE, json.dumps(command), COLUMNS="100")
    return done.stdout, json.loads(done.stderr)


def _python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``python -c CODE ARGS`` in a fresh interpreter from the repository (``env`` added); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in HEAVY))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "wtb")
def test_help_imports_no_heavy_module(command):
    text, probe = _help(command)
    assert probe["code"] in (0, None)
    assert text.startswith("Usage: ")
    assert _heavy(probe["modules"]) == []


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_help_still_lists_every_command_and_the_exit_statuses():
    from wildtoolbench.common.run_folder import METRIC_FILE, SCORE_FILE, SUMMARY_METRICS_FILE

    text, _ = _help([])
    listed = text.split("Commands:")[1].splitlines()
    commands = [line.split()[0] for line in listed if line.startswith("  ") and line.split()]
    assert commands[:13] == [
        "eval",
        "generate",
        "validate",
        "score",
        "report",
        "compare",
        "audit",
        "diff",
        "gate",
        "review",
        "variants",
        "ablate",
        "data",
    ]
    assert "Exit status: 0 done; 1 an input file's content is bad" in _flat(text)
    eval_help = _help(["eval"])[0]
    assert "--scoring <reference|fixed|semantic>" in eval_help and "--lang <en|zh>" in eval_help
    model = "(the bundled local model, the default; $WTB_MODEL overrides the default)"
    assert model in _flat(eval_help)
    # the score help names the output files as literals (importing wildtoolbench.scoring.run costs)
    files = f"{SCORE_FILE}, {METRIC_FILE} and {SUMMARY_METRICS_FILE}"
    assert files in _flat(_help(["score"])[0])
    # generate's help reads models.DEFAULT_MODEL from the light registry module
    assert "uses $WTB_<ROLE>_MODEL, else local." in _flat(_help(["generate"])[0])


def test_a_command_imports_what_it_runs():
    """The bodies import the heavy modules themselves: `wtb validate` loads the schema (pydantic)."""
    code = (
        "import sys\nsys.argv = ['wtb', 'validate', 'bench/data/demo_sessions.jsonl']\nfrom wildtoolbench.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    assert exit.code in (0, None), exit.code\n"
        "print('wildtoolbench.bench.schema' in sys.modules, 'pydantic' in sys.modules, 'langgraph' in sys.modules)"
    )
    done = _python(code)
    assert done.stdout.splitlines()[-1] == "True True False"
