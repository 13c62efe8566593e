"""``wtb audit``: find the defects in a dataset that a model's failure cannot be told from (docs/audit.md).

Prints the findings as a table and a count per kind; ``--json`` writes them as JSON Lines,
``--write-errata`` drafts an errata file from them, ``--verified`` writes the verified split. Exit
status 0 whenever the audit ran, findings or not; 1 for a file that cannot be read at all; 2 for a
bad command line (docs/cli.md §2). The audit itself is imported by the command body (docs/cli.md §1).
"""

from __future__ import annotations

from pathlib import Path

import typer

from wtb.cli import Lang, app, lang_option, require_file, tasks_option
from wtb.cli._console import LazyConsole
from wtb.cli.data import named_dataset, pull_option

_err = LazyConsole(stderr=True, highlight=False, soft_wrap=True)
_out = LazyConsole(highlight=False, soft_wrap=True)


@app.command("audit")
def audit(
    dataset: Path = typer.Argument(..., help="Dataset file (JSON Lines, one session per line), or wildtoolbench."),
    runs: list[Path] = typer.Option(
        [],
        "--runs",
        help="A run folder (wtb eval --out, its result.jsonl) or a result file; repeat for several runs. "
        "Tasks every run failed are reported as failed_by_all, with each run's first failing step.",
    ),
    json_out: Path | None = typer.Option(
        None,
        "--json",
        help='Write the findings to this file, JSON Lines {"id", "task", "kind", "severity", "message"}.',
    ),
    lang: Lang | None = lang_option(
        "Side of the dataset to audit (en: english_* fields, default; zh: the Chinese ones)."
    ),
    write_errata: Path | None = typer.Option(
        None,
        "--write-errata",
        help="Draft an errata file from the findings, for review (docs/audit.md §9.4): errors get a correction "
        "(exclude the task, or delete an unknown key), warnings a null one to decide.",
    ),
    errata: Path | None = typer.Option(
        None, "--errata", help="An errata file to check against the dataset and apply for --verified."
    ),
    verified: Path | None = typer.Option(
        None,
        "--verified",
        help="Write the verified split: the valid sessions, errata applied, without those that have an excluded "
        "task or an error finding (docs/audit.md §10).",
    ),
    tasks: int | None = tasks_option(),
    pull: bool = pull_option(),
) -> None:
    """Audit a dataset (docs/audit.md): every check that tells a defect in the data from a model's failure,
    reported per session and task with a kind, a severity and a message. Validation problems are findings
    too: a file is audited as long as one of its lines is a JSON object.
    """
    from bench.schema import DatasetError
    from wtb import audit_run

    language = lang.value if lang else "en"
    path = require_file(named_dataset(dataset, pull), "dataset")
    for run in runs:
        if not run.exists():
            raise typer.BadParameter(f"{str(run)!r} does not exist.", param_hint="'--runs'")
    if errata is not None:
        require_file(errata, "--errata")
    try:
        data, findings = audit_run.audit_file(path, runs=runs, tasks=tasks, language=language)
        applied = None
        if errata is not None:
            from bench.errata import apply_errata

            by_id = data.by_id()
            applied = apply_errata(audit_run.read_errata(errata, by_id), by_id)
    except DatasetError as exc:
        for issue in exc.issues:
            _err.print(str(issue), markup=False)
        raise typer.Exit(code=1) from None
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
        _err.print(f"cannot write: {exc}", markup=False)
        raise typer.Exit(code=1) from None


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
    from wtb.audit_run import count_by_kind

    counts = count_by_kind(findings)
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
        typer.Exit: code 1 for a bad errata file or an erratum that does not apply (every problem printed).
    """
    from bench.schema import DatasetError
    from wtb.audit_run import score_with_errata

    try:
        result = score_with_errata(dataset, results, errata, out, tasks=tasks, scoring=scoring, language=language)
    except DatasetError as exc:
        for issue in exc.issues:
            _err.print(str(issue), markup=False)
        raise typer.Exit(code=1) from None
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
