"""``wildtoolbench.ablate``: ``wtb ablate`` from Python (docs/guides/scripting.md, docs/guides/ablation.md,
docs/variants.md §6).

A call builds the :class:`wildtoolbench.ablation.command.AblateOptions` the command line would build from the
same settings and runs the same :func:`wildtoolbench.ablation.command.run_ablate` (the variant set, one ``wtb
eval`` run of origins and variants, ``ablate.json``); where the command exits with a status, the call raises the
exception that status comes from, with the same message (:func:`wildtoolbench._api.evaluate.cli_errors`). It
returns an :class:`AblationRun`: the effects of ``ablate.json`` and the scored run.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench._api.evaluate import _loop_running, cli_errors, dataset_option, model_spec
from wildtoolbench._api.run import EvalRun, data_frame, read_eval_run

ABLATE_ALIASES = {"lang": "language", "variant_model": "variant_models"}
"""Keywords named as the command line names them and the option they set."""


@dataclass(frozen=True)
class Effect:
    """One entry of ``ablate.json``'s ``effects`` (docs/variants.md §6.5): a factor and level's paired effect on
    target-task accuracy, in accuracy points.

    Attributes:
        factor, level: the factor (``names``, ``transitions`` ...) and level (``"+1"``, ``"5"``; ``None`` for an
            ungraded factor).
        pairs, sessions: pairs compared and origin sessions they come from.
        origin_accuracy, variant_accuracy: target-task accuracy (%) on the origins and on the variants.
        difference: variant minus origin (points); ``ci_low``, ``ci_high``: its session-clustered 95% interval
            (``None`` with fewer than two sessions); ``p_value``: the exact cluster sign-flip test.
        small: fewer than 10 pairs or 5 sessions (read the interval, not the point).
        control: the paraphrase control's ``difference``, ``ci_low``, ``ci_high``, ``p_value``, or ``None``.
    """

    factor: str
    level: str | None
    pairs: int
    sessions: int | None
    origin_accuracy: float
    variant_accuracy: float
    difference: float
    ci_low: float | None
    ci_high: float | None
    p_value: float
    small: bool = False
    control: dict[str, Any] | None = None

    @property
    def excludes_zero(self) -> bool:
        """Whether the interval lies wholly on one side of 0 (an effect at the 95% level)."""
        return self.ci_low is not None and self.ci_high is not None and (self.ci_low > 0 or self.ci_high < 0)

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Effect:
        """The :class:`Effect` of an ``effects`` entry (extra keys ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in entry.items() if k in names} | {"sessions": entry.get("sessions")})


@dataclass(frozen=True)
class AblationRun:
    """A finished ablation: ``ablate.json`` and the run of origins and variants.

    Attributes:
        document: ``ablate.json`` as a dict (settings, ``test``, ``interval``, ``effects``, ``by_task_type``,
            ``by_turn_subtype``, ``transitions_curve``; docs/variants.md §6.5).
        run: the scored run of the variant set (:class:`wildtoolbench.EvalRun`).
        out: the ablation folder, or ``None`` when it was temporary (``out=None``).
    """

    document: dict[str, Any]
    run: EvalRun
    out: Path | None = None

    @property
    def effects(self) -> list[dict[str, Any]]:
        """The ``effects`` entries of ``ablate.json``, one per factor and level (dicts, as in the file)."""
        return list(self.document["effects"])

    @property
    def effect_list(self) -> list[Effect]:
        """:attr:`effects` as :class:`Effect` objects, in the same order."""
        return [Effect.from_entry(entry) for entry in self.document["effects"]]

    def effect(self, factor: str, level: str | int | None = None) -> Effect:
        """The effect of ``factor`` at ``level`` (``"+1"``, ``5``, ``None`` for an ungraded factor).

        Raises:
            KeyError: no such factor and level in this ablation (the message lists those there are).
        """
        wanted = None if level is None else str(level)
        for entry in self.document["effects"]:
            if entry["factor"] == factor and entry["level"] == wanted:
                return Effect.from_entry(entry)
        there = ", ".join(f"{e['factor']} {e['level'] or ''}".strip() for e in self.document["effects"])
        raise KeyError(f"no effect of {factor} {wanted or ''}".rstrip() + f" in this ablation; there are: {there}")

    @property
    def control(self) -> Effect | None:
        """The paraphrase control's own effect, ``None`` when the control was not run."""
        found = [e for e in self.document["effects"] if e["factor"] == "paraphrase"]
        return Effect.from_entry(found[0]) if found else None

    @property
    def by_task_type(self) -> list[dict[str, Any]]:
        """The per task type cells of ``ablate.json`` (of the origin task; ``small`` marks a small cell)."""
        return list(self.document.get("by_task_type") or [])

    @property
    def by_turn_subtype(self) -> list[dict[str, Any]]:
        """The per turn subtype cells of ``ablate.json``."""
        return list(self.document.get("by_turn_subtype") or [])

    @property
    def transitions_curve(self) -> list[dict[str, Any]]:
        """Target-task accuracy against the change in transitions (level 0: the origins), with intervals."""
        return list(self.document.get("transitions_curve") or [])

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per effect (the control as ``control_difference``, ``control_ci_low``, ``control_ci_high``)."""
        rows = []
        for entry in self.document["effects"]:
            row = {k: v for k, v in entry.items() if k != "control"}
            control = entry.get("control") or {}
            for key in ("difference", "ci_low", "ci_high"):
                row[f"control_{key}"] = control.get(key)
            rows.append(row)
        return rows

    def to_pandas(self) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (one row per factor and level).

        Raises:
            ImportError: pandas is not installed (it is not a dependency of wildtoolbench).
        """
        return data_frame(self.rows(), "AblationRun")

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{e['factor']}{' ' + e['level'] if e['level'] else ''} {e['difference']:+.1f}" for e in self.effects
        )
        return f"AblationRun({self.document.get('model')!r}, {shown}, out={str(self.out) if self.out else None!r})"


def _strings(value: Any) -> tuple[str, ...]:
    """A repeatable option's values: a string, a ``{key: value}`` mapping (``key=value``) or an iterable."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Mapping):
        return tuple(f"{k}={v if isinstance(v, str) else ','.join(map(str, v))}" for k, v in value.items())
    return tuple(str(item) for item in value)


def ablate_options(model: Any, dataset: str | Path | None, out: Path, settings: dict[str, Any]) -> Any:
    """The :class:`wildtoolbench.ablation.command.AblateOptions` of an :func:`ablate` call.

    Raises:
        TypeError: a keyword that is no option of ``wtb ablate`` (the message lists them).
        models.ConfigurationError: a Python object with ``server`` (:func:`wildtoolbench._api.evaluate.model_spec`).
    """
    from wildtoolbench.ablation.command import AblateOptions

    given = {ABLATE_ALIASES.get(name, name): value for name, value in settings.items()}
    known = sorted(
        f.name for f in dataclasses.fields(AblateOptions) if f.name not in ("model", "dataset", "out", "out_temporary")
    )
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(
            f"ablate() got unknown setting(s) {', '.join(unknown)}; the settings of wtb ablate are "
            f"{', '.join(known)} (and lang for language, variant_model for variant_models)"
        )
    if isinstance(given.get("factors"), Iterable) and not isinstance(given.get("factors"), str):
        given["factors"] = ",".join(given["factors"])
    for name in ("levels", "variant_models"):
        if name in given:
            given[name] = _strings(given[name])
    if given.get("variants") is not None:
        given["variants"] = Path(given["variants"])
    if given.get("cache") is not None:
        given["cache"] = Path(given["cache"])
    spec = model_spec(model, {"server": given.get("server")})
    return AblateOptions(model=spec, dataset=dataset_option(dataset), out=out, **given)


def _read_run(folder: Path) -> EvalRun:
    """The scored run of an ablation folder (``run/``), on its variant set (each session its own task count)."""
    from wildtoolbench.bench.schema import task_counts
    from wildtoolbench.common.run_folder import RUN_FILE

    settings = json.loads((folder / RUN_FILE).read_text(encoding="utf-8")).get("settings") or {}
    dataset = Path(settings["dataset"])
    return read_eval_run(
        folder,
        dataset,
        tasks=task_counts(dataset)[0],
        scoring=settings.get("scoring") or "reference",
        language=settings.get("language") or "en",
        out=folder,
    )


def _ablate_in(options: Any, shown_out: Path | None) -> AblationRun:
    from wildtoolbench.ablation.command import run_ablate
    from wildtoolbench.reports.ablation import RUN_DIR

    document = run_ablate(options)
    run = _read_run(options.out / RUN_DIR)
    if shown_out is None:
        run = dataclasses.replace(run, out=None)
    return AblationRun(document=document, run=run, out=shown_out)


def ablate(
    model: Any = None, dataset: str | Path | None = None, out: str | Path | None = None, **settings: Any
) -> AblationRun:
    """Ablate ``model`` as ``wtb ablate`` does: make (or reuse) single-factor variants, evaluate origins and
    variants in one run, and return the paired effects (docs/variants.md §6).

    Args:
        model: a model spec as ``--model`` takes it, or a Python object as :func:`wildtoolbench.evaluate` takes it
            (not with ``server``); ``None``: ``$WTB_MODEL``, else ``local``.
        dataset: the dataset to make variants of: a file, ``"wildtoolbench"`` (``pull=True`` to download it), or
            ``None`` / ``"demo"``: the bundled demo. Ignored with ``variants=``.
        out: the ablation folder (``variants/``, ``run/``, ``pairs.jsonl``, ``ablate.json``); an unfinished run there
            is resumed. ``None``: a temporary folder, removed before the call returns (nothing is left on disk;
            ``cache=`` still writes its cache folder).
        **settings: the options of ``wtb ablate`` by name: ``factors`` (a string ``"names,explicit"`` or a list),
            ``variants`` (a variant set folder to reuse), ``trials``, ``levels`` (``"transitions=-1,+1"``, a list of
            those, or ``{"transitions": ["-1", "+1"]}``), ``lang``, ``seed``, ``concurrency``, ``server``,
            ``cache``, ``overwrite``, ``progress``, ``pull``, ``variant_model`` (``"ROLE=SPEC"``, a list of
            those, or ``{"explicit": SPEC, "user": SPEC}``: the roles ``paraphrase``, ``explicit``, ``user``, ``agent``
            of docs/variants.md §3.6, as ``wtb ablate --variant-model``), with the command line's defaults.

    Returns:
        The :class:`AblationRun` (its :attr:`~AblationRun.effects` equal ``ablate.json``'s). The variant table,
        the run's lines and the effects table are printed as the command line prints them. Called where an
        event loop runs (a notebook cell), the work goes on in a worker thread with its own loop.

    Raises (the command line's exit status in brackets; docs/cli.md §2):
        TypeError: a keyword that is no option.
        wildtoolbench.UsageError: an option's value (``Invalid value for '--trials': must be at least 1``) (2).
        wildtoolbench.ConfigurationError, wildtoolbench.BadConfiguration: the model spec or the settings (2).
        wildtoolbench.DatasetError, wildtoolbench.BadInput, OSError, ValueError: an input file (1).
        wildtoolbench.InfrastructureErrors: some sessions hit infrastructure errors; ``ablate.json`` is not
            written (3).
    """
    if _loop_running():  # a notebook cell: the run has its own event loop, in a worker thread (as evaluate)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="wtb-ablate") as pool:
            return pool.submit(_run_ablation, model, dataset, out, settings).result()
    return _run_ablation(model, dataset, out, settings)


def _run_ablation(
    model: Any, dataset: str | Path | None, out: str | Path | None, settings: dict[str, Any]
) -> AblationRun:
    """The synchronous body of :func:`ablate` (in the calling thread)."""
    with cli_errors():
        if out is not None:
            return _ablate_in(ablate_options(model, dataset, Path(out), settings), Path(out))
        with tempfile.TemporaryDirectory(prefix="wtb-ablate-") as folder:
            # The command's own lines say the folder is temporary (AblateOptions.out_temporary).
            options = dataclasses.replace(
                ablate_options(model, dataset, Path(folder) / "ablate", settings), out_temporary=True
            )
            return _ablate_in(options, None)
