"""Prompt templates of the generation roles, in English (``en/``) and Chinese (``zh/``).

Templates are our own wording, stored as package data and filled with :class:`string.Template`
(``$name`` placeholders, so JSON braces in examples need no escaping).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from string import Template
from typing import Any

PROMPT_LANGUAGES = ("en", "zh")
"""The languages every prompt is written in (the dataset's sides, ``wildtoolbench.bench.terms.LANGUAGES``; prompts import
nothing of ours, docs/architecture.md §2.1)."""


@cache
def load_prompt(name: str, language: str = "en") -> str:
    """Text of ``prompts/<language>/<name>`` (e.g. ``load_prompt("planner.md", "zh")``).

    Raises:
        ValueError: unknown language.
        FileNotFoundError: no such template.
    """
    if language not in PROMPT_LANGUAGES:
        raise ValueError(f"prompt language must be one of {PROMPT_LANGUAGES}, got {language!r}")
    return resources.files(__package__).joinpath(language, name).read_text(encoding="utf-8")


def render(name: str, language: str = "en", **values: Any) -> str:
    """Template ``name`` in ``language`` with ``$placeholders`` filled from ``values``.

    Raises:
        KeyError: a placeholder of the template has no value.
    """
    return Template(load_prompt(name, language)).substitute(**{k: str(v) for k, v in values.items()})


@cache
def fragments(language: str = "en") -> dict[str, Any]:
    """Short phrases keyed by purpose (task kinds, strategies, planner rules) from ``fragments.json``."""
    return json.loads(load_prompt("fragments.json", language))
