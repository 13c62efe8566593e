"""``wtb variants DATASET --factors F,... --out DIR``: run the variant graph on a dataset and write the
variant set (docs/variants.md §4): ``sessions.jsonl`` (each origin with a variant, followed by its
variants), ``pairs.jsonl`` and ``manifest.json``, each written atomically.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.bench.schema import check_language, load_sessions
from wildtoolbench.bench.variants.build import parse_factors, parse_levels, variant_set
from wildtoolbench.bench.variants.common import DEFAULT_LEVELS, DEFAULT_ROLE_MODEL, MODEL_ROLES, VariantError
from wildtoolbench.common.exits import UsageError
from wildtoolbench.common.files import write_json_atomic, write_jsonl_atomic
from wildtoolbench.data.command import dataset_path, task_count
from wildtoolbench.models import check_model
from wildtoolbench.reports.ablation import PAIRS_FILE

SESSIONS_FILE = "sessions.jsonl"
MANIFEST_FILE = "manifest.json"
MODEL_FACTORS = ("paraphrase",)
"""Factors that always call a model (default: the bundled local model; docs/variants.md §3.5)."""

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@dataclass(frozen=True)
class VariantOptions:
    """The options of one ``wtb variants`` as parsed (``None``: not given, the default applies)."""

    dataset: Path | None = None
    factors: str = "names,distractors,explicit,transitions"
    out: Path = Path("variants")
    levels: Sequence[str] = ()
    language: str = "en"
    seed: int = 0
    models: Sequence[str] = field(default_factory=tuple)
    pull: bool = False


def plan_factors(options: VariantOptions) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """The factors and the levels of each (docs/variants.md §3).

    Raises:
        UsageError: an unknown factor, a bad ``--levels``, a factor that needs a model (exit 2).
    """
    try:
        factors = parse_factors(options.factors)
    except VariantError as exc:
        raise UsageError(str(exc), "--factors") from None
    try:
        given = parse_levels(options.levels)
    except VariantError as exc:
        raise UsageError(str(exc), "--levels") from None
    unused = sorted(set(given) - set(factors))
    if unused:
        raise UsageError(f"--levels names {', '.join(unused)}, which --factors does not", "--levels")
    return factors, {f: given.get(f, DEFAULT_LEVELS[f]) for f in factors}


def factor_models(options: Sequence[str], option: str = "--model") -> dict[str, str]:
    """``["paraphrase=openai:gpt-4o-mini", "user=local"]`` -> ``{"paraphrase": ..., "user": "local"}``: the
    model of each role of the variant graph (docs/variants.md §3.6, docs/cli.md §7). The same keys for
    ``wtb variants --model`` and ``wtb ablate --variant-model`` (``option`` names the one in errors).

    Raises:
        UsageError: not ``ROLE=SPEC``, or an unknown role (the message lists the known ones; exit 2).
    """
    models: dict[str, str] = {}
    known = ", ".join(MODEL_ROLES)
    for value in options:
        role, sep, spec = value.partition("=")
        role = role.strip().lower()
        if not sep or not spec.strip():
            raise UsageError(f"{value!r}: expected ROLE=SPEC with ROLE one of {known}, e.g. paraphrase=local", option)
        if role not in MODEL_ROLES:
            raise UsageError(
                f"unknown role {role!r}; the roles of the variant graph that call a model: {known}", option
            )
        models[role] = spec.strip()
    return models


def used_models(factors: Sequence[str], models: Mapping[str, str]) -> dict[str, str]:
    """The model of every role this run calls (``manifest.json`` ``models``, docs/variants.md §4): each role
    of ``paraphrase`` when asked for (default: the bundled local model); the roles of ``explicit`` and
    ``transitions`` only when one of the factor's roles was given a model (the other then defaults too).
    A factor without an entry ran mechanically."""
    used: dict[str, str] = {}
    for role, factor in MODEL_ROLES.items():
        if factor not in factors:
            continue
        if factor in MODEL_FACTORS or any(models.get(r) for r, f in MODEL_ROLES.items() if f == factor):
            used[role] = models.get(role, DEFAULT_ROLE_MODEL)
    return used


def make_variants(options: VariantOptions, *, quiet: bool = False) -> dict[str, Any]:
    """Run ``wtb variants`` (docs/variants.md §4): load and validate the dataset, run the variant graph
    with the asked factors, write the three files into ``options.out``.

    Returns:
        The manifest as written.

    Raises:
        UsageError, models.ConfigurationError: the command line (exit 2), including a model role whose
            factor ``--factors`` does not name.
        wildtoolbench.bench.schema.DatasetError, OSError: a bad dataset file (exit 1).
    """
    from wildtoolbench.graphs.variants import graph  # LangGraph only when the command runs

    check_language(options.language)
    factors, levels = plan_factors(options)
    models = factor_models(options.models)
    idle = sorted(role for role in models if MODEL_ROLES[role] not in factors)
    if idle:
        needed = ", ".join(sorted({MODEL_ROLES[r] for r in idle}))
        raise UsageError(f"--model gives {', '.join(idle)}, whose factor ({needed}) --factors does not name", "--model")
    for spec in used_models(factors, models).values():
        check_model(spec)  # a spec that cannot work fails before any file is read (exit 2)
    path = dataset_path(options.dataset, options.pull) or bundled_demo_sessions()
    sessions = [s.to_dict() for s in load_sessions(path, tasks=task_count(path, None), language=options.language)]
    started = time.monotonic()
    state = graph.invoke(
        {
            "sessions": sessions,
            "factors": factors,
            "levels": {f: list(v) for f, v in levels.items()},
            "language": options.language,
            "seed": options.seed,
            "models": models,
            "results": [],
        },
        {"run_name": "variants", "metadata": {"dataset": str(path), "factors": factors}},
    )
    settings = {
        "dataset": str(path),
        "language": options.language,
        "seed": options.seed,
        "models": used_models(factors, models),
        "factors": factors,
        "levels": {f: [lv or None for lv in v] for f, v in levels.items()},
        "seconds": round(time.monotonic() - started, 3),
    }
    written, pairs, manifest = variant_set(sessions, state["results"], settings)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(out / SESSIONS_FILE, written)
    write_jsonl_atomic(out / PAIRS_FILE, pairs)
    write_json_atomic(out / MANIFEST_FILE, manifest)
    if not quiet:
        Console().print(counts_table(manifest))
        _err.print(
            f"{manifest['variants']} variant(s) of {manifest['origins']} session(s), {len(pairs)} pair(s) -> {out}"
        )
    return manifest


def counts_table(manifest: Mapping[str, Any]) -> Table:
    """The terminal table of ``wtb variants``: per factor and level, variants written, tasks skipped
    (the factor did not apply) and variants rejected (failed a check)."""
    table = Table(title="variants", box=box.SIMPLE_HEAD, show_edge=False)
    for name in ("factor", "level", "variants", "skipped", "rejected"):
        table.add_column(name, justify="left" if name in ("factor", "level") else "right")
    for factor, per_level in manifest["counts"].items():
        for level, counts in per_level.items():
            table.add_row(
                factor, level or "-", str(counts["variants"]), str(counts["skipped"]), str(counts["rejected"])
            )
    return table
