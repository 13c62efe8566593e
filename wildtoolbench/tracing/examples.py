"""Sessions as a LangSmith dataset: one example per session with a deterministic id, uploaded idempotently (only
the missing examples are sent, so re-running never duplicates one)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from wildtoolbench.bench.schema import Session
from wildtoolbench.tracing import project_version

EXAMPLE_NAMESPACE = uuid.UUID("5b7c3f0e-2a41-4e55-9d0c-8f1f5e0c7a11")
"""Namespace of the deterministic example ids (uuid5)."""


def example_id(dataset_name: str, session_id: str) -> uuid.UUID:
    """Deterministic LangSmith example id of ``session_id`` in dataset ``dataset_name`` (uuid5)."""
    return uuid.uuid5(EXAMPLE_NAMESPACE, f"{dataset_name}/{session_id}")


def as_dict(session: Session | Mapping[str, Any]) -> dict[str, Any]:
    """A session as a plain dict (docs/dataset.md), whether given parsed or as a mapping."""
    return session.to_dict() if isinstance(session, Session) else dict(session)


def session_example(dataset_name: str, session: Session | Mapping[str, Any]) -> dict[str, Any]:
    """The LangSmith example of one session.

    Returns:
        ``{"id", "inputs": {"session": <session dict>}, "reference_outputs": {"answer_list", "task_types",
        "turn_subtypes"}, "metadata": {"session_id", "task_types", "turn_subtypes"}}`` where
        ``answer_list`` / ``task_types`` / ``turn_subtypes`` are the ``english_*`` fields.
    """
    data = as_dict(session)
    return {
        "id": str(example_id(dataset_name, data["id"])),
        "inputs": {"session": data},
        "reference_outputs": {
            "answer_list": data.get("english_answer_list"),
            "task_types": data.get("english_task_types"),
            "turn_subtypes": data.get("english_turn_subtypes"),
        },
        "metadata": {
            "session_id": data["id"],
            "task_types": data.get("english_task_types"),
            "turn_subtypes": data.get("english_turn_subtypes"),
        },
    }


@dataclasses.dataclass
class UploadReport:
    """What :func:`upload_dataset` did: dataset id, and example ids created / already present."""

    dataset_id: str
    dataset_created: bool
    created: list[str]
    existing: list[str]


def upload_dataset(
    client: Any,
    dataset_name: str,
    sessions: Iterable[Session | Mapping[str, Any]],
    *,
    description: str | None = None,
) -> UploadReport:
    """Create (or reuse) LangSmith dataset ``dataset_name`` holding one example per session; idempotent.

    Args:
        client: a ``langsmith.Client``.
        dataset_name: dataset name in LangSmith.
        sessions: sessions (docs/dataset.md), as :class:`Session` or dicts.
        description: dataset description for a new dataset.

    Returns:
        :class:`UploadReport`. Examples whose deterministic id is already in the dataset are not
        sent again (their content is not updated either).

    Raises:
        langsmith.utils.LangSmithError: API failures.
        ValueError: two sessions with the same id.
    """
    examples = [session_example(dataset_name, s) for s in sessions]
    ids = [e["id"] for e in examples]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate session ids in the sessions uploaded to {dataset_name!r}")
    created_dataset = False
    if client.has_dataset(dataset_name=dataset_name):
        dataset = client.read_dataset(dataset_name=dataset_name)
    else:
        dataset = client.create_dataset(
            dataset_name,
            description=description or "WildToolBench sessions (one example per session)",
            metadata={"project_version": project_version()},
        )
        created_dataset = True
    present = {str(e.id) for e in client.list_examples(dataset_id=dataset.id)}
    missing = [e for e in examples if e["id"] not in present]
    if missing:
        client.create_examples(dataset_id=dataset.id, examples=missing)
    return UploadReport(
        dataset_id=str(dataset.id),
        dataset_created=created_dataset,
        created=[e["id"] for e in missing],
        existing=[i for i in ids if i in present],
    )
