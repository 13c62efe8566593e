"""In-process candidates (models/providers/objects.py, docs/evaluation.md §8.8): the spec of an object is the same in
every process for the same code, another for edited code; its label is the recorded model name; the graph provider
loads it; a spec no object of this process holds fails naming why."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from wildtoolbench.models import ConfigurationError
from wildtoolbench.models.providers import graph
from wildtoolbench.models.providers.objects import is_object_spec, object_label, register_object

AGENT = textwrap.dedent(
    """\
    def make_agent(tools):
        return None  # VERSION
    """
)


def _spec_in_a_new_process(folder, source: str) -> str:
    (folder / "my_agent.py").write_text(source, encoding="utf-8")
    code = "import my_agent; from wildtoolbench.models.providers.objects import register_object; print(register_object(my_agent.make_agent))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_spec_is_stable_across_processes_and_follows_the_source(tmp_path):
    first = _spec_in_a_new_process(tmp_path, AGENT)
    assert first == _spec_in_a_new_process(tmp_path, AGENT)
    assert first.startswith("graph:object:my_agent:make_agent@") and len(first.rpartition("@")[2]) == 12
    edited = _spec_in_a_new_process(tmp_path, AGENT.replace("VERSION", "VERSION 2"))
    assert edited.rpartition("@")[0] == first.rpartition("@")[0] and edited != first


def test_labels_and_the_provider():
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hi")]))
    assert object_label(model) == "GenericFakeChatModel"
    spec = register_object(model)
    assert is_object_spec(spec) and not is_object_spec("graph:my_agent.py:make_agent")
    name = spec.removeprefix("graph:")
    loaded = graph.load(name)
    assert loaded.runnable is model and loaded.kind == "chat_model"
    assert graph.model_name(name) == "GenericFakeChatModel"

    def make_agent(tools):
        return None

    assert object_label(make_agent) == "test_object_candidates:test_labels_and_the_provider.<locals>.make_agent"


def test_unknown_object_spec_and_strings_are_refused():
    with pytest.raises(ConfigurationError, match="lives only in the process that passed it"):
        graph.load("object:my_agent:make_agent@000000000000")
    with pytest.raises(ConfigurationError, match="must be a Python object"):
        register_object("openai:gpt-4o")
