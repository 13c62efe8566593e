"""State of the variant graph (docs/variants.md §5): the dataset in, one result per factor out."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class VariantState(TypedDict, total=False):
    """Input and output of one run of the variant graph.

    Attributes:
        sessions: the origin sessions (dataset lines as dicts).
        factors: the factors to run (names of registered factors); the others' nodes pass.
        levels: levels per factor (``{"transitions": ["-1", "+1"]}``); a factor not named uses its defaults.
        language: the side the checks read, ``en`` or ``zh``.
        seed: the seed of every random choice.
        models: model spec per model role (``{"paraphrase": "local", "explicit": "...", "user": "...",
            "agent": "..."}``; docs/variants.md §3.6): a role not given uses the bundled local model when
            its factor needs one; ``explicit`` and ``transitions`` are mechanical unless a role of theirs is given.
        results: one :func:`wildtoolbench.bench.variants.build.run_factor` result per factor run (appended).
    """

    sessions: list[dict[str, Any]]
    factors: list[str]
    levels: dict[str, list[str]]
    language: str
    seed: int
    models: dict[str, str]
    results: Annotated[list[dict[str, Any]], operator.add]
