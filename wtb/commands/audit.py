"""``wtb audit`` and ``wtb score --errata``: the application side (docs/audit.md; the exit status follows
docs/cli.md §2: findings are not an error, an unreadable file is 1, a bad command line 2)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from wtb import audit_run
from wtb.commands.data import dataset_path
from wtb.commands.exits import BadInput, UsageError
from wtb.commands.inputs import require_file

_out = Console(highlight=False, soft_wrap=True)


def audit(
    dataset: Path,
    runs: list[Path],
    *,
    json_out: Path | None = None,
    language: str = "en",
    write_errata: Path | None = None,
    errata: Path | None = None,
    verified: Path | None = None,
    tasks: int | None = None,
    pull: bool = False,
) -> None:
    """Audit ``dataset`` (docs/audit.md): print the findings table and the count per kind; write the
    findings (``json_out``, JSON Lines), a draft errata file (``write_errata``) and the verified split
    (``verified``, with ``errata`` applied) when asked.

    Raises:
        UsageError: a ``--runs`` path does not exist, or ``dataset`` / ``errata`` is not a file (exit 2).
        bench.schema.DatasetError: no line of the file can be audited, or a run or errata file is
            malformed (exit 1, every problem as ``file:line: field: message``).
        BadInput: an output cannot be written (exit 1).
    """
    path = require_file(dataset_path(dataset, pull), "dataset")
    for run in runs:
        if not run.exists():
            raise UsageError(f"{str(run)!r} does not exist.", "--runs")
    if errata is not None:
        require_file(errata, "--errata")
    data, findings = audit_run.audit_file(path, runs=runs, tasks=tasks, language=language)
    applied = None
    if errata is not None:
        from bench.errata import apply_errata

        by_id = data.by_id()
        applied = apply_errata(audit_run.read_errata(errata, by_id), by_id)
    _out.print(findings_table(findings, path))
    _out.print(summary_line(data, findings), markup=False)
    try:
        if json_out is not None:
            audit_run.write_findings(json_out, findings)
            _out.print(f"wrote {len(findings)} finding(s) to {json_out}", markup=False)
        if write_errata is not None:
            count = audit_run.write_draft_errata(write_errata, findings)
            _out.print(f"wrote {count} draft erratum line(s) to {write_errata}: review them before use", markup=False)
        if verified is not None:
            kept, dropped = audit_run.write_verified(verified, data, findings, applied)
            _out.print(
                f"wrote the verified split to {verified}: {kept} session(s) kept, {dropped} left out", markup=False
            )
    except OSError as exc:
        raise BadInput(f"cannot write: {exc}") from None


def findings_table(findings, path):
    """A ``rich`` table of findings: session, task, kind, severity, message (docs/audit.md §1)."""
    from rich.table import Table

    table = Table(title=f"Audit of {path}: {len(findings)} finding(s)", title_justify="left")
    for name in ("Session", "Task", "Kind", "Severity"):
        table.add_column(name, no_wrap=True)
    table.add_column("Message", overflow="fold", ratio=1)
    for finding in findings:
        table.add_row(
            finding.id or "-",
            "-" if finding.task is None else str(finding.task),
            finding.kind,
            finding.severity,
            finding.message,
        )
    return table


def summary_line(data, findings) -> str:
    """``"24 sessions audited (0 invalid): 3 findings: scorer_sensitive 1 error; ..."`` (docs/audit.md §1)."""
    counts = audit_run.count_by_kind(findings)
    parts = [
        f"{kind} " + ", ".join(f"{n} {severity}{'s' if n != 1 else ''}" for severity, n in by_severity.items())
        for kind, by_severity in counts.items()
    ]
    invalid = sum(1 for ok in data.valid if not ok)
    head = f"{len(data.sessions)} session(s) audited ({invalid} invalid): {len(findings)} finding(s)"
    return head + (": " + "; ".join(parts) if parts else "")


def score_errata(
    dataset: Path, results: Path, errata: Path, out: Path, *, tasks: int, scoring: str, language, metric
) -> None:
    """``wtb score --errata FILE``: score again with the errata applied, write the errata metrics beside the
    published ones and print both side by side (docs/audit.md §9.3).

    Raises:
        bench.schema.DatasetError: a bad errata file or an erratum that does not apply (exit 1).
    """
    result = audit_run.score_with_errata(dataset, results, errata, out, tasks=tasks, scoring=scoring, language=language)
    _out.print(errata_table(metric, result.metric))
    _out.print(errata_line(result), markup=False)
    _out.print(f"wrote {out / result.files[0]} and {out / result.files[1]}", markup=False)


def errata_table(without: dict, with_errata: dict):
    """A ``rich`` table of every metric row without and with errata (docs/audit.md §9.3)."""
    from rich.table import Table

    from wtb.table import metric_rows

    table = Table(title="Scores without and with errata", title_justify="left")
    for name, justify in (("Group", "left"), ("Metric", "left"), ("Without", "right"), ("With errata", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    previous = None
    for (section, name, before, count_before), (_, _, after, count_after) in zip(
        metric_rows(without), metric_rows(with_errata)
    ):
        table.add_row(
            section if section != previous else "", name, f"{before} ({count_before})", f"{after} ({count_after})"
        )
        previous = section
    return table


def errata_line(result) -> str:
    """What the errata did: ``"errata: 2 task(s) excluded, 1 gold argument change(s) (3 logged gold call(s) rewritten), ..."``."""
    applied = result.applied
    excluded = sum(len(tasks) for tasks in applied.excluded.values())
    line = (
        f"errata: {excluded} task(s) excluded, {len(applied.argument_changes)} gold argument change(s) "
        f"({result.rewritten} logged gold call(s) rewritten), {len(applied.pending)} pending (no correction)"
    )
    if applied.other_changes:
        line += (
            f"; {len(applied.other_changes)} other correction(s) change what the model sees (observations, "
            "messages, tools): only a new run on the corrected dataset reflects them"
        )
    return line
