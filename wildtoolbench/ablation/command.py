"""``wtb ablate --model SPEC``: make (or reuse) a variant set, evaluate origins and variants in one run
with the usual runner, and write ``ablate.json`` with the paired effects (docs/variants.md §6).

The run is ``wtb eval`` itself (:func:`wildtoolbench.evaluation.command.evaluate`) on the variant set's
``sessions.jsonl``: resume, cache, trials, ``--server`` and every candidate kind work as there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from wildtoolbench.ablation.analysis import ablation_document
from wildtoolbench.bench.variants.build import parse_factors
from wildtoolbench.bench.variants.common import VariantError
from wildtoolbench.common.exits import UsageError
from wildtoolbench.common.files import atomic_write_text, write_json_atomic
from wildtoolbench.comparison.runs import read_run
from wildtoolbench.evaluation.command import EvalOptions, evaluate
from wildtoolbench.reports.ablation import ABLATE_FILE, PAIRS_FILE, RUN_DIR, read_pairs
from wildtoolbench.variants.command import SESSIONS_FILE, VariantOptions, factor_models, make_variants

VARIANTS_DIR = "variants"

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@dataclass(frozen=True)
class AblateOptions:
    """The options of one ``wtb ablate`` as parsed (``None``: not given, the default applies)."""

    model: str | None = None
    dataset: Path | None = None
    factors: str | None = None
    variants: Path | None = None
    trials: int = 1
    out: Path = Path("ablate")
    levels: Sequence[str] = ()
    language: str = "en"
    seed: int = 0
    concurrency: int | None = None
    server: str | None = None
    cache: Path | None = None
    overwrite: bool = False
    progress: bool = True
    pull: bool = False
    variant_models: Sequence[str] = ()
    out_temporary: bool = False
    """``out`` is removed when the run returns (the Python API's ``out=None``): the lines say so."""


def _variant_set(options: AblateOptions) -> Path:
    if options.variants is not None:
        if not (options.variants / SESSIONS_FILE).is_file() or not (options.variants / PAIRS_FILE).is_file():
            raise UsageError(
                f"{options.variants} holds no {SESSIONS_FILE} and {PAIRS_FILE} (wtb variants --out)", "--variants"
            )
        return options.variants
    folder = options.out / VARIANTS_DIR
    make_variants(
        VariantOptions(
            dataset=options.dataset,
            factors=options.factors or "names,distractors,explicit,transitions",
            out=folder,
            levels=tuple(options.levels),
            models=tuple(options.variant_models),
            language=options.language,
            seed=options.seed,
            pull=options.pull,
        )
    )
    return folder


def run_ablate(options: AblateOptions) -> dict[str, Any]:
    """Run ``wtb ablate`` (docs/variants.md §6): the variant set, one evaluation of it, ``ablate.json`` and
    ``pairs.jsonl`` (the pairs analysed) in ``options.out``, and the terminal table; ``wtb report`` of
    ``options.out`` draws the Ablation view (§6.7).

    Returns:
        The ``ablate.json`` document.

    Raises:
        UsageError, ConfigurationError: the command line (exit 2); DatasetError, ReportError (a bad
        ``pairs.jsonl``), ValueError, OSError: a bad file (exit 1); InfrastructureErrors: sessions that hit infrastructure errors (exit 3,
        after the others are scored; ``ablate.json`` is then not written).
    """
    if options.trials < 1:
        raise UsageError("must be at least 1", "--trials")
    try:
        wanted = parse_factors(options.factors) if options.factors else None
    except VariantError as exc:
        raise UsageError(str(exc), "--factors") from None
    factor_models(options.variant_models, "--variant-model")  # the same keys as wtb variants --model, checked first
    folder = _variant_set(options)
    pairs = read_pairs(folder / PAIRS_FILE)
    if wanted is not None:
        pairs = [p for p in pairs if p["factor"] in wanted]
    if not pairs:
        raise UsageError(f"the variant set {folder} has no pair of the factors asked for", "--factors")
    run = options.out / RUN_DIR
    evaluate(
        EvalOptions(
            dataset=folder / SESSIONS_FILE,
            model=options.model,
            out=run,
            trials=options.trials,
            language=options.language,
            concurrency=options.concurrency,
            server=options.server,
            cache=options.cache,
            overwrite=options.overwrite,
            progress=options.progress,
            out_temporary=options.out_temporary,
        )
    )
    verdicts = read_run(run).verdicts
    origins = _origins(folder / SESSIONS_FILE)
    settings = {
        "model": options.model,
        "variants": str(folder),
        "run": str(run),
        "trials": options.trials,
        "language": options.language,
        "factors": sorted({p["factor"] for p in pairs}),
    }
    document = ablation_document(pairs, verdicts, origins, settings)
    if (options.out / PAIRS_FILE).resolve() != (folder / PAIRS_FILE).resolve():  # never over the set's own file
        atomic_write_text(options.out / PAIRS_FILE, "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs))
    write_json_atomic(options.out / ABLATE_FILE, document)
    console = Console()
    if not console.is_terminal:  # a file or a pipe: wide enough that no cell is cut ("<0.001", "[-100, -100]")
        console = Console(width=120)
    console.print(effects_table(document))
    if options.out_temporary:
        _err.print(
            f"-> {options.out / ABLATE_FILE}, in a temporary folder removed when the call returns: pass out=FOLDER "
            "to keep it (wtb report FOLDER draws the Ablation view)",
            markup=False,
        )
    else:
        _err.print(
            f"-> {options.out / ABLATE_FILE}; the Ablation view: wtb report {options.out} --out {options.out / 'report'}",
            markup=False,
        )
    return document


def _origins(path: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            session = json.loads(line)
            if session.get("variant_of") is None:
                found[session["id"]] = session
    return found


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}"


def effects_table(document: Mapping[str, Any]) -> Table:
    """The terminal table of ``wtb ablate``: one row per factor and level (docs/variants.md §6.5); the
    control's column only when the paraphrase control was run."""
    controlled = any(e.get("control") is not None for e in document["effects"])
    caption = None if controlled else "control (paraphrase): not run"
    table = Table(
        title=f"ablation of {document.get('model')}: variant - origin, accuracy points",
        caption=caption,
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    names = [
        "factor",
        "level",
        "pairs",
        "origin",
        "variant",
        "diff",
        "95% CI",
        "p",
        *(["control"] if controlled else []),
    ]
    for name in names:
        justify = "left" if name in ("factor", "level") else "right"
        table.add_column(name, justify=justify, no_wrap=True, min_width=max(len(name), 5))
    for e in document["effects"]:
        interval = "-" if e["ci_low"] is None else f"[{e['ci_low']:+.0f}, {e['ci_high']:+.0f}]"
        row = [
            e["factor"],
            e["level"] or "-",
            f"{e['pairs']}{'*' if e['small'] else ''}",
            f"{e['origin_accuracy']:.1f}",
            f"{e['variant_accuracy']:.1f}",
            _cell(e["difference"]),
            interval,
            f"{e['p_value']:.2g}" if e["p_value"] >= 0.001 else "<0.001",
        ]
        if controlled:
            row.append("-" if e.get("control") is None else _cell(e["control"]["difference"]))
        table.add_row(*row)
    return table
