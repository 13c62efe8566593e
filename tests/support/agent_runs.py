"""Run a candidate over the loopback OpenAI-compatible server and read back its records and metrics.

Shared by the agent-factory tests: the same scripted replies (``candidates.jsonl``) served to an
``openai:`` candidate and to agents wrapping a ``ChatOpenAI`` pointed at the same server.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.openai_stub import ScriptedServer
from tests.unit.graphs.test_evaluation_reference import normalise
from wildtoolbench.nodes.evaluation.context import EvaluationContext
from wildtoolbench.runner import arun_eval, load_dataset
from wildtoolbench.scoring.run import score_run

AGENTS = "tests/support/agent_shapes.py"


def jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def script(reference_dir: Path, candidate: str) -> dict[str, list[dict[str, Any]]]:
    """``{session_id: responses}`` of one fixture candidate."""
    return {
        r["session_id"]: r["responses"]
        for r in jsonl(reference_dir / "candidates.jsonl")
        if r["candidate"] == candidate
    }


@contextmanager
def agent_env(base_url: str, model: str) -> Iterator[None]:
    """The test agents', the react example's and examples/agent_shapes.py's model and URL variables, and ``OPENAI_API_KEY``, set for the block."""
    values = {
        "WTB_TEST_AGENT_BASE_URL": base_url,
        "WTB_TEST_AGENT_MODEL": model,
        "REACT_AGENT_BASE_URL": base_url,  # examples/react_agent.py
        "REACT_AGENT_MODEL": f"openai/{model}",
        "WTB_AGENT_MODEL": f"openai:{model}",  # examples/agent_shapes.py
        "WTB_AGENT_BASE_URL": base_url,
        "OPENAI_API_KEY": "test-key",
    }
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_over_server(
    reference_dir: Path,
    candidate: str,
    spec: str,
    out: Path,
    *,
    sessions: list[dict[str, Any]] | None = None,
    faults: Mapping[tuple[str, int], Any] | None = None,
    replies: Mapping[str, list[dict[str, Any]]] | None = None,
    concurrency: int = 4,
    **settings: Any,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None, ScriptedServer]:
    """Evaluate ``spec`` (``openai:NAME`` and ``langchain:openai:NAME`` get the server's URL) with the server
    replaying ``candidate`` (or ``replies``: ``{session_id: responses}``).

    ``concurrency`` sessions run at once.

    Returns:
        ``({session_id: record}, metric of the run (``None`` without records), the stopped server)``.
    """
    dataset = reference_dir / "sessions.jsonl"
    sessions = sessions if sessions is not None else load_dataset(dataset)
    server = ScriptedServer(
        sessions,
        replies if replies is not None else script(reference_dir, candidate),
        faults=faults,
        language=settings.get("language") or "en",
    )
    with server, agent_env(server.base_url, candidate):
        base_url = server.base_url if spec.startswith(("openai:", "langchain:openai:")) else None
        context = EvaluationContext(model=spec, base_url=base_url, model_name=candidate, **settings)
        asyncio.run(arun_eval(sessions, context, out, progress=False, concurrency=concurrency))
    records = {r["id"]: r for r in jsonl(out / "result.jsonl")}
    if not records:
        return records, None, server
    metric = score_run(
        dataset,
        out / "result.jsonl",
        out / "score",
        scoring=settings.get("scoring") or "reference",
        language=settings.get("language"),
    )
    return records, metric, server


def comparable(record: Mapping[str, Any]) -> Any:
    """A record's result as two candidates with the same replies must share it (latencies counted, history ids masked)."""
    return normalise(copy.deepcopy(record["result"]))
