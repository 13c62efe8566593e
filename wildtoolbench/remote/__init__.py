"""Scale-out on LangGraph Server (issue 16): ``wtb eval --server URL`` and ``wtb generate --server URL``.

Each session becomes one run of the graph deployed on a LangGraph Server (``langgraph dev`` for a local
check, ``langgraph up`` or LangGraph Platform for scale) through ``langgraph_sdk``; the local process
keeps being the single writer of the outputs (the batch layers take the session invoker as a hook).

- :mod:`wildtoolbench.remote.client`: the SDK client, the API key (``$LANGGRAPH_API_KEY`` / ``$LANGSMITH_API_KEY``),
  one run on a new thread with the session's metadata, and the failures of the HTTP layer.
- :mod:`wildtoolbench.remote.check`: the checks before the first session (model specs, the server, the files the
  server must open).
- :mod:`wildtoolbench.remote.invoker`: what both share: :class:`~wildtoolbench.remote.invoker.RemoteGraphInvoker`
  (client, URL, graph id, batch id, LangSmith project; one run on a new thread, waited for) and the batch
  opened on a server (:func:`~wildtoolbench.remote.invoker.run_batch_on_server`).
- :mod:`wildtoolbench.remote.evaluation`: :class:`RemoteEvaluation` and :func:`arun_eval_remote` (``wtb eval --server``).
- :mod:`wildtoolbench.remote.generation`: :class:`RemoteGeneration` and :func:`run_batch_remote` (``wtb generate --server``).
"""

from wildtoolbench.remote.check import check_server, check_specs_for_server, spec_file
from wildtoolbench.remote.client import ServerFailure, api_key_from_env, connect, display_url, wait_for_run
from wildtoolbench.remote.evaluation import RemoteEvaluation, arun_eval_remote, record_usage, run_eval_remote

_LAZY = {"RemoteGeneration": "wildtoolbench.remote.generation", "run_batch_remote": "wildtoolbench.remote.generation"}


def __getattr__(name: str):
    """Import the generation side on first use (it loads the generation nodes, which ``wtb eval`` does not need)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'wildtoolbench.remote' has no attribute {name!r}")


__all__ = [
    "RemoteEvaluation",
    "RemoteGeneration",
    "ServerFailure",
    "api_key_from_env",
    "arun_eval_remote",
    "check_server",
    "check_specs_for_server",
    "connect",
    "display_url",
    "record_usage",
    "run_batch_remote",
    "run_eval_remote",
    "spec_file",
    "wait_for_run",
]
