"""The built-in model providers, one module per spec prefix (``wildtoolbench.models.registry.BUILTIN_PROVIDERS``).

Each module exposes ``create(name, settings)`` and optionally ``check``, ``model_name`` and
``MAX_CONCURRENCY`` (see :class:`wildtoolbench.models.registry.Provider`); it is imported on first use, so that
importing :mod:`models` stays light (docs/cli.md §1):

- :mod:`wildtoolbench.models.providers.openai`: ``openai:MODEL``, any OpenAI-compatible endpoint;
- :mod:`wildtoolbench.models.providers.langchain`: ``langchain:PROVIDER:MODEL``, a LangChain integration's chat model;
- :mod:`wildtoolbench.models.providers.replay`: ``replay:PATH#CANDIDATE``, recorded responses of one candidate;
- :mod:`wildtoolbench.models.providers.scripted`: ``scripted:PATH[#ROLE]``, canned role replies;
- :mod:`wildtoolbench.models.providers.graph`: ``graph:PATH.py:ATTR``, a LangGraph graph or Runnable as the candidate.

The llama.cpp providers ``gguf:`` and ``local`` live with their runtime (``wildtoolbench.models.llama.gguf``, ``wildtoolbench.models.llama.local``).
"""
