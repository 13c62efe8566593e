"""The error of an agent file or factory that fails names the package to install when a module is missing
(models/providers/graph.py ``failure_text``; found by a fresh-user walkthrough: the supervisor example without
``langgraph-supervisor`` said only ``No module named 'langgraph_supervisor'``)."""

from __future__ import annotations

import pytest

from wildtoolbench.models import ConfigurationError
from wildtoolbench.models.providers.graph import failure_text, load

pytestmark = pytest.mark.unit


def test_a_missing_module_names_the_usual_package():
    try:
        import langgraph_supervisor_not_here  # noqa: F401
    except ModuleNotFoundError as exc:
        text = failure_text(exc)
    assert text == (
        "ModuleNotFoundError: No module named 'langgraph_supervisor_not_here' (install the package that provides it "
        "in this environment, usually: pip install langgraph-supervisor-not-here)"
    )


def test_any_other_failure_is_its_type_and_message():
    assert failure_text(KeyError("x")) == "KeyError: 'x'"
    assert failure_text(ImportError("cannot import name 'y'")) == "ImportError: cannot import name 'y'"


def test_an_agent_file_that_imports_a_missing_package(tmp_path):
    agent = tmp_path / "my_agent.py"
    agent.write_text("import deepagents_missing.graph\n\ndef make_agent(tools):\n    return None\n", "utf-8")
    with pytest.raises(ConfigurationError) as caught:
        load(f"{agent}:make_agent")
    assert str(caught.value).endswith("usually: pip install deepagents-missing)")
