"""The Ablation view of ``wtb report`` (docs/variants.md §6.7): an ablation's output folder (``wtb ablate
--out``) read as untrusted input, and the page data of its view.

An *ablation folder* holds ``ablate.json`` (docs/variants.md §6.5), ``pairs.jsonl`` (the pairs analysed,
docs/variants.md §4) and ``run/`` (the ``wtb eval`` run of origins and variants). ``wtb report`` given such a
folder, or a folder whose sub-folders are ablation folders, reports each ablation's run and adds the view.
Nothing here imports :mod:`wildtoolbench.ablation` (it sits above the reports, docs/architecture.md §1);
``wtb ablate`` reads its pairs with :func:`read_pairs` of this module.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench.common.run_folder import METRIC_FILE
from wildtoolbench.common.shareable import shareable_path, shareable_text
from wildtoolbench.reports.run_data import Dataset, ReportError, Run

ABLATE_FILE = "ablate.json"
PAIRS_FILE = "pairs.jsonl"
RUN_DIR = "run"
PAIR_KEYS = ("pair", "factor", "level", "origin", "origin_task", "variant", "target_task")
"""The keys of a ``pairs.jsonl`` line (docs/variants.md §4)."""


ABLATE_RULES = {
    "not_json": "the file cannot be read, is not JSON, or is not a JSON object",
    "missing": "a required key is absent (effects, or a key of an effect or cell)",
    "not_list": "effects, by_task_type, by_turn_subtype or transitions_curve is not a list of objects",
    "not_number": "a number field holds something else, NaN or an infinity (an interval bound may be null)",
    "out_of_range": "accuracies outside [0, 100], differences and interval bounds outside [-100, 100], p outside [0, 1]",
    "not_whole": "pairs, sessions, worse, better or a curve level is not a whole number (levels may be negative)",
    "not_text": "factor, task_type, turn_subtype, model, test or interval is not a string (level: a string or null)",
    "not_boolean": "small is not true or false",
    "not_control": "control is neither null nor an object",
}
"""The checks of ``ablate.json`` (docs/variants.md §6.7, Table 3): rule id -> what breaks it."""


class AblationFileError(ReportError):
    """An ``ablate.json`` that breaks a rule of :data:`ABLATE_RULES`: the message names the file and the field,
    ``rule`` is the rule's id."""

    def __init__(self, where: str, message: str, rule: str) -> None:
        super().__init__(f"{where}: {message} [{rule}]")
        self.rule = rule


@dataclass
class Ablation:
    """One ablation folder as the report reads it.

    Attributes:
        folder: the ablation folder.
        run_dir: its run folder (``folder/run``).
        document: ``ablate.json``, checked by :func:`read_ablation`.
        pairs: ``pairs.jsonl``, checked by :func:`read_pairs`.
    """

    folder: Path
    run_dir: Path
    document: dict[str, Any]
    pairs: list[dict[str, Any]]


# ------------------------------------------------------------------ untrusted input


def _number(value: Any, where: str, *, nullable: bool = False, low: float = -math.inf, high: float = math.inf) -> None:
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        expected = "a number or null" if nullable else "a number"
        raise AblationFileError(where, f"expected {expected}, got {json.dumps(value)[:60]}", "not_number")
    if not low <= value <= high:
        raise AblationFileError(where, f"{value} is outside [{low:g}, {high:g}]", "out_of_range")


def _integer(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AblationFileError(where, f"expected a whole number >= 0, got {json.dumps(value)[:60]}", "not_whole")


def _text(value: Any, where: str, *, nullable: bool = False) -> None:
    if not (isinstance(value, str) or (nullable and value is None)):
        expected = "a string or null" if nullable else "a string"
        raise AblationFileError(where, f"expected {expected}, got {json.dumps(value)[:60]}", "not_text")


def _list(document: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> list[Any]:
    if key not in document and not required:
        return []
    value = document.get(key)
    if key not in document:
        raise AblationFileError(f"{where}: {key}", "missing", "missing")
    if not isinstance(value, list):
        raise AblationFileError(f"{where}: {key}", "expected a list", "not_list")
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise AblationFileError(f"{where}: {key}[{index}]", "expected an object", "not_list")
    return value


def _cell(entry: Mapping[str, Any], where: str) -> None:
    """The statistics every effect and breakdown cell holds (docs/variants.md §6.2, §6.5)."""
    for key in ("factor", "level", "pairs", "origin_accuracy", "variant_accuracy", "difference", "ci_low", "ci_high", "p_value"):  # fmt: skip
        if key not in entry:
            raise AblationFileError(f"{where}.{key}", "missing", "missing")
    _text(entry["factor"], f"{where}.factor")
    _text(entry["level"], f"{where}.level", nullable=True)
    _integer(entry["pairs"], f"{where}.pairs")
    for key in ("origin_accuracy", "variant_accuracy"):
        _number(entry[key], f"{where}.{key}", low=0, high=100)
    _number(entry["difference"], f"{where}.difference", low=-100, high=100)
    for key in ("ci_low", "ci_high"):
        _number(entry[key], f"{where}.{key}", nullable=True, low=-100, high=100)
    _number(entry["p_value"], f"{where}.p_value", low=0, high=1)
    if "small" in entry and not isinstance(entry["small"], bool):
        raise AblationFileError(f"{where}.small", "expected true or false", "not_boolean")
    for key in ("sessions", "worse", "better"):
        if key in entry:
            _integer(entry[key], f"{where}.{key}")


def read_ablation(path: Path) -> dict[str, Any]:
    """Read and check an ``ablate.json`` (docs/variants.md §6.5) as untrusted input.

    Args:
        path: the file.

    Returns:
        The document: ``effects`` (each with ``factor``, ``level``, ``pairs``, ``origin_accuracy``,
        ``variant_accuracy``, ``difference``, ``ci_low``, ``ci_high``, ``p_value``, optional ``control``),
        ``by_task_type``, ``by_turn_subtype`` and ``transitions_curve`` (``[]`` when absent), and the settings.

    Raises:
        AblationFileError: the first rule of :data:`ABLATE_RULES` the file breaks (its ``rule``); the message
            names the file and the field (``ablate.json: effects[2].ci_low: expected a number or null, got "x"
            [not_number]``).
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AblationFileError(str(path), f"cannot be read: {exc.strerror or exc}", "not_json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AblationFileError(str(path), f"not JSON: {exc}", "not_json") from None
    if not isinstance(document, dict):
        raise AblationFileError(str(path), "expected a JSON object", "not_json")
    for index, entry in enumerate(_list(document, "effects", str(path), required=True)):
        where = f"{path}: effects[{index}]"
        _cell(entry, where)
        control = entry.get("control")
        if control is not None:
            if not isinstance(control, dict):
                raise AblationFileError(f"{where}.control", "expected an object or null", "not_control")
            _number(control.get("difference"), f"{where}.control.difference", low=-100, high=100)
            for key in ("ci_low", "ci_high"):
                _number(control.get(key), f"{where}.control.{key}", nullable=True, low=-100, high=100)
    for key, bucket in (("by_task_type", "task_type"), ("by_turn_subtype", "turn_subtype")):
        for index, entry in enumerate(_list(document, key, str(path))):
            _cell(entry, f"{path}: {key}[{index}]")
            _text(entry.get(bucket), f"{path}: {key}[{index}].{bucket}")
    for index, point in enumerate(_list(document, "transitions_curve", str(path))):
        where = f"{path}: transitions_curve[{index}]"
        if isinstance(point.get("level"), bool) or not isinstance(point.get("level"), int):
            raise AblationFileError(f"{where}.level", "expected a whole number", "not_whole")
        _integer(point.get("pairs"), f"{where}.pairs")
        _number(point.get("accuracy"), f"{where}.accuracy", low=0, high=100)
        for key in ("ci_low", "ci_high"):
            _number(point.get(key), f"{where}.{key}", nullable=True, low=0, high=100)
    for key in ("model", "test", "interval"):
        _text(document.get(key), f"{path}: {key}", nullable=True)
    return document


def read_pairs(path: Path) -> list[dict[str, Any]]:
    """The lines of a ``pairs.jsonl`` (docs/variants.md §4), checked.

    Raises:
        ReportError: a line that is not a JSON object with every key of :data:`PAIR_KEYS`, a task index that is
            not a whole number, an id that is not a string (``file:line: field: message``); the file cannot be read.
    """
    pairs = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot be read: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            pair = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportError(f"{path}:{number}: (json): {exc.msg}") from None
        if not isinstance(pair, dict):
            raise ReportError(f"{path}:{number}: (line): expected a JSON object")
        for key in PAIR_KEYS:
            if key not in pair:
                raise ReportError(f"{path}:{number}: {key}: missing")
        for key in ("pair", "factor", "origin", "variant"):
            if not isinstance(pair[key], str):
                raise ReportError(f"{path}:{number}: {key}: expected a string")
        if pair["level"] is not None and not isinstance(pair["level"], str):
            raise ReportError(f"{path}:{number}: level: expected a string or null")
        for key in ("origin_task", "target_task"):
            if isinstance(pair[key], bool) or not isinstance(pair[key], int) or pair[key] < 0:
                raise ReportError(f"{path}:{number}: {key}: expected a whole number >= 0")
        pairs.append(pair)
    return pairs


# ------------------------------------------------------------------ finding ablation folders


def is_ablation(folder: Path) -> bool:
    """Whether ``folder`` is an ablation folder (it holds ``ablate.json``)."""
    return (folder / ABLATE_FILE).is_file()


def expand_folders(folders: Sequence[os.PathLike[str] | str]) -> tuple[list[Path], list[Path]]:
    """The run folders to report and the ablation folders among ``folders`` (docs/variants.md §6.7).

    An ablation folder is replaced by its run folder; a folder that is no run folder (no ``metric.json``)
    but whose sub-folders include ablation folders is replaced by those (in name order); any other folder
    is kept as it is.

    Returns:
        ``(run folders, ablation folders)``.
    """
    runs: list[Path] = []
    ablations: list[Path] = []
    for given in map(Path, folders):
        found = [given] if is_ablation(given) else []
        if not found and given.is_dir() and not (given / METRIC_FILE).is_file():
            found = sorted(child for child in given.iterdir() if child.is_dir() and is_ablation(child))
        if not found:
            runs.append(given)
        for folder in found:
            ablations.append(folder)
            runs.append(folder / RUN_DIR)
    return runs, ablations


def load_ablation(folder: Path) -> Ablation:
    """Read an ablation folder: ``ablate.json``, its pairs (``pairs.jsonl`` of the folder, else of the variant set
    ``ablate.json`` names, kept to the factors it analysed) and the run folder.

    Raises:
        ReportError: a file is missing or malformed (named with its field or line).
    """
    document = read_ablation(folder / ABLATE_FILE)
    run_dir = folder / RUN_DIR
    if not run_dir.is_dir():
        raise ReportError(f"{folder}: an ablation folder without its run folder {RUN_DIR}/")
    pairs_path = folder / PAIRS_FILE
    if not pairs_path.is_file() and isinstance(document.get("variants"), str):
        pairs_path = Path(document["variants"]) / PAIRS_FILE  # a folder written before pairs.jsonl was kept
    if not pairs_path.is_file():
        raise ReportError(f"{folder}: no {PAIRS_FILE} (nor in the variant set ablate.json names)")
    factors = {e["factor"] for e in document["effects"]}
    pairs = [p for p in read_pairs(pairs_path) if p["factor"] in factors]
    return Ablation(folder, run_dir, document, pairs)


# ------------------------------------------------------------------ page data


def _verdicts(run: Run) -> dict[tuple[str, int], bool]:
    return {(fact.session_id, fact.task_idx): fact.correct for fact in run.tasks}


def page_pairs(ablation: Ablation, run: Run, dataset: Dataset) -> tuple[list[list[Any]], int]:
    """The pairs of the view: ``[pair id, factor, level, origin page index, origin task, variant page index,
    target task, origin correct, variant correct]`` (verdicts of ``score.jsonl``, the first trial), and how many
    pairs name a session or task the run did not score (left out)."""
    verdicts = _verdicts(run)
    rows, missing = [], 0
    for p in ablation.pairs:
        origin, variant = dataset.index.get(p["origin"]), dataset.index.get(p["variant"])
        a, b = verdicts.get((p["origin"], p["origin_task"])), verdicts.get((p["variant"], p["target_task"]))
        if origin is None or variant is None or a is None or b is None:
            missing += 1
            continue
        rows.append(
            [
                p["pair"], p["factor"], p["level"], dataset.offset + origin, p["origin_task"],
                dataset.offset + variant, p["target_task"], a, b,
            ]
        )  # fmt: skip
    return rows, missing


def page_ablation(ablation: Ablation, run: Run) -> dict[str, Any]:
    """The page's entry of one ablation: settings, effects, breakdowns, curve, both plots as SVG and the pairs."""
    from wildtoolbench.reports.ablation_plots import forest_plot, transitions_plot

    document = ablation.document
    pairs, missing = page_pairs(ablation, run, run.dataset)
    curve = document.get("transitions_curve") or []
    return {
        "folder": shareable_path(ablation.folder),
        "model": shareable_text(str(document.get("model") or run.model)),
        "run": run.key,
        "trials": document.get("trials"),
        "test": str(document.get("test") or ""),
        "interval": str(document.get("interval") or ""),
        "unscored": document.get("unscored_pairs") or 0,
        "effects": document["effects"],
        "byType": document.get("by_task_type") or [],
        "bySubtype": document.get("by_turn_subtype") or [],
        "curve": curve,
        "forest": forest_plot(document["effects"]),
        "curvePlot": transitions_plot(curve) if curve else "",
        "pairs": pairs,
        "missingPairs": missing,
    }


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}"


def ablation_markdown(entries: Sequence[Mapping[str, Any]]) -> str:
    """The Ablation section of ``report.md``: per ablation, its effects table (the view's numbers, texts escaped
    with :func:`wildtoolbench.reports.escape.markdown_cell`); ``""`` without an ablation."""
    from wildtoolbench.reports.escape import markdown_cell, markdown_text

    if not entries:
        return ""
    lines = ["## Ablation", ""]
    for entry in entries:
        lines += [
            f"### {markdown_text(entry['model'])} ({markdown_text(entry['folder'])})",
            "",
            f"Difference = variant - origin, target-task accuracy in points; {markdown_text(entry['interval'])}; "
            f"p: {markdown_text(entry['test'])}. `*`: a small cell (docs/variants.md §6.4).",
            "",
            "| factor | level | pairs | sessions | origin % | variant % | difference | 95% interval | p | control |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for e in entry["effects"]:
            interval = "-" if e["ci_low"] is None else f"[{_points(e['ci_low'])}, {_points(e['ci_high'])}]"
            control = "-" if not e.get("control") else _points(e["control"]["difference"])
            lines.append(
                f"| {markdown_cell(e['factor'])} | {markdown_cell(e['level'] or '-')} | {e['pairs']}{'*' if e.get('small') else ''} "
                f"| {e.get('sessions', '')} | {e['origin_accuracy']:.1f} | {e['variant_accuracy']:.1f} | {_points(e['difference'])} "
                f"| {interval} | {e['p_value']:.3g} | {control} |"
            )
        lines.append("")
    return "\n".join(lines)
