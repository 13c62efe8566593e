"""``wtb variants``: controlled single-factor variants of a dataset (docs/variants.md).

The options and their help only: :func:`wildtoolbench.variants.command.make_variants` does the work (docs/cli.md §6).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import app
from wildtoolbench.common.exits import exit_on_error


@app.command("variants")
def variants_command(
    dataset: Path | None = typer.Argument(
        None,
        help="Dataset JSON Lines file, or wildtoolbench (the official data). Default: the bundled demo.",
        dir_okay=False,
    ),
    factors: str = typer.Option(
        "names,distractors,explicit,transitions",
        "--factors",
        help="Comma-separated factors: explicit, transitions, names, distractors, and paraphrase (the control; "
        "it calls a model, see --model). docs/variants.md §3.",
    ),
    out: Path = typer.Option(
        Path("variants"), "--out", help="Output folder: sessions.jsonl, pairs.jsonl, manifest.json.", file_okay=False
    ),
    levels: list[str] | None = typer.Option(
        None, "--levels", help="FACTOR=L1,L2 (repeatable): transitions=-1,+1,+2,+3 (default), distractors=5 (default)."
    ),
    lang: str = typer.Option("en", "--lang", help="The side the checks read: en or zh."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random choice (donor exchanges, distractors)."),
    model: list[str] | None = typer.Option(
        None,
        "--model",
        help="ROLE=SPEC (repeatable), a model of the variant graph's roles: paraphrase (the control; default: local, "
        "the bundled local model), explicit (the model rewrites the target turn instead of the mechanical clause), user "
        "and agent (their models write the +k chat exchanges of transitions instead of copying them from other "
        "sessions; the role not given: local). Without explicit=, user= or agent=, those factors stay mechanical. "
        "Other roles: exit 2. docs/cli.md §7.",
    ),
    pull: bool = typer.Option(
        False, "--pull", help="Download the official data first when DATASET names it (wildtoolbench)."
    ),
) -> None:
    """Write variant sessions that differ from their origin in one factor, with pairs.jsonl and manifest.json."""
    with exit_on_error():
        from wildtoolbench.variants.command import VariantOptions, make_variants

        make_variants(
            VariantOptions(
                dataset=dataset,
                factors=factors,
                out=out,
                levels=tuple(levels or ()),
                language=lang,
                seed=seed,
                models=tuple(model or ()),
                pull=pull,
            )
        )
