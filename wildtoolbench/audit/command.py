"""``wtb audit``: the application side (docs/audit.md; the exit status follows
docs/cli.md §2: findings are not an error, an unreadable file is 1, a bad command line 2)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from wildtoolbench.audit import run as audit_run
from wildtoolbench.common.exits import BadInput, UsageError
from wildtoolbench.common.inputs import require_file
from wildtoolbench.data.command import dataset_path

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
    stats: bool = False,
    stats_json: Path | None = None,
    reference: Path | None = None,
    rules: str | None = None,
) -> None:
    """Audit ``dataset`` (docs/audit.md): print the findings table (with ``stats``: the coverage and
    diversity tables of docs/coverage.md instead, beside the official set's figures from ``reference``)
    and the count per kind; write the findings (``json_out``, JSON Lines), the coverage document
    (``stats_json``), a draft errata file (``write_errata``) and the verified split (``verified``, with
    ``errata`` applied) when asked. With ``rules`` (``small``/``standard``) the generation rule catalog's
    findings are listed instead (docs/audit.md §12).

    Raises:
        UsageError: a ``--runs`` path does not exist, or ``dataset`` / ``errata`` is not a file (exit 2).
        wildtoolbench.bench.schema.DatasetError: no line of the file can be audited, or a run or errata file is
            malformed (exit 1, every problem as ``file:line: field: message``).
        BadInput: an output cannot be written (exit 1).
    """
    path = require_file(dataset_path(dataset, pull), "dataset")
    for run in runs:
        if not run.exists():
            raise UsageError(f"{str(run)!r} does not exist.", "--runs")
    if errata is not None:
        require_file(errata, "--errata")
    if reference is not None:
        reference = require_file(dataset_path(reference, pull), "--reference")
    if rules is not None:  # the generation rule catalog on the dataset (docs/audit.md §12)
        from wildtoolbench.audit.rules import audit_rules

        audit_rules(path, rules, language=language, json_out=json_out, tasks=tasks)
        return
    data, findings = audit_run.audit_file(path, runs=runs, tasks=tasks, language=language)
    applied = None
    if errata is not None:
        from wildtoolbench.bench.errata import apply_errata
        from wildtoolbench.scoring.errata import read_errata

        by_id = data.by_id()
        applied = apply_errata(read_errata(errata, by_id), by_id)
    document = None
    if stats:
        from wildtoolbench.audit.coverage import coverage_report

        document = coverage_report(path, data.sessions, language=language, reference=reference, findings=findings)
        for table in coverage_tables(document):
            _out.print(table)
    else:
        _out.print(findings_table(findings, path))
    _out.print(summary_line(data, findings), markup=False)
    try:
        if stats_json is not None and document is not None:
            from wildtoolbench.audit.coverage import write_coverage

            write_coverage(stats_json, document)
            _out.print(f"wrote the coverage figures to {stats_json}", markup=False)
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
    """A ``rich`` table of findings: session, task (1 to 4), kind, severity, message (docs/audit.md §1)."""
    from rich.table import Table

    from wildtoolbench.common.numbering import task_number

    table = Table(title=f"Audit of {path}: {len(findings)} finding(s)", title_justify="left")
    for name in ("Session", "Task", "Kind", "Severity"):
        table.add_column(name, no_wrap=True)
    table.add_column("Message", overflow="fold", ratio=1)
    for finding in findings:
        table.add_row(
            finding.id or "-",
            "-" if finding.task is None else str(task_number(finding.task)),  # docs/terms.md §1.2
            finding.kind,
            finding.severity,
            finding.message,
        )
    return table


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 1 else f"{value:.1f}"
    return str(value)


def _cell(value) -> str:
    return f"{value:.1f}" if isinstance(value, float) else "-" if value is None else str(value)


def coverage_tables(document):
    """``rich`` tables of a coverage document (:func:`wildtoolbench.audit.coverage.coverage_report`, docs/coverage.md
    §10): the set beside the official set, the topology per task type, the diversity figures and the
    contamination found (or why it was not checked)."""
    from rich.table import Table

    stats = document["statistics"]
    reference = document["reference"]
    against = reference["path"] if reference["kind"] == "dataset" else "published figures"
    side = Table(title=f"Coverage of {document['dataset']} against the official set ({against})", title_justify="left")
    for name, justify in (("Figure", "left"), ("Bucket", "left"), ("This set", "right"), ("Official", "right")):
        side.add_column(name, justify=justify)  # type: ignore[arg-type]
    previous = None
    for row in document["comparison"]:
        side.add_row(
            row["figure"] if row["figure"] != previous else "",
            row["key"] or "",
            _cell(row["this"]),
            _cell(row["official"]),
        )
        previous = row["figure"]
    topology = Table(title="Gold DAG shape per task type (tasks)", title_justify="left")
    topology.add_column("Task type")
    shapes = ("none", "single", "parallel", "sequential", "mixed")
    for shape in shapes:
        topology.add_column(shape, justify="right")
    for label, counts in stats["topology"]["shapes"].items():
        topology.add_row(label, *(str(counts[s]) for s in shapes))
    topo = stats["topology"]
    diversity = Table(title="Diversity", title_justify="left")
    diversity.add_column("Figure")
    diversity.add_column("Value", overflow="fold")
    messages = stats["messages"]
    similarity = messages["self_similarity"]
    arguments = stats["arguments"]
    tools = stats["tools"]
    for name, value in (
        ("depth of the tasks with calls (layers: tasks)", _histogram_text(topo["depths"])),
        ("width of the tasks with calls (calls in the widest layer: tasks)", _histogram_text(topo["widths"])),
        ("instruction transitions per session (transitions: sessions)", _histogram_text(stats["transitions"])),
        ("tools called / offered", f"{tools['called']} / {tools['offered']} ({tools['called_percent']:.1f}%)"),
        ("tool categories called", _histogram_text(tools["categories_called"])),
        (
            "distinct-1 / -2 / -3 of the user messages",
            " / ".join(_number(messages[f"distinct_{n}"]) for n in (1, 2, 3)),
        ),
        (
            "self-similarity of the user messages (bigram Jaccard: mean of pairs / mean nearest)",
            f"{_number(similarity['mean_pairwise'])} / {_number(similarity['mean_nearest'])} "
            f"({similarity['compared']} of {similarity['messages']} messages)",
        ),
        (
            "gold argument values (distinct / all, entropy)",
            f"{arguments['distinct']} / {arguments['values']} ({_number(arguments['distinct_ratio'])}), "
            f"{arguments['entropy_bits']:.2f} bits",
        ),
        (
            "distinct values per use of a repeated parameter (mean)",
            f"{_number(arguments['mean_parameter_distinct_ratio'])} over {arguments['repeated_parameters']} parameter(s)",
        ),
        ("most used argument values", ", ".join(f"{v} ({n})" for v, n in arguments["most_common"]) or "-"),
    ):
        diversity.add_row(name, value)
    out = [side, topology, diversity]
    found = document["contamination"]
    if found is None:
        out.append("contamination: not checked (no reference dataset: give --reference or run wtb data pull)")
    elif not found:
        out.append(f"contamination: no session repeats a session of {reference['path']}")
    else:
        table = Table(
            title=f"Contamination: {len(found)} session(s) repeat a session of {reference['path']}",
            title_justify="left",
        )
        for name in ("Session", "Official session", "Similarity", "Exact"):
            table.add_column(name)
        for entry in found:
            table.add_row(
                str(entry["id"]),
                str(entry["reference_id"]),
                f"{entry['similarity']:.3f}",
                "yes" if entry["exact"] else "no",
            )
        out.append(table)
    return out


def _histogram_text(counts) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) or "-"


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
