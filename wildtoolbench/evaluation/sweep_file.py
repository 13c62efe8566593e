"""The models of one ``wtb eval`` sweep: repeated ``--model`` and the sweep file (docs/guides/sweeps.md §2).

A sweep file is TOML: one ``[[model]]`` table per model, with the model's own settings::

    [[model]]
    model = "openai:gpt-4o-mini"
    name = "gpt-4o-mini"            # its folder under --out (default: the name its records carry)
    base_url = "https://api.openai.com/v1"
    temperature = 0.0
    price_input = 0.15
    price_output = 0.6
    concurrency = 16

Every check of this module is a rule with an id (:data:`SWEEP_RULES`); a broken rule is a
:class:`SweepFileError` naming the file, the line where TOML knows it, the entry and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from wildtoolbench.common.exits import BadConfiguration

SWEEP_RULES: dict[str, str] = {
    "sweep.toml": "the file is TOML (a syntax error names its line and column)",
    "sweep.models": "the file has a non-empty array of [[model]] tables and nothing else at the top level",
    "sweep.field": "an entry's fields are among SWEEP_FIELDS",
    "sweep.model": "an entry has a 'model' string",
    "sweep.type": "a field's value has its type: a string, a whole number or a finite number >= 0",
    "sweep.name": "a name is a folder name: letters, digits, '.', '_' and '-', not starting with '.'",
    "sweep.unique": "no two models of a sweep write to the same folder",
}
"""The rules a sweep (file and ``--model`` list) must follow, by id (docs/guides/sweeps.md §2)."""

SWEEP_FIELDS: dict[str, type] = {
    "model": str,
    "name": str,
    "base_url": str,
    "temperature": float,
    "price_input": float,
    "price_output": float,
    "concurrency": int,
    "rps": float,
    "timeout": float,
    "max_attempts": int,
    "max_steps": int,
    "backoff": float,
    "max_retry_wait": float,
}
"""The fields of a ``[[model]]`` entry and their types (each, but ``name``, is the ``wtb eval`` option of that name)."""

_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")


class SweepFileError(BadConfiguration):
    """A sweep that breaks a rule of :data:`SWEEP_RULES` (exit 2): ``rule`` is its id."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"error: {message} [{rule}]")
        self.rule = rule


@dataclass(frozen=True)
class SweepEntry:
    """One model of a sweep: its spec, its folder name (``None``: from the records' model name), and the
    ``wtb eval`` options it sets (``{option field: value}``); ``where`` names it in messages."""

    model: str
    name: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    where: str = ""


def _typed(value: Any, kind: type) -> bool:
    if isinstance(value, bool):
        return False
    if kind is str:
        return isinstance(value, str) and bool(value.strip())
    if kind is int:
        return isinstance(value, int) and value >= 0
    return isinstance(value, (int, float)) and math.isfinite(value) and value >= 0


def _entry_line(text: str, index: int, name: str | None = None) -> int | None:
    """The line (1-based) of field ``name`` of the ``index``-th ``[[model]]`` table in ``text``, or of the
    table's header (``name`` None, or the field not found on a line of its own); ``None`` if not found."""
    count, header = -1, None
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\s*\[", line):
            if header is not None:
                break
            if re.match(r"^\s*\[\[\s*model\s*\]\]", line):
                count += 1
                header = number if count == index else None
        elif header is not None and name is not None and re.match(rf"^\s*\"?{re.escape(name)}\"?\s*=", line):
            return number
    return header


def read_sweep_file(path: Path) -> list[SweepEntry]:
    """The entries of the sweep file ``path`` (module doc), in order.

    Raises:
        SweepFileError: a rule of :data:`SWEEP_RULES` is broken (exit 2), e.g.
            ``error: sweep.toml:7: model[2].temperature: must be a finite number >= 0, got 'hot' [sweep.type]``.
        OSError: the file cannot be read (exit 1).
    """
    text = path.read_text(encoding="utf-8")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepFileError("sweep.toml", f"{path}: not TOML: {exc}") from None
    models = document.get("model")
    extra = sorted(set(document) - {"model"})
    if not isinstance(models, list) or not models or extra:
        found = f"unexpected top-level key {extra[0]!r}" if extra else "no [[model]] table"
        raise SweepFileError("sweep.models", f"{path}: {found}; list each model in a [[model]] table")
    entries = []
    for index, item in enumerate(models, 1):

        def where_is(name: str | None = None, index: int = index) -> str:
            line = _entry_line(text, index - 1, name)
            return f"{path}:{line}: model[{index}]" if line else f"{path}: model[{index}]"

        where = where_is()
        if not isinstance(item, dict):
            raise SweepFileError("sweep.models", f"{where}: not a table")
        unknown = sorted(set(item) - set(SWEEP_FIELDS))
        if unknown:
            raise SweepFileError(
                "sweep.field",
                f"{where_is(unknown[0])}.{unknown[0]}: unknown field; the fields are {', '.join(SWEEP_FIELDS)}",
            )
        if "model" not in item:
            raise SweepFileError("sweep.model", f"{where}: no 'model' (a model spec, e.g. \"openai:gpt-4o\")")
        for name, value in item.items():
            kind = SWEEP_FIELDS[name]
            if not _typed(value, kind):
                wanted = {str: "a non-empty string", int: "a whole number >= 0", float: "a finite number >= 0"}[kind]
                raise SweepFileError("sweep.type", f"{where_is(name)}.{name}: must be {wanted}, got {value!r}")
        name = item.get("name")
        if name is not None and not _NAME.match(name):
            raise SweepFileError(
                "sweep.name", f"{where_is('name')}.name: {name!r} is not a folder name (letters, digits, . _ -)"
            )
        settings = {
            k: (float(v) if SWEEP_FIELDS[k] is float else v) for k, v in item.items() if k not in ("model", "name")
        }
        entries.append(SweepEntry(item["model"], name, settings, where))
    return entries


def sweep_entries(models: Sequence[str], sweep: Path | None) -> list[SweepEntry]:
    """The sweep's models: each ``--model`` (the command line's settings), then the sweep file's entries.

    Raises:
        SweepFileError: as :func:`read_sweep_file`.
    """
    entries = [SweepEntry(model, None, {}, f"--model {model}") for model in models]
    if sweep is not None:
        entries += read_sweep_file(sweep)
    return entries


def folder_name(entry: SweepEntry, model_name: str) -> str:
    """The folder of ``entry`` under ``--out``: its ``name``, else its records' model name with characters other
    than letters, digits, ``.``, ``_`` and ``-`` made ``_``."""
    if entry.name:
        return entry.name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name).strip("._") or "model"


def check_unique(folders: Sequence[tuple[SweepEntry, str]]) -> None:
    """Refuse two models that write to one folder (rule ``sweep.unique``).

    Raises:
        SweepFileError: naming both entries and the folder.
    """
    seen: dict[str, SweepEntry] = {}
    for entry, folder in folders:
        if folder in seen:
            raise SweepFileError(
                "sweep.unique",
                f"{seen[folder].where} and {entry.where} both write to {folder}/; give one a 'name' in a sweep file",
            )
        seen[folder] = entry
