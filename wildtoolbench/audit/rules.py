"""``wtb audit DATASET --rules small|standard``: the generation rule catalog applied to a dataset (docs/audit.md §12).

Prints one row per finding (session, task, step, rule id, the value or words at fault, the reason) and
the count per rule id; ``--json`` writes the findings as JSON Lines. The rules themselves are
``wildtoolbench.bench.rules`` (pure); this module reads the file and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

_out = Console(highlight=False)


def rule_findings_table(findings: list[dict[str, Any]], path: Path, profile: str) -> Any:
    """A ``rich`` table of rule findings: session, task, step, rule id, value or text, reason."""
    from rich.table import Table

    from wildtoolbench.bench.audit_context import as_text

    table = Table(title=f"Rules ({profile}) on {path}: {len(findings)} finding(s)", title_justify="left")
    for name in ("Session", "Task", "Step", "Rule"):
        table.add_column(name, no_wrap=True)
    table.add_column("Value or text", overflow="fold")
    table.add_column("Reason", overflow="fold", ratio=1)
    for f in findings:
        value = "-" if f["value"] is None else as_text(f["value"])[:60]
        table.add_row(
            str(f["id"] or "-"),
            "-" if f["task"] is None else str(f["task"]),
            "message" if f["step"] is None else str(f["step"]),
            f["rule"],
            value,
            f["message"],
            end_section=False,
        )
    return table


def audit_rules(
    path: Path, profile: str, *, language: str = "en", json_out: Path | None = None, tasks: int | None = None
) -> list[dict[str, Any]]:
    """Apply the rules of ``profile`` to the dataset at ``path``, print the findings and their count per
    rule id, and write them to ``json_out`` when given (docs/audit.md §12).

    Raises:
        wildtoolbench.bench.schema.DatasetError: the file cannot be read at all.
        ValueError: ``profile`` is not ``small`` or ``standard``.
        OSError: ``json_out`` cannot be written.
    """
    from wildtoolbench.audit.run import read_dataset
    from wildtoolbench.bench.rules_dataset import count_by_rule, rule_findings
    from wildtoolbench.common.files import write_jsonl_atomic

    data = read_dataset(path, tasks=tasks, language=language)
    findings = rule_findings(data.sessions, language, profile)
    _out.print(rule_findings_table(findings, path, profile))
    counts = count_by_rule(findings)
    per_rule = ", ".join(f"{rule} {n}" for rule, n in counts.items()) or "none"
    _out.print(f"{len(data.sessions)} session(s), {len(findings)} finding(s) under --rules {profile}: {per_rule}",
               markup=False)  # fmt: skip
    if json_out is not None:
        write_jsonl_atomic(json_out, findings)
        _out.print(f"wrote {len(findings)} finding(s) to {json_out}", markup=False)
    return findings
