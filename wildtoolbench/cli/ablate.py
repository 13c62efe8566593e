"""``wtb ablate``: which wild behaviour costs a model how much (docs/variants.md §6).

The options and their help only: :func:`wildtoolbench.ablation.command.run_ablate` does the work (docs/cli.md §6).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wildtoolbench.cli import app
from wildtoolbench.common.exits import exit_on_error


@app.command("ablate")
def ablate_command(
    model: str | None = typer.Option(None, "--model", help="Candidate model spec, as for wtb eval (default: local)."),
    dataset: Path | None = typer.Option(
        None, "--dataset", dir_okay=False, help="Dataset to make variants of (default: the bundled demo)."
    ),
    factors: str | None = typer.Option(
        None,
        "--factors",
        help="Comma-separated factors (default: names,distractors,explicit,transitions; with "
        "--variants: every factor of the set).",
    ),
    variants: Path | None = typer.Option(
        None, "--variants", file_okay=False, help="Reuse the variant set of this folder (wtb variants --out)."
    ),
    trials: int = typer.Option(1, "--trials", help="Trials per session (docs/trials.md)."),
    out: Path = typer.Option(
        Path("ablate"), "--out", file_okay=False, help="Output folder: variants/, run/, pairs.jsonl, ablate.json (wtb report OUT draws the Ablation view)."
    ),
    levels: list[str] | None = typer.Option(None, "--levels", help="FACTOR=L1,L2 (repeatable), as for wtb variants."),
    lang: str = typer.Option("en", "--lang", help="Language side: en or zh."),
    seed: int = typer.Option(0, "--seed", help="Seed of the variant set's random choices."),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Sessions evaluated at once."),
    server: str | None = typer.Option(None, "--server", help="Run the evaluation on a LangGraph Server at this URL."),
    cache: Path | None = typer.Option(None, "--cache", help="Model response cache file, as for wtb eval."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Start the run again instead of resuming it."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar."),
    variant_model: list[str] | None = typer.Option(
        None,
        "--variant-model",
        help="The same ROLE=SPEC values as wtb variants --model (--model here is the candidate): a model of the variant graph's roles: paraphrase (the control; default: local, "
        "the bundled local model), explicit (the model rewrites the target turn instead of the mechanical clause), user "
        "and agent (their models write the +k chat exchanges of transitions instead of copying them from other "
        "sessions; the role not given: local). Without explicit=, user= or agent=, those factors stay mechanical. "
        "Other roles: exit 2. docs/cli.md §7.",
    ),
    pull: bool = typer.Option(False, "--pull", help="Download the official data first when --dataset names it."),
) -> None:
    """Evaluate a model on origins and single-factor variants; write ablate.json with paired effects."""
    with exit_on_error():
        from wildtoolbench.ablation.command import AblateOptions, run_ablate

        run_ablate(
            AblateOptions(
                model=model,
                dataset=dataset,
                factors=factors,
                variants=variants,
                trials=trials,
                out=out,
                levels=tuple(levels or ()),
                language=lang,
                seed=seed,
                concurrency=concurrency,
                server=server,
                cache=cache,
                overwrite=overwrite,
                progress=progress,
                pull=pull,
                variant_models=tuple(variant_model or ()),
            )
        )
